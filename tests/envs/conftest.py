"""Shared fixtures for environment tests: one sandbox server and one browser per mode for the session.

Launching Chromium costs about a second, so the envs live for the whole session; every test starts
with `env.reset(task)`, which gives it a fresh browser context.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from uivenus.envs.browser import BrowserConfig, BrowserEnv
from uivenus.envs.sandbox import SandboxServer

PAGES_DIR = Path(__file__).parent / "pages"


@pytest.fixture(scope="session")
def sandbox_server() -> Iterator[SandboxServer]:
    """The bundled sandbox apps on http://127.0.0.1:PORT/<app>/index.html."""
    with SandboxServer() as server:
        yield server


@pytest.fixture(scope="session")
def pages_server() -> Iterator[SandboxServer]:
    """The small static test pages of tests/envs/pages/ on 127.0.0.1."""
    with SandboxServer(root=PAGES_DIR) as server:
        yield server


@pytest.fixture(scope="session")
def web_env() -> Iterator[BrowserEnv]:
    """A desktop-viewport browser (platform WEB, 1280x720); call `reset(task)` at the start of each test."""
    with BrowserEnv(BrowserConfig(mode="desktop")) as env:
        yield env


@pytest.fixture(scope="session")
def phone_env() -> Iterator[BrowserEnv]:
    """A phone-emulating browser (platform MOBILE, 412x915, touch); call `reset(task)` in each test."""
    with BrowserEnv(BrowserConfig(mode="phone")) as env:
        yield env
