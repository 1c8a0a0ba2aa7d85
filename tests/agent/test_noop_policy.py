"""`noop`: the floor that ends every episode at once."""

import pytest

from uivenus.actions.grammar import parse_response
from uivenus.actions.space import Finished
from uivenus.agent.policies import PolicyRequest, PolicySpecError, policy_from_spec


def test_noop_answers_finished_at_once_and_takes_no_options() -> None:
    policy = policy_from_spec("noop")
    reply = policy.act(PolicyRequest(messages=(), context={"screen_size": (100, 100)}))
    assert parse_response(reply.text).actions == (Finished(),)
    with pytest.raises(PolicySpecError, match="noop takes no options"):
        policy_from_spec("noop:fast")
