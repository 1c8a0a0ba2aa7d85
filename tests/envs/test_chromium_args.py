"""Chromium's command line: our `--disable-features` adds to Playwright's instead of replacing it.

Chromium reads only the last `--disable-features` flag, and Playwright puts the caller's flags after its own; before
`merged_features` our one feature switched Playwright's whole list (HTTPS upgrades, the media router, ...) back on.
"""

from __future__ import annotations

import uuid

import psutil
from playwright.sync_api import sync_playwright

from uivenus.envs.browser import BrowserEnv
from uivenus.envs.browser_config import BrowserConfig
from uivenus.envs.chromium import PLAYWRIGHT_DISABLED_FEATURES, merged_features
from uivenus.envs.sandbox import SandboxServer
from uivenus.records import TaskSpec


def _disabled(cmdline: list[str]) -> list[str]:
    """The features a process runs with switched off: its last `--disable-features` (the one Chromium reads)."""
    flags = [arg for arg in cmdline if arg.startswith("--disable-features=")]
    return flags[-1].split("=", 1)[1].split(",") if flags else []


def test_merged_features_joins_every_list_into_one_last_flag() -> None:
    args = merged_features(("--disable-gpu", "--disable-features=A,B", "--mute-audio", "--disable-features=B,C"))
    assert args[:2] == ("--disable-gpu", "--mute-audio")
    assert args[2] == "--disable-features=" + ",".join((*PLAYWRIGHT_DISABLED_FEATURES, "A", "B", "C"))
    assert len(args) == 3


def test_the_browser_runs_with_playwrights_features_and_ours_off(pages_server: SandboxServer) -> None:
    config = BrowserConfig(extra_args=("--disable-features=Translate",))
    marker = f"--uivenus-probe={uuid.uuid4().hex}"
    with sync_playwright() as playwright:  # Playwright's own list, as the installed version launches it
        browser = playwright.chromium.launch(executable_path=config.executable, headless=True, args=[marker])
        try:
            plain = next(p for p in psutil.Process().children(recursive=True) if marker in p.cmdline())
            playwrights = _disabled(plain.cmdline())
        finally:
            browser.close()
    missing = set(playwrights) - set(PLAYWRIGHT_DISABLED_FEATURES)
    assert not missing, f"Playwright switches off {sorted(missing)} too: add them to PLAYWRIGHT_DISABLED_FEATURES"
    env = BrowserEnv(config)
    try:
        url = f"{pages_server.base_url}/home.html"
        env.reset(TaskSpec(id="test/args", instruction="look", platform="web", url=url))
        main = psutil.Process(env.browser_pid)
        # what the browser applied is what it hands its child processes (the GPU and network processes)
        children = [p.cmdline() for p in main.children(recursive=True) if "--type=gpu-process" in p.cmdline()]
        assert children
        for disabled in (_disabled(main.cmdline()), _disabled(children[0])):
            assert {*PLAYWRIGHT_DISABLED_FEATURES, "OverscrollHistoryNavigation", "Translate"} <= set(disabled)
    finally:
        env.close()
