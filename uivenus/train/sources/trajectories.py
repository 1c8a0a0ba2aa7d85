"""Recorded episodes as training samples: every usable step of a trajectory-store run, or of its Parquet export,
rebuilt as the agent saw it and weighted by the episode's verdict.

One source of truth for what the model sees: a step is rebuilt with `conversation.build_messages` and
`prompts.navigation_prompt` from the loop settings stored with the episode, so training prompts are the loop's
prompts. The target is the step's raw reply, and the reference is its executed action; what verification said of
the step (its label, the episode's trace outcome) rides along in `meta["verification"]`, for Stage II's
verification rewards. The store and the Parquet export read into one `_Episode`, so both give the same samples.
"""

from __future__ import annotations

import functools
import io
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from uivenus.actions.grammar import parse_response
from uivenus.actions.space import Platform, TakeNote, action_from_dict
from uivenus.actions.syntax import ParseError
from uivenus.agent.conversation import Turn, build_messages
from uivenus.agent.loop import A11Y_TREE_KEY, LoopConfig
from uivenus.agent.prompts import navigation_prompt
from uivenus.records import Step
from uivenus.train.samples import ChatSample, DataError, Domain, SampleRef, Samples
from uivenus.train.sources.references import reference_for
from uivenus.verify.base import StepLabel, TraceOutcome

__all__ = ["VERIFICATION_META", "VerdictPolicy", "parquet_samples", "trajectory_samples", "verdict_outcome"]


# --- verdicts -----------------------------------------------------------------------------------

#: Words verdicts are stored with → trace outcome (vote results say "failure", trace outcomes "failed").
_OUTCOME_WORDS: Mapping[str, TraceOutcome] = {
    **{o.value: o for o in TraceOutcome}, "failure": TraceOutcome.FAILED,
}


def _outcome_of(value: Any) -> TraceOutcome | None:
    if isinstance(value, str):
        return _OUTCOME_WORDS.get(value.lower())
    if isinstance(value, Mapping):
        if "outcome" in value:
            return _outcome_of(value["outcome"])
        if isinstance(value.get("passed"), bool):  # a programmatic checker's verdict
            return TraceOutcome.SUCCESS if value["passed"] else TraceOutcome.FAILED
    return None


def verdict_outcome(verdicts: Mapping[str, Any], key: str = "trace") -> TraceOutcome:
    """The episode's outcome: `verdicts[key]`, else the first other verdict that holds one. An outcome is an
    outcome word, a mapping with an "outcome" (a vote result) or a checker's {"passed": bool}; UNKNOWN if none."""
    for name in (key, *verdicts):
        outcome = _outcome_of(verdicts.get(name))
        if outcome is not None:
            return outcome
    return TraceOutcome.UNKNOWN


@dataclass(frozen=True)
class VerdictPolicy:
    """How verified trajectories become samples: a weight per trace outcome, or None to drop the episode, and the
    step labels whose steps are left out (verification's "incorrect" steps work against the goal).

    The outcome is read from `verdicts[key]` (where `verify.trace.write_trace` stores it), else from another
    verdict such as the task's own checker (`verdicts["sandbox"] == {"passed": True}`); see `verdict_outcome`.
    """

    success: float | None = 1.0
    partial: float | None = 0.5
    failed: float | None = None
    unknown: float | None = None
    key: str = "trace"
    drop_steps: tuple[str, ...] = (StepLabel.INCORRECT.value,)

    def __post_init__(self) -> None:
        unknown_labels = sorted(set(self.drop_steps) - {label.value for label in StepLabel})
        if unknown_labels:
            raise DataError(f"VerdictPolicy.drop_steps has unknown step label(s) {unknown_labels}; "
                            f"use {', '.join(label.value for label in StepLabel)}")
        for outcome in TraceOutcome:
            weight = getattr(self, outcome.value)
            if weight is not None and not (math.isfinite(weight) and weight > 0):
                raise DataError(f"VerdictPolicy.{outcome.value} must be a positive weight or None (drop), "
                                f"got {weight!r}")

    def weight(self, outcome: TraceOutcome) -> float | None:
        return getattr(self, TraceOutcome(outcome).value)


def _is_wellformed(text: str | None) -> bool:
    """A reply worth learning: it parses strictly (leniently recovered replies teach the recovery, not the answer)."""
    if not text:
        return False
    try:
        parse_response(text)
    except ParseError:
        return False
    return True


# --- trajectories -------------------------------------------------------------------------------

_LOOP_KEYS = ("frame", "divisor", "factor", "images_in_history", "thinking", "max_pixels", "prompt_template")


def _loop_config(metadata: Mapping[str, Any]) -> LoopConfig:
    """The loop settings an episode ran with (stored in its metadata), defaults where they were not stored."""
    stored = metadata.get("config") or {}
    kwargs = {key: stored[key] for key in _LOOP_KEYS if stored.get(key) is not None}
    if "prompt_template" in kwargs:
        kwargs["prompt_template"] = Path(kwargs["prompt_template"])
    return LoopConfig(**kwargs)


@dataclass(frozen=True)
class _Episode:
    """What sample building reads of one episode, whether it comes from the store or from a Parquet export."""

    key: str
    instruction: str
    platform: Platform
    loop: LoopConfig
    steps: tuple[Step, ...]
    screen: Callable[[Step], Image.Image]


@dataclass(frozen=True)
class _StepOptions:
    domain: Domain | None
    tolerance: float


#: Where a sample's meta carries what verification said of its step: the step label and the trace outcome.
VERIFICATION_META = "verification"


def _step_sample(episode: _Episode, index: int, weight: float, options: _StepOptions,
                 verification: Mapping[str, str | None] | None = None) -> ChatSample:
    """Step `index` as the agent saw it: the prompt for its frame, the history, the notes so far, what became of
    the previous action (the loop's feedback, kept in the step's info), its screenshot."""
    loop, step = episode.loop, episode.steps[index]
    screenshot = episode.screen(step)
    frame = loop.frame_for(screenshot.size)
    first_with_image = index - loop.images_in_history
    history = [Turn(episode.screen(past) if i >= first_with_image and past.screen is not None else None,
                    past.response or "") for i, past in enumerate(episode.steps[:index])]
    notes = [past.action.content.strip() for past in episode.steps[:index]  # the loop's Memory.take
             if isinstance(past.action, TakeNote) and past.action.content.strip()]
    prompt = navigation_prompt(episode.platform, frame, thinking=loop.thinking, template=loop.prompt_template)
    messages = build_messages(prompt, episode.instruction, history, screenshot, frame=frame,
                              images_in_history=loop.images_in_history, notes=notes, max_pixels=loop.max_pixels,
                              feedback=step.info.get("feedback"), elements=step.info.get(A11Y_TREE_KEY))
    reference = None
    if step.action is not None:
        radius = (options.tolerance * frame.width, options.tolerance * frame.height)
        reference = reference_for(step.action, frame, radius)
    return ChatSample(
        messages=messages, target=str(step.response),
        domain=options.domain or Domain(episode.platform.value), weight=weight, reference=reference,
        thinking=loop.thinking, meta={"id": f"{episode.key}/{step.index}", "source": "trajectory",
                                      **({VERIFICATION_META: dict(verification)} if verification else {})},
    )


def _episode_refs(episode: _Episode, verdicts: Mapping[str, Any], policy: VerdictPolicy, executed_only: bool,
                  options: _StepOptions) -> Iterator[SampleRef]:
    outcome = verdict_outcome(verdicts, policy.key)
    weight = policy.weight(outcome)
    if weight is None:
        return
    for index, step in enumerate(episode.steps):
        if step.screen is None or not _is_wellformed(step.response) or (executed_only and not step.executed):
            continue
        label = step.labels.get("step_label")
        if label in policy.drop_steps:
            continue
        verification = {"step_label": label, "outcome": outcome.value}
        yield functools.partial(_step_sample, episode, index, weight, options, verification)


def trajectory_samples(run_dir: Path, verdict_policy: VerdictPolicy = VerdictPolicy(), *,
                       executed_only: bool = True, domain: Domain | None = None,
                       point_tolerance: float = 0.02) -> Samples:
    """Every usable step of the run's episodes (or of one episode directory), weighted by the episode's verdict.

    A step is used when it has a screenshot, its reply parses strictly and (with `executed_only`) its action
    was carried out. The reference is the executed action with a target box of ±`point_tolerance` of the screen
    around each point. The domain is the task's platform unless `domain` is given.
    """
    from uivenus.store import episode_dirs, read_episode, screenshot

    options = _StepOptions(Domain(domain) if domain else None, point_tolerance)

    def refs() -> Iterator[SampleRef]:
        for directory in episode_dirs(run_dir):
            trajectory = read_episode(directory)
            episode = _Episode(
                key=f"{directory.parent.name}/{directory.name}", instruction=trajectory.task.instruction,
                platform=trajectory.task.platform, loop=_loop_config(trajectory.metadata), steps=trajectory.steps,
                screen=functools.partial(screenshot, directory),
            )
            yield from _episode_refs(episode, trajectory.verdicts, verdict_policy, executed_only, options)

    return Samples(f"trajectories:{run_dir}", refs)


def _json_field(row: Mapping[str, Any], name: str) -> Any:
    value = row.get(name)
    return json.loads(value) if isinstance(value, str) and value else {}


def _row_step(row: Mapping[str, Any]) -> Step:
    action = json.loads(row["action"]) if row.get("action") else None
    return Step(index=int(row["step"]), screen="image" if row.get("image") else None, response=row.get("response"),
                action=action_from_dict(action) if action else None, error=row.get("error"),
                executed=bool(row.get("executed")), info=_json_field(row, "info"), labels=_json_field(row, "labels"))


def _row_image(rows: Sequence[Mapping[str, Any]], step: Step) -> Image.Image:
    image = rows[step.index]["image"]
    with Image.open(io.BytesIO(image["bytes"])) as opened:
        opened.load()
        return opened


def _parquet_episodes(path: Path) -> Iterator[list[dict[str, Any]]]:
    """Consecutive rows of one episode at a time (the export writes each episode's steps in order)."""
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = []
    for batch in pq.ParquetFile(path).iter_batches(batch_size=64):
        for row in batch.to_pylist():
            if rows and (row["run_id"], row["episode_id"]) != (rows[0]["run_id"], rows[0]["episode_id"]):
                yield rows
                rows = []
            rows.append(row)
    if rows:
        yield rows


def parquet_samples(path: Path, verdict_policy: VerdictPolicy = VerdictPolicy(), *, executed_only: bool = True,
                    domain: Domain | None = None, point_tolerance: float = 0.02) -> Samples:
    """The same samples as `trajectory_samples`, streamed from a `store.export_parquet` file (row batches).

    Verdicts, step info (the loop's feedback) and loop settings are read from `verdicts`, `info` and `config`
    columns when the export has them; without a `verdicts` column every episode is UNKNOWN, which the default
    policy drops (pass `VerdictPolicy(unknown=1.0)` to keep them).
    """
    import pyarrow.parquet as pq

    path = Path(path)
    try:
        columns = set(pq.ParquetFile(path).schema_arrow.names)
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read {path} as Parquet ({exc}); pass a file written by store.export_parquet") from None
    missing = {"run_id", "episode_id", "step", "response", "action", "executed", "image", "instruction",
               "platform"} - columns
    if missing:
        raise DataError(f"{path} lacks column(s) {sorted(missing)}; it is not a store.export_parquet file")
    options = _StepOptions(Domain(domain) if domain else None, point_tolerance)

    def refs() -> Iterator[SampleRef]:
        for rows in _parquet_episodes(path):
            first = rows[0]
            if [row["step"] for row in rows] != list(range(len(rows))):
                raise DataError(f"{path}: episode {first['run_id']}/{first['episode_id']} rows are not steps 0..n "
                                "in order; re-export it with store.export_parquet")
            episode = _Episode(
                key=f"{first['run_id']}/{first['episode_id']}", instruction=first["instruction"],
                platform=Platform(first["platform"]), loop=_loop_config({"config": _json_field(first, "config")}),
                steps=tuple(_row_step(row) for row in rows), screen=functools.partial(_row_image, rows),
            )
            yield from _episode_refs(episode, _json_field(first, "verdicts"), verdict_policy, executed_only, options)

    return Samples(f"parquet:{path}", refs)
