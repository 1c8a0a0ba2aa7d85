"""Fixtures shared across test packages (expensive things built once per session).

Launching Chromium costs about a second, so the sandbox server and the browsers live for the whole session
and are shared by every package; every test starts with `env.reset(task)` (directly or through
`run_episode`), which gives it a fresh browser context.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from uivenus.envs.browser import BrowserEnv
    from uivenus.envs.desktop import DesktopEnv
    from uivenus.envs.sandbox import SandboxServer


@pytest.fixture(scope="session")
def tiny_qwen3_vl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised tiny Qwen3-VL checkpoint (model, tokenizer, image-only processor) on disk."""
    from uivenus.train.tiny import build_tiny_qwen3_vl

    return build_tiny_qwen3_vl(tmp_path_factory.mktemp("tiny_qwen3_vl"))


@pytest.fixture(scope="module")
def torch_single_thread() -> Iterator[None]:
    """Tiny models run fastest on one thread; several stall badly when the CPUs are shared with other tests."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def sandbox_server() -> Iterator[SandboxServer]:
    """The bundled sandbox apps on http://127.0.0.1:PORT/<app>/index.html."""
    from uivenus.envs.sandbox import SandboxServer

    with SandboxServer() as server:
        yield server


@pytest.fixture(scope="session")
def web_env() -> Iterator[BrowserEnv]:
    """A desktop-viewport browser (platform WEB, 1280x720); call `reset(task)` at the start of each test."""
    from uivenus.envs.browser import BrowserEnv
    from uivenus.envs.browser_config import BrowserConfig

    with BrowserEnv(BrowserConfig(mode="desktop")) as env:
        yield env


@pytest.fixture(scope="session")
def phone_env() -> Iterator[BrowserEnv]:
    """A phone-emulating browser (platform MOBILE, 412x915, touch); call `reset(task)` in each test."""
    from uivenus.envs.browser import BrowserEnv
    from uivenus.envs.browser_config import BrowserConfig

    with BrowserEnv(BrowserConfig(mode="phone")) as env:
        yield env


@pytest.fixture(scope="module")
def desktop_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DesktopEnv]:
    """A 1024x768 Xvfb desktop in the default look, its task roots under a temporary folder; one per test module
    (its display and window manager start once), each test resetting it with its own task."""
    from uivenus.envs.desktop import DesktopConfig, DesktopEnv

    with DesktopEnv(DesktopConfig(width=1024, height=768, sandbox_dir=tmp_path_factory.mktemp("roots"))) as env:
        yield env
