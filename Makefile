# Two commands: `make demo` and `make test`. Each sets up what it needs on a fresh Debian machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench
SYS_STAMP := $(VENV)/.system-packages
# Debian packages the environments need: the browser, its driver, a virtual X server, X tools, a window manager,
# fonts for reproducible rendering, and the desktop apps the desktop task family drives.
SYS_PACKAGES := chromium chromium-driver xvfb xdotool x11-utils openbox python3-tk fonts-dejavu-core \
	fonts-liberation fonts-urw-base35 l3afpad pcmanfm
PIP_LINKS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)

.PHONY: demo test setup system-packages clean bench

demo: setup
	$(VENV)/bin/uivenus demo

test: setup
	$(PY) -m pytest -q

bench: setup $(BENCH_STAMP)
	$(PY) bench/parse.py
	$(PY) bench/env_step.py
	$(PY) bench/synth.py
	$(PY) bench/loop.py
	$(PY) bench/collect.py
	$(PY) bench/train.py

setup: $(STAMP) $(SYS_STAMP)

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

$(SYS_STAMP): | $(VENV)/bin/python
	@missing=$$(for p in $(SYS_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "system packages present"; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "installing $$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else echo "missing Debian packages: $$missing"; echo "install them with: sudo apt-get install -y $$missing"; exit 1; fi
	touch $@

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
