"""Grounding benchmark data: items, their targets, and the public annotation formats read into them.

One job: turn an annotation file into `GroundingItem`s, each an instruction on a screenshot with its target (a
`Box`, a `Polygon` or a `Refusal`) in the screenshot's pixels. The same benchmark ships in several box forms (see
docs ANCHORS.md), so each annotation format (ScreenSpot v1/v2/Pro, OSWorld-G, ours) is one entry of
`GROUNDING_FORMATS` and reads its records into that one shape; a box that cannot lie on its image is a
`GroundingDataError`, never a silent guess. Asking a policy about the items and scoring its answers is
`evals.grounding`, which reads any format through this module and never sees a format's fields.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from PIL import Image

from uivenus.agent.policies import AnswerKey
from uivenus.agent.policies.oracle import polygon_interior_point
from uivenus.records import read_json_list

__all__ = [
    "GROUNDING_FORMATS", "SIZE_BUCKETS", "UNKNOWN", "Box", "BoxForm", "GroundingDataError",
    "GroundingFormat", "GroundingItem", "Polygon", "Refusal", "Target", "box_from", "grounding_format",
    "load_grounding", "size_bucket",
]

#: What a category field holds when the format does not say.
UNKNOWN = "unknown"
#: Pixel boxes may overshoot the image by this much (annotation rounding); more is an impossible box.
BOX_SLACK_PX = 1.0
#: Element-size buckets by the target's share of the screen area: (name, upper bound, exclusive).
SIZE_BUCKETS: tuple[tuple[str, float], ...] = (("tiny", 0.001), ("small", 0.01), ("medium", 0.05), ("large", math.inf))


class GroundingDataError(ValueError):
    """An annotation file cannot be read as the format it was named as; the message names file, item and fix."""


# --- targets ------------------------------------------------------------------------------------

Point = tuple[float, float]


@dataclass(frozen=True)
class Box:
    """An axis-aligned target box in screen pixels; a point on its edge is inside."""

    x1: float
    y1: float
    x2: float
    y2: float
    kind: ClassVar[str] = "box"

    def contains(self, point: Point) -> bool:
        return self.x1 <= point[0] <= self.x2 and self.y1 <= point[1] <= self.y2

    @property
    def area(self) -> float:
        return (self.x2 - self.x1) * (self.y2 - self.y1)

    @property
    def bounds(self) -> Box:
        return self

    def distance(self, point: Point) -> float:
        """Pixels from `point` to the nearest point of the box (0 inside)."""
        dx = max(self.x1 - point[0], 0.0, point[0] - self.x2)
        dy = max(self.y1 - point[1], 0.0, point[1] - self.y2)
        return math.hypot(dx, dy)

    def answer_key(self) -> AnswerKey:
        """The answer an answer-keyed policy (the oracle) is told for this target."""
        return AnswerKey(box=(self.x1, self.y1, self.x2, self.y2))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "box": [self.x1, self.y1, self.x2, self.y2]}


@dataclass(frozen=True)
class Polygon:
    """A target outline in screen pixels (OSWorld-G); inside by the even-odd rule."""

    points: tuple[Point, ...]
    kind: ClassVar[str] = "polygon"

    def __post_init__(self) -> None:
        points = tuple((float(x), float(y)) for x, y in self.points)
        if len(points) < 3:
            raise ValueError(f"a polygon needs at least 3 points, got {len(points)}")
        object.__setattr__(self, "points", points)

    def _edges(self) -> Iterator[tuple[Point, Point]]:
        return zip(self.points, self.points[1:] + self.points[:1])

    def contains(self, point: Point) -> bool:
        """Even-odd ray casting: a ray to the right crosses the outline an odd number of times."""
        x, y = point
        inside = False
        for (xi, yi), (xj, yj) in self._edges():
            if (yi > y) != (yj > y) and x < (xj - xi) * (y - yi) / (yj - yi) + xi:
                inside = not inside
        return inside

    @property
    def area(self) -> float:
        """Shoelace formula."""
        return abs(sum(xi * yj - xj * yi for (xi, yi), (xj, yj) in self._edges())) / 2

    @property
    def bounds(self) -> Box:
        xs, ys = [p[0] for p in self.points], [p[1] for p in self.points]
        return Box(min(xs), min(ys), max(xs), max(ys))

    def distance(self, point: Point) -> float:
        if self.contains(point):
            return 0.0
        return min(_segment_distance(point, a, b) for a, b in self._edges())

    def interior_point(self) -> Point:
        """A point well inside: the one the oracle answers (see `polygon_interior_point`)."""
        return polygon_interior_point(self.points)

    def answer_key(self) -> AnswerKey:
        return AnswerKey(polygon=self.points)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "points": [list(p) for p in self.points]}


@dataclass(frozen=True)
class Refusal:
    """No element matches the instruction: the right answer is `[-1,-1]`."""

    kind: ClassVar[str] = "refusal"
    area: ClassVar[float] = 0.0

    def contains(self, point: Point) -> bool:
        return False

    def answer_key(self) -> AnswerKey:
        return AnswerKey(refusal=True)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind}


Target = Box | Polygon | Refusal


def _segment_distance(p: Point, a: Point, b: Point) -> float:
    (px, py), (ax, ay), (bx, by) = p, a, b
    dx, dy = bx - ax, by - ay
    length = dx * dx + dy * dy
    t = 0.0 if length == 0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / length))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


def size_bucket(target: Target, img_size: tuple[int, int]) -> str:
    """tiny / small / medium / large by the target's share of the screen; "none" for refusal items."""
    if isinstance(target, Refusal):
        return "none"
    fraction = target.area / (img_size[0] * img_size[1])
    return next(name for name, upper in SIZE_BUCKETS if fraction < upper)


# --- items and box forms ------------------------------------------------------------------------

@dataclass(frozen=True)
class GroundingItem:
    """One instruction on one screenshot, with its target in the screenshot's pixels."""

    id: str
    image: Path
    instruction: str
    target: Target
    img_size: tuple[int, int]
    platform: str = UNKNOWN
    data_type: str = UNKNOWN
    instruction_kind: str = UNKNOWN
    source: Mapping[str, Any] = field(default_factory=dict, compare=False)  # the annotation record as read

    def __post_init__(self) -> None:
        object.__setattr__(self, "image", Path(self.image))
        object.__setattr__(self, "img_size", (int(self.img_size[0]), int(self.img_size[1])))
        object.__setattr__(self, "source", MappingProxyType(dict(self.source)))

    @property
    def element_size(self) -> str:
        return size_bucket(self.target, self.img_size)


class BoxForm(StrEnum):
    """How four numbers describe a box."""

    XYXY = "xyxy"  # [x1, y1, x2, y2] pixels
    XYWH = "xywh"  # [x, y, width, height] pixels
    NORMALIZED_XYXY = "normalized-xyxy"  # [x1, y1, x2, y2] as fractions of the image size


_TO_XYXY: Mapping[BoxForm, Callable[[Sequence[float], tuple[int, int]], tuple[float, float, float, float]]] = {
    BoxForm.XYXY: lambda b, _: (b[0], b[1], b[2], b[3]),
    BoxForm.XYWH: lambda b, _: (b[0], b[1], b[0] + b[2], b[1] + b[3]),
    BoxForm.NORMALIZED_XYXY: lambda b, s: (b[0] * s[0], b[1] * s[1], b[2] * s[0], b[3] * s[1]),
}


def _box_problem(numbers: Sequence[float], form: BoxForm, size: tuple[int, int]) -> str | None:
    """Why `numbers` read as `form` cannot be a box on an image of `size`, or None when they can."""
    if len(numbers) != 4 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                                    for v in numbers):
        return "a box must be 4 finite numbers"
    if form is BoxForm.NORMALIZED_XYXY and not all(0 <= v <= 1 for v in numbers):
        return "normalised coordinates must lie in 0..1"
    if form is not BoxForm.NORMALIZED_XYXY and max(size) > 1 and all(0 <= v <= 1 for v in numbers):
        return "all four numbers lie in 0..1, which looks normalised"
    x1, y1, x2, y2 = _TO_XYXY[form](numbers, size)
    width, height = size
    if not (x1 < x2 and y1 < y2):
        return f"it spans ({x1:g}, {y1:g})-({x2:g}, {y2:g}), which has no area"
    if x1 < -BOX_SLACK_PX or y1 < -BOX_SLACK_PX or x2 > width + BOX_SLACK_PX or y2 > height + BOX_SLACK_PX:
        return f"it spans ({x1:g}, {y1:g})-({x2:g}, {y2:g}), outside the {width}x{height} image"
    return None


def box_from(numbers: Sequence[float], form: BoxForm | str, size: tuple[int, int]) -> Box:
    """The pixel box `numbers` describe in `form` on an image of `size`; ValueError (naming forms that fit) if
    impossible."""
    form = BoxForm(form)
    numbers = list(numbers)
    problem = _box_problem(numbers, form, size)
    if problem is not None:
        fits = [other.value for other in BoxForm if other is not form and _box_problem(numbers, other, size) is None]
        hint = f"; as {' or '.join(fits)} it would fit, so check the box form" if fits else ""
        raise ValueError(f"box {numbers} read as {form.value} is impossible: {problem}{hint}")
    x1, y1, x2, y2 = _TO_XYXY[form](numbers, size)
    return Box(max(x1, 0.0), max(y1, 0.0), min(x2, float(size[0])), min(y2, float(size[1])))


# --- annotation formats -------------------------------------------------------------------------

class _Record:
    """One annotation record being read: where it came from (for errors) and how to reach its image."""

    def __init__(self, data: Mapping[str, Any], file: Path, index: int, images: Path, box_form: BoxForm,
                 sizes: dict[Path, tuple[int, int]]):
        self.data, self.file, self.index = data, file, index
        self.images, self.box_form, self._sizes = images, box_form, sizes

    def error(self, message: str) -> GroundingDataError:
        return GroundingDataError(f"{self.file} item {self.index}: {message}")

    def __getitem__(self, key: str) -> Any:
        if key not in self.data:
            raise self.error(f"missing field {key!r} (has {', '.join(sorted(self.data)) or 'no fields'})")
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        value = self.data.get(key)
        return default if value is None or value == "" else value

    def item_id(self) -> str:
        return str(self.get("id", f"{self.file.stem}:{self.index}"))

    def image(self, name: str, declared: Sequence[int] | None = None) -> tuple[Path, tuple[int, int]]:
        """The image's path and its real (width, height); a declared size that disagrees is an error."""
        path = self.images / name
        if path not in self._sizes:
            if not path.is_file():
                raise self.error(f"image {path} not found; pass the folder holding {name!r} as the images folder")
            with Image.open(path) as image:
                self._sizes[path] = image.size
        size = self._sizes[path]
        if declared is not None and tuple(int(v) for v in declared) != size:
            raise self.error(f"the record says the image is {list(declared)} but {path} is {list(size)}")
        return path, size

    def box(self, numbers: Sequence[float], form: BoxForm, size: tuple[int, int]) -> Box:
        try:
            return box_from(numbers, form, size)
        except (ValueError, TypeError) as exc:
            raise self.error(str(exc)) from None

    def polygon(self, numbers: Sequence[float], size: tuple[int, int]) -> Polygon:
        if len(numbers) < 6 or len(numbers) % 2:
            raise self.error(f"a polygon needs an even count (>= 6) of numbers x1, y1, x2, y2, …; got {len(numbers)}")
        points = tuple(zip(numbers[::2], numbers[1::2]))
        width, height = size
        if any(not (-BOX_SLACK_PX <= x <= width + BOX_SLACK_PX and -BOX_SLACK_PX <= y <= height + BOX_SLACK_PX)
               for x, y in points):
            raise self.error(f"polygon {list(numbers)} leaves the {width}x{height} image")
        polygon = Polygon(points)
        if polygon.area <= 0:
            raise self.error(f"polygon {list(numbers)} encloses no area")
        return polygon


FormatReader = Callable[[_Record], GroundingItem]


@dataclass(frozen=True)
class GroundingFormat:
    """How one annotation format's records become items; `box_form` None means the caller must name it."""

    name: str
    read: FormatReader
    box_form: BoxForm | None
    description: str


#: Annotation formats by name (`--format`).
GROUNDING_FORMATS: dict[str, GroundingFormat] = {}


def grounding_format(name: str, box_form: BoxForm | None, description: str) -> Callable[[FormatReader], FormatReader]:
    """Register a reader for the annotation format `name`."""
    def decorate(read: FormatReader) -> FormatReader:
        GROUNDING_FORMATS[name] = GroundingFormat(name, read, box_form, description)
        return read

    return decorate


def _positive_or_negative(target: Target) -> str:
    return "negative" if isinstance(target, Refusal) else "positive"


def _screenspot_platform(rec: _Record) -> str:
    """ScreenSpot ships one file per platform: screenspot_mobile.json, screenspot_web_v2.json, …"""
    stem = rec.file.stem.lower()
    if stem.startswith("screenspot_"):
        return stem.removeprefix("screenspot_").removesuffix("_v2")
    return UNKNOWN


def _screenspot(rec: _Record) -> GroundingItem:
    path, size = rec.image(rec["img_filename"])
    target = rec.box(rec["bbox"], rec.box_form, size)
    return GroundingItem(id=rec.item_id(), image=path, instruction=str(rec["instruction"]), target=target,
                         img_size=size, platform=str(rec.get("platform", _screenspot_platform(rec))),
                         data_type=str(rec.get("data_type", UNKNOWN)), instruction_kind="positive",
                         source=rec.data)


grounding_format("screenspot", BoxForm.XYWH,
                 "ScreenSpot (SeeClick): img_filename, bbox [x, y, w, h] px, instruction, data_type, data_source")(
    _screenspot)
grounding_format("screenspot-v2", None,
                 "ScreenSpot-v2: ScreenSpot's fields; copies differ in box form, so --box-form is required")(
    _screenspot)


@grounding_format("screenspot-pro", BoxForm.XYXY,
                  "ScreenSpot-Pro: img_filename, bbox [x1, y1, x2, y2] px, instruction, application, platform, "
                  "ui_type, group, img_size; gt_type 'negative' items expect a refusal")
def _screenspot_pro(rec: _Record) -> GroundingItem:
    path, size = rec.image(rec["img_filename"], rec.get("img_size"))
    negative = rec.get("gt_type") == "negative"
    target: Target = Refusal() if negative else rec.box(rec["bbox"], rec.box_form, size)
    return GroundingItem(id=rec.item_id(), image=path, instruction=str(rec["instruction"]), target=target,
                         img_size=size, platform=str(rec.get("platform", UNKNOWN)),
                         data_type=str(rec.get("ui_type", UNKNOWN)), instruction_kind=_positive_or_negative(target),
                         source=rec.data)


#: OSWorld-G's box types. Its `bbox` coordinates are [x, y, w, h] px (its scorer reads [x, y] and [w, h]).
_OSWORLD_TARGETS: Mapping[str, Callable[[_Record, tuple[int, int]], Target]] = {
    "bbox": lambda rec, size: rec.box(rec["box_coordinates"], BoxForm.XYWH, size),
    "polygon": lambda rec, size: rec.polygon(rec["box_coordinates"], size),
    "refusal": lambda rec, size: Refusal(),
}


@grounding_format("osworld-g", BoxForm.XYWH,
                  "OSWorld-G: image_path, image_size, instruction, box_type bbox ([x, y, w, h] px) / polygon "
                  "(x1, y1, …, xn, yn px) / refusal, box_coordinates")
def _osworld_g(rec: _Record) -> GroundingItem:
    path, size = rec.image(rec["image_path"], rec.get("image_size"))
    box_type = rec["box_type"]
    if box_type not in _OSWORLD_TARGETS:
        raise rec.error(f"unknown box_type {box_type!r}; OSWorld-G uses {', '.join(_OSWORLD_TARGETS)}")
    target = _OSWORLD_TARGETS[box_type](rec, size)
    return GroundingItem(id=rec.item_id(), image=path, instruction=str(rec["instruction"]), target=target,
                         img_size=size, platform=str(rec.get("platform", "linux")),
                         data_type=str(rec.get("data_type", UNKNOWN)), instruction_kind=_positive_or_negative(target),
                         source=rec.data)


@grounding_format("uivenus", BoxForm.XYXY,
                  "uivenus synth grounding output: ScreenSpot-v2 fields with bbox [x1, y1, x2, y2] px, plus "
                  "platform, img_size, instruction_kind, negative")
def _uivenus(rec: _Record) -> GroundingItem:
    path, size = rec.image(rec["img_filename"], rec.get("img_size"))
    target: Target = Refusal() if rec["negative"] else rec.box(rec["bbox"], rec.box_form, size)
    return GroundingItem(id=rec.item_id(), image=path, instruction=str(rec["instruction"]), target=target,
                         img_size=size, platform=str(rec.get("platform", UNKNOWN)),
                         data_type=str(rec.get("data_type", UNKNOWN)),
                         instruction_kind=str(rec.get("instruction_kind", _positive_or_negative(target))),
                         source=rec.data)


def _annotation_files(data: Path) -> list[Path]:
    if data.is_dir():
        files = sorted(data.glob("*.json"))
        if not files:
            raise GroundingDataError(f"{data} holds no *.json annotation files")
        return files
    if not data.is_file():
        raise GroundingDataError(f"annotations {data} not found")
    return [data]


def _resolve_box_form(spec: GroundingFormat, box_form: BoxForm | str | None) -> BoxForm:
    forms = ", ".join(f.value for f in BoxForm)
    try:
        chosen = None if box_form is None else BoxForm(box_form)
    except ValueError:
        raise GroundingDataError(f"unknown box form {box_form!r}; use one of {forms}") from None
    if spec.box_form is None:
        if chosen is None:
            raise GroundingDataError(f"format {spec.name!r} ships in several box forms; say which with "
                                     f"box_form / --box-form ({forms})")
        return chosen
    if chosen is not None and chosen is not spec.box_form:
        raise GroundingDataError(f"format {spec.name!r} always stores boxes as {spec.box_form.value}; drop the box "
                                 f"form, or use format 'screenspot-v2' to choose one")
    return spec.box_form


def load_grounding(data: Path | str, images: Path | str | None = None, format: str = "uivenus",
                   box_form: BoxForm | str | None = None) -> list[GroundingItem]:
    """Read an annotation file (or every *.json in a folder) of `format`; images resolve under `images`.

    `images` defaults to the annotations' folder's `images/` subfolder when there is one, else that folder.
    """
    if format not in GROUNDING_FORMATS:
        raise GroundingDataError(f"unknown grounding format {format!r}; known: {', '.join(GROUNDING_FORMATS)}")
    spec = GROUNDING_FORMATS[format]
    form = _resolve_box_form(spec, box_form)
    data = Path(data)
    files = _annotation_files(data)
    if images is None:
        folder = data if data.is_dir() else data.parent
        images = folder / "images" if (folder / "images").is_dir() else folder
    images = Path(images)
    sizes: dict[Path, tuple[int, int]] = {}
    items: list[GroundingItem] = []
    for file in files:
        records = read_json_list(file, GroundingDataError, f"{format} records")
        for index, record in enumerate(records):
            if not isinstance(record, Mapping):
                raise GroundingDataError(f"{file} item {index}: expected a JSON object, got {type(record).__name__}")
            items.append(spec.read(_Record(record, file, index, images, form, sizes)))
    return items
