"""Sample-level verification: label each step Correct, Exploratory, Ineffective or Incorrect.

A label comes from a few observable signals (`StepSignals`) and a small ordered rule table (`STEP_RULES`), so every
label carries the rule that gave it and can be checked by hand:

- hit_interactive: does the action's point land on something that can be acted on (a control, a link, an element
  with an onclick handler or a pointer cursor)? Read from the live DOM (`hit_test`) online, from the recorded
  probe (`step.info["hit"]`) offline; unknown where there is no DOM.
- screen_changed: the share of pixels that differ between the screen before the step and the screen after it
  (`screen_change`), above `CHANGE_THRESHOLD`. Unknown before execution and for the last step.
- loop: how often the same action (same type, points within `SAME_POINT_PX`, same text/keys) was already tried in
  the recent steps *without changing the screen*.
- intent consistency: the agent's <think> text is a claim; it is consistent when it names the target the point
  hits (or the text it types), inconsistent when it names something else on the screen, unknown otherwise.
- on_goal: the target's text or the typed text shares a word with the task's instruction.
- judge: the vote of step judges (`VlmJudge.judge_step`, or anything with `judge_step`) when given.

The measures themselves (page probes, screen change, same action, intent, goal words) are signals.py's; this
module gathers them per step, online or offline, and decides the label.

The rule table, first match wins (`label_step` returns the label and "<rule>: <why>"):

    invalid         no action parsed, or it was rejected / did not execute       -> INCORRECT
    finished_done   terminal step, and the trace verdict says the goal is met     -> CORRECT
    finished_early  Finished/Answer while the trace verdict says it is not        -> INCORRECT
    terminal        any other terminal step (no trace verdict yet, CallUser)      -> EXPLORATORY
    judged_harmful  a step judge says it does not advance the goal, and it did
                    (or may) change the screen                                    -> INCORRECT
    loop            the same action already tried LOOP_REPEATS times recently
                    without changing the screen                                   -> INEFFECTIVE
    no_change       the screen did not change                                     -> INEFFECTIVE
    missed          the point hits nothing actionable (and no change is known)    -> INEFFECTIVE
    judged_useful   a step judge says it advances the goal                        -> CORRECT
    off_intent      the think text names something else on the screen            -> EXPLORATORY
    on_goal         it acts on / enters something the instruction names           -> CORRECT
    exploring       anything else                                                 -> EXPLORATORY

The same rules serve online (`StepVerifier.before`, before the action runs: no screen change known yet) and
offline (`label_trajectory`, after the fact, from a stored episode).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

from PIL import Image

from uivenus.actions.calls import format_action, parse_action
from uivenus.actions.syntax import ParseError
from uivenus.actions.points import iter_points
from uivenus.actions.space import Action, ActionType, CallUser, Type
from uivenus.actions.values import ActionError
from uivenus.agent.precheck import PrecheckDecision
from uivenus.envs.base import Observation
from uivenus.records import Step, TaskSpec, Trajectory
from uivenus.store import StoreError, screenshot
from uivenus.verify.base import StepEvidence, StepLabel, Verdict, VerifyError, Vote
from uivenus.verify.keypoints import extract_key_points, key_point_texts
from uivenus.verify.signals import (
    CHANGE_THRESHOLD, HIT_KEY, SCREEN_TEXT_KEY, action_fields, hit_test,
    intent_consistency, on_goal, read_screen_text, same_action, screen_change, screen_changes, think_text,
)
from uivenus.verify.voting import aggregate, as_verdict

__all__ = [
    "FLAGGED_RULES", "LabelledStep", "STEP_RULES", "StepJudge", "StepPrecheck", "StepRule", "StepSignals",
    "StepVerifier", "label_step",
    "label_trajectory", "load_screens", "step_evidence", "step_history_line",
]

#: How far back a loop is looked for, and how many unchanged earlier tries make the next one a loop.
LOOP_WINDOW = 6
LOOP_REPEATS = 2

#: Pointer actions that act on what lies under their point (the hit test is meaningful for these).
_ACTING = frozenset({ActionType.CLICK, ActionType.DOUBLE_CLICK, ActionType.TRIPLE_CLICK, ActionType.RIGHT_CLICK,
                     ActionType.MIDDLE_CLICK, ActionType.LONG_PRESS, ActionType.SELECT_OPTION})


# --- signals and the rule table -----------------------------------------------------------------------

@dataclass(frozen=True)
class StepSignals:
    """Everything a label is decided from (None: unknown, not observed)."""

    action: str | None  # the action as the grammar writes it; None when the reply held no valid action
    action_type: str | None = None
    executed: bool | None = None  # None: not run yet (online, before execution)
    error: str | None = None
    terminal: bool = False
    hit_interactive: bool | None = None
    target: str | None = None  # the text of what the point hits
    entered: str | None = None  # the text a Type enters
    change: float | None = None  # share of pixels changed by the step
    screen_changed: bool | None = None
    loop_count: int = 0  # earlier identical tries in the window that changed nothing
    intent_consistent: bool | None = None
    on_goal: bool | None = None
    judge: Verdict | None = None  # the step judges' combined verdict
    goal_met: bool | None = None  # for terminal steps: the trace verdict (set by trace verification)
    loop_repeats: int = LOOP_REPEATS

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "judge"}
        out["judge"] = self.judge.to_dict() if self.judge is not None else None
        return out

    @property
    def looping(self) -> bool:
        return self.loop_count >= self.loop_repeats


@dataclass(frozen=True)
class StepRule:
    """One row of the rule table: when `applies`, the step gets `label` and `why(signals)` as its reason."""

    name: str
    label: StepLabel
    applies: Callable[[StepSignals], bool]
    why: Callable[[StepSignals], str]


def _judged(s: StepSignals, vote: Vote) -> bool:
    return s.judge is not None and s.judge.vote is vote


def _q(text: str | None) -> str:
    return repr((text or "")[:60])


def _acted(s: StepSignals) -> str:
    return _q(s.entered if s.entered is not None else s.target)


#: The rule table, first match wins (a documented order: invalidity, then the end of the episode, then harm,
#: then doing nothing, then progress).
STEP_RULES: tuple[StepRule, ...] = (
    StepRule("invalid", StepLabel.INCORRECT, lambda s: s.action is None or s.executed is False,
             lambda s: f"no valid action was executed: {s.error or 'the reply held no action'}"),
    StepRule("finished_done", StepLabel.CORRECT, lambda s: s.terminal and s.goal_met is True,
             lambda s: "ends the episode with the goal met"),
    StepRule("finished_early", StepLabel.INCORRECT,
             lambda s: s.terminal and s.goal_met is False and s.action_type != CallUser.type.value,
             lambda s: "ends the episode (claims to be done) while the goal is not met"),
    StepRule("terminal", StepLabel.EXPLORATORY, lambda s: s.terminal,
             lambda s: "ends the episode; the trace verdict decides whether that was right"),
    StepRule("judged_harmful", StepLabel.INCORRECT,
             lambda s: _judged(s, Vote.FAILURE) and s.screen_changed is not False,
             lambda s: f"the step judge says it works against the goal: {s.judge.reason if s.judge else ''}"),
    StepRule("loop", StepLabel.INEFFECTIVE, lambda s: s.looping,
             lambda s: f"the same action was already tried {s.loop_count} times recently without changing the screen"),
    StepRule("no_change", StepLabel.INEFFECTIVE, lambda s: s.screen_changed is False,
             lambda s: f"the screen did not change ({(s.change or 0.0):.2%} of pixels)"),
    StepRule("missed", StepLabel.INEFFECTIVE, lambda s: s.hit_interactive is False and not s.screen_changed,
             lambda s: f"the point hits nothing that can be acted on ({_q(s.target)})"),
    StepRule("judged_useful", StepLabel.CORRECT, lambda s: _judged(s, Vote.SUCCESS),
             lambda s: f"the step judge says it advances the goal: {s.judge.reason if s.judge else ''}"),
    StepRule("off_intent", StepLabel.EXPLORATORY, lambda s: s.intent_consistent is False,
             lambda s: f"acts on {_q(s.target)}, which the stated intent does not name"),
    StepRule("on_goal", StepLabel.CORRECT, lambda s: bool(s.on_goal),
             lambda s: f"acts on or enters what the task names ({_acted(s)})"),
    StepRule("exploring", StepLabel.EXPLORATORY, lambda s: True,
             lambda s: ("works, but nothing ties it to the goal" if s.screen_changed
                        else "no evidence it advances the goal")),
)


def label_step(signals: StepSignals, rules: Sequence[StepRule] = STEP_RULES) -> tuple[StepLabel, str]:
    """The label of the first rule that applies, and its reason prefixed by the rule's name."""
    for rule in rules:
        if rule.applies(signals):
            return rule.label, f"{rule.name}: {rule.why(signals)}"
    raise VerifyError("the step rule table has no catch-all rule; end it with one that always applies")


class LabelledStep(NamedTuple):
    label: StepLabel
    reason: str
    signals: StepSignals

    def to_labels(self) -> dict[str, Any]:
        """What goes into the store's labels.jsonl for this step."""
        return {"step_label": self.label.value, "step_reason": self.reason, "step_signals": self.signals.to_dict()}


@runtime_checkable
class StepJudge(Protocol):
    """A judge of single steps (`VlmJudge` is one)."""

    name: str

    def judge_step(self, step: StepEvidence) -> Verdict: ...


def _step_verdict(judges: Iterable[Any], evidence: StepEvidence) -> Verdict | None:
    """The step judges' majority as one verdict; None when no judge can judge steps."""
    verdicts = [judge.judge_step(evidence) for judge in judges if isinstance(judge, StepJudge)]
    if len(verdicts) <= 1:
        return verdicts[0] if verdicts else None
    combined = as_verdict(aggregate(verdicts, "majority"), "+".join(v.judge for v in verdicts))
    return replace(combined, reason=f"{combined.reason}; " + "; ".join(f"{v.judge}: {v.reason}" for v in verdicts))


def _target_text(step: Step) -> str | None:
    """The recorded text of what the step's point hit: the recorder's probe, else the guard's DOM/tree/OCR read."""
    hit = step.info.get(HIT_KEY)
    if isinstance(hit, Mapping) and hit.get("text") is not None:
        return str(hit["text"])
    guard = step.info.get("guard")
    if isinstance(guard, Mapping) and guard.get("source") in ("dom", "a11y", "ocr"):
        return guard.get("target") or ""
    return None


def step_history_line(step: Step) -> str:
    """A factual line about one step (never the agent's own words): what ran, on what, and whether it worked."""
    action = step.action
    if action is None:
        return f"step {step.index}: no valid action ({step.error or 'unparsed reply'})"
    if action.is_terminal:
        return f"step {step.index}: {action.type.value}"
    points = [p for _, p in iter_points(action)]
    if points and action.type in _ACTING | {ActionType.HOVER}:
        x, y = points[0]
        what = f"{action.type.value} at ({x:g}, {y:g})"
        extra = {k: v for k, v in action_fields(action).items() if k != "type"}
        if extra:
            what += " " + ", ".join(f"{k}={v!r}" for k, v in extra.items())
    else:
        what = format_action(action)
    target = _target_text(step)
    if target:
        what += f" on {target[:80]!r}"
    outcome = "executed" if step.executed else f"failed ({step.error or 'not executed'})"
    return f"step {step.index}: {what} -> {outcome}"


# --- offline: a stored episode ------------------------------------------------------------------------

def load_screens(trajectory: Trajectory, episode_dir: str | Path) -> list[Image.Image | None]:
    """Each step's screenshot (None where a step has none), loaded once for all the checks that compare them."""
    out: list[Image.Image | None] = []
    for step in trajectory.steps:
        try:
            out.append(screenshot(episode_dir, step) if step.screen else None)
        except StoreError:
            out.append(None)
    return out


def _loop_count(actions: Sequence[Action | None], changed: Sequence[bool | None], index: int,
                window: int = LOOP_WINDOW) -> int:
    action = actions[index]
    if action is None:
        return 0
    return sum(1 for j in range(max(0, index - window), index)
               if actions[j] is not None and changed[j] is False and same_action(actions[j], action))


def label_trajectory(trajectory: Trajectory, episode_dir: str | Path, judges: Sequence[Any] = (), *,
                     goal_met: bool | None = None, threshold: float = CHANGE_THRESHOLD, repeats: int = LOOP_REPEATS,
                     screens: Sequence[Image.Image | None] | None = None,
                     changes: Sequence[float | None] | None = None) -> list[LabelledStep]:
    """Label every step of a stored episode after the fact. `judges` that can judge steps (`judge_step`) are asked
    about each non-terminal step; `goal_met` (the trace verdict) labels the terminal step; `screens` are the
    step screenshots when already loaded (`load_screens`), `changes` their `screen_changes` when already
    computed."""
    steps = trajectory.steps
    screens = list(screens) if screens is not None else load_screens(trajectory, episode_dir)
    changes = list(changes) if changes is not None else screen_changes(screens)
    changed = [None if c is None else c > threshold for c in changes]
    actions = [s.action for s in steps]
    points = key_point_texts(extract_key_points(trajectory.task.instruction))
    step_judges = [j for j in judges if isinstance(j, StepJudge)]
    out = []
    for i, step in enumerate(steps):
        action = step.action
        terminal = action is not None and action.is_terminal
        target = _target_text(step)
        hit = step.info.get(HIT_KEY)
        interactive = (bool(hit["interactive"]) if isinstance(hit, Mapping) and "interactive" in hit
                       and action is not None and action.type in _ACTING else None)
        verdict = None
        if step_judges and action is not None and not terminal and screens[i] is not None:
            evidence = StepEvidence(
                task=trajectory.task, before=screens[i], action=format_action(action), intent=think_text(step.response),
                after=screens[i + 1] if i + 1 < len(screens) else None,
                history=tuple(step_history_line(s) for s in steps[:i]), key_points=points)
            verdict = _step_verdict(step_judges, evidence)
        signals = StepSignals(
            action=format_action(action) if action is not None else None,
            action_type=action.type.value if action is not None else None,
            executed=step.executed if action is not None else False, error=step.error, terminal=terminal,
            hit_interactive=interactive, target=target, entered=action.content if isinstance(action, Type) else None,
            change=None if terminal else changes[i],
            screen_changed=None if terminal else changed[i], loop_count=_loop_count(actions, changed, i),
            intent_consistent=(intent_consistency(think_text(step.response), action, target,
                                                  step.info.get(SCREEN_TEXT_KEY)) if action is not None else None),
            on_goal=on_goal(action, target, trajectory.task.instruction) if action is not None else None,
            judge=verdict, goal_met=goal_met if terminal else None, loop_repeats=repeats,
        )
        out.append(LabelledStep(*label_step(signals), signals))
    return out


# --- online: before each action runs ------------------------------------------------------------------

@dataclass
class _Tried:
    action: Action
    before: Image.Image
    changed: bool | None = None


@dataclass
class StepVerifier:
    """The online hook: `before(evidence)` labels a proposed action before it runs (DOM hit test on `env`, loops
    among the recent tries, intent, step judges); `after(screen)` tells it what the action did, so the next
    proposal can be recognised as a loop."""

    env: Any = None
    judges: Sequence[Any] = ()
    threshold: float = CHANGE_THRESHOLD
    repeats: int = LOOP_REPEATS
    window: int = LOOP_WINDOW
    _tried: list[_Tried] = field(default_factory=list, repr=False)

    def reset(self) -> None:
        self._tried.clear()

    def before(self, evidence: StepEvidence, action: Action | None = None) -> LabelledStep:
        """Label the proposed action (`evidence.action`, parsed unless `action` is given, in screen pixels)."""
        if action is None:
            try:
                action = parse_action(evidence.action)
            except (ParseError, ActionError) as exc:
                signals = StepSignals(action=None, executed=False, error=f"{type(exc).__name__}: {exc}")
                return LabelledStep(*label_step(signals), signals)
        points = [p for _, p in iter_points(action)]
        hit = hit_test(self.env, points[0]) if points and action.type in _ACTING and self.env is not None else None
        target = str(hit["text"]) if hit else None
        recent = self._tried[-self.window:]
        loops = sum(1 for t in recent if t.changed is False and same_action(t.action, action))
        text = read_screen_text(self.env) if self.env is not None else None
        signals = StepSignals(
            action=format_action(action), action_type=action.type.value, terminal=action.is_terminal,
            hit_interactive=bool(hit["interactive"]) if hit else None, target=target,
            entered=action.content if isinstance(action, Type) else None, loop_count=loops,
            intent_consistent=intent_consistency(evidence.intent, action, target, text),
            on_goal=on_goal(action, target, evidence.task.instruction),
            judge=None if action.is_terminal else _step_verdict(self.judges, evidence), loop_repeats=self.repeats,
        )
        if not action.is_terminal:
            self._tried.append(_Tried(action, evidence.before))
        return LabelledStep(*label_step(signals), signals)

    def after(self, screen: Image.Image) -> float | None:
        """Record the screen after the last proposed action ran; returns its change (None: nothing pending)."""
        if not self._tried or self._tried[-1].changed is not None:
            return None
        last = self._tried[-1]
        change = screen_change(last.before, screen)
        self._tried[-1] = replace(last, changed=change > self.threshold)
        return change


def step_evidence(task: TaskSpec, before: Image.Image, action: Action, *, intent: str | None = None,
                  history: Sequence[str] = ()) -> StepEvidence:
    """Step evidence for an action in screen pixels (what the loop would hand `StepVerifier.before`)."""
    return StepEvidence(task=task, before=before, action=format_action(action), intent=intent,
                        history=tuple(history), key_points=key_point_texts(extract_key_points(task.instruction)))


#: Rules whose label keeps an action from running as is when the loop prechecks: invalid, working against the goal,
#: a loop, a miss, or acting on something the stated intent does not name.
FLAGGED_RULES = frozenset({"invalid", "judged_harmful", "loop", "missed", "off_intent"})


@dataclass
class StepPrecheck:
    """`StepVerifier.before` as the agent loop's precheck (`uivenus.agent.precheck.Precheck`): each proposed action
    is labelled on the live screen before it runs and flagged when its rule is one of `FLAGGED_RULES`."""

    verifier: StepVerifier

    @classmethod
    def for_env(cls, env: Any, judges: Sequence[Any] = ()) -> StepPrecheck:
        return cls(StepVerifier(env=env, judges=judges))

    def reset(self) -> None:
        self.verifier.reset()

    def before(self, task: TaskSpec, observation: Observation, action: Action, response: str | None,
               steps: Sequence[Step]) -> PrecheckDecision:
        evidence = step_evidence(task, observation.screenshot, action, intent=think_text(response),
                                 history=[step_history_line(step) for step in steps])
        labelled = self.verifier.before(evidence, action)
        rule = labelled.reason.split(":", 1)[0]
        return PrecheckDecision(labelled.label.value, labelled.reason, rule in FLAGGED_RULES, evidence.action)

    def after(self, observation: Observation) -> None:
        self.verifier.after(observation.screenshot)
