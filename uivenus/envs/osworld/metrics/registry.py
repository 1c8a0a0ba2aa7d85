"""The metric registry: each OSWorld `evaluator.func` name maps to one scoring function, added where it is defined.

Kept apart from the package `__init__` so the metric modules can register themselves without a circular import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

__all__ = ["METRICS", "Metric", "UnknownMetric", "metric", "metric_for"]


class Metric(Protocol):
    """OSWorld's convention: the getter values (`result`, then `expected` or `rules`) and options in, a score in [0, 1]
    out; a missing or unreadable file scores 0.0 rather than raising."""

    def __call__(self, result: Any, *args: Any, **options: Any) -> float: ...


class UnknownMetric(LookupError):
    """A task names a metric we do not implement; the message lists the ones we do."""

    def __init__(self, name: object, known: tuple[str, ...]) -> None:
        self.name, self.known = name, known
        super().__init__(f"unknown OSWorld metric {name!r}; implemented: {', '.join(known)}")


_METRICS: dict[str, Metric] = {}
#: Every implemented metric by its OSWorld name (read-only; `@metric` fills it).
METRICS: Mapping[str, Metric] = MappingProxyType(_METRICS)

F = TypeVar("F", bound=Callable[..., float])


def metric(name: str) -> Callable[[F], F]:
    """Register the decorated function as the metric OSWorld calls `name`; a name is registered once."""

    def register(fn: F) -> F:
        if name in _METRICS:
            raise ValueError(f"OSWorld metric {name!r} is registered twice")
        _METRICS[name] = fn
        return fn

    return register


def metric_for(name: object) -> Metric:
    """The metric called `name`; `UnknownMetric` (listing the known names) when there is none."""
    found = _METRICS.get(name) if isinstance(name, str) else None
    if found is None:
        raise UnknownMetric(name, tuple(sorted(_METRICS)))
    return found
