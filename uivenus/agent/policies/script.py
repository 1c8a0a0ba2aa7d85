"""`script:FILE`: answers with fixed replies in order — a task's reference solution, a judge's verdicts, a
malformed reply — through the same parsing and loop as a model, without one.

FILE is a JSON list of reply texts. When the script runs out the policy repeats its last reply, cycles, or
raises `PolicyError` (`script:FILE?after=cycle|error`). In code a script item may also be an exception, raised
in its turn: a backend failure at a chosen step. Every request is kept (`requests`) so callers can check what
the loop showed the model.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path

from uivenus.agent.policies.base import (
    PolicyBase, PolicyError, PolicyReply, PolicyRequest, PolicySpecError, register_policy, spec_options,
)

__all__ = ["AfterScript", "ScriptedPolicy"]


class AfterScript(StrEnum):
    """What a script does once every reply has been given."""

    REPEAT = "repeat"  # keep giving the last reply
    CYCLE = "cycle"  # start again from the first
    ERROR = "error"  # raise PolicyError, as a server that stopped answering


class ScriptedPolicy(PolicyBase):
    """Gives `replies` in turn (thread-safe) and keeps every request it answered."""

    name = "script"

    def __init__(self, replies: Sequence[str | Exception], *, after: AfterScript = AfterScript.REPEAT) -> None:
        if not replies:
            raise PolicySpecError("a script needs at least one reply")
        self.replies = tuple(replies)
        self.after = AfterScript(after)
        self.requests: list[PolicyRequest] = []
        self._lock = threading.Lock()

    def act(self, request: PolicyRequest) -> PolicyReply:
        with self._lock:
            turn = len(self.requests)
            self.requests.append(request)
        reply = self._reply_for(turn)
        if isinstance(reply, Exception):
            raise reply
        return PolicyReply(reply)

    def _reply_for(self, turn: int) -> str | Exception:
        n = len(self.replies)
        if turn < n:
            return self.replies[turn]
        if self.after is AfterScript.CYCLE:
            return self.replies[turn % n]
        if self.after is AfterScript.ERROR:
            return PolicyError(f"the script has no reply for turn {turn + 1}: it holds {n}; add replies or use "
                               "after=repeat|cycle")
        return self.replies[-1]


def read_script(path: Path) -> list[str]:
    """The reply texts of a script file; a clear error for anything but a non-empty JSON list of strings."""
    try:
        replies = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise PolicySpecError(f"cannot read the script {path}: {err}; it must be a JSON list of reply texts") from err
    if not isinstance(replies, list) or not replies or not all(isinstance(r, str) for r in replies):
        raise PolicySpecError(f"the script {path} must be a non-empty JSON list of reply texts (strings)")
    return replies


def _after(key: str, value: str) -> AfterScript:
    try:
        return AfterScript(value)
    except ValueError:
        raise PolicySpecError(f"{key}={value!r}: choose one of {', '.join(a.value for a in AfterScript)}") from None


@register_policy("script")
def _script(spec: str) -> ScriptedPolicy:
    path, _, query = spec.partition("?")
    if not path:
        raise PolicySpecError("script needs a file: 'script:PATH' (a JSON list of reply texts)")
    options = spec_options(query, {"after": _after}, "script")
    return ScriptedPolicy(read_script(Path(path)), **options)
