"""Training data: every source (store trajectories, their Parquet export, grounding and CAPTCHA datasets, foreign
actions) becomes chat samples in the agent's own message layout, then tokens with label masks and span masks.

One source of truth for what the model sees: a trajectory step is rebuilt with `conversation.build_messages` and
`prompts.navigation_prompt` from the loop settings stored with the episode, a grounding item with
`grounding_messages`, a CAPTCHA with the CAPTCHA harness's own system prompt. The target is what the model should
answer (a step's raw reply, a grounding point, a CAPTCHA solution), and `reference` is what Stage II scores an
answer against.

Sources are lazy (`Samples`): a pass yields cheap references, and a sample's screenshots load only when it is
taken, so shuffle buffers hold references, not images, and resuming skips samples without decoding them.
`SampleStream` turns sources into batches in an order fixed by (seed, epoch), sharded over ranks, with a
position that a checkpoint saves and restores exactly.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import json
import logging
import math
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from PIL import Image

from uivenus.actions.convert import ConvertError, get_converter
from uivenus.actions.coords import QWEN2_FACTOR, CoordinateError, Frame, frame_from_options
from uivenus.actions.grammar import ParseError, format_grounding, format_response, parse_response
from uivenus.actions.space import (
    POINT_FIELDS, Action, ActionError, Click, Platform, Sequence as SequenceAction, TakeNote, action_from_dict,
    check_platform,
)
from uivenus.agent.conversation import Turn, build_messages, grounding_messages
from uivenus.agent.loop import LoopConfig
from uivenus.agent.policies.base import Message
from uivenus.agent.policies.transformers_local import to_chat
from uivenus.agent.prompts import captcha_system_prompt, navigation_prompt
from uivenus.records import Step
from uivenus.train.config import ConfigError, call_with_options
from uivenus.train.spans import TokenSpans, annotate, token_offsets
from uivenus.verify.base import StepLabel, TraceOutcome
from uivenus.verify.rewards import Box, ReferenceAction

if TYPE_CHECKING:
    import torch
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

__all__ = [
    "BOX_FORMATS", "Batch", "ChatSample", "DataError", "Domain", "Encoded", "IGNORE_INDEX", "PromptInputs", "SOURCES",
    "SampleRef",
    "SampleStream", "SampleTooLongError", "Samples", "SourceSpec", "TemplateError", "VerdictPolicy",
    "captcha_samples", "chat_template_kwargs", "collate", "converted_samples",
    "encode", "encode_completion", "encode_prompt", "grounding_samples", "parquet_samples", "samples_from_spec",
    "trajectory_samples", "verdict_outcome",
]

log = logging.getLogger(__name__)

IGNORE_INDEX = -100  # label of a position that carries no loss (what transformers' losses skip)


class DataError(ValueError):
    """A dataset cannot be turned into samples as asked; the message names the file or item and what to do."""


class SampleTooLongError(DataError):
    """A sample's prompt and reply exceed `max_length` tokens (the stream skips and counts these)."""


class TemplateError(DataError):
    """The processor's chat template does not render the reply as given (it rewrites or drops it)."""


class Domain(StrEnum):
    """What a sample trains: the domain a Stage II reward and a Stage III teacher are chosen by."""

    GROUNDING = "grounding"
    CAPTCHA = "captcha"
    MOBILE = "mobile"
    WEB = "web"
    DESKTOP = "desktop"


# --- samples ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ChatSample:
    """One prompt (the agent's messages, images inside) and the reply the model should give to it.

    `weight` scales the sample's loss (a Partial trajectory counts less); `reference` is the answer Stage II
    scores against (None where no action is known); `thinking` is the inference preset the prompt is built
    for (agentic steps think, grounding does not), which templates with a thinking switch render differently.
    """

    messages: tuple[Message, ...]
    target: str
    domain: Domain
    weight: float = 1.0
    reference: ReferenceAction | None = None
    thinking: bool = True
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(self.messages))
        object.__setattr__(self, "domain", Domain(self.domain))
        object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))
        if not self.messages or self.messages[-1].role != "user":
            raise DataError("a sample's messages must end with the user turn the reply answers")
        if not isinstance(self.target, str) or not self.target.strip():
            raise DataError(f"a sample needs a non-empty target reply, got {self.target!r}")
        if not (math.isfinite(self.weight) and self.weight > 0):
            raise DataError(f"a sample's weight must be a positive number, got {self.weight!r}")

    @property
    def id(self) -> str:
        return str(self.meta.get("id", ""))


#: A sample not built yet: calling it loads its images and builds it.
SampleRef: TypeAlias = Callable[[], ChatSample]


@dataclass(frozen=True)
class Samples:
    """A named source of samples; each pass over `refs()` lists them afresh, in a fixed order, unbuilt."""

    name: str
    refs: Callable[[], Iterator[SampleRef]]

    def __iter__(self) -> Iterator[ChatSample]:
        return (ref() for ref in self.refs())

    def count(self) -> int:
        return sum(1 for _ in self.refs())


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


# --- references ---------------------------------------------------------------------------------

def _point_paths(action: Action) -> Iterator[tuple[str, tuple[float, float]]]:
    """(path, point) of every point, paths as `ReferenceAction.boxes` keys them ("point", "0.start", ...)."""
    members = action.actions if isinstance(action, SequenceAction) else (action,)
    prefix = len(members) > 1 or isinstance(action, SequenceAction)
    for i, member in enumerate(members):
        for name in POINT_FIELDS:
            point = getattr(member, name, None)
            if point is not None:
                yield (f"{i}.{name}" if prefix else name), point


def _one(actions: Sequence[Action]) -> Action:
    return actions[0] if len(actions) == 1 else SequenceAction(actions=tuple(actions))


def _reference(screen_action: Action, frame: Frame, radius: tuple[float, float]) -> ReferenceAction:
    """The action in the model frame, with a target box of ±`radius` screen pixels around each of its points."""
    boxes: dict[str, Box] = {}
    for path, (x, y) in _point_paths(screen_action):
        top_left = frame.to_model((max(0.0, x - radius[0]), max(0.0, y - radius[1])))
        bottom_right = frame.to_model((min(frame.width - 1.0, x + radius[0]), min(frame.height - 1.0, y + radius[1])))
        boxes[path] = (*top_left, *bottom_right)
    return ReferenceAction(frame.action_to_model(screen_action), boxes=boxes)


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


def _step_sample(episode: _Episode, index: int, weight: float, options: _StepOptions) -> ChatSample:
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
                              feedback=step.info.get("feedback"))
    reference = None
    if step.action is not None:
        radius = (options.tolerance * frame.width, options.tolerance * frame.height)
        reference = _reference(step.action, frame, radius)
    return ChatSample(
        messages=messages, target=str(step.response),
        domain=options.domain or Domain(episode.platform.value), weight=weight, reference=reference,
        thinking=loop.thinking, meta={"id": f"{episode.key}/{step.index}", "source": "trajectory"},
    )


def _episode_refs(episode: _Episode, verdicts: Mapping[str, Any], policy: VerdictPolicy, executed_only: bool,
                  options: _StepOptions) -> Iterator[SampleRef]:
    weight = policy.weight(verdict_outcome(verdicts, policy.key))
    if weight is None:
        return
    for index, step in enumerate(episode.steps):
        if step.screen is None or not _is_wellformed(step.response) or (executed_only and not step.executed):
            continue
        if step.labels.get("step_label") in policy.drop_steps:
            continue
        yield functools.partial(_step_sample, episode, index, weight, options)


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


# --- grounding ----------------------------------------------------------------------------------

#: How a record's `bbox` reads, given the image (width, height): into [x1, y1, x2, y2] pixels.
BOX_FORMATS: Mapping[str, Callable[[Sequence[float], tuple[int, int]], tuple[float, float, float, float]]] = {
    "xyxy": lambda b, size: (b[0], b[1], b[2], b[3]),
    "xywh": lambda b, size: (b[0], b[1], b[0] + b[2], b[1] + b[3]),
    "xyxy_norm": lambda b, size: (b[0] * size[0], b[1] * size[1], b[2] * size[0], b[3] * size[1]),
}


def _image_size(path: Path) -> tuple[int, int]:
    try:
        with Image.open(path) as image:
            return image.size
    except OSError as exc:
        raise DataError(f"cannot open image {path}: {exc}") from None


def _load_rgb(path: Path) -> Image.Image:
    with Image.open(path) as image:
        return image.convert("RGB")


def _grounding_sample(image_path: Path, record: Mapping[str, Any], frame_kind: str, divisor: int, factor: int,
                      max_pixels: int | None, template: Path | None, box: tuple[float, float, float, float] | None,
                      size: tuple[int, int]) -> ChatSample:
    frame = frame_from_options(frame_kind, size[0], size[1], divisor=divisor, factor=factor)
    if box is None:
        target, reference = format_grounding(None), ReferenceAction(None, negative=True)
    else:
        x1, y1, x2, y2 = box
        centre = frame.to_model(((x1 + x2) / 2, (y1 + y2) / 2))
        model_box = (*frame.to_model((x1, y1)), *frame.to_model((min(x2, size[0] - 1), min(y2, size[1] - 1))))
        target = format_grounding(centre)
        reference = ReferenceAction(Click(point=centre), boxes={"point": model_box})
    messages = grounding_messages(_load_rgb(image_path), record["instruction"], frame, template=template,
                                  max_pixels=max_pixels)
    meta = {key: record[key] for key in ("id", "data_type", "instruction_kind", "platform") if key in record}
    return ChatSample(messages=messages, target=target, domain=Domain.GROUNDING, reference=reference,
                      thinking=False, meta={"source": "grounding", **meta})


def _grounding_box(record: Mapping[str, Any], size: tuple[int, int], box_format: str,
                   where: str) -> tuple[float, float, float, float] | None:
    """The record's target box in pixels, None for a negative item; an impossible box is an error."""
    raw = record.get("bbox")
    if record.get("negative") or raw is None or all(v == -1 for v in raw):
        return None
    if len(raw) != 4:
        raise DataError(f"{where}: bbox must hold 4 numbers, got {raw!r}")
    x1, y1, x2, y2 = BOX_FORMATS[box_format](raw, size)
    if not (0 <= x1 < x2 <= size[0] and 0 <= y1 < y2 <= size[1]):
        raise DataError(f"{where}: bbox {raw!r} read as {box_format} is ({x1:g}, {y1:g}, {x2:g}, {y2:g}), impossible "
                        f"on a {size[0]}x{size[1]} image; check the box_format option ({', '.join(BOX_FORMATS)})")
    return x1, y1, x2, y2


def grounding_samples(annotations: Path, images: Path | None = None, frame_kind: str = "rel", *,
                      box_format: str = "xyxy", divisor: int = 1000, factor: int = QWEN2_FACTOR,
                      max_pixels: int | None = None, template: Path | None = None) -> Samples:
    """ScreenSpot-style records (`img_filename`, `bbox`, `instruction`; our generator's `negative`) as grounding
    samples: the target is the box centre in the model frame (`[x,y]`), or `[-1,-1]` for a negative item.

    `images` defaults to the `images/` folder beside the annotations; `box_format` says how `bbox` reads (datasets
    in circulation differ; a box impossible for its image is an error, never a guess).
    """
    annotations, images = Path(annotations), Path(images) if images else Path(annotations).parent / "images"
    if box_format not in BOX_FORMATS:
        raise DataError(f"unknown box_format {box_format!r}; use one of {', '.join(BOX_FORMATS)}")
    try:
        records = json.loads(annotations.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"cannot read grounding annotations {annotations}: {exc}") from None
    if not isinstance(records, list):
        raise DataError(f"{annotations} must hold a JSON list of records")

    def refs() -> Iterator[SampleRef]:
        sizes: dict[Path, tuple[int, int]] = {}
        for number, record in enumerate(records):
            where = f"{annotations} record {number}"
            if not isinstance(record, Mapping) or "img_filename" not in record or "instruction" not in record:
                raise DataError(f"{where} needs img_filename and instruction")
            path = images / record["img_filename"]
            if path not in sizes:
                sizes[path] = _image_size(path)
            size = sizes[path]
            box = _grounding_box(record, size, box_format, where)
            yield functools.partial(_grounding_sample, path, record, frame_kind, divisor, factor, max_pixels,
                                    template, box, size)

    return Samples(f"grounding:{annotations}", refs)


# --- CAPTCHA ------------------------------------------------------------------------------------

def _captcha_sample(instance: Any, screen: Path) -> ChatSample:
    from uivenus.synth.captcha import LEVELS

    screenshot = _load_rgb(screen)
    frame = Frame.relative(*screenshot.size)  # the frame the CAPTCHA harness asks in
    messages = build_messages(captcha_system_prompt(instance.platform, frame), instance.instruction, [], screenshot,
                              frame=frame)
    radius = float(LEVELS[instance.difficulty].tolerance_px)
    reference = _reference(_one(instance.solution), frame, (radius, radius))
    target = format_response([frame.action_to_model(a) for a in instance.solution])
    return ChatSample(messages=messages, target=target, domain=Domain.CAPTCHA, reference=reference,
                      meta={"id": instance.id, "source": "captcha", "family": instance.family,
                            "difficulty": instance.difficulty.value})


def captcha_samples(data_dir: Path, screens: Path | None = None) -> Samples:
    """Each CAPTCHA instance's first screen and its verified solution, written as comma-separated actions in the
    relative frame (`<action>Click(point=(…)), Click(point=(…))</action>`), with the harness's system prompt.

    The screenshots come from `uivenus.synth.captcha.capture_captcha_screens(data_dir)` (`screens/<id>.png`);
    generation writes none.
    """
    from uivenus.synth.captcha import SCREENS_DIR, load_captchas

    data_dir = Path(data_dir)
    screens = Path(screens) if screens else data_dir / SCREENS_DIR

    def refs() -> Iterator[SampleRef]:
        for instance in load_captchas(data_dir):
            screen = screens / f"{instance.id}.png"
            if not screen.is_file():
                raise DataError(f"{screen} is missing; capture the first screens with "
                                f"uivenus.synth.captcha.capture_captcha_screens({str(data_dir)!r})")
            yield functools.partial(_captcha_sample, instance, screen)

    return Samples(f"captcha:{data_dir}", refs)


# --- foreign actions ----------------------------------------------------------------------------

def _read_records(path: Path) -> list[Mapping[str, Any]]:
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
        records = data if isinstance(data, list) else [data]
    except json.JSONDecodeError:
        try:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise DataError(f"{path} is neither a JSON list nor JSON lines: {exc}") from None
    return records


def _converted_sample(image_path: Path, instruction: str, actions: tuple[Action, ...], frame: Frame,
                      platform: Platform, think: str | None, thinking: bool, domain: Domain, record_id: str,
                      template: Path | None) -> ChatSample:
    screenshot = _load_rgb(image_path)
    prompt = navigation_prompt(platform, frame, thinking=thinking, template=template)
    messages = build_messages(prompt, instruction, [], screenshot, frame=frame)
    model_actions = [frame.action_to_model(a) for a in actions]
    return ChatSample(messages=messages, target=format_response(model_actions, think=think), domain=domain,
                      reference=None, thinking=thinking, meta={"id": record_id, "source": "converted"})


def converted_samples(path: Path, format: str, platform: Platform, *, images: Path | None = None,
                      source_frame: str = "abs", source_divisor: int = 1000, source_factor: int = QWEN2_FACTOR,
                      frame_kind: str = "rel", divisor: int = 1000, factor: int = QWEN2_FACTOR,
                      thinking: bool = True, domain: Domain | None = None,
                      converter_options: Mapping[str, Any] | None = None, template: Path | None = None) -> Samples:
    """Single steps of another system's dataset, their actions converted with `uivenus.actions.convert`.

    `path` holds JSON (a list) or JSON lines of `{"image": file, "instruction": str, "action": item, "think":
    optional str, "id": optional}`; `item` is what converter `format` reads. Coordinates are read in
    `source_frame` (the frame the peer wrote them in) and written in `frame_kind`. Items that do not convert,
    leave the screen or are not allowed on `platform` are skipped with a warning.
    """
    path, platform = Path(path), Platform(platform)
    images = Path(images) if images else path.parent
    try:
        converter = get_converter(format, **dict(converter_options or {}))
    except ConvertError as exc:
        raise DataError(str(exc)) from None
    records = _read_records(path)
    sample_domain = Domain(domain) if domain else Domain(platform.value)

    def refs() -> Iterator[SampleRef]:
        for number, record in enumerate(records):
            where = f"{path} record {number}"
            try:
                image_path = images / record["image"]
                size = _image_size(image_path)
                source = frame_from_options(source_frame, *size, divisor=source_divisor, factor=source_factor)
                actions = tuple(source.action_to_screen(a) for a in converter.to_unified(record["action"]))
                check_platform(_one(actions), platform)
            except (KeyError, TypeError) as exc:
                raise DataError(f"{where} needs image, instruction and action ({exc!r})") from None
            except (ConvertError, CoordinateError, ActionError, DataError) as exc:
                log.warning("skipping %s: %s", where, exc)
                continue
            frame = frame_from_options(frame_kind, *size, divisor=divisor, factor=factor)
            yield functools.partial(_converted_sample, image_path, str(record["instruction"]), actions, frame,
                                    platform, record.get("think"), thinking, sample_domain,
                                    str(record.get("id", f"{path.stem}:{number}")), template)

    return Samples(f"converted:{format}:{path}", refs)


# --- the source registry ------------------------------------------------------------------------

#: Every kind of source a config can name, with the function that builds it from its options.
SOURCES: dict[str, Callable[..., Samples]] = {
    "trajectories": trajectory_samples,
    "parquet": parquet_samples,
    "grounding": grounding_samples,
    "captcha": captcha_samples,
    "converted": converted_samples,
}


@dataclass(frozen=True)
class SourceSpec:
    """One source in a config: `{kind: grounding, annotations: data/g/annotations.json, frame_kind: rel}`."""

    kind: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in SOURCES:
            raise ConfigError(f"unknown source kind {self.kind!r}; use one of {', '.join(SOURCES)}")
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """Read from and written as the flat form of a config file: `{kind: grounding, annotations: ..., ...}`."""
        from pydantic_core import core_schema

        def build(data: Any) -> SourceSpec:
            if isinstance(data, cls):
                return data
            if not isinstance(data, Mapping) or "kind" not in data:
                raise ConfigError(f"a source must be a mapping with a 'kind' ({', '.join(SOURCES)}) and its options, "
                                  f"got {data!r}")
            return cls(kind=data["kind"], options={k: v for k, v in data.items() if k != "kind"})

        flat = core_schema.plain_serializer_function_ser_schema(lambda spec: {"kind": spec.kind, **spec.options})
        return core_schema.no_info_plain_validator_function(build, serialization=flat)


def samples_from_spec(spec: SourceSpec, where: str = "source") -> Samples:
    """Build the source a spec names, its options checked against the source function's parameters."""
    return call_with_options(SOURCES[spec.kind], spec.options, f"{where}({spec.kind})")


# --- tokens -------------------------------------------------------------------------------------

def chat_template_kwargs(processor: Any, thinking: bool) -> dict[str, bool]:
    """`enable_thinking` for templates that read it (Qwen3 style); others would reject the keyword."""
    template = processor.chat_template
    return {"enable_thinking": thinking} if "enable_thinking" in str(template) else {}


@dataclass(frozen=True)
class PromptInputs:
    """A prompt as the model takes it (1-D tensors for one sample), ready for generation or for a reply."""

    text: str
    input_ids: torch.Tensor
    mm_token_type_ids: torch.Tensor | None = None
    pixel_values: torch.Tensor | None = None
    image_grid_thw: torch.Tensor | None = None


def encode_prompt(processor: Any, messages: Sequence[Message], *, thinking: bool = True) -> PromptInputs:
    """The chat template with the generation prompt, through the processor (images expanded to their tokens)."""
    chat, images = to_chat(messages)
    text = processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False,
                                         **chat_template_kwargs(processor, thinking))
    inputs = processor(text=[text], images=images or None, return_tensors="pt")
    mm = inputs.get("mm_token_type_ids")
    return PromptInputs(text=text, input_ids=inputs["input_ids"][0], mm_token_type_ids=None if mm is None else mm[0],
                        pixel_values=inputs.get("pixel_values"), image_grid_thw=inputs.get("image_grid_thw"))


@dataclass(frozen=True)
class Encoded:
    """One sample as tokens: the prompt then the reply; `labels` are IGNORE_INDEX outside the reply and `spans`
    mark the reply's parts over the same positions."""

    input_ids: torch.Tensor
    labels: torch.Tensor
    spans: TokenSpans
    prompt_length: int
    sample: ChatSample
    mm_token_type_ids: torch.Tensor | None = None
    pixel_values: torch.Tensor | None = None
    image_grid_thw: torch.Tensor | None = None

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])


def _completion(processor: Any, sample: ChatSample, prompt: PromptInputs) -> tuple[str, tuple[int, int]]:
    """The text the model produces after the prompt (the reply and the template's end of turn) and where the
    reply sits in it."""
    chat, _ = to_chat(sample.messages)
    chat.append({"role": "assistant", "content": [{"type": "text", "text": sample.target}]})
    full = processor.apply_chat_template(chat, tokenize=False, **chat_template_kwargs(processor, sample.thinking))
    if not full.startswith(prompt.text):
        raise TemplateError(f"sample {sample.id!r}: the chat template renders the conversation with a reply "
                            "differently from the prompt it renders for generation; it cannot be trained on as is")
    rest = full[len(prompt.text):]
    start = rest.find(sample.target)
    if start < 0:
        raise TemplateError(f"sample {sample.id!r}: the chat template rewrites the assistant reply (e.g. it moves "
                            "<think> text); use a template that renders assistant content verbatim")
    end = start + len(sample.target)
    return rest[:end] + rest[end:].rstrip(), (start, end)


def _assemble(prompt: PromptInputs, ids: Sequence[int], spans: TokenSpans, sample: ChatSample,
              max_length: int | None) -> Encoded:
    import torch

    length = len(prompt.input_ids) + len(ids)
    if max_length is not None and length > max_length:
        raise SampleTooLongError(f"sample {sample.id!r} has {length} tokens, more than max_length={max_length}")
    completion = torch.tensor(list(ids), dtype=torch.long)
    prompt_length = len(prompt.input_ids)
    mm = prompt.mm_token_type_ids
    return Encoded(
        input_ids=torch.cat([prompt.input_ids, completion]),
        labels=torch.cat([torch.full((prompt_length,), IGNORE_INDEX, dtype=torch.long), completion]),
        spans=spans.pad(left=prompt_length), prompt_length=prompt_length, sample=sample,
        mm_token_type_ids=None if mm is None else torch.cat([mm, torch.zeros(len(ids), dtype=mm.dtype)]),
        pixel_values=prompt.pixel_values, image_grid_thw=prompt.image_grid_thw,
    )


def encode(processor: Any, sample: ChatSample, max_length: int | None = None) -> Encoded:
    """The sample's prompt and target reply as training tokens (the reply tokenised on its own, as the model
    would produce it after the prompt, with the template's end-of-turn token)."""
    prompt = encode_prompt(processor, sample.messages, thinking=sample.thinking)
    text, reply = _completion(processor, sample, prompt)
    tokenizer = processor.tokenizer
    if getattr(tokenizer, "is_fast", False):
        encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids, offsets = encoded["input_ids"], [tuple(o) for o in encoded["offset_mapping"]]
    else:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        offsets = token_offsets(tokenizer, ids)
    return _assemble(prompt, ids, annotate(text, offsets, reply), sample, max_length)


def encode_completion(processor: Any, prompt: PromptInputs, completion_ids: Sequence[int], sample: ChatSample,
                      max_length: int | None = None) -> Encoded:
    """A prompt and tokens a model generated after it (ending at its stop token, no padding), for RL and
    distillation: spans come from decoding the tokens, so the exact sampled ids are what is trained on."""
    tokenizer = processor.tokenizer
    ids = list(completion_ids)
    offsets = token_offsets(tokenizer, ids)
    text = tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
    special = set(tokenizer.all_special_ids)
    reply_end = next((offsets[i][0] for i, token in enumerate(ids) if token in special), len(text))
    return _assemble(prompt, ids, annotate(text, offsets, (0, reply_end)), sample, max_length)


# --- batches ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Batch:
    """Padded samples: model inputs ([B, L]; images concatenated in sample order), labels, span masks, weights."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    labels: torch.Tensor
    spans: TokenSpans
    weights: torch.Tensor
    samples: tuple[ChatSample, ...]
    mm_token_type_ids: torch.Tensor | None = None
    pixel_values: torch.Tensor | None = None
    image_grid_thw: torch.Tensor | None = None

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(sample.id for sample in self.samples)

    def model_inputs(self) -> dict[str, torch.Tensor]:
        """What the model's forward takes (labels left out: each stage computes its own loss)."""
        names = ("input_ids", "attention_mask", "mm_token_type_ids", "pixel_values", "image_grid_thw")
        return {name: value for name in names if (value := getattr(self, name)) is not None}

    def to(self, device: Any) -> Batch:
        tensors = {f.name: getattr(self, f.name).to(device) for f in dataclasses.fields(self)
                   if f.name not in ("spans", "samples") and getattr(self, f.name) is not None}
        return dataclasses.replace(self, spans=self.spans.to(device), **tensors)


PaddingSide: TypeAlias = Literal["left", "right"]


def collate(items: Sequence[Encoded], pad_id: int, padding_side: PaddingSide = "right") -> Batch:
    """Pad to the longest item (left padding puts every reply's end at the same position, as generation wants)."""
    import torch
    import torch.nn.functional as F

    if not items:
        raise DataError("cannot collate an empty list of samples")
    if padding_side not in ("left", "right"):
        raise DataError(f"padding_side must be 'left' or 'right', got {padding_side!r}")
    longest = max(len(item) for item in items)

    def pad(tensor: torch.Tensor, value: int) -> torch.Tensor:
        missing = longest - tensor.shape[-1]
        return F.pad(tensor, (missing, 0) if padding_side == "left" else (0, missing), value=value)

    def sides(item: Encoded) -> tuple[int, int]:
        missing = longest - len(item)
        return (missing, 0) if padding_side == "left" else (0, missing)

    has_mm = [item.mm_token_type_ids is not None for item in items]
    if any(has_mm) and not all(has_mm):
        raise DataError("some samples carry mm_token_type_ids and some do not; encode them with one processor")
    with_images = [item for item in items if item.pixel_values is not None]
    return Batch(
        input_ids=torch.stack([pad(item.input_ids, pad_id) for item in items]),
        attention_mask=torch.stack([pad(torch.ones(len(item), dtype=torch.long), 0) for item in items]),
        labels=torch.stack([pad(item.labels, IGNORE_INDEX) for item in items]),
        spans=TokenSpans.stack([item.spans.pad(*sides(item)) for item in items]),
        weights=torch.tensor([item.sample.weight for item in items], dtype=torch.float32),
        samples=tuple(item.sample for item in items),
        mm_token_type_ids=torch.stack([pad(item.mm_token_type_ids, 0) for item in items]) if all(has_mm) else None,
        pixel_values=torch.cat([item.pixel_values for item in with_images]) if with_images else None,
        image_grid_thw=torch.cat([item.image_grid_thw for item in with_images]) if with_images else None,
    )


# --- the stream ---------------------------------------------------------------------------------

def _shuffled(refs: Iterator[SampleRef], rng: random.Random, buffer: int) -> Iterator[SampleRef]:
    """A streaming shuffle through a buffer of `buffer` references (0: keep the order)."""
    if buffer <= 1:
        yield from refs
        return
    pool: list[SampleRef] = []
    for ref in refs:
        if len(pool) < buffer:
            pool.append(ref)
            continue
        j = rng.randrange(buffer)
        yield pool[j]
        pool[j] = ref
    rng.shuffle(pool)
    yield from pool


class SampleStream:
    """Batches from sources, endlessly, epoch after epoch, in an order fixed by (seed, epoch).

    Per epoch the sources' references are concatenated and shuffled through a buffer; reference i goes to rank
    i % world_size; each rank builds, encodes (skipping and counting samples over `max_length`) and pads its own
    batches. `state_dict()` is the position just after the last batch handed out, so a checkpoint taken between
    batches resumes the same sequence exactly, skipping references without building them.
    """

    def __init__(self, sources: Sequence[Samples], processor: Any, *, batch_size: int, max_length: int | None = None,
                 seed: int = 0, shuffle_buffer: int = 1024, padding_side: PaddingSide = "right") -> None:
        if not sources:
            raise DataError("a stream needs at least one source of samples")
        if batch_size < 1:
            raise DataError(f"batch_size must be >= 1, got {batch_size}")
        self.sources, self.processor = tuple(sources), processor
        self.batch_size, self.max_length, self.seed = batch_size, max_length, seed
        self.shuffle_buffer, self.padding_side = shuffle_buffer, padding_side
        tokenizer = processor.tokenizer
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.rank, self.world_size = 0, 1
        self._epoch, self._position, self._too_long = 0, 0, 0
        self._count: int | None = None

    def shard(self, rank: int, world_size: int) -> None:
        """Take only this rank's share (set once, before iterating)."""
        if not 0 <= rank < world_size:
            raise DataError(f"rank {rank} is not in 0..{world_size - 1}")
        self.rank, self.world_size = rank, world_size

    def samples_per_epoch(self) -> int:
        """References in one epoch over all ranks (counted once; no sample is built)."""
        if self._count is None:
            self._count = sum(source.count() for source in self.sources)
        return self._count

    def state_dict(self) -> dict[str, int]:
        return {"epoch": self._epoch, "position": self._position, "too_long": self._too_long}

    def load_state_dict(self, state: Mapping[str, int]) -> None:
        self._epoch, self._position, self._too_long = int(state["epoch"]), int(state["position"]), int(state["too_long"])

    def epoch_refs(self, epoch: int) -> Iterator[SampleRef]:
        """Every rank's references of `epoch`, in order."""
        def chained() -> Iterator[SampleRef]:
            for source in self.sources:
                yield from source.refs()

        return _shuffled(chained(), random.Random(f"uivenus-data:{self.seed}:{epoch}"), self.shuffle_buffer)

    def __iter__(self) -> Iterator[Batch]:
        epoch, start = self._epoch, self._position
        pending: list[Encoded] = []
        while True:
            built = 0
            for index, ref in enumerate(self.epoch_refs(epoch)):
                if index < start or index % self.world_size != self.rank:
                    continue
                try:
                    pending.append(encode(self.processor, ref(), self.max_length))
                except SampleTooLongError:
                    self._too_long += 1
                    continue
                built += 1
                if len(pending) == self.batch_size:
                    self._epoch, self._position = epoch, index + 1
                    yield collate(pending, self.pad_id, self.padding_side)
                    pending = []
            if built == 0 and start == 0:
                raise DataError(f"epoch {epoch} gave rank {self.rank} no sample that fits max_length="
                                f"{self.max_length} ({self._too_long} too long so far); raise max_length or add data")
            epoch, start = epoch + 1, 0
