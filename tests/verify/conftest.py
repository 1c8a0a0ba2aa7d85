"""Real sandbox episodes for the judges: each bundled task's first screen and its reference solution's last.

The episodes run on the session's shared server and desktop browser (`sandbox_server`, `web_env` of
tests/conftest.py) and are computed once per session.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from PIL import Image

from uivenus.actions.calls import format_action
from uivenus.envs.browser import BrowserEnv
from uivenus.envs.sandbox import SandboxServer
from uivenus.envs.sandbox.runner import run_reference
from uivenus.envs.sandbox.tasks import get_task
from uivenus.records import TaskSpec

EPISODE_TASKS = ("contacts/add_contact", "settings/wifi_off_bluetooth_on", "contacts/delete_contact")


@dataclass(frozen=True)
class Episode:
    spec: TaskSpec
    first: Image.Image
    first_state: Mapping[str, Any]
    last: Image.Image
    last_state: Mapping[str, Any]
    history: tuple[str, ...]


@pytest.fixture(scope="session")
def episodes(sandbox_server: SandboxServer, web_env: BrowserEnv) -> Mapping[str, Episode]:
    """Each task of EPISODE_TASKS reset (first screen, state) and solved by its reference solution (last)."""
    out = {}
    for task_id in EPISODE_TASKS:
        task = get_task(task_id)
        first = web_env.reset(task.spec(sandbox_server.base_url))
        first_state = web_env.state()
        run = run_reference(task, web_env, sandbox_server.base_url)
        assert run.passed, f"{task_id}: the reference solution failed: {run.error or run.check.reason}"
        out[task_id] = Episode(
            spec=run.spec, first=first.screenshot, first_state=first_state, last=web_env.observe().screenshot,
            last_state=web_env.state(), history=tuple(f"{format_action(a)} -> executed" for a in run.actions),
        )
    return out
