"""compare_pptx_files and the Impress checks on real decks: python-pptx writes them, LibreOffice headless saves them
again (as Impress does when the agent saves), and the metric must see the same and the different."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pptx
import pytest
from pptx.dml.color import RGBColor
from pptx.util import Emu, Pt

from uivenus.envs.osworld.metrics import metric_for
from uivenus.envs.osworld.metrics.slides import SlideOptionError

compare = metric_for("compare_pptx_files")


def _deck(path: Path, *, title: str, bold: bool, left: int, note: str, portrait: bool = False) -> Path:
    deck = pptx.Presentation()
    if portrait:
        deck.slide_width, deck.slide_height = deck.slide_height, deck.slide_width
    first = deck.slides.add_slide(deck.slide_layouts[5])
    first.shapes.title.text = title
    second = deck.slides.add_slide(deck.slide_layouts[6])
    box = second.shapes.add_textbox(Emu(left), Emu(914400), Emu(3000000), Emu(600000))
    run = box.text_frame.paragraphs[0].add_run()
    run.text = "Revenue grew"
    run.font.bold, run.font.size, run.font.color.rgb = bold, Pt(24), RGBColor(0xC0, 0, 0)
    second.notes_slide.notes_text_frame.text = note
    deck.save(path)
    return path


@pytest.fixture(scope="module")
def decks(tmp_path_factory: pytest.TempPathFactory,
          soffice_convert: Callable[[Sequence[Path], str], list[Path]]) -> dict[str, Path]:
    raw = tmp_path_factory.mktemp("decks")
    made = {
        "gold": _deck(raw / "gold.pptx", title="Q3 review", bold=True, left=914400, note="Say hello"),
        "same": _deck(raw / "same.pptx", title="Q3 review", bold=True, left=914400, note="Say hello"),
        "plain": _deck(raw / "plain.pptx", title="Q3 review", bold=False, left=914400, note="Say hello"),
        "moved": _deck(raw / "moved.pptx", title="Q3 review", bold=True, left=2914400, note="Say hello"),
        "retitled": _deck(raw / "retitled.pptx", title="Q4 review", bold=True, left=914400, note="Say bye"),
        "tall": _deck(raw / "tall.pptx", title="Q3 review", bold=True, left=914400, note="Say hello", portrait=True),
    }
    saved = soffice_convert([made["gold"], made["same"], made["plain"]], "pptx")
    return made | {f"lo-{p.stem}": p for p in saved}


def test_identical_decks_match_also_after_libreoffice_saved_them(decks: dict[str, Path]) -> None:
    assert compare(decks["same"], decks["gold"]) == 1.0
    assert compare(decks["lo-same"], decks["lo-gold"]) == 1.0
    assert compare(decks["lo-plain"], decks["lo-gold"]) == 0.0


def test_each_examined_aspect_can_fail_and_be_switched_off(decks: dict[str, Path]) -> None:
    assert compare(decks["plain"], decks["gold"]) == 0.0
    assert compare(decks["plain"], decks["gold"], examine_font_bold=False) == 1.0
    assert compare(decks["moved"], decks["gold"]) == 0.0
    assert compare(decks["moved"], decks["gold"], examine_shape=False) == 1.0
    assert compare(decks["retitled"], decks["gold"]) == 0.0
    assert compare(decks["retitled"], decks["gold"], examine_text=False, examine_note=False) == 1.0


def test_task_specific_or_unknown_options_are_refused(decks: dict[str, Path]) -> None:
    with pytest.raises(SlideOptionError, match="examine_title_bottom_position"):
        compare(decks["same"], decks["gold"], examine_title_bottom_position=True)
    with pytest.raises(SlideOptionError, match="examine_sparkle"):
        compare(decks["same"], decks["gold"], examine_sparkle=True)


def test_orientation_and_broken_files(tmp_path: Path, decks: dict[str, Path]) -> None:
    portrait = metric_for("check_slide_orientation_Portrait")
    assert portrait(decks["tall"]) == 1.0
    assert portrait(decks["gold"]) == 0.0
    broken = tmp_path / "broken.pptx"
    broken.write_bytes(b"PK\x03\x04nope")
    for result in (None, tmp_path / "absent.pptx", broken):
        assert compare(result, decks["gold"]) == 0.0
        assert portrait(result) == 0.0


def test_presenter_console_setting(tmp_path: Path) -> None:
    xcu = tmp_path / "registrymodifications.xcu"
    item = ('<item oor:path="/org.openoffice.Office.Impress/Misc/Start"><prop oor:name="EnablePresenterScreen" '
            'oor:op="fuse"><value>{}</value></prop></item>')
    head = '<?xml version="1.0"?><oor:items xmlns:oor="http://openoffice.org/2001/registry">'
    xcu.write_text(head + item.format("false") + "</oor:items>")
    assert metric_for("check_presenter_console_disable")(xcu) == 1.0
    xcu.write_text(head + item.format("true") + "</oor:items>")
    assert metric_for("check_presenter_console_disable")(xcu) == 0.0
    xcu.write_text("<oor:items")
    assert metric_for("check_presenter_console_disable")(xcu) == 0.0


def test_image_stretch_and_center(tmp_path: Path) -> None:
    from PIL import Image

    Image.new("RGB", (40, 30), "teal").save(tmp_path / "pic.png")

    def deck(path: Path, *, stretched: bool) -> Path:
        made = pptx.Presentation()
        slide = made.slides.add_slide(made.slide_layouts[6])
        if stretched:
            slide.shapes.add_picture(str(tmp_path / "pic.png"), 0, 0, made.slide_width, made.slide_height)
        else:
            slide.shapes.add_picture(str(tmp_path / "pic.png"), Emu(914400), Emu(914400))
        made.save(path)
        return path

    original = deck(tmp_path / "original.pptx", stretched=False)
    check = metric_for("check_image_stretch_and_center")
    assert check(deck(tmp_path / "stretched.pptx", stretched=True), original) == 1.0
    assert check(original, original) == 0.0
