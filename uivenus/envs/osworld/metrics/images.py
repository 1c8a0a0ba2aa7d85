"""Image metrics (GIMP, VLC snapshots, wallpapers): structural similarity (SSIM, computed here with scipy the way
scikit-image defines it, so the heavy package is not needed) and simple size checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from PIL import Image
from scipy.ndimage import uniform_filter

from uivenus.envs.osworld.metrics.readers import read_or_none
from uivenus.envs.osworld.metrics.registry import metric

__all__ = ["check_image_size", "check_structure_sim", "compare_images", "open_image", "ssim", "structure_similar"]

_WINDOW = 7  # scikit-image's default window: 7x7, uniform weights, sample covariance


def open_image(path: Any, mode: str | None = None) -> Image.Image | None:
    """The image at `path`, loaded (converted to `mode` when given), or None when it cannot be read."""
    def load(p: Any) -> Image.Image:
        with Image.open(p) as image:
            image.load()
            return image.convert(mode) if mode else image.copy()
    return read_or_none(path, load)


def ssim(first: np.ndarray, second: np.ndarray, data_range: float = 255.0) -> float:
    """Mean structural similarity of two same-shape images (H x W, or H x W x C averaged over channels)."""
    if first.ndim == 3:
        return float(np.mean([ssim(first[..., c], second[..., c], data_range) for c in range(first.shape[-1])]))
    x, y = first.astype(np.float64), second.astype(np.float64)
    mean = lambda a: uniform_filter(a, size=_WINDOW)  # noqa: E731
    ux, uy = mean(x), mean(y)
    norm = _WINDOW**2 / (_WINDOW**2 - 1)
    vx, vy, vxy = norm * (mean(x * x) - ux * ux), norm * (mean(y * y) - uy * uy), norm * (mean(x * y) - ux * uy)
    c1, c2 = (0.01 * data_range) ** 2, (0.03 * data_range) ** 2
    score = ((2 * ux * uy + c1) * (2 * vxy + c2)) / ((ux**2 + uy**2 + c1) * (vx + vy + c2))
    pad = (_WINDOW - 1) // 2
    return float(score[pad:-pad, pad:-pad].mean())


@metric("compare_images")
def compare_images(result: Any, expected: Any, *, reference_base_result: float | None = None) -> float:
    """The SSIM of the two images in grey, both resized to the smaller one's size. With `reference_base_result`
    (the score of the untouched input), only improvement counts: (s - base) / (1 - base) once s >= base + 0.01."""
    first, second = open_image(result, "L"), open_image(expected, "L")
    if first is None or second is None:
        return 0.0
    size = min(first.size, second.size)
    if min(size) < _WINDOW:
        return 0.0
    score = ssim(np.asarray(first.resize(size, Image.Resampling.LANCZOS)),
                 np.asarray(second.resize(size, Image.Resampling.LANCZOS)))
    if reference_base_result is None:
        return max(0.0, score)
    base = float(reference_base_result)
    return (score - base) / (1 - base) if score >= base + 0.01 else 0.0


def structure_similar(first: Image.Image, second: Image.Image, threshold: float = 0.9) -> bool:
    """The benchmark's structure check: same size (at least 7x7) and an RGB SSIM of at least `threshold`."""
    if first.size != second.size or min(first.size) < _WINDOW:
        return False
    return ssim(np.asarray(first.convert("RGB")), np.asarray(second.convert("RGB"))) >= threshold


@metric("check_structure_sim")
def check_structure_sim(result: Any, expected: Any) -> float:
    """1.0 when both images are structurally the same (`structure_similar`)."""
    first, second = open_image(result), open_image(expected)
    return float(first is not None and second is not None and structure_similar(first, second))


def _content_size(image: Image.Image) -> tuple[int, int]:
    """The size of the image's non-transparent part (0 x 0 when it is all transparent)."""
    box = image.convert("RGBA").split()[-1].getbbox()
    return (0, 0) if box is None else (box[2] - box[0], box[3] - box[1])


@metric("check_image_size")
def check_image_size(result: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when the image is `rule["width"]` wide and/or `rule["height"]` tall (each only checked when given);
    with `rule["ignore_transparent"]`, the size of its non-transparent part counts."""
    image = open_image(result)
    if image is None:
        return 0.0
    transparent = image.mode in ("RGBA", "LA") or "transparency" in image.info
    width, height = _content_size(image) if rule.get("ignore_transparent") and transparent else image.size
    return float(rule.get("width", width) in (None, width) and rule.get("height", height) in (None, height))
