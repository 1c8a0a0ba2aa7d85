"""Facts remembered per image object: found again for that very object, never for an equal copy, gone with it."""

from __future__ import annotations

import gc

from PIL import Image

from uivenus.images import PerImage, known_png, remember_png


def test_a_value_belongs_to_the_object_and_its_key_not_to_equal_pixels() -> None:
    cache: PerImage[str] = PerImage()
    image, twin = Image.new("RGB", (4, 4), "red"), Image.new("RGB", (4, 4), "red")
    assert image == twin  # PIL compares pixels: an equality-keyed cache would mix them up
    made: list[str] = []
    assert cache.get_or_make(image, lambda: made.append("a") or "A") == "A"
    assert cache.get_or_make(image, lambda: made.append("again") or "B") == "A"
    assert cache.get_or_make(image, lambda: "other key", key="k") == "other key"
    assert cache.get(twin) is None and made == ["a"]


def test_an_entry_goes_with_its_image() -> None:
    cache: PerImage[bytes] = PerImage()
    image = Image.new("RGB", (4, 4))
    cache.put(image, b"x")
    cache.put(image, b"y", key=1)
    assert len(cache) == 2
    del image
    gc.collect()
    assert len(cache) == 0


def test_remembered_png_is_known_for_that_image_only() -> None:
    image = Image.new("RGB", (2, 2), "blue")
    remember_png(image, b"\x89PNG...")
    assert known_png(image) == b"\x89PNG..."
    assert known_png(image.copy()) is None
