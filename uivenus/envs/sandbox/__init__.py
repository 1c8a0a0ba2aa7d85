"""Bundled sandbox apps (plain HTML/CSS/JS, served on 127.0.0.1) whose state tasks can check exactly."""

from uivenus.envs.sandbox.server import APPS_DIR, SandboxServer
from uivenus.envs.sandbox.tasks import (
    TASKS, CheckResult, DomQuery, SandboxTask, SandboxTaskError, check_spec, get_task, register, tasks_of,
)

__all__ = [
    "APPS_DIR", "TASKS", "CheckResult", "DomQuery", "SandboxServer", "SandboxTask", "SandboxTaskError",
    "check_spec", "get_task", "register", "tasks_of",
]
