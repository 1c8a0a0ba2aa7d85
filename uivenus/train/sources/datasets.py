"""Single-screen datasets as training samples: grounding records (ScreenSpot style), generated CAPTCHAs with their
verified solutions, and single steps of another system's data with actions converted into ours.

Each item is one screenshot and one answer, built with the same message builders the agent and the evaluations
use (`grounding_messages`, the CAPTCHA harness's system prompt, `navigation_prompt`), so the model is trained on
the prompts it is asked with. Boxes and coordinates are read as the dataset says they are, never guessed.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from uivenus.actions.convert import ConvertError, get_converter
from uivenus.actions.coords import QWEN2_FACTOR, CoordinateError, Frame, frame_from_options
from uivenus.actions.grammar import ParseError, format_response, parse_response
from uivenus.actions.grounding import format_grounding
from uivenus.actions.space import Action, Click, Platform, check_platform
from uivenus.actions.values import ActionError
from uivenus.agent.conversation import build_messages, grounding_messages
from uivenus.agent.prompts import captcha_system_prompt, navigation_prompt
from uivenus.train.samples import ChatSample, DataError, Domain, SampleRef, Samples
from uivenus.train.sources.references import reference_for, single_action
from uivenus.verify.rewards import ReferenceAction

__all__ = ["BOX_FORMATS", "SANDBOX_PROMPT", "captcha_samples", "converted_samples", "grounding_samples", "step_samples"]

log = logging.getLogger(__name__)


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
    reference = reference_for(single_action(instance.solution), frame, (radius, radius))
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



# --- sandbox steps -------------------------------------------------------------------------------

#: The sandbox steps' system prompt: short, because a tiny model on a CPU pays for every prompt token, and
#: naming exactly the actions the generator asks for.
SANDBOX_PROMPT = ("You operate a web page shown in the screenshot. Answer with one action in <action></action>: "
                  "Click(point=(x, y)) with x and y from 0 to 999, Type(content='...'), "
                  "Scroll(direction='up' or 'down'), PressEnter() or PressBack().")


def _step_sample(record: Mapping[str, Any], image_path: Path, where: str) -> ChatSample:
    try:
        action = parse_response(record["action"]).action
        radius = tuple(float(r) for r in record.get("radius", (0.0, 0.0)))
    except (ParseError, ActionError, TypeError, ValueError) as exc:
        raise DataError(f"{where}: unreadable action or radius ({exc})") from None
    screenshot = _load_rgb(image_path)
    frame = Frame.relative(*screenshot.size)
    messages = build_messages(SANDBOX_PROMPT, str(record["instruction"]), [], screenshot, frame=frame)
    return ChatSample(messages=messages, target=format_response([frame.action_to_model(action)]), domain=Domain.WEB,
                      reference=reference_for(action, frame, radius), thinking=False,  # type: ignore[arg-type]
                      meta={"id": str(record.get("id", where)), "source": "steps", "kind": record.get("kind", "")})


def step_samples(steps: Path) -> Samples:
    """Sandbox steps (`uivenus.synth.sandbox_steps`: `steps.json`, the action in screen pixels and the target's
    half-size as `radius`) as web samples with their reference action, in the relative frame, no thinking."""
    steps = Path(steps)
    records = _read_records(steps)

    def refs() -> Iterator[SampleRef]:
        for number, record in enumerate(records):
            where = f"{steps} record {number}"
            if not isinstance(record, Mapping) or not {"image", "instruction", "action"} <= set(record):
                raise DataError(f"{where} needs image, instruction and action")
            yield functools.partial(_step_sample, record, steps.parent / record["image"], where)

    return Samples(f"steps:{steps}", refs)


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
                check_platform(single_action(actions), platform)
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

