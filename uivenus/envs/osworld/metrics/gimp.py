"""GIMP's edit checks: did the agent's image (first argument) change the way the task asked — darker, more
saturated, more contrast, mirrored, exported — while keeping the picture's structure (SSIM, `images.py`)?"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from scipy.ndimage import laplace

from uivenus.envs.osworld.metrics.images import open_image, ssim, structure_similar
from uivenus.envs.osworld.metrics.readers import file_pairs
from uivenus.envs.osworld.metrics.registry import metric

__all__ = [
    "check_brightness_decrease_and_structure_sim", "check_contrast_increase_and_structure_sim",
    "check_file_exists_and_structure_sim", "check_green_background", "check_image_file_size", "check_image_mirror",
    "check_palette_and_structure_sim", "check_saturation_increase_and_structure_sim", "check_sharper",
    "check_structure_sim_resized", "check_textbox_on_leftside", "check_triangle_position", "compare_image_list",
    "decrease_brightness", "increase_saturation",
]


def _pair(result: Any, other: Any, mode: str | None = None) -> tuple[Image.Image, Image.Image] | None:
    first, second = open_image(result, mode), open_image(other, mode)
    return None if first is None or second is None else (first, second)


def _brightness(image: Image.Image) -> float:
    return float(np.asarray(image.convert("L"), dtype=np.float64).mean())


def _saturation(image: Image.Image) -> float:
    return float(np.asarray(image.convert("HSV"))[..., 1].astype(np.float64).mean())


@metric("check_brightness_decrease_and_structure_sim")
def check_brightness_decrease_and_structure_sim(result: Any, original: Any, threshold: float = 0.03) -> float:
    """1.0 when the result is darker than the original and, both scaled to mean brightness 128, their mean squared
    difference (0..1 scale) is below `threshold`."""
    pair = _pair(result, original)
    if pair is None or pair[0].size != pair[1].size:
        return 0.0

    def normalised(image: Image.Image) -> np.ndarray:
        factor = 128 / max(_brightness(image), 1e-9)
        return np.clip(np.floor(np.asarray(image.convert("RGB"), dtype=np.float64) * factor), 0, 255) / 255

    darker = _brightness(pair[1]) > _brightness(pair[0])
    return float(darker and float(np.mean((normalised(pair[0]) - normalised(pair[1])) ** 2)) < threshold)


@metric("check_saturation_increase_and_structure_sim")
def check_saturation_increase_and_structure_sim(result: Any, original: Any) -> float:
    """1.0 when the result is more saturated and its hue and value channels keep SSIM >= 0.9 with the original's."""
    pair = _pair(result, original, "HSV")
    if pair is None or pair[0].size != pair[1].size or min(pair[0].size) < 7:
        return 0.0
    first, second = (np.asarray(image) for image in pair)
    same = all(ssim(first[..., c], second[..., c]) >= 0.9 for c in (0, 2))
    return float(_saturation(pair[0]) > _saturation(pair[1]) and same)


@metric("check_contrast_increase_and_structure_sim")
def check_contrast_increase_and_structure_sim(result: Any, original: Any) -> float:
    """1.0 when the result's pixel standard deviation is higher and SSIM with the original is at least 0.65."""
    pair = _pair(result, original, "RGB")
    if pair is None:
        return 0.0
    spread = [float(np.asarray(image, dtype=np.float64).std()) for image in pair]
    return float(spread[0] > spread[1] and structure_similar(*pair, threshold=0.65))


@metric("check_file_exists_and_structure_sim")
def check_file_exists_and_structure_sim(result: Any, expected: Any) -> float:
    """1.0 when the exported file exists and is structurally the expected image."""
    pair = _pair(result, expected)
    return float(pair is not None and structure_similar(*pair))


@metric("check_structure_sim_resized")
def check_structure_sim_resized(result: Any, expected: Any) -> float:
    """1.0 when the result, cropped to its non-transparent part and resized to the expected size, keeps its
    structure."""
    pair = _pair(result, expected)
    if pair is None:
        return 0.0
    image, target = pair
    if image.mode in ("RGBA", "LA") or "transparency" in image.info:
        box = image.convert("RGBA").split()[-1].getbbox()
        if box is None:
            return 0.0
        image = image.convert("RGBA").crop(box)
    return float(structure_similar(image.convert("RGB").resize(target.size), target))


@metric("check_image_mirror")
def check_image_mirror(result: Any, original: Any) -> float:
    """1.0 when the result is the original flipped left to right (SSIM >= 0.99)."""
    pair = _pair(result, original)
    return float(pair is not None and structure_similar(pair[0].transpose(Image.Transpose.FLIP_LEFT_RIGHT), pair[1],
                                                        threshold=0.99))


@metric("check_palette_and_structure_sim")
def check_palette_and_structure_sim(result: Any, expected: Any) -> float:
    """1.0 when the result is a palette (indexed) image and keeps the expected image's structure."""
    pair = _pair(result, expected)
    return float(pair is not None and pair[0].mode == "P" and structure_similar(*pair))


@metric("check_triangle_position")
def check_triangle_position(result: Any) -> float:
    """1.0 when the shape in the image's second most common colour is centred (its centroid within 5% of the
    centre along each axis)."""
    image = open_image(result, "RGB")
    if image is None:
        return 0.0
    pixels = np.asarray(image)
    colours, counts = np.unique(pixels.reshape(-1, 3), axis=0, return_counts=True)
    if len(colours) < 2:
        return 0.0
    shape = np.argwhere(np.all(pixels == colours[np.argsort(counts)[-2]], axis=2))
    size = np.array(pixels.shape[:2], dtype=np.float64)
    return float(np.all(np.abs(shape.mean(axis=0) - size / 2) < 0.05 * size))


@metric("check_textbox_on_leftside")
def check_textbox_on_leftside(result: Any) -> float:
    """1.0 when the leftmost dark pixel (grey < 128) lies in the left 5% of the image."""
    image = open_image(result, "L")
    if image is None:
        return 0.0
    dark = np.argwhere(np.asarray(image) < 128)
    return float(dark.size > 0 and dark[:, 1].min() < image.width * 0.05)


@metric("check_green_background")
def check_green_background(result: Any, original: Any) -> float:
    """1.0 when every pixel that is not black in the original is green in the result (G above R and B)."""
    pair = _pair(result, original, "RGB")
    if pair is None or pair[0].size != pair[1].size:
        return 0.0
    mine, theirs = (np.asarray(image).astype(np.int32) for image in pair)
    background = np.any(theirs != 0, axis=2)
    green = (mine[..., 1] > mine[..., 0]) & (mine[..., 1] > mine[..., 2])
    return float(np.all(green[background]))


def _sharpness(image: Image.Image) -> float:
    return float(np.var(laplace(np.asarray(image.convert("L"), dtype=np.float64), mode="mirror")))


@metric("check_sharper")
def check_sharper(result: Any, original: Any) -> float:
    """1.0 when the result's Laplacian variance (edge energy) is higher than the original's."""
    pair = _pair(result, original)
    return float(pair is not None and _sharpness(pair[0]) > _sharpness(pair[1]))


@metric("check_image_file_size")
def check_image_file_size(result: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when the file is smaller than `rule["max_size"]` bytes."""
    return float(result is not None and Path(result).is_file() and Path(result).stat().st_size < rule["max_size"])


@metric("compare_image_list")
def compare_image_list(result: Any, expected: Any) -> float:
    """1.0 when each result image has exactly the expected image's pixels (lists pair up)."""
    pairs = file_pairs(result, expected)
    for mine, theirs in pairs:
        pair = _pair(mine, theirs, "RGBA")
        if pair is None or not np.array_equal(np.asarray(pair[0]), np.asarray(pair[1])):
            return 0.0
    return float(bool(pairs))


@metric("increase_saturation")
def increase_saturation(original: Any, result: Any) -> float:
    """1.0 when the second image is more saturated than the first."""
    pair = _pair(original, result)
    return float(pair is not None and _saturation(pair[0]) < _saturation(pair[1]))


@metric("decrease_brightness")
def decrease_brightness(original: Any, result: Any) -> float:
    """1.0 when the second image is darker than the first."""
    pair = _pair(original, result)
    return float(pair is not None and _brightness(pair[0]) > _brightness(pair[1]))
