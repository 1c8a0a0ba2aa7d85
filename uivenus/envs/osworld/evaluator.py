"""An OSWorld task's `evaluator` turned into a verdict: postconfig steps, getters, metrics, combined as the benchmark
does.

`func` is one metric name or a list; with a list, `result`/`expected`/`options` are lists of the same length and
`conj` ("and", the default, or "or") combines the scores: "and" stops at the first 0 and averages, "or" stops at
the first 1 and takes the best. `infeasible` tasks pass only when the agent refused (its last action a
`CallUser`), and a refusal fails every feasible task. Anything that raises on the way (a step, a getter, a
metric) is an `Evaluation` with `error` set and `success` False: a crashed evaluator is never a success.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from uivenus.actions.space import Action, ActionSequence, CallUser
from uivenus.envs.osworld.context import TaskContext
from uivenus.envs.osworld.getters import get
from uivenus.envs.osworld.metrics import metric_for
from uivenus.envs.osworld.setup_steps import run_steps

__all__ = ["INFEASIBLE", "Evaluation", "EvaluatorError", "evaluate", "refused"]

INFEASIBLE = "infeasible"
_CONJ = ("and", "or")


class EvaluatorError(ValueError):
    """The evaluator mapping is malformed (lists of different lengths, an unknown conj); names the field."""


@dataclass(frozen=True)
class Evaluation:
    """The verdict of an evaluator: its score in [0, 1], success (score 1), why, and the error if it crashed."""

    score: float
    success: bool
    reason: str
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score, "success": self.success, "reason": self.reason, "error": self.error}


def refused(last_action: Action | None) -> bool:
    """The agent gave the task back to the user: OSWorld's FAIL action is our `CallUser` (alone or ending a
    sequence)."""
    if isinstance(last_action, ActionSequence) and last_action.actions:
        last_action = last_action.actions[-1]
    return isinstance(last_action, CallUser)


def _listed(value: Any, count: int, name: str) -> list[Any]:
    """`value` as a list of `count` (a single value given for a list of metrics is repeated, None stays None)."""
    if isinstance(value, list):
        if len(value) != count:
            raise EvaluatorError(f"evaluator.{name} has {len(value)} entries for {count} metrics")
        return value
    return [value] * count


def _score(ctx: TaskContext, name: str, result: Any, expected: Any, options: Any) -> float:
    metric = metric_for(name)
    if result is None:
        raise EvaluatorError(f"metric {name!r} has no 'result' getter")
    if options is not None and not isinstance(options, Mapping):
        raise EvaluatorError(f"options of {name!r} must be a mapping, got {options!r}")
    got = get(ctx, result)
    args = (got,) if expected is None else (got, get(ctx, expected))
    score = float(metric(*args, **dict(options or {})))
    if not 0.0 <= score <= 1.0:
        raise EvaluatorError(f"metric {name!r} returned {score}, outside [0, 1]")
    return score


def _combine(ctx: TaskContext, evaluator: Mapping[str, Any]) -> tuple[float, str]:
    funcs = evaluator.get("func")
    names: Sequence[Any] = funcs if isinstance(funcs, list) else [funcs]
    if not names or not all(isinstance(n, str) for n in names):
        raise EvaluatorError(f"evaluator.func must be a metric name or a list of them, got {funcs!r}")
    conj = evaluator.get("conj", "and")
    if conj not in _CONJ:
        raise EvaluatorError(f"evaluator.conj must be 'and' or 'or', got {conj!r}")
    results = _listed(evaluator.get("result"), len(names), "result")
    expecteds = _listed(evaluator.get("expected"), len(names), "expected")
    options = _listed(evaluator.get("options"), len(names), "options")
    scores: list[float] = []
    for name, result, expected, option in zip(names, results, expecteds, options, strict=True):
        score = _score(ctx, name, result, expected, option)
        scores.append(score)
        if conj == "and" and score == 0.0:
            return 0.0, f"{name} scored 0"
        if conj == "or" and score == 1.0:
            return 1.0, f"{name} scored 1"
    total = sum(scores) / len(scores) if conj == "and" else max(scores)
    return total, ", ".join(f"{n}={s:g}" for n, s in zip(names, scores, strict=False))


def evaluate(evaluator: Mapping[str, Any], ctx: TaskContext, *, last_action: Action | None) -> Evaluation:
    """Judge the live episode with the task's evaluator (postconfig steps run first)."""
    try:
        if not isinstance(evaluator, Mapping):
            raise EvaluatorError(f"evaluator must be a mapping, got {type(evaluator).__name__}")
        if evaluator.get("func") == INFEASIBLE:
            ok = refused(last_action)
            return Evaluation(float(ok), ok, "infeasible task: the agent refused" if ok
                              else "infeasible task: the agent did not refuse (a CallUser)")
        if refused(last_action):
            return Evaluation(0.0, False, "the agent refused a feasible task")
        run_steps(ctx, evaluator.get("postconfig", []), "postconfig")
        score, reason = _combine(ctx, evaluator)
    except Exception as exc:  # noqa: BLE001 - every crash becomes this task's error, never a success
        return Evaluation(0.0, False, "the evaluator failed", f"{type(exc).__name__}: {exc}")
    return Evaluation(score, score >= 1.0, reason)
