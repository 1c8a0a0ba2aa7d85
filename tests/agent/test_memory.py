"""Memory: TakeNote contents shown to the model for the rest of the episode, and kept across episodes on request."""

from __future__ import annotations

import pytest
from PIL import Image

from uivenus.actions.coords import Frame
from uivenus.actions.space import TakeNote
from uivenus.agent.conversation import build_messages
from uivenus.agent.loop import run_episode
from uivenus.agent.memory import Memory, NotesError, NotesFile, family_of
from uivenus.agent.policies import (
    AnswerKey, Policy, PolicyBase, PolicyReply, PolicyRequest, policy_from_spec, with_answers,
)
from uivenus.agent.safety import Guard
from uivenus.envs.sandbox import get_task
from uivenus.envs.sandbox.suites.mail import CODE
from uivenus.records import Outcome

NOTE = f"Nimbus verification code: {CODE}"


def test_notes_file_round_trip_survives_a_torn_line(tmp_path) -> None:
    notes = NotesFile.for_family(tmp_path, "alex morgan", "mail")
    assert notes.path == tmp_path / "alex_morgan" / "mail.jsonl"
    assert notes.load() == ()
    notes.append("first", task="mail/share_code")
    with open(notes.path, "ab") as f:
        f.write(b'{"note": "cut sho')  # a crash in the middle of a write
    notes.append("second")
    assert notes.load() == ("first", "second")
    assert notes.path.read_bytes().count(b"\n") == 3  # the torn line was closed before ours began
    with pytest.raises(NotesError, match="empty file name"):
        NotesFile.for_family(tmp_path, "../..", "mail")
    assert family_of("mail/share_code") == "mail" and family_of("cli", "notes") == "notes"


def test_memory_starts_from_earlier_episodes_and_persists_new_notes(tmp_path) -> None:
    notes = NotesFile.for_family(tmp_path, "alex", "mail")
    notes.append("the budget is 12% over plan")
    memory = Memory(notes_file=notes, task_id="mail/x")
    memory.take("  Lee's address is lee@example.com  ")
    memory.take("   ")
    assert memory.notes == ("the budget is 12% over plan", "Lee's address is lee@example.com")
    assert Memory(notes_file=notes).notes == memory.notes  # the next episode of the family starts with both
    assert Memory(["only here"]).notes == ("only here",)  # without a file nothing is kept
    frame = Frame.relative(100, 100)
    messages = build_messages("system", "task", [], Image.new("RGB", (100, 100)), frame=frame, notes=memory.notes)
    assert "- Lee's address is lee@example.com" in messages[-1].text


class Recording(PolicyBase):
    """The oracle (told the answers through this wrapper), keeping every request it answered."""

    name = "recording-oracle"

    def __init__(self, inner: Policy | None = None, requests: list[PolicyRequest] | None = None) -> None:
        self.inner = inner or policy_from_spec("oracle")
        self.requests = [] if requests is None else requests

    def with_answers(self, key: AnswerKey) -> Recording:
        return Recording(with_answers(self.inner, key), self.requests)

    def act(self, request: PolicyRequest) -> PolicyReply:
        self.requests.append(request)
        return self.inner.act(request)


def test_a_note_taken_in_the_loop_reaches_later_turns_and_the_notes_file(web_env, sandbox_server, tmp_path) -> None:
    spec = get_task("mail/share_code").spec(sandbox_server.base_url, "web")
    notes = NotesFile.for_family(tmp_path, "alex", family_of(spec.id, spec.app))
    policy = Recording()
    memory = Memory(notes_file=notes, task_id=spec.id)
    trajectory = run_episode(web_env, policy, spec, guard=Guard("allow"), memory=memory)
    assert trajectory.outcome is Outcome.FINISHED and trajectory.verdicts["sandbox"]["passed"]
    taken = next(i for i, s in enumerate(trajectory.steps) if isinstance(s.action, TakeNote))
    assert trajectory.steps[taken].executed and trajectory.steps[taken].action.content == NOTE
    shown = [f"- {NOTE}" in request.messages[-1].text for request in policy.requests]
    assert shown == [i > taken for i in range(len(trajectory.steps))]
    assert trajectory.metadata["notes"] == [NOTE]
    assert notes.load() == (NOTE,)
