"""The miniature recipe's two generated domains: every instruction has the one answer its pixels show, the same seed
gives the same files, and the `steps` source turns each step into a sample its own reference scores as right."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from uivenus.actions.grammar import parse_response
from uivenus.actions.space import Click, Type
from uivenus.evals.grounding_data import load_grounding
from uivenus.synth.sandbox_steps import STEPS_FILE, generate_steps
from uivenus.synth.shapes import CELL, COLOURS, generate_shapes
from uivenus.train.samples import DataError, Domain
from uivenus.train.sources import SOURCES
from uivenus.verify.rewards import action_reward


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_shapes_target_is_the_named_colour_unique_on_its_screen_and_reproducible(tmp_path: Path) -> None:
    annotations = generate_shapes(12, tmp_path / "a", seed=3, grid=4, per_sample=3)
    records = json.loads(annotations.read_text())
    assert len(records) == 36
    items = load_grounding(annotations)  # the grounding harness reads it as it is
    assert len(items) == 36 and all(item.img_size == (4 * CELL, 4 * CELL) for item in items)
    for record in records:
        colour, kind = record["instruction"].removeprefix("click the ").split()
        x1, y1, x2, y2 = record["bbox"]
        with Image.open(tmp_path / "a" / "images" / record["img_filename"]) as image:
            centre = image.convert("RGB").getpixel(((x1 + x2) // 2, (y2 + y1 * 3) // 4 if kind == "triangle"
                                                    else (y1 + y2) // 2))
        assert centre == COLOURS[colour], record
        assert x2 - x1 >= CELL - 10 and x1 // CELL == (x2 - 1) // CELL  # large, inside one image token's cell
    # no two targets on one screen share the same words (a unique answer); three distinct targets per screen
    per_screen = Counter(r["img_filename"] for r in records)
    assert set(per_screen.values()) == {3}
    assert len({(r["img_filename"], r["instruction"]) for r in records}) == 36
    again = generate_shapes(12, tmp_path / "b", seed=3, grid=4, per_sample=3)
    assert _files(again.parent) == _files(annotations.parent)
    other = generate_shapes(12, tmp_path / "c", seed=4, grid=4, per_sample=3)
    assert _files(other.parent) != _files(annotations.parent)
    with pytest.raises(ValueError, match="per_sample"):
        generate_shapes(1, tmp_path / "d", shapes=(2, 3), per_sample=3)
    # by colour alone: colours differ on a screen, so "the blue shape" still has one answer
    by_colour = json.loads(generate_shapes(8, tmp_path / "e", grid=3, shapes=(3, 5), name_kind=False).read_text())
    assert all(r["instruction"].endswith(" shape") and r["img_size"] == [3 * CELL, 3 * CELL] for r in by_colour)
    assert len({(r["img_filename"], r["instruction"]) for r in by_colour}) == len(by_colour) == 24
    with pytest.raises(ValueError, match="max shapes"):
        generate_shapes(1, tmp_path / "f", grid=4, shapes=(4, 7), name_kind=False, per_sample=1)


def test_anonymous_shapes_name_nothing_so_only_the_screen_says_where_the_one_shape_is(tmp_path: Path) -> None:
    records = json.loads(generate_shapes(40, tmp_path / "a", grid=3, shapes=(1, 1), per_sample=1,
                                         anonymous=True).read_text())
    assert {r["instruction"] for r in records} == {"click the shape"} and len(records) == 40
    cells = Counter()
    for record in records:  # the box holds the screen's only non-background pixels
        with Image.open(tmp_path / "a" / "images" / record["img_filename"]) as image:
            x0, y0, x1, y1 = image.convert("RGB").point(lambda v: 255 if v != 245 else 0).getbbox()
        box = record["bbox"]
        assert box[0] <= x0 and box[1] <= y0 and x1 <= box[2] + 1 and y1 <= box[3] + 1
        cells[(box[1] // CELL, box[0] // CELL)] += 1
    assert len(cells) == 9  # every cell holds the target somewhere, so no constant answer scores well
    with pytest.raises(ValueError, match="exactly one shape"):
        generate_shapes(1, tmp_path / "b", grid=3, shapes=(1, 2), per_sample=1, anonymous=True)


def test_sandbox_steps_actions_follow_the_instruction_and_the_pixels_and_are_reproducible(tmp_path: Path) -> None:
    path = generate_steps(60, tmp_path / "a", seed=1)
    records = json.loads(path.read_text())
    assert Counter(r["kind"] for r in records).keys() == {"type", "scroll", "click", "enter", "back"}
    for record in records:
        action = parse_response(record["action"]).action
        if isinstance(action, Type):
            assert action.content in record["instruction"].split()
        if isinstance(action, Click):  # the point lies on a button of the colour the instruction names
            colour = record["instruction"].split()[2]
            with Image.open(tmp_path / "a" / record["image"]) as image:
                assert image.convert("RGB").getpixel(action.point) == COLOURS[colour]
    assert _files(generate_steps(60, tmp_path / "b", seed=1).parent) == _files(path.parent)
    assert json.loads(generate_steps(60, tmp_path / "c", seed=2).read_text()) != records

    samples = list(SOURCES["steps"](path))
    assert len(samples) == 60 and {s.domain for s in samples} == {Domain.WEB}
    assert all(not s.thinking and s.reference is not None for s in samples)
    for sample in samples:  # the target is right by its own reference; a wrong word or direction is not
        assert action_reward(sample.target, sample.reference, point="box").total == pytest.approx(1.0)
    typed = next(s for s in samples if s.meta["kind"] == "type")
    assert action_reward("<action>Type(content='zzz')</action>", typed.reference, point="box").params == 0.0

    bad = tmp_path / "bad" / STEPS_FILE
    bad.parent.mkdir()
    bad.write_text(json.dumps([{**records[0], "action": "<action>Fly()</action>"}]))
    with pytest.raises(DataError, match="record 0: unreadable action"):
        list(SOURCES["steps"](bad))
