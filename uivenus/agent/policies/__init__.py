"""Policy backends; each module registers its SPEC prefix with `register_policy` when imported."""

from __future__ import annotations

import importlib
import pkgutil

from uivenus.agent.policies.base import (
    PRESETS, AnswerKey, AnswerKeyed, Message, Mode, Policy, PolicyBase, PolicyError, PolicyReply, PolicyRequest,
    PolicySpecError, Sampling, policy_from_spec, register_policy, request_frame, with_answers,
)

__all__ = [
    "PRESETS", "AnswerKey", "AnswerKeyed", "Message", "Mode", "Policy", "PolicyBase", "PolicyError", "PolicyReply",
    "PolicyRequest", "PolicySpecError", "Sampling", "load_backends", "policy_from_spec", "register_policy",
    "request_frame", "with_answers",
]


def load_backends() -> None:
    """Import every backend module of this package (cheap: heavy imports happen inside the backends)."""
    for module in pkgutil.iter_modules(__path__):
        if module.name != "base":
            importlib.import_module(f"{__name__}.{module.name}")
