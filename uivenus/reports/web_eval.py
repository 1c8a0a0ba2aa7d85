"""The page of a live-web evaluation: success by website and by level, each task's live-web events, and each
episode's key screenshots with the judges' verdicts and reasons (the steps folded away below them)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from uivenus.files import write_text
from uivenus.reports.pages import episode_view, render
from uivenus.store import read_episode

__all__ = ["EVENT_KEYS", "write_web_eval_page"]

#: The per-task lists of results.json that the task table counts, by the name it shows.
EVENT_KEYS: Mapping[str, str] = {
    "retries": "attempts", "consent clicks": "consent_steps", "injection flags": "injection_steps",
    "downloads": "downloads", "new tabs": "new_tabs", "unsettled": "unsettled", "blocked": "blocked",
}


def write_web_eval_page(path: Path | str, results: Mapping[str, Any], out_dir: Path | str) -> Path:
    """Write the page for `results` (what `evals.web.evaluate_web` wrote) whose episodes are under `out_dir`."""
    root = Path(out_dir)
    episodes = [episode_view(root / r["episode"], read_episode(root / r["episode"])) for r in results["tasks"]]
    events = {r["task_id"]: [(name, len(r.get(key) or ())) for name, key in EVENT_KEYS.items() if r.get(key)]
              for r in results["tasks"]}
    return write_text(path, render("web_eval.html.j2", title=f"Web evaluation · {results['config']['policy']}",
                                   results=results, summary=results["summary"], episodes=episodes, events=events))
