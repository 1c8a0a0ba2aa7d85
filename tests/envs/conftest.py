"""Fixtures for environment tests: a server for the small static pages of tests/envs/pages/.

The sandbox server and the session browsers (`sandbox_server`, `web_env`, `phone_env`) live in tests/conftest.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from uivenus.envs.sandbox import SandboxServer

PAGES_DIR = Path(__file__).parent / "pages"


@pytest.fixture(scope="session")
def pages_server() -> Iterator[SandboxServer]:
    """The small static test pages of tests/envs/pages/ on 127.0.0.1."""
    with SandboxServer(root=PAGES_DIR) as server:
        yield server
