"""Coordinate frames: the one place that converts between a model's frame and the screen's logical pixels.

UI-TARS's most reported bug is a click that lands in the wrong place because points were rescaled in
three places. Here a `Frame` knows how to map a point both ways for one screen, and every other module
carries logical pixels.

- `relative`: integers 0..divisor-1 (UI-Venus-1.5/2, Qwen3-VL; divisor 1000, sometimes 999).
- `absolute`: the screen's own logical pixels (identity, with a bounds check).
- `smart`: absolute pixels on the image after Qwen-VL's `smart_resize` (factor 28 for Qwen2/2.5-VL,
  32 for Qwen3-VL).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from uivenus.actions.points import map_points
from uivenus.actions.space import Action, Point

QWEN2_FACTOR = 28
QWEN3_FACTOR = 32
DEFAULT_MIN_PIXELS = 4 * 28 * 28
DEFAULT_MAX_PIXELS = 16384 * 28 * 28
MAX_ASPECT_RATIO = 200


class CoordinateError(ValueError):
    """A point cannot be placed on the screen (off-screen, or a frame that cannot be built)."""


class FrameKind(StrEnum):
    RELATIVE = "rel"
    ABSOLUTE = "abs"
    SMART = "smart"


def smart_resize(
    height: int,
    width: int,
    factor: int = QWEN2_FACTOR,
    min_pixels: int = DEFAULT_MIN_PIXELS,
    max_pixels: int = DEFAULT_MAX_PIXELS,
) -> tuple[int, int]:
    """The (height, width) Qwen-VL resizes an image to: multiples of `factor`, pixel count in range.

    The same numbers as the transformers image processors (`Qwen2VLImageProcessor`, which Qwen3-VL uses with
    factor 32), tested against them: a side under half a factor first rounds to 0, so the whole image is scaled
    up to `min_pixels` rather than that side alone being raised to one factor."""
    if height <= 0 or width <= 0:
        raise CoordinateError(f"image size must be positive, got {width}x{height}")
    if min_pixels < 1:
        raise CoordinateError(f"min_pixels must be at least 1, got {min_pixels}")
    if max(height, width) / min(height, width) > MAX_ASPECT_RATIO:
        raise CoordinateError(f"aspect ratio of {width}x{height} exceeds {MAX_ASPECT_RATIO}; crop the image first")
    h = round(height / factor) * factor
    w = round(width / factor) * factor
    if h * w > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h = max(factor, math.floor(height / beta / factor) * factor)
        w = max(factor, math.floor(width / beta / factor) * factor)
    elif h * w < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h = math.ceil(height * beta / factor) * factor
        w = math.ceil(width * beta / factor) * factor
    return h, w


@dataclass(frozen=True, slots=True)
class Frame:
    """A model's coordinate frame over one screen of `width` x `height` logical pixels."""

    kind: FrameKind
    width: int
    height: int
    divisor: int = 1000
    factor: int = QWEN2_FACTOR
    min_pixels: int = DEFAULT_MIN_PIXELS
    max_pixels: int = DEFAULT_MAX_PIXELS

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", FrameKind(self.kind))
        if self.width <= 0 or self.height <= 0:
            raise CoordinateError(f"screen size must be positive, got {self.width}x{self.height}")
        if self.divisor <= 0:
            raise CoordinateError(f"divisor must be positive, got {self.divisor}")

    @classmethod
    def relative(cls, width: int, height: int, divisor: int = 1000) -> Frame:
        return cls(FrameKind.RELATIVE, width, height, divisor=divisor)

    @classmethod
    def absolute(cls, width: int, height: int) -> Frame:
        return cls(FrameKind.ABSOLUTE, width, height)

    @classmethod
    def smart(cls, width: int, height: int, factor: int = QWEN2_FACTOR,
              min_pixels: int = DEFAULT_MIN_PIXELS, max_pixels: int = DEFAULT_MAX_PIXELS) -> Frame:
        return cls(FrameKind.SMART, width, height, factor=factor, min_pixels=min_pixels, max_pixels=max_pixels)

    @property
    def model_size(self) -> tuple[int, int]:
        """(width, height) of the model's coordinate space (for the smart frame: the resized image)."""
        if self.kind is FrameKind.RELATIVE:
            return self.divisor, self.divisor
        if self.kind is FrameKind.SMART:
            h, w = smart_resize(self.height, self.width, self.factor, self.min_pixels, self.max_pixels)
            return w, h
        return self.width, self.height

    def to_screen(self, point: Point) -> tuple[int, int]:
        """Model frame -> logical screen pixels (rounded); off-screen is a `CoordinateError`."""
        mw, mh = self.model_size
        x, y = point[0] * self.width / mw, point[1] * self.height / mh
        if not (0 <= x <= self.width and 0 <= y <= self.height):
            raise CoordinateError(
                f"point {tuple(point)} in the {self.describe()} maps to ({x:.1f}, {y:.1f}), "
                f"off the {self.width}x{self.height} screen"
            )
        return min(round(x), self.width - 1), min(round(y), self.height - 1)

    def to_model(self, point: Point) -> tuple[int, int]:
        """Logical screen pixels -> model frame (rounded); the inverse of `to_screen` up to rounding."""
        x, y = point
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise CoordinateError(f"point {tuple(point)} is off the {self.width}x{self.height} screen")
        mw, mh = self.model_size
        return min(round(x * mw / self.width), mw - 1), min(round(y * mh / self.height), mh - 1)

    def action_to_screen(self, action: Action) -> Action:
        return map_points(action, self.to_screen)

    def action_to_model(self, action: Action) -> Action:
        return map_points(action, self.to_model)

    def describe(self) -> str:
        if self.kind is FrameKind.RELATIVE:
            return f"relative frame (divisor {self.divisor})"
        if self.kind is FrameKind.SMART:
            w, h = self.model_size
            return f"smart-resized frame ({w}x{h}, factor {self.factor})"
        return "absolute frame"


def frame_from_options(kind: str, width: int, height: int, *, divisor: int = 1000,
                       factor: int = QWEN2_FACTOR) -> Frame:
    """Build a frame from CLI-style options (`--frame rel|abs|smart --divisor N --factor N`)."""
    builders = {
        FrameKind.RELATIVE: lambda: Frame.relative(width, height, divisor),
        FrameKind.ABSOLUTE: lambda: Frame.absolute(width, height),
        FrameKind.SMART: lambda: Frame.smart(width, height, factor),
    }
    try:
        frame_kind = FrameKind(kind)
    except ValueError:
        raise CoordinateError(f"unknown frame {kind!r}; use one of {', '.join(k.value for k in FrameKind)}") from None
    return builders[frame_kind]()
