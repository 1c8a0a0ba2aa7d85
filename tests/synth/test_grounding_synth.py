"""Grounding data generator: deterministic bytes, boxes that are the real on-screen boxes, honest negatives.

The checks re-render each composed page in a separate Chromium (the test's own Playwright) and ask the
DOM directly, so they do not trust the generator's own measuring script.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import sync_playwright
from typer.testing import CliRunner

from uivenus.envs.browser_config import BrowserConfig
from uivenus.envs.chromium import CHROMIUM_ARGS
from uivenus.synth.grounding import (
    GroundingSynth,
    SynthConfig,
    SynthConfigError,
    export_parquet,
    generate_grounding,
    read_annotations,
)
from uivenus.synth.grounding.icons import ICONS
from uivenus.synth.grounding.render import Renderer
from uivenus.synth.grounding.styles import PLATFORMS

FIELDS = {
    "id",
    "img_filename",
    "bbox",
    "instruction",
    "data_type",
    "platform",
    "img_size",
    "instruction_kind",
    "negative",
    "seed",
    "index",
    "target",
    "absent",
    "domain",
}

_JS_CHECK = """([gid, x, y]) => {
  const hit = document.elementFromPoint(x, y);
  const owner = hit && hit.closest("[data-gid]");
  const el = document.querySelector(`[data-gid="${gid}"]`);
  const r = el.getBoundingClientRect();
  return {hit: owner ? owner.dataset.gid : null, box: [r.left, r.top, r.right, r.bottom]};
}"""
_JS_ON_SCREEN = """() => {
  const inView = (r) => r.width > 0 && r.height > 0 && r.right > 0 && r.bottom > 0
    && r.left < innerWidth && r.top < innerHeight;
  const drawn = (selector) => [...document.querySelectorAll(selector)].filter(e => inView(e.getBoundingClientRect()));
  const texts = [document.body.innerText];
  for (const el of document.querySelectorAll("input, textarea")) texts.push(el.value, el.placeholder);
  const icons = drawn("svg[data-icon]").map(e => e.dataset.icon);
  const fns = drawn("[data-fn]").map(e => e.dataset.fn);
  return {text: texts.join("\\n").toLowerCase(), icons, fns};
}"""


@pytest.fixture(scope="module")
def renderer():
    """One Chromium for every test that makes samples one by one."""
    with Renderer() as shared:
        yield shared


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("grounding") / "run_a"
    generate_grounding(3, out, seed=11, progress=False)
    return out


@pytest.fixture(scope="module")
def checker():
    """An independent page in the test's own Playwright, to re-render and hit-test composed HTML."""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=BrowserConfig().executable, headless=True, args=list(CHROMIUM_ARGS)
        )
        page = browser.new_page(device_scale_factor=1)
        yield page
        browser.close()


def _files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _verify(page, screen, records) -> None:
    """Every positive box is the element's real box and its centre hits it; every negative names nothing shown."""
    page.set_viewport_size({"width": screen.size[0], "height": screen.size[1]})
    page.set_content(screen.html)
    shown = page.evaluate(_JS_ON_SCREEN)
    for record in records:
        if record["negative"]:
            assert record["bbox"] == [-1, -1, -1, -1] and record["target"] is None
            kind, _, value = record["absent"].partition(":")
            if kind == "text":
                assert value.lower() not in shown["text"], record
            elif kind == "icon":
                assert value not in shown["icons"], record
            else:
                assert kind == "function" and value not in shown["fns"], record
                assert all(ICONS[name].fn != value for name in shown["icons"]), record
            continue
        x1, y1, x2, y2 = record["bbox"]
        assert 0 <= x1 < x2 <= screen.size[0] and 0 <= y1 < y2 <= screen.size[1], record
        assert min(x2 - x1, y2 - y1) >= 4, record
        found = page.evaluate(_JS_CHECK, [record["target"], (x1 + x2) / 2, (y1 + y2) / 2])
        assert found["hit"] == record["target"], record
        assert all(abs(a - b) <= 1 for a, b in zip(found["box"], record["bbox"])), (found, record)
        element = screen.element(record["target"])
        assert element.target and record["data_type"] == element.data_type
        if record["instruction_kind"] == "text":
            assert element.text.lower() in record["instruction"].lower()
        if record["instruction_kind"] == "icon":
            assert any(noun in record["instruction"] for noun in ICONS[element.icon].nouns)


_PAGE = """<!doctype html><html><body style="margin:0;width:400px;height:300px">
<button data-gid="g0" style="position:absolute;left:10px;top:10px;width:80px;height:30px">free</button>
<button data-gid="g1" style="position:absolute;left:10px;top:50px;width:80px;height:30px">covered</button>
<div style="position:absolute;left:0;top:45px;width:200px;height:40px;background:rgba(0,0,0,.3)"></div>
<div data-gid="g2" style="position:absolute;left:10px;top:100px;width:3px;height:30px;background:red"></div>
<button data-gid="g3" style="position:absolute;left:370px;top:100px;width:80px;height:30px">cut</button>
<button data-gid="g4" style="position:absolute;left:10px;top:500px;width:80px;height:30px">below</button>
<button data-gid="g5" style="position:absolute;left:100px;top:150px;width:80px;height:30px;visibility:hidden">
  hidden</button>
<div style="position:absolute;left:200px;top:150px;width:50px;height:40px;overflow:hidden">
  <button data-gid="g6" style="width:90px;height:30px">clipped</button></div>
<div data-gid="g7" style="position:absolute;left:10px;top:200px;width:150px;height:60px">
  <button data-gid="g8" style="width:60px;height:30px">inner</button></div>
<svg data-icon="trash" style="position:absolute;left:300px;top:10px;width:20px;height:20px"></svg>
</body></html>"""


def test_renderer_keeps_only_visible_unoccluded_whole_elements(renderer):
    rendered = renderer.render(_PAGE, (400, 300))
    assert rendered.boxes == {"g0": (10, 10, 90, 40), "g8": (10, 200, 70, 230)}
    assert rendered.rejected == {
        "g1": "occluded",
        "g2": "small",
        "g3": "cut",
        "g4": "hidden",
        "g5": "hidden",
        "g6": "clipped",
        "g7": "nested",
    }
    assert "covered" in rendered.texts and "below" not in rendered.texts and rendered.icons == ("trash",)
    assert Image.open(io.BytesIO(rendered.png)).size == (400, 300)


def test_same_seed_same_bytes_any_worker_count_and_other_seed_differs(dataset, tmp_path):
    again = tmp_path / "run_b"
    generate_grounding(3, again, seed=11, workers=2, progress=False)
    assert _files(again) == _files(dataset)
    other = tmp_path / "run_c"
    generate_grounding(2, other, seed=12, progress=False)
    assert (other / "annotations.json").read_bytes() != (dataset / "annotations.json").read_bytes()
    assert set(_files(other).values()).isdisjoint(v for k, v in _files(dataset).items() if k.endswith(".png"))


def test_annotations_follow_the_screenspot_v2_schema(dataset):
    records = read_annotations(dataset)
    assert records and len({r["id"] for r in records}) == len(records)
    for record in records:
        assert set(record) == FIELDS
        assert record["data_type"] in ("text", "icon") and record["platform"] in PLATFORMS
        assert record["instruction_kind"] in ("text", "icon", "function", "position", "negative")
        assert record["negative"] == (record["instruction_kind"] == "negative")
        assert isinstance(record["instruction"], str) and record["instruction"].strip()
        with Image.open(dataset / "images" / record["img_filename"]) as image:
            assert list(image.size) == record["img_size"] and image.format == "PNG"
        if not record["negative"]:
            x1, y1, x2, y2 = record["bbox"]
            assert 0 <= x1 < x2 <= record["img_size"][0] and 0 <= y1 < y2 <= record["img_size"][1]


def test_written_boxes_are_the_real_boxes_and_negatives_name_nothing_on_screen(dataset, renderer, checker):
    records = read_annotations(dataset)
    synth = GroundingSynth(renderer=renderer)
    for index in range(3):
        screen = synth.compose(11, index)  # composing is pure: the same page the generator rendered
        _verify(checker, screen, [r for r in records if r["index"] == index])


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_platform_style_gives_valid_samples_at_phone_and_desktop_sizes(platform, renderer, checker):
    for index, size in enumerate(((390, 844), (1440, 900))):
        config = SynthConfig(platforms=(platform,), sizes=(size,), per_sample=6)
        sample = GroundingSynth(config, renderer=renderer).sample(5, index)
        records = sample.annotations()
        assert sample.screen.platform == platform and all(r["platform"] == platform for r in records)
        assert Image.open(io.BytesIO(sample.png)).size == sample.screen.size == size
        assert any(not r["negative"] for r in records)
        _verify(checker, sample.screen, records)


def test_simple_mode_makes_tiny_screens_with_big_targets(renderer, checker):
    synth = GroundingSynth(SynthConfig(simple=True, sizes=((224, 224), (448, 448))), renderer=renderer)
    for index in range(3):
        sample = synth.sample(3, index)
        records = sample.annotations()
        assert sample.screen.size in ((224, 224), (448, 448)) and len(sample.screen.elements) <= 16
        positives = [r for r in records if not r["negative"]]
        assert positives
        assert max((r["bbox"][2] - r["bbox"][0]) * (r["bbox"][3] - r["bbox"][1]) for r in positives) >= 0.01 * 224 * 224
        _verify(checker, sample.screen, records)


def test_4k_screens_render_at_css_pixels(renderer, checker):
    sample = GroundingSynth(SynthConfig(platforms=("windows",), sizes=((3840, 2160),)), renderer=renderer).sample(0, 0)
    assert Image.open(io.BytesIO(sample.png)).size == (3840, 2160)
    _verify(checker, sample.screen, sample.annotations())


def test_parquet_export_loads_with_datasets_as_images(dataset, tmp_path):
    from datasets import Image as ImageFeature
    from datasets import load_dataset

    path = export_parquet(dataset, tmp_path / "grounding.parquet")
    records = read_annotations(dataset)
    png_bytes = sum(p.stat().st_size for p in (dataset / "images").iterdir())
    assert len(records) > len(list((dataset / "images").iterdir()))  # screens carry several instructions ...
    assert path.stat().st_size < 1.3 * png_bytes  # ... but each screen's bytes are stored once
    loaded = load_dataset("parquet", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache"))
    assert len(loaded) == len(records)
    assert isinstance(loaded.features["image"], ImageFeature)
    row = loaded[0]
    assert row["instruction"] == records[0]["instruction"] and row["bbox"] == records[0]["bbox"]
    assert list(row["image"].size) == records[0]["img_size"]


def test_cli_grounding_writes_images_and_annotations(tmp_path):
    from uivenus.cli.synth import app

    out = tmp_path / "cli"
    result = CliRunner().invoke(
        app, ["grounding", "--n", "2", "--out", str(out), "--seed", "4", "--platforms", "ios,web", "--sizes", "390x844"]
    )
    assert result.exit_code == 0, result.output
    records = json.loads((out / "annotations.json").read_text())
    assert sorted(p.name for p in (out / "images").iterdir()) == ["s4_000000.png", "s4_000001.png"]
    assert {r["platform"] for r in records} <= {"ios", "web"} and all(r["img_size"] == [390, 844] for r in records)
    bad = CliRunner().invoke(app, ["grounding", "--n", "1", "--out", str(out), "--platforms", "amiga"])
    assert bad.exit_code == 1 and "platforms" in bad.output


def test_config_rejects_unknown_platforms_sizes_and_kinds():
    with pytest.raises(SynthConfigError, match="platforms"):
        SynthConfig(platforms=("amiga",))
    with pytest.raises(SynthConfigError, match="sizes"):
        SynthConfig(sizes=((10, 10),))
    with pytest.raises(SynthConfigError, match="weights"):
        SynthConfig(weights={"telepathy": 1.0})
