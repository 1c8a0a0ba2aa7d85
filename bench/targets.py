"""How every bench prints a measured ratio beside its target, so a run says at a glance what is met (issue 17)."""

from __future__ import annotations


def against(value: float, target: float, *, at_least: bool = False) -> str:
    """`1.027 (target <= 1.15: PASS)`; `at_least` for rates that must reach the target rather than stay under it."""
    met = value >= target if at_least else value <= target
    return f"{value:.3f} (target {'>=' if at_least else '<='} {target}: {'PASS' if met else 'MISS'})"
