"""`noop`: answers `Finished` at once — the floor every benchmark reports (a task the start state already
satisfies, or an infeasible task judged by its final state, passes without a single action).

It reads nothing of the request and writes the full `<action>…</action>` text a model would, so its reply goes
through the same parsing as any other.
"""

from __future__ import annotations

from uivenus.actions.grammar import format_response
from uivenus.actions.space import Finished
from uivenus.agent.policies.base import PolicyBase, PolicyReply, PolicyRequest, PolicySpecError, register_policy

__all__ = ["NoopPolicy"]


class NoopPolicy(PolicyBase):
    """Ends every episode on its first step with `Finished()`."""

    name = "noop"
    REPLY = format_response(Finished())

    def act(self, request: PolicyRequest) -> PolicyReply:
        return PolicyReply(text=self.REPLY)


@register_policy("noop")
def _noop(spec: str) -> NoopPolicy:
    if spec:
        raise PolicySpecError(f"noop takes no options, got 'noop:{spec}'; use plain 'noop'")
    return NoopPolicy()
