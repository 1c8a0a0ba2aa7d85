"""GIMP's edit checks on real PNGs: an original picture and the edits a task asks for (made with Pillow's own
enhancers, as GIMP's colour tools would), against edits that go the wrong way or break the picture."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageEnhance, ImageFilter

from uivenus.envs.osworld.metrics import metric_for


def _original() -> Image.Image:
    image = Image.new("RGB", (120, 90), (120, 160, 200))
    draw = ImageDraw.Draw(image)
    draw.rectangle((10, 10, 60, 50), fill=(200, 60, 40))
    draw.ellipse((70, 30, 110, 80), fill=(40, 150, 60))
    draw.line((0, 85, 119, 60), fill=(20, 20, 20), width=3)
    return image


@pytest.fixture
def pictures(tmp_path: Path) -> dict[str, Path]:
    original = _original()
    edits = {
        "original": original,
        "darker": ImageEnhance.Brightness(original).enhance(0.7),
        "brighter": ImageEnhance.Brightness(original).enhance(1.3),
        "saturated": ImageEnhance.Color(original).enhance(1.6),
        "contrast": ImageEnhance.Contrast(original).enhance(1.5),
        "flat": ImageEnhance.Contrast(original).enhance(0.5),
        "mirrored": original.transpose(Image.Transpose.FLIP_LEFT_RIGHT),
        "upside": original.transpose(Image.Transpose.FLIP_TOP_BOTTOM),
        "palette": original.convert("P", palette=Image.Palette.ADAPTIVE, colors=64),
        "sharper": original.filter(ImageFilter.SHARPEN),
        "blurred": original.filter(ImageFilter.GaussianBlur(2)),
        "other": Image.new("RGB", (120, 90), (250, 250, 250)),
    }
    paths = {}
    for name, image in edits.items():
        paths[name] = tmp_path / f"{name}.png"
        image.save(paths[name])
    return paths


def test_the_edit_checks_pass_the_asked_edit_and_fail_the_opposite(pictures: dict[str, Path]) -> None:
    p = pictures
    cases = [
        ("check_brightness_decrease_and_structure_sim", "darker", "brighter"),
        ("check_saturation_increase_and_structure_sim", "saturated", "darker"),
        ("check_contrast_increase_and_structure_sim", "contrast", "flat"),
        ("check_image_mirror", "mirrored", "upside"),
        ("check_sharper", "sharper", "blurred"),
    ]
    for name, good, bad in cases:
        assert metric_for(name)(p[good], p["original"]) == 1.0, name
        assert metric_for(name)(p[bad], p["original"]) == 0.0, name
        assert metric_for(name)(None, p["original"]) == 0.0, name
    assert metric_for("check_brightness_decrease_and_structure_sim")(p["other"], p["original"]) == 0.0


def test_structure_palette_export_and_exact_checks(pictures: dict[str, Path], tmp_path: Path) -> None:
    p = pictures
    assert metric_for("check_palette_and_structure_sim")(p["palette"], p["original"]) == 1.0
    assert metric_for("check_palette_and_structure_sim")(p["original"], p["original"]) == 0.0  # not indexed
    assert metric_for("check_file_exists_and_structure_sim")(p["original"], p["original"]) == 1.0
    assert metric_for("check_file_exists_and_structure_sim")(tmp_path / "absent.png", p["original"]) == 0.0
    assert metric_for("compare_image_list")([p["original"], p["mirrored"]], [p["original"], p["mirrored"]]) == 1.0
    assert metric_for("compare_image_list")(p["darker"], p["original"]) == 0.0
    assert metric_for("increase_saturation")(p["original"], p["saturated"]) == 1.0
    assert metric_for("decrease_brightness")(p["original"], p["brighter"]) == 0.0
    assert metric_for("check_image_file_size")(p["original"], {"max_size": 100_000}) == 1.0
    assert metric_for("check_image_file_size")(p["original"], {"max_size": 10}) == 0.0


def test_resized_and_transparent_images(tmp_path: Path) -> None:
    original = _original()
    padded = Image.new("RGBA", (200, 160), (0, 0, 0, 0))
    padded.paste(original.resize((60, 45)), (30, 40))
    padded.save(tmp_path / "padded.png")
    original.save(tmp_path / "original.png")
    assert metric_for("check_structure_sim_resized")(tmp_path / "padded.png", tmp_path / "original.png") == 1.0
    assert metric_for("check_image_size")(tmp_path / "padded.png", {"width": 60, "height": 45,
                                                                    "ignore_transparent": True}) == 1.0
    assert metric_for("check_image_size")(tmp_path / "padded.png", {"width": 200, "height": 160}) == 1.0


def test_layout_checks(tmp_path: Path) -> None:
    centred = Image.new("RGB", (100, 100), "white")
    ImageDraw.Draw(centred).polygon([(40, 60), (60, 60), (50, 40)], fill="yellow")
    centred.save(tmp_path / "centred.png")
    corner = Image.new("RGB", (100, 100), "white")
    ImageDraw.Draw(corner).polygon([(0, 20), (20, 20), (10, 0)], fill="yellow")
    corner.save(tmp_path / "corner.png")
    assert metric_for("check_triangle_position")(tmp_path / "centred.png") == 1.0
    assert metric_for("check_triangle_position")(tmp_path / "corner.png") == 0.0
    left = Image.new("RGB", (200, 50), "white")
    ImageDraw.Draw(left).text((2, 10), "Hello", fill="black")
    left.save(tmp_path / "left.png")
    right = Image.new("RGB", (200, 50), "white")
    ImageDraw.Draw(right).text((120, 10), "Hello", fill="black")
    right.save(tmp_path / "right.png")
    assert metric_for("check_textbox_on_leftside")(tmp_path / "left.png") == 1.0
    assert metric_for("check_textbox_on_leftside")(tmp_path / "right.png") == 0.0
    person = Image.new("RGB", (40, 30), "white")
    ImageDraw.Draw(person).rectangle((10, 5, 30, 25), fill="black")
    person.save(tmp_path / "cutout.png")
    green = person.copy()
    green.paste((30, 200, 40), (0, 0, 40, 5))
    green.paste((30, 200, 40), (0, 25, 40, 30))
    green.paste((30, 200, 40), (0, 5, 10, 25))
    green.paste((30, 200, 40), (31, 5, 40, 25))
    green.save(tmp_path / "green.png")
    assert metric_for("check_green_background")(tmp_path / "green.png", tmp_path / "cutout.png") == 1.0
    assert metric_for("check_green_background")(tmp_path / "cutout.png", tmp_path / "cutout.png") == 0.0
