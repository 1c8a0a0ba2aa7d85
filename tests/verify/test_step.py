"""Step labels: the pure signals and rule table, then real sandbox steps in Chromium — recorded into a real store
and labelled after the fact, and labelled online before they run."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from uivenus.actions.space import Click, DoubleClick, Finished, Type
from uivenus.agent.policies import PolicyBase, PolicyReply, PolicyRequest
from uivenus.envs.browser import BrowserEnv
from uivenus.envs.sandbox import SandboxServer, get_task
from uivenus.envs.sandbox.solving import tap, tid
from uivenus.evals.verifier_data import Perturbation, record_episode
from uivenus.store import TrajectoryStore, read_episode
from uivenus.verify.base import StepLabel, Verdict, Vote
from uivenus.verify.judges import VlmJudge
from uivenus.verify.signals import (
    CHANGE_THRESHOLD, hit_test, intent_consistency, same_action, screen_change, screen_changes,
)
from uivenus.verify.step import StepSignals, StepVerifier, label_step, label_trajectory, step_evidence

# --- pure signals ---------------------------------------------------------------------------------


def test_screen_change_counts_visibly_changed_pixels() -> None:
    blank = Image.new("RGB", (1280, 720), "white")
    assert screen_change(blank, blank.copy()) == 0.0
    toggled = blank.copy()
    ImageDraw.Draw(toggled).rectangle((1100, 140, 1140, 160), fill="#1f6feb")  # a switch flipping
    assert screen_change(blank, toggled) > CHANGE_THRESHOLD
    faint = blank.copy()
    ImageDraw.Draw(faint).rectangle((0, 0, 1279, 719), fill=(250, 250, 250))  # below the pixel tolerance
    assert screen_change(blank, faint) == 0.0
    assert screen_change(blank, Image.new("RGB", (640, 360), "white")) == 1.0



def test_screen_changes_compares_each_screen_with_the_next() -> None:
    # each screen is shrunk once for both its neighbours: the figures must be screen_change's, pair by pair
    blank = Image.new("RGB", (1280, 720), "white")
    toggled = blank.copy()
    ImageDraw.Draw(toggled).rectangle((1100, 140, 1140, 160), fill="#1f6feb")
    small = Image.new("RGB", (640, 360), "white")  # shrinks to blank's comparison size: only the size rule says 1.0
    screens = [blank, toggled, toggled.copy(), None, blank, small, blank]
    expected = [screen_change(blank, toggled), 0.0, None, None, 1.0, 1.0, None]
    assert screen_changes(screens) == expected and expected[0] > CHANGE_THRESHOLD
    assert screen_changes([]) == [] and screen_changes([blank]) == [None]

def test_same_action_tolerates_a_few_pixels_only() -> None:
    assert same_action(Click(point=(100, 100)), Click(point=(105, 96)))
    assert not same_action(Click(point=(100, 100)), Click(point=(120, 100)))
    assert not same_action(Click(point=(100, 100)), DoubleClick(point=(100, 100)))
    assert same_action(Type(content="Ana"), Type(content="Ana"))
    assert not same_action(Type(content="Ana"), Type(content="Ana Lima"))


def test_intent_consistency_reads_what_the_think_text_names() -> None:
    save = Click(point=(10, 10))
    screen = "Contacts\nSave Cancel\nAna Lima"
    assert intent_consistency("I click 'Save' to store the contact.", save, "Save", screen) is True
    assert intent_consistency("I click 'Save' to store the contact.", save, "Cancel", screen) is False
    assert intent_consistency("Next I continue.", save, "Cancel", screen) is None
    assert intent_consistency("I type 'Ana Lima' into the name.", Type(content="Ana Lima"), None) is True


@pytest.mark.parametrize(("signals", "label", "rule"), [
    (StepSignals(action=None, error="ParseError: no action"), StepLabel.INCORRECT, "invalid"),
    (StepSignals(action="Click(point=(1, 2))", executed=False, error="OffScreenError"), StepLabel.INCORRECT, "invalid"),
    (StepSignals(action="Finished()", terminal=True, goal_met=True), StepLabel.CORRECT, "finished_done"),
    (StepSignals(action="Finished()", action_type="Finished", terminal=True, goal_met=False), StepLabel.INCORRECT,
     "finished_early"),
    (StepSignals(action="CallUser(content='?')", action_type="CallUser", terminal=True, goal_met=False),
     StepLabel.EXPLORATORY, "terminal"),
    (StepSignals(action="Click(point=(1, 2))", screen_changed=True, judge=Verdict("vlm", Vote.FAILURE)),
     StepLabel.INCORRECT, "judged_harmful"),
    (StepSignals(action="Click(point=(1, 2))", screen_changed=False, judge=Verdict("vlm", Vote.FAILURE)),
     StepLabel.INEFFECTIVE, "no_change"),
    (StepSignals(action="Click(point=(1, 2))", loop_count=2, hit_interactive=True), StepLabel.INEFFECTIVE, "loop"),
    (StepSignals(action="Click(point=(1, 2))", hit_interactive=False), StepLabel.INEFFECTIVE, "missed"),
    (StepSignals(action="Click(point=(1, 2))", hit_interactive=False, screen_changed=True), StepLabel.EXPLORATORY,
     "exploring"),
    (StepSignals(action="Click(point=(1, 2))", screen_changed=True, judge=Verdict("vlm", Vote.SUCCESS)),
     StepLabel.CORRECT, "judged_useful"),
    (StepSignals(action="Click(point=(1, 2))", screen_changed=True, intent_consistent=False, on_goal=True),
     StepLabel.EXPLORATORY, "off_intent"),
    (StepSignals(action="Click(point=(1, 2))", screen_changed=True, on_goal=True), StepLabel.CORRECT, "on_goal"),
    (StepSignals(action="Click(point=(1, 2))", screen_changed=True), StepLabel.EXPLORATORY, "exploring"),
])
def test_rule_table(signals: StepSignals, label: StepLabel, rule: str) -> None:
    got, reason = label_step(signals)
    assert (got, reason.split(":")[0]) == (label, rule)


# --- real sandbox steps ---------------------------------------------------------------------------

class ScriptedJudgeModel(PolicyBase):
    """A judge model that answers from the step prompt: `decide(prompt text) -> (vote, reason)`."""

    name = "scripted-judge"

    def __init__(self, decide: Callable[[str], tuple[str, str]]) -> None:
        self.decide = decide
        self.prompts: list[str] = []

    def act(self, request: PolicyRequest) -> PolicyReply:
        text = "".join(m.text for m in request.messages)
        self.prompts.append(text)
        vote, reason = self.decide(text)
        return PolicyReply(f"<verdict>{vote}</verdict><confidence>0.9</confidence><reason>{reason}</reason>")


def _blank_point(env: BrowserEnv) -> tuple[int, int]:
    """A point over nothing that can be acted on (read from the live page)."""
    width, height = env.screen_size
    for x in range(width - 40, width // 2, -60):
        for y in range(height - 30, height // 2, -40):
            hit = hit_test(env, (x, y))
            if hit is not None and not hit["interactive"] and hit["tag"] not in ("input", "textarea"):
                return x, y
    raise AssertionError("no blank point on the page")


def _record(tmp_path: Path, env: BrowserEnv, server: SandboxServer, task_id: str,
            moves: Callable[[BrowserEnv], Iterable[object]]) -> Path:
    spec = get_task(task_id).spec(server.base_url)
    env.reset(spec)
    recorded = record_episode(TrajectoryStore(tmp_path), "steps", task_id.replace("/", "."), env, spec, moves(env),
                              truth=lambda state: (False, "not graded here"), perturbation=Perturbation.REFERENCE)
    return recorded.directory


def test_offline_labels_of_real_steps(sandbox_server: SandboxServer, web_env: BrowserEnv, tmp_path: Path) -> None:
    def moves(env: BrowserEnv) -> Iterator[object]:
        blank = _blank_point(env)
        for _ in range(3):
            yield Click(point=blank)  # nothing there: a no-op, then a loop
        yield from tap(env, tid("add-contact"))  # a button the task names, and the form opens
        yield from tap(env, tid("contact-name"))
        yield Finished()

    directory = _record(tmp_path, web_env, sandbox_server, "contacts/add_contact", moves)
    trajectory = read_episode(directory)
    labels = label_trajectory(trajectory, directory)
    assert [step.label for step in labels] == [
        StepLabel.INEFFECTIVE, StepLabel.INEFFECTIVE, StepLabel.INEFFECTIVE, StepLabel.CORRECT,
        labels[4].label, StepLabel.EXPLORATORY]
    blank = labels[0].signals
    assert blank.hit_interactive is False and blank.screen_changed is False and blank.loop_count == 0
    assert labels[2].reason.startswith("loop:") and labels[2].signals.loop_count == 2
    add = labels[3].signals
    assert add.hit_interactive is True and add.screen_changed is True and add.on_goal is True
    assert add.target == "Add contact" and add.change > CHANGE_THRESHOLD
    assert labels[5].reason.startswith("terminal:")  # no trace verdict given
    assert label_trajectory(trajectory, directory, goal_met=False)[5].label is StepLabel.INCORRECT

    # the same button, judged: a step judge's opinion decides between correct and incorrect
    approving = VlmJudge(ScriptedJudgeModel(lambda prompt: ("success", "the form is what the task needs")))
    assert label_trajectory(trajectory, directory, [approving])[3].reason.startswith("judged_useful:")
    refusing = VlmJudge(ScriptedJudgeModel(lambda prompt: ("failure", "wrong button")))
    judged = label_trajectory(trajectory, directory, [refusing])
    assert judged[3].label is StepLabel.INCORRECT and "wrong button" in judged[3].reason
    assert judged[0].label is StepLabel.INEFFECTIVE  # a no-op stays a no-op whatever the judge says


def test_an_undo_is_incorrect_when_the_judge_says_so(sandbox_server: SandboxServer, web_env: BrowserEnv,
                                                     tmp_path: Path) -> None:
    def moves(env: BrowserEnv) -> Iterator[object]:
        point = yield from tap(env, tid("toggle-wifi"))  # Wi-Fi off: what the task asks
        yield Click(point=point)  # Wi-Fi on again: progress undone
        yield from tap(env, tid("section-display"))  # a look elsewhere that the task does not name
        yield Finished()

    directory = _record(tmp_path, web_env, sandbox_server, "settings/wifi_off_bluetooth_on", moves)
    trajectory = read_episode(directory)
    plain = label_trajectory(trajectory, directory)
    assert plain[2].label is StepLabel.EXPLORATORY and plain[2].signals.on_goal is False

    def decide(prompt: str) -> tuple[str, str]:
        history = prompt.split("Earlier actions, in order:")[1].split("Screen before the step:")[0]
        return ("failure", "it switches Wi-Fi back on") if "toggle" in history.lower() or "Wi-Fi" in history \
            else ("success", "Wi-Fi goes off as asked")

    model = ScriptedJudgeModel(decide)
    labels = label_trajectory(trajectory, directory, [VlmJudge(model)])
    assert labels[0].label is StepLabel.CORRECT and labels[0].signals.judge.vote is Vote.SUCCESS
    assert labels[1].label is StepLabel.INCORRECT and "switches Wi-Fi back on" in labels[1].reason
    assert labels[1].signals.screen_changed is True
    assert "Click at (" in model.prompts[1] and "'Wi-Fi'" in model.prompts[1]  # the factual history, with targets


def test_online_labels_before_execution(sandbox_server: SandboxServer, web_env: BrowserEnv) -> None:
    spec = get_task("contacts/add_contact").spec(sandbox_server.base_url)
    observation = web_env.reset(spec)
    verifier = StepVerifier(env=web_env)
    blank = Click(point=_blank_point(web_env))
    reasons = []
    for _ in range(3):
        labelled = verifier.before(step_evidence(spec, observation.screenshot, blank), blank)
        reasons.append(labelled.reason.split(":")[0])
        assert labelled.label is StepLabel.INEFFECTIVE and labelled.signals.screen_changed is None
        observation = web_env.step(blank).observation
        assert verifier.after(observation.screenshot) < CHANGE_THRESHOLD
    assert reasons == ["missed", "missed", "loop"]  # the third try repeats two that changed nothing

    add = Click(point=web_env.center(tid("add-contact")))
    labelled = verifier.before(step_evidence(spec, observation.screenshot, add,
                                             intent="I click 'Add contact' to open the form."), add)
    assert labelled.label is StepLabel.CORRECT and labelled.signals.hit_interactive is True
    assert labelled.signals.intent_consistent is True
    wrong_intent = verifier.before(step_evidence(spec, observation.screenshot, add, intent="I click 'Search'."), add)
    assert wrong_intent.label is StepLabel.EXPLORATORY and wrong_intent.reason.startswith("off_intent:")

    garbled = verifier.before(replace(step_evidence(spec, observation.screenshot, add), action="Clik(point=(1,"))
    assert garbled.label is StepLabel.INCORRECT and garbled.reason.startswith("invalid:")
