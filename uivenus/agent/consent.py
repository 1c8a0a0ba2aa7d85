"""Cookie and consent banners, dismissed as steps of the episode that anyone reading the trajectory can see.

Live sites greet a fresh browser with consent banners that cover what the task needs. `ConsentDismisser` wraps a
policy for one episode: before each request reaches the policy it asks the live page whether a configured
consent button is visible (`selectors`, CSS, first match wins) and, if so, answers with a click on it itself.
That reply goes through the loop like any model reply — parsed, guarded, executed and recorded as a step — and
its text begins with `DISMISSER_MARK`, so a step taken by the dismisser is never mistaken for the model's and is
never silent. Each button is clicked at most `max_clicks` times per episode, so a banner that will not go away
cannot eat the step budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from uivenus.actions.grammar import format_response
from uivenus.actions.space import Click
from uivenus.agent.policies.base import (
    AnswerKey, AnswerKeyed, Policy, PolicyBase, PolicyReply, PolicyRequest, request_frame,
)
from uivenus.envs.base import EnvError

__all__ = ["DEFAULT_CONSENT_SELECTORS", "DISMISSER_MARK", "ConsentDismisser", "is_dismisser_step"]

#: The think text every dismisser reply starts with (how reports and results tell its steps apart).
DISMISSER_MARK = "consent-dismisser:"
#: Accept buttons of the common consent platforms, and the generic shapes sites use.
DEFAULT_CONSENT_SELECTORS: tuple[str, ...] = (
    "#onetrust-accept-btn-handler", "#didomi-notice-agree-button", ".fc-cta-consent",
    "#CybotCookiebotDialogBodyLevelButtonLevelOptinAllowAll", "button#L2AGLb", "[data-testid=cookie-accept]",
    "[data-cookie-accept]", "#cookie-banner button.accept", ".cookie-consent button.accept",
)


def is_dismisser_step(response: str | None) -> bool:
    """Whether a recorded reply was the dismisser's, not the policy's."""
    return bool(response) and response.lstrip().removeprefix("<think>").lstrip().startswith(DISMISSER_MARK)


class ConsentDismisser(PolicyBase):
    """`policy` for one episode on `env`, with consent banners clicked away first (see the module docstring)."""

    def __init__(self, policy: Policy, env: Any, selectors: Sequence[str] = DEFAULT_CONSENT_SELECTORS,
                 max_clicks: int = 2) -> None:
        self.inner, self.env, self.selectors, self.max_clicks = policy, env, tuple(selectors), max_clicks
        self.name = getattr(policy, "name", "policy")
        self.clicks: dict[str, int] = {}

    def with_answers(self, key: AnswerKey) -> ConsentDismisser:
        inner = self.inner.with_answers(key) if isinstance(self.inner, AnswerKeyed) else self.inner
        dismisser = ConsentDismisser(inner, self.env, self.selectors, self.max_clicks)
        dismisser.clicks = self.clicks
        return dismisser

    def _banner_button(self) -> tuple[str, tuple[int, int]] | None:
        for selector in self.selectors:
            if self.clicks.get(selector, 0) >= self.max_clicks:
                continue
            try:
                point = self.env.center(selector)
            except EnvError:  # the page is gone or mid-navigation: let the policy look at it
                return None
            if point is not None:
                return selector, point
        return None

    def act(self, request: PolicyRequest) -> PolicyReply:
        found = self._banner_button()
        if found is None:
            return self.inner.act(request)
        selector, point = found
        self.clicks[selector] = self.clicks.get(selector, 0) + 1
        action = request_frame(request.context).action_to_model(Click(point=point))
        return PolicyReply(text=format_response(
            action, think=f"{DISMISSER_MARK} a consent banner covers the page; clicking its accept button "
                          f"({selector}) before the policy acts."))

    def close(self) -> None:
        return None  # the wrapped policy belongs to the caller
