"""Whether we can run an OSWorld task, read from its JSON alone: the steps, getters, metrics and apps we lack.

Built from the registries themselves (`SETUP_STEPS`, `GETTERS`, `METRICS`, `apps.UNSUPPORTED_APPS`), so a newly
registered step or metric is supported everywhere at once. The loader and `eval osworld --plan-only` count the
reasons; an empty tuple means the task can run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from uivenus.envs.osworld.apps import UNSUPPORTED_APPS
from uivenus.envs.osworld.evaluator import INFEASIBLE
from uivenus.envs.osworld.getters import GETTERS, UNSUPPORTED_GETTERS
from uivenus.envs.osworld.metrics import METRICS
from uivenus.envs.osworld.setup_steps import SETUP_STEPS, UNSUPPORTED_STEPS

__all__ = ["unsupported"]


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


def _kinds(items: Any) -> Iterator[Any]:
    for item in _as_list(items):
        yield item.get("type") if isinstance(item, Mapping) else item


def _reason(what: str, name: Any, known: Mapping[str, Any], refused: Mapping[str, str]) -> str | None:
    if name in refused:
        return f"{what} {name!r}: {refused[name]}"
    return None if isinstance(name, str) and name in known else f"{what} {name!r}: unknown"


def unsupported(task_json: Mapping[str, Any]) -> tuple[str, ...]:
    """Why the task cannot run here (each missing step, getter, metric or app once, in order); () when it can."""
    evaluator = task_json.get("evaluator") if isinstance(task_json.get("evaluator"), Mapping) else {}
    reasons = [f"app {app!r}: {UNSUPPORTED_APPS[app]}" for app in _as_list(task_json.get("related_apps"))
               if app in UNSUPPORTED_APPS]
    for kind in [*_kinds(task_json.get("config")), *_kinds(evaluator.get("postconfig"))]:
        reasons.append(_reason("setup step", kind, SETUP_STEPS, UNSUPPORTED_STEPS))
    funcs = _as_list(evaluator.get("func"))
    if not funcs:
        reasons.append("evaluator: no 'func' (a metric name or a list of them)")
    elif funcs != [INFEASIBLE]:
        reasons += [_reason("metric", name, METRICS, {}) for name in funcs]
        for kind in [*_kinds(evaluator.get("result")), *_kinds(evaluator.get("expected"))]:
            reasons.append(_reason("getter", kind, GETTERS, UNSUPPORTED_GETTERS))
    return tuple(dict.fromkeys(r for r in reasons if r is not None))
