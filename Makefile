# Two commands: `make demo` and `make test`. Each sets up what it needs on a fresh Debian machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench
SYS_STAMP := $(VENV)/.system-packages
# Debian packages the environments need: the browser, its driver, a virtual X server, X tools, a window manager,
# the desktop's panel and wallpaper setter, fonts for reproducible rendering, and the desktop task family's apps.
SYS_PACKAGES := chromium chromium-driver xvfb xdotool x11-utils openbox tint2 feh python3-tk fonts-dejavu-core \
	fonts-liberation fonts-urw-base35 l3afpad pcmanfm
# What OSWorld-format tasks and their tests add (`make test`, not `make demo`): the office, image, media and mail
# apps, a terminal, the sandbox every task runs in (bubblewrap, nsenter from util-linux) and the accessibility bus.
OSWORLD_PACKAGES := libreoffice-calc libreoffice-writer libreoffice-impress gimp vlc thunderbird xterm bubblewrap \
	util-linux at-spi2-core python3-pyatspi libreoffice-gtk3 mousepad \
	gir1.2-gtk-3.0
OSWORLD_STAMP := $(VENV)/.osworld-packages
PIP_LINKS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)

.PHONY: demo test setup deps system-packages clean bench

demo: setup
	$(VENV)/bin/uivenus demo

test: setup $(OSWORLD_STAMP)
	$(PY) -m pytest -q

bench: setup $(BENCH_STAMP)
	$(PY) bench/parse.py
	$(PY) bench/env_step.py
	$(PY) bench/synth.py
	$(PY) bench/loop.py
	$(PY) bench/collect.py
	$(PY) bench/train.py

setup: $(STAMP) $(SYS_STAMP)

# Everything `make test` and `eval osworld` use, the office/media apps included.
deps: setup $(OSWORLD_STAMP)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	$(PY) -m pip install -q $(PIP_LINKS) "torch==2.13.0"
	$(PY) -m pip install -q $(PIP_LINKS) -e '.[dev]'
	touch $@

# bench/train.py needs trl, which only the bench extra installs (torch stays the pinned build: pyproject pins it).
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install -q $(PIP_LINKS) -e '.[bench]'
	touch $@

# Install the Debian packages $(1) that are missing (as root), or name them and stop.
define install_packages
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "system packages present"; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "installing $$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else echo "missing Debian packages: $$missing"; echo "install them with: sudo apt-get install -y $$missing"; exit 1; fi
	touch $@
endef

$(SYS_STAMP): | $(VENV)/bin/python
	$(call install_packages,$(SYS_PACKAGES))

$(OSWORLD_STAMP): | $(VENV)/bin/python
	$(call install_packages,$(OSWORLD_PACKAGES))

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
