"""What an OSWorld setup step or getter works with: the task's root, its desktop, its caches and its browser port.

One `TaskContext` per episode, made by the env that runs the task (`session.py`); the setup steps
(`setup_steps.py`) and getters (`getters.py`) take it as their first argument and reach the live desktop only
through its `Desktop` plug point, so they can be tested on a bare display too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from uivenus.envs.osworld.isolation import Root

__all__ = ["DEFAULT_DOWNLOADS", "Desktop", "TaskContext", "default_downloads"]

#: Where downloaded task files are kept between runs, keyed by URL (`UIVENUS_OSWORLD_DOWNLOADS` overrides it).
DEFAULT_DOWNLOADS = Path("~/.cache/uivenus/osworld-downloads")


def default_downloads() -> Path:
    return Path(os.environ.get("UIVENUS_OSWORLD_DOWNLOADS") or DEFAULT_DOWNLOADS).expanduser()


class Desktop(Protocol):
    """The live desktop as setup steps need it: start an app in the root and wait for its window; raise a window."""

    def launch(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> str | None:
        """Start `argv` in the task's root; the title of the window it opened (None if none did in time)."""
        ...

    def activate(self, name: str, *, strict: bool = False, by_class: bool = False) -> bool:
        """Raise and focus the first window whose title (or class) matches `name`; False when none does."""
        ...

    def window_titles(self) -> list[str]: ...

    def screen_size(self) -> tuple[int, int]: ...

    def window_size(self, wm_class: str) -> tuple[int, int] | None:
        """The size of the first window of WM class `wm_class` (case-insensitive); None when there is none."""
        ...

    def wait_title(self, part: str) -> str | None:
        """Wait (the launch timeout) for a window whose title contains `part`; its title, or None."""
        ...


@dataclass(frozen=True)
class TaskContext:
    """One episode's OSWorld world: the root its commands run in, its desktop, caches, and Chromium's DevTools port."""

    root: Root
    desktop: Desktop
    task_cache: Path  # where `cache_file` getters and expected files land for this episode
    downloads: Path = field(default_factory=default_downloads)  # the download cache shared by episodes
    cdp_port: int = 0  # Chromium's remote-debugging port for this episode (0: none chosen)
    offline: bool = False  # never fetch: a download not in the cache is an error naming its URL
    task: Mapping[str, Any] = field(default_factory=dict)  # the original task JSON

    @property
    def display(self) -> str:
        return self.root.display
