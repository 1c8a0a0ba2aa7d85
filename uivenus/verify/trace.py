"""Trace-level verification (semantic goal verification): did the episode accomplish its task?

WebJudge's recipe, with ZeroGUI's rule on final states:

1. Key points: the task's conditions, taken from the instruction only (`extract_key_points`).
2. Key screenshots: each screen is scored 1–5 for evidence (`score_screenshots`: key-point literals visible in its
   text, change from the screen before); the best scoring ≥ 3 are kept, at most `k`, with the first screen kept as
   the "before" reference and the final screen always kept (it is what the goal is judged on).
3. Evidence: task, key points, the *factual* action history (what ran, on what, whether it executed — the agent's
   Finished/Answer text goes to `extra["agent_claim"]`, never into the history), each step's action record (what
   its point hit, what it typed: `verify.acts`), the kept screenshots with their text, and the final environment
   state for programmatic judges.
4. The judges vote, one verdict each (a sampled judge answers with the majority of its samples, so it has one
   voice) with its own confidence, under the chosen rule (`aggregate`); the final state decides, so success later
   undone is failure.
5. Outcome: the vote says success → SUCCESS; nobody voted (all abstained) → UNKNOWN (never success); otherwise
   (failure, or voters split without a winner) → PARTIAL when the key-point progress reaches `partial_at`
   (`key_point_progress`: how much of each key point the final screen newly shows; when text can check no key
   point, the share of steps labelled correct) and some step was correct, else FAILED.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from uivenus.records import Trajectory
from uivenus.store import read_episode, screenshot, write_verdicts
from uivenus.verify.acts import act_records
from uivenus.verify.base import Evidence, Judge, StepLabel, TraceOutcome, Verdict, VerifyError
from uivenus.verify.keypoints import KeyPointKind, extract_key_points, key_point_texts, parse_key_point
from uivenus.verify.signals import SCREEN_TEXT_KEY, screen_changes
from uivenus.verify.step import LabelledStep, label_trajectory, load_screens, step_history_line
from uivenus.verify.text_evidence import PointStatus, checkable, found_in, ocr_lines, point_status
from uivenus.verify.voting import Decision, VoteResult, aggregate

__all__ = [
    "FINAL_STATE_KEY", "KEEP_SCORE", "TraceReading", "TraceResult", "build_evidence", "key_point_progress",
    "read_trace", "score_screenshots", "screen_texts", "select_key_screenshots", "trace_outcome", "verify_episode",
    "verify_trace", "write_trace",
]

#: Where an episode's metadata keeps `env.state()` after the last step (what programmatic judges read offline).
FINAL_STATE_KEY = "final_state"
#: A screenshot is kept when it scores at least this (1–5).
KEEP_SCORE = 3
#: A screen change above this share of pixels is a new view (a page, a dialog), worth one more point.
BIG_CHANGE = 0.05
#: Trace outcome PARTIAL needs at least this share of progress.
PARTIAL_AT = 0.5


# --- screen texts and key screenshots -----------------------------------------------------------

def screen_texts(trajectory: Trajectory, episode_dir: str | Path, *, ocr: bool = True,
                 screens: Sequence[Image.Image | None] | None = None) -> list[str | None]:
    """The text of each step's screen: as recorded (`step.info["screen_text"]`), else read by OCR (slow: seconds
    per screen on a CPU) when `ocr`, else None."""
    out: list[str | None] = []
    for i, step in enumerate(trajectory.steps):
        text = step.info.get(SCREEN_TEXT_KEY)
        if text is None and ocr and step.screen is not None:
            image = screens[i] if screens is not None else screenshot(episode_dir, step)
            text = "\n".join(ocr_lines(image)) if image is not None else None
        out.append(None if text is None else str(text))
    return out


def _literals(key_points: Sequence[str]) -> tuple[str, ...]:
    """What the key points name exactly (and the switches they name), as screens can show it."""
    found: list[str] = []
    for text in key_points:
        point = parse_key_point(text)
        found.extend(lit for lit in point.literals if checkable(lit))
        found.extend(toggle.subject for toggle in point.toggles)
    return tuple(dict.fromkeys(found))


def score_screenshots(key_points: Sequence[str], texts: Sequence[str | None],
                      changes: Sequence[float | None] | None = None) -> list[int]:
    """Evidence score 1–5 of each screen: 1, +1 when some key-point literal is visible and +1 more when at least
    half are, +1 when it differs from the screen before (its text, or its pixels by `changes[i]`), +1 more when
    that difference is a new view (more than `BIG_CHANGE` of the pixels)."""
    literals = _literals(key_points)
    scores = []
    for i, text in enumerate(texts):
        score = 1
        lines = (text or "").splitlines()
        if literals and lines:
            seen = sum(1 for lit in literals if found_in(lit, lines))
            score += (seen > 0) + (seen >= len(literals) / 2 and seen > 0)
        change = changes[i] if changes is not None else None
        if i > 0:
            differs = change > 0 if change is not None else (text is not None and text != texts[i - 1])
            score += bool(differs) + bool(change is not None and change > BIG_CHANGE)
        scores.append(min(score, 5))
    return scores


def select_key_screenshots(trajectory: Trajectory, key_points: Sequence[str], texts: Sequence[str | None],
                           k: int = 4, *, changes: Sequence[float | None] | None = None) -> tuple[int, ...]:
    """Step indices of the kept screens, in order: the first (the "before" reference), the best scoring ≥
    `KEEP_SCORE` (later ones first on ties), and the final screen, at most `k` in all."""
    if k < 2:
        raise VerifyError(f"keep at least 2 screenshots (the first and the final), got k={k}")
    with_screen = [s.index for s in trajectory.steps if s.screen is not None]
    if not with_screen:
        return ()
    first, final = with_screen[0], with_screen[-1]
    scores = score_screenshots(key_points, texts, changes)
    middle = sorted((i for i in with_screen if i not in (first, final) and scores[i] >= KEEP_SCORE),
                    key=lambda i: (-scores[i], -i))
    return tuple(sorted({first, final, *middle[:k - 2]}))


# --- evidence -----------------------------------------------------------------------------------

def _agent_claim(trajectory: Trajectory) -> str | None:
    """What the agent said about its own work (its Finished/Answer content): a claim, kept out of the history."""
    if trajectory.answer:
        return trajectory.answer
    last = trajectory.steps[-1].action if trajectory.steps else None
    return getattr(last, "content", None) if last is not None and last.is_terminal else None


def build_evidence(trajectory: Trajectory, episode_dir: str | Path, *, k: int = 4, ocr: bool = True,
                   pixels: bool = False, screens: Sequence[Image.Image | None] | None = None,
                   texts: Sequence[str | None] | None = None,
                   changes: Sequence[float | None] | None = None) -> Evidence:
    """The judges' evidence for a stored episode; `extra["kept"]` lists the kept step indices.

    Screen texts (recorded, else OCR when `ocr`) choose the key screenshots and go to the judges with them, unless
    `pixels`: then text judges read the kept screenshots themselves (real OCR). `screens` / `texts` are the step
    screenshots and texts when already loaded (`load_screens`, `screen_texts`), `changes` their `screen_changes`
    when already computed (`read_trace` hands the step labels the same ones: each screen is shrunk once).
    """
    directory = Path(episode_dir)
    points = key_point_texts(extract_key_points(trajectory.task.instruction))
    screens = list(screens) if screens is not None else load_screens(trajectory, directory)
    texts = list(texts) if texts is not None else screen_texts(trajectory, directory, ocr=ocr, screens=screens)
    changes = list(changes) if changes is not None else screen_changes(screens)
    before = [None, *changes[:-1]]  # each screen's change from the one before it
    kept = tuple(i for i in select_key_screenshots(trajectory, points, texts, k, changes=before)
                 if screens[i] is not None)
    extra: dict[str, Any] = {"kept": list(kept)}
    claim = _agent_claim(trajectory)
    if claim:
        extra["agent_claim"] = claim
    last = trajectory.steps[-1] if trajectory.steps else None
    if last is not None and (last.action is None or not last.action.is_terminal):
        extra["final_screen"] = "the episode did not end with a terminal step: the last stored screen is the one "\
                                "before its last action"
    kept_texts = [texts[i] for i in kept]
    known = not pixels and all(t is not None for t in kept_texts)
    return Evidence(
        task=trajectory.task, key_points=points,
        history=tuple(step_history_line(step) for step in trajectory.steps),
        screenshots=tuple(screens[i] for i in kept), final_state=trajectory.metadata.get(FINAL_STATE_KEY),
        screen_texts=tuple(t or "" for t in kept_texts) if known else (), extra=extra,
        acts=act_records(trajectory, screens, ocr=ocr),
    )


def _point_credit(text: str, screens: Sequence[Sequence[str]]) -> float | None:
    """How far one key point shows as done on the final screen, 0–1; None when text cannot tell.

    Switches and removals count only when satisfied (a thing still there is not partly deleted); other points earn
    the share of their literals that the final screen shows and the first screen did not (a name that was on the
    screen all along proves no progress)."""
    point = parse_key_point(text)
    if point.kind is KeyPointKind.SORT_FILTER:
        return None
    if point.toggles or point.kind is KeyPointKind.REMOVAL:
        status = point_status(point, screens)[0]
        if status is PointStatus.UNDETERMINED:
            return None
        return 1.0 if status is PointStatus.SATISFIED else 0.0
    first, final = screens[0], screens[-1]
    informative = [lit for lit in point.literals
                   if checkable(lit) and not (len(screens) > 1 and found_in(lit, first))]
    if not informative:
        return None
    return sum(1 for lit in informative if found_in(lit, final)) / len(informative)


def key_point_progress(key_points: Sequence[str], texts: Sequence[str | None]) -> float | None:
    """Mean credit of the key points text can check (`_point_credit`) over `texts`, the kept screens' texts with
    the first screen first and the final one last; None when a text is missing or no key point can be checked."""
    if not texts or any(t is None for t in texts):
        return None
    screens = [(text or "").splitlines() for text in texts]
    credits = [c for c in (_point_credit(p, screens) for p in key_points) if c is not None]
    return sum(credits) / len(credits) if credits else None


# --- one reading of an episode --------------------------------------------------------------------

@dataclass(frozen=True)
class TraceReading:
    """An episode's screens, their texts and changes, read once, and the judges' evidence built from them: what
    both the trace verdict and the verifier calibration (`evals.verifier`) judge, so each screen is loaded, read
    and shrunk once."""

    trajectory: Trajectory
    episode_dir: Path
    screens: tuple[Image.Image | None, ...]
    texts: tuple[str | None, ...]
    changes: tuple[float | None, ...]
    evidence: Evidence

    @property
    def kept(self) -> tuple[int, ...]:
        """The kept screenshots' step indices."""
        return tuple(self.evidence.extra["kept"])

    def progress(self) -> float | None:
        """The key-point progress over the kept screens (`key_point_progress`)."""
        return key_point_progress(self.evidence.key_points, [self.texts[i] for i in self.kept])

    def label_steps(self, judges: Sequence[Judge] = (), goal_met: bool | None = None) -> tuple[LabelledStep, ...]:
        """Every step's label (`label_trajectory`) from the screens and changes already read."""
        return tuple(label_trajectory(self.trajectory, self.episode_dir, judges, goal_met=goal_met,
                                      screens=self.screens, changes=self.changes))


def read_trace(trajectory: Trajectory, episode_dir: str | Path, *, k: int = 4, ocr: bool = True,
               pixels: bool = False) -> TraceReading:
    """Load a stored episode's screens, read their texts (recorded, else OCR when `ocr`) and changes, and build
    the judges' evidence (`build_evidence`, `k` kept screenshots, `pixels` as there)."""
    directory = Path(episode_dir)
    screens = load_screens(trajectory, directory)
    texts = screen_texts(trajectory, directory, ocr=ocr, screens=screens)
    changes = screen_changes(screens)
    evidence = build_evidence(trajectory, directory, k=k, ocr=ocr, pixels=pixels, screens=screens, texts=texts,
                              changes=changes)
    return TraceReading(trajectory, directory, tuple(screens), tuple(texts), tuple(changes), evidence)


# --- the verdict ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class TraceResult:
    """The trace verdict with everything it was decided from."""

    outcome: TraceOutcome
    vote: VoteResult
    verdicts: tuple[Verdict, ...]
    steps: tuple[LabelledStep, ...]
    key_points: tuple[str, ...]
    kept: tuple[int, ...]
    progress: float | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value, "reason": self.reason, "vote": self.vote.to_dict(),
            "verdicts": [v.to_dict() for v in self.verdicts], "key_points": list(self.key_points),
            "kept": list(self.kept), "progress": self.progress,
            "step_labels": [s.label.value for s in self.steps],
        }

    def labels(self) -> dict[int, dict[str, Any]]:
        return {i: step.to_labels() for i, step in enumerate(self.steps)}


def trace_outcome(vote: VoteResult, progress: float | None, steps: Sequence[LabelledStep],
                  partial_at: float = PARTIAL_AT) -> tuple[TraceOutcome, float | None, str]:
    """The outcome from the goal vote, the key-point progress and the step labels (terminal steps aside): the
    progress actually used (step share when no key point was checkable) and why."""
    if vote.outcome is Decision.SUCCESS:
        return TraceOutcome.SUCCESS, progress, f"the judges say success ({vote.reason})"
    if not vote.voted:
        return TraceOutcome.UNKNOWN, progress, f"no judge decided ({vote.reason})"
    acting = [s for s in steps if not s.signals.terminal]
    correct = sum(1 for s in acting if s.label is StepLabel.CORRECT)
    source = "of the checkable key points show on the final screen"
    if progress is None:
        progress, source = (correct / len(acting) if acting else 0.0), "of the steps are correct"
    said = "say failure" if vote.outcome is Decision.FAILURE else "do not agree on success"
    if correct and progress >= partial_at:
        return TraceOutcome.PARTIAL, progress, f"the judges {said} ({vote.reason}), but {progress:.0%} {source}"
    return TraceOutcome.FAILED, progress, f"the judges {said} ({vote.reason}); {progress:.0%} {source}"


def verify_trace(trajectory: Trajectory, episode_dir: str | Path, judges: Sequence[Judge], rule: str = "majority",
                 *, k: int = 4, partial_at: float = PARTIAL_AT, ocr: bool = True, pixels: bool = False
                 ) -> TraceResult:
    """Judge a stored episode: evidence, votes, step labels and the outcome (nothing is written)."""
    if not judges:
        raise VerifyError("verify_trace needs at least one judge, e.g. judge_from_spec('program')")
    reading = read_trace(trajectory, episode_dir, k=k, ocr=ocr, pixels=pixels)
    verdicts = tuple(judge.judge(reading.evidence) for judge in judges)
    vote = aggregate(verdicts, rule)
    goal_met = {Decision.SUCCESS: True, Decision.FAILURE: False}.get(vote.outcome)
    steps = reading.label_steps(judges, goal_met)
    outcome, progress, reason = trace_outcome(vote, reading.progress(), steps, partial_at)
    return TraceResult(outcome, vote, verdicts, steps, reading.evidence.key_points, reading.kept, progress, reason)


def write_trace(episode_dir: str | Path, result: TraceResult, key: str = "trace") -> Trajectory:
    """Store the verdict in episode.json (`verdicts[key]`) and the step labels in labels.jsonl."""
    return write_verdicts(episode_dir, {key: result.to_dict()}, result.labels())


def verify_episode(episode_dir: str | Path, judges: Sequence[Judge], rule: str = "majority", *, k: int = 4,
                   write: bool = True, ocr: bool = True, pixels: bool = False) -> TraceResult:
    """Read, judge and (with `write`) annotate one stored episode."""
    trajectory = read_episode(episode_dir)
    if not trajectory.complete:
        raise VerifyError(f"episode {episode_dir} is not finished; only finished episodes can be verified")
    result = verify_trace(trajectory, episode_dir, judges, rule, k=k, ocr=ocr, pixels=pixels)
    if write:
        write_trace(episode_dir, result)
    return result
