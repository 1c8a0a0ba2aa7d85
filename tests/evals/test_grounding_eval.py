"""The grounding harness: loaders for the public box forms, the hit test, scores of known policies, and reports."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
import typer
from PIL import Image
from typer.testing import CliRunner

from uivenus.agent.policies import PolicyBase, PolicyError, PolicyReply, PolicyRequest
from uivenus.cli.eval_grounding import grounding as grounding_command
from uivenus.evals.grounding import MISSES_FILE, PLOT_FILE, RESULTS_FILE, breakdown, evaluate_grounding
from uivenus.evals.grounding_data import (
    GROUNDING_FORMATS, Box, GroundingDataError, GroundingItem, Polygon, Refusal, box_from, load_grounding,
)


def _png(path: Path, size: tuple[int, int], color: str = "white") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)
    return path


def _json(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


class Centre(PolicyBase):
    """Always answers the middle of the relative frame, i.e. the screen centre."""

    name = "centre"

    def act(self, request: PolicyRequest) -> PolicyReply:
        return PolicyReply(text="[500,500]")


class Scripted(PolicyBase):
    """Answers each request with the reply scripted for its instruction; records the batch sizes it was given."""

    name = "scripted"

    def __init__(self, replies: dict[str, str]):
        self.replies = replies
        self.batches: list[int] = []

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyReply]:
        self.batches.append(len(requests))
        return [self.act(r) for r in requests]

    def act(self, request: PolicyRequest) -> PolicyReply:
        reply = self.replies[request.context["instruction"]]
        if reply == "RAISE":
            raise PolicyError("the server is down")
        return PolicyReply(text=reply)


# --- loaders ----------------------------------------------------------------------------------------

def test_screenspot_v1_reads_xywh_boxes_and_takes_the_platform_from_the_file_name(tmp_path):
    _png(tmp_path / "images" / "mobile_1.png", (200, 100))
    data = _json(tmp_path / "screenspot_mobile.json", [
        {"img_filename": "mobile_1.png", "bbox": [10, 20, 30, 40], "instruction": "open settings",
         "data_type": "text", "data_source": "ios"},
        {"img_filename": "mobile_1.png", "bbox": [150, 0, 50, 100], "instruction": "menu", "data_type": "icon",
         "data_source": "android"},
    ])
    first, second = load_grounding(data, format="screenspot")
    assert first.target == Box(10, 20, 40, 60)
    assert second.target == Box(150, 0, 200, 100)
    assert (first.platform, first.data_type, second.data_type) == ("mobile", "text", "icon")
    assert first.img_size == (200, 100) and first.image == tmp_path / "images" / "mobile_1.png"
    assert first.id == "screenspot_mobile:0" and first.source["data_source"] == "ios"


def test_screenspot_v2_needs_an_explicit_box_form_and_rejects_impossible_boxes(tmp_path):
    _png(tmp_path / "images" / "pc.png", (960, 540))
    record = {"img_filename": "pc.png", "bbox": [910, 78, 954, 112], "instruction": "close this window",
              "data_type": "icon", "data_source": "windows"}
    data = _json(tmp_path / "screenspot_desktop_v2.json", [record])
    with pytest.raises(GroundingDataError, match="--box-form"):
        load_grounding(data, format="screenspot-v2")
    (item,) = load_grounding(data, format="screenspot-v2", box_form="xyxy")
    assert item.target == Box(910, 78, 954, 112) and item.platform == "desktop"
    # The same numbers as x, y, w, h would end at x = 1864 on a 960 px image: refused, and the message says why.
    with pytest.raises(GroundingDataError, match=r"screenspot_desktop_v2.json item 0: .*impossible.*960x540.*"
                                                 r"as xyxy it would fit"):
        load_grounding(data, format="screenspot-v2", box_form="xywh")
    with pytest.raises(GroundingDataError, match="normalised coordinates must lie in 0..1"):
        load_grounding(data, format="screenspot-v2", box_form="normalized-xyxy")
    with pytest.raises(GroundingDataError, match="unknown box form"):
        load_grounding(data, format="screenspot-v2", box_form="cxcywh")


def test_screenspot_v2_normalised_boxes_scale_to_pixels_and_are_not_mistaken_for_pixels(tmp_path):
    _png(tmp_path / "images" / "pc.png", (960, 540))
    data = _json(tmp_path / "v2.json", [{"img_filename": "pc.png", "bbox": [0.5, 0.25, 0.75, 0.5],
                                         "instruction": "search", "data_type": "text"}])
    (item,) = load_grounding(data, format="screenspot-v2", box_form="normalized-xyxy")
    assert item.target == Box(480, 135, 720, 270)
    with pytest.raises(GroundingDataError, match="looks normalised.*as normalized-xyxy it would fit"):
        load_grounding(data, format="screenspot-v2", box_form="xyxy")


@pytest.mark.parametrize("numbers, form, problem", [
    ([10, 10, 5, 20], "xyxy", "no area"),
    ([10, 10, 0, 20], "xywh", "no area"),
    ([-5, 0, 10, 10], "xyxy", "outside"),
    ([0, 0, 101, 50], "xyxy", None),  # one pixel of annotation rounding is tolerated
    ([0, 0, 103, 50], "xyxy", "outside"),
    ([1, 2, 3], "xyxy", "4 finite numbers"),
    ([0, 0, float("nan"), 4], "xyxy", "4 finite numbers"),
])
def test_box_from_accepts_only_boxes_that_fit_the_image(numbers, form, problem):
    if problem is None:
        assert box_from(numbers, form, (100, 50)) == Box(0, 0, 100, 50)  # clipped to the image
    else:
        with pytest.raises(ValueError, match=problem):
            box_from(numbers, form, (100, 50))


def test_screenspot_pro_reads_its_fields_and_negative_items_expect_a_refusal(tmp_path):
    _png(tmp_path / "imgs" / "vscode" / "shot.png", (400, 300))
    base = {"img_filename": "vscode/shot.png", "instruction": "run the tests", "application": "vscode",
            "platform": "macos", "ui_type": "icon", "group": "Dev", "img_size": [400, 300]}
    data = _json(tmp_path / "annotations" / "vscode_macos.json", [
        {**base, "id": "vscode_0", "bbox": [100, 50, 140, 80]},
        {**base, "id": "vscode_1", "bbox": [100, 50, 140, 80], "gt_type": "negative"},
    ])
    positive, negative = load_grounding(tmp_path / "annotations", tmp_path / "imgs", format="screenspot-pro")
    assert positive.target == Box(100, 50, 140, 80) and isinstance(negative.target, Refusal)
    assert (positive.id, positive.platform, positive.data_type) == ("vscode_0", "macos", "icon")
    assert (positive.instruction_kind, negative.instruction_kind) == ("positive", "negative")
    assert positive.source["group"] == "Dev"
    _json(data, [{**base, "bbox": [1, 1, 2, 2], "img_size": [3840, 2160]}])
    with pytest.raises(GroundingDataError, match=r"says the image is \[3840, 2160\] but .* is \[400, 300\]"):
        load_grounding(data, tmp_path / "imgs", format="screenspot-pro")


def _osworld_fixture(tmp_path: Path) -> Path:
    _png(tmp_path / "images" / "desk.png", (400, 200))
    u_shape = [100, 40, 300, 40, 300, 160, 260, 160, 260, 80, 140, 80, 140, 160, 100, 160]
    return _json(tmp_path / "OSWorld-G.json", [
        {"id": "b", "image_path": "desk.png", "image_size": [400, 200], "instruction": "the bold button",
         "box_type": "bbox", "box_coordinates": [20, 30, 40, 20]},
        {"id": "p", "image_path": "desk.png", "image_size": [400, 200], "instruction": "the U-shaped frame",
         "box_type": "polygon", "box_coordinates": u_shape},
        {"id": "r", "image_path": "desk.png", "image_size": [400, 200], "instruction": "the purple unicorn",
         "box_type": "refusal", "box_coordinates": [-1, -1, -1, -1]},
    ])


def test_osworld_g_reads_xywh_boxes_polygons_and_refusals(tmp_path):
    box, polygon, refusal = load_grounding(_osworld_fixture(tmp_path), format="osworld-g")
    assert box.target == Box(20, 30, 60, 50)
    assert isinstance(polygon.target, Polygon) and len(polygon.target.points) == 8
    assert polygon.target.area == 200 * 120 - 120 * 80
    assert isinstance(refusal.target, Refusal) and refusal.instruction_kind == "negative"
    assert box.platform == "linux" and box.instruction_kind == "positive"


_DROP = object()


@pytest.mark.parametrize("change, message", [
    ({"box_type": "circle"}, "unknown box_type 'circle'"),
    ({"box_type": "polygon", "box_coordinates": [1, 1, 5, 5, 9]}, "even count"),
    ({"box_type": "polygon", "box_coordinates": [1, 1, 500, 5, 9, 9]}, "leaves the 400x200 image"),
    ({"box_type": "polygon", "box_coordinates": [1, 1, 5, 5, 9, 9]}, "encloses no area"),
    ({"image_path": "nowhere.png"}, "not found; pass the folder"),
    ({"instruction": _DROP}, "missing field 'instruction'"),
])
def test_osworld_g_errors_name_the_item_and_the_problem(tmp_path, change, message):
    _png(tmp_path / "images" / "desk.png", (400, 200))
    record = {"id": "x", "image_path": "desk.png", "image_size": [400, 200], "instruction": "it", "box_type": "bbox",
              "box_coordinates": [1, 1, 5, 5], **change}
    record = {key: value for key, value in record.items() if value is not _DROP}
    data = _json(tmp_path / "g.json", [record])
    with pytest.raises(GroundingDataError, match=f"g.json item 0: .*{message}"):
        load_grounding(data, format="osworld-g")


def _uivenus_fixture(tmp_path: Path) -> Path:
    """Our generator's output shape: ScreenSpot-v2 xyxy boxes plus platform, img_size, kind and negatives."""
    _png(tmp_path / "data" / "images" / "s0_000000.png", (200, 100))
    common = {"img_filename": "s0_000000.png", "platform": "web", "img_size": [200, 100], "seed": 0, "index": 0}
    return _json(tmp_path / "data" / "annotations.json", [
        {**common, "id": "s0_000000_0", "bbox": [10, 10, 50, 30], "instruction": "open 'Inbox'", "data_type": "text",
         "instruction_kind": "text", "negative": False},
        {**common, "id": "s0_000000_1", "bbox": [-1, -1, -1, -1], "instruction": "the camera icon",
         "data_type": "icon", "instruction_kind": "negative", "negative": True},
        {**common, "id": "s0_000000_2", "bbox": [90, 40, 110, 60], "instruction": "the item left of 'Sent'",
         "data_type": "text", "instruction_kind": "position", "negative": False},
    ])


def test_uivenus_format_reads_the_generator_output_with_images_beside_it(tmp_path):
    text, negative, position = load_grounding(_uivenus_fixture(tmp_path))
    assert text.target == Box(10, 10, 50, 30) and isinstance(negative.target, Refusal)
    assert [i.instruction_kind for i in (text, negative, position)] == ["text", "negative", "position"]
    assert text.image == tmp_path / "data" / "images" / "s0_000000.png" and text.platform == "web"


def test_format_options_are_checked_before_reading(tmp_path):
    data = _uivenus_fixture(tmp_path)
    assert set(GROUNDING_FORMATS) == {"screenspot", "screenspot-v2", "screenspot-pro", "osworld-g", "uivenus"}
    with pytest.raises(GroundingDataError, match="unknown grounding format 'screenspot-v3'"):
        load_grounding(data, format="screenspot-v3")
    with pytest.raises(GroundingDataError, match="always stores boxes as xyxy"):
        load_grounding(data, format="uivenus", box_form="xywh")
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(GroundingDataError, match="not valid JSON"):
        load_grounding(tmp_path / "bad.json")


# --- hit test ----------------------------------------------------------------------------------

def test_point_in_polygon_follows_the_even_odd_rule():
    u_shape = Polygon(((0, 0), (30, 0), (30, 30), (20, 30), (20, 10), (10, 10), (10, 30), (0, 30)))
    assert u_shape.contains((5, 20)) and u_shape.contains((25, 20)) and u_shape.contains((15, 5))
    assert not u_shape.contains((15, 20))  # the notch: inside the bounding box, outside the shape
    assert not u_shape.contains((31, 5)) and not u_shape.contains((15, -1))
    assert u_shape.contains(u_shape.interior_point())
    # A pentagram drawn in one stroke: its arms are inside, its centre pentagon is crossed twice, so outside.
    star = Polygon(((50, 0), (79, 90), (2, 35), (98, 35), (21, 90)))
    assert star.contains((50, 15)) and not star.contains((50, 50))
    assert u_shape.distance((15, 20)) == 5 and u_shape.distance((5, 20)) == 0


def test_boxes_include_their_edges():
    box = Box(10, 10, 20, 20)
    assert box.contains((10, 10)) and box.contains((20, 15)) and not box.contains((20.5, 15))
    assert box.distance((23, 24)) == 5


# --- scores ------------------------------------------------------------------------------------

@pytest.mark.parametrize("frame_kind", ["rel", "abs", "smart"])
def test_oracle_scores_100_percent_on_boxes_polygons_and_refusals(tmp_path, frame_kind, capfd):
    items = load_grounding(_osworld_fixture(tmp_path), format="osworld-g") + load_grounding(_uivenus_fixture(tmp_path))
    polygon = items[1].target
    bounds = polygon.bounds
    assert not polygon.contains(((bounds.x1 + bounds.x2) / 2, (bounds.y1 + bounds.y2) / 2))
    results = evaluate_grounding(items, "oracle", tmp_path / "out", frame_kind=frame_kind, progress=False)
    assert (results["accuracy"], results["hits"], results["n"], results["errors"]) == (1.0, 6, 6, 0)
    assert [r["refused"] for r in results["items"]] == [False, False, True, False, True, False]
    assert capfd.readouterr() == ("", "")  # progress=False: a library caller's output stays quiet


def test_always_centre_scores_exactly_the_share_of_targets_that_cover_the_centre(tmp_path):
    """On a 200x100 screen the centre is (100, 50); 2 of these 8 targets cover it (one only by its edge)."""
    _png(tmp_path / "images" / "s.png", (200, 100))
    boxes = [[90, 40, 110, 60], [100, 50, 120, 70], [0, 0, 50, 50], [101, 0, 200, 100], [0, 51, 200, 100],
             [150, 10, 160, 20]]
    records = [{"img_filename": "s.png", "bbox": b, "instruction": f"target {i}", "platform": "web",
                "data_type": "icon", "negative": False} for i, b in enumerate(boxes)]
    records += [{"img_filename": "s.png", "bbox": [-1, -1, -1, -1], "instruction": f"absent {i}", "negative": True}
                for i in range(2)]
    items = load_grounding(_json(tmp_path / "annotations.json", records))
    results = evaluate_grounding(items, Centre(), tmp_path / "out", progress=False)
    assert [r["hit"] for r in results["items"]] == [True, True] + [False] * 6
    assert results["accuracy"] == 2 / 8
    assert all(r["point"] == [100, 50] for r in results["items"])


def test_unusable_replies_and_wrong_kinds_of_answer_are_misses_with_their_reason(tmp_path):
    _png(tmp_path / "images" / "s.png", (200, 100))
    instructions = ["garbage", "off screen", "refuses", "points at nothing", "server down", "box answer"]
    records = [{"img_filename": "s.png", "bbox": [0, 0, 200, 100] if text != "points at nothing" else [-1] * 4,
                "instruction": text, "negative": text == "points at nothing"} for text in instructions]
    items = load_grounding(_json(tmp_path / "annotations.json", records))
    policy = Scripted({"garbage": "I would click the button", "off screen": "[1500,20]", "refuses": "[-1,-1]",
                       "points at nothing": "[10,10]", "server down": "RAISE", "box answer": "[100,100,300,300]"})
    results = evaluate_grounding(items, policy, tmp_path / "out", batch_size=1, progress=False)
    by_text = {r["instruction"]: r for r in results["items"]}
    assert by_text["garbage"]["error"].startswith("ParseError")
    assert by_text["off screen"]["error"].startswith("CoordinateError") and by_text["off screen"]["point"] is None
    assert by_text["refuses"]["refused"] and by_text["refuses"]["error"] is None
    assert by_text["points at nothing"]["point"] == [2, 1]
    assert by_text["server down"]["error"] == "PolicyError: the server is down"
    assert by_text["box answer"]["hit"] and by_text["box answer"]["point"] == [40, 20]  # a box counts by its centre
    assert [r["hit"] for r in results["items"]] == [False] * 5 + [True]
    assert results["errors"] == 3


def test_batches_and_parallel_workers_keep_replies_with_their_items(tmp_path, capfd):
    _png(tmp_path / "images" / "s.png", (200, 100))
    records = [{"img_filename": "s.png", "bbox": [x, 0, x + 20, 100], "instruction": f"column {x}", "negative": False}
               for x in range(0, 180, 20)]
    items = load_grounding(_json(tmp_path / "annotations.json", records))
    # Each reply points at its own column only, so any mix-up between items shows as a miss.
    policy = Scripted({f"column {x}": f"[{(x + 10) * 5},500]" for x in range(0, 180, 20)})
    results = evaluate_grounding(items, policy, tmp_path / "out", batch_size=4, workers=3, progress=True)
    assert results["accuracy"] == 1.0 and sorted(policy.batches) == [1, 4, 4]
    # Not a terminal: plain progress lines on stderr, one as a batch lands, then the final count.
    lines = capfd.readouterr().err.splitlines()
    assert lines[-1].startswith("grounding (scripted): 9/9 items, ") and " done in " in lines[-1]
    assert any(line.startswith("grounding (scripted): ") and line.endswith(" left") for line in lines[:-1]), lines


def test_breakdown_tables_count_hits_per_category_and_size_bucket():
    def item(i: int, box: tuple[float, float, float, float] | None, platform: str, kind: str) -> GroundingItem:
        target = Refusal() if box is None else Box(*box)
        return GroundingItem(id=str(i), image=Path("x.png"), instruction="x", target=target, img_size=(1000, 1000),
                             platform=platform, data_type="icon" if box and box[2] < 50 else "text",
                             instruction_kind=kind)

    items = [item(0, (0, 0, 31, 31), "web", "icon"),  # 961 px² = 0.096 %: tiny
             item(1, (0, 0, 32, 32), "web", "icon"),  # 1024 px² = 0.1024 %: small
             item(2, (0, 0, 100, 99), "ios", "text"),  # 0.99 %: small
             item(3, (0, 0, 100, 500), "ios", "text"),  # 5 %: large
             item(4, (0, 0, 200, 200), "ios", "text"),  # 4 %: medium
             item(5, None, "web", "negative")]
    tables = breakdown(items, [True, False, True, True, False, True])
    assert tables["platform"] == {"ios": {"n": 3, "hits": 2, "accuracy": 2 / 3},
                                  "web": {"n": 3, "hits": 2, "accuracy": 2 / 3}}
    assert {k: v["n"] for k, v in tables["element_size"].items()} == {"large": 1, "medium": 1, "none": 1, "small": 2,
                                                                      "tiny": 1}
    assert tables["element_size"]["small"]["hits"] == 1
    assert tables["instruction_kind"]["negative"] == {"n": 1, "hits": 1, "accuracy": 1.0}
    assert tables["data_type"]["icon"]["n"] == 2


# --- reports -----------------------------------------------------------------------------------

def test_results_json_plot_and_misses_page_are_written(tmp_path):
    _png(tmp_path / "images" / "s.png", (200, 100), "white")
    records = [{"img_filename": "s.png", "bbox": [150, 60, 190, 90], "instruction": "the <b>far</b> corner",
                "platform": "web", "data_type": "icon", "negative": False},
               {"img_filename": "s.png", "bbox": [90, 40, 110, 60], "instruction": "the middle", "platform": "web",
                "data_type": "text", "negative": False},
               {"img_filename": "s.png", "bbox": [-1, -1, -1, -1], "instruction": "the absent one", "negative": True},
               {"img_filename": "s.png", "bbox": [120, 40, 130, 60], "instruction": "the near one", "negative": False}]
    items = load_grounding(_json(tmp_path / "annotations.json", records))
    results = evaluate_grounding(items, Centre(), tmp_path / "out", worst=5, progress=False)
    out = tmp_path / "out"
    saved = json.loads((out / RESULTS_FILE).read_text())
    assert saved["accuracy"] == 0.25 and saved["breakdown"]["data_type"]["icon"]["accuracy"] == 0.0
    # the centre (100, 50) lies 50 px left of and 10 px above the far box, out of a 200x100 screen's diagonal
    assert saved["items"][0]["miss_distance"] == pytest.approx(math.hypot(50, 10) / math.hypot(200, 100), abs=1e-4)
    assert saved["items"][1]["miss_distance"] is None and saved["items"][2]["miss_distance"] is None
    with Image.open(out / PLOT_FILE) as plot:
        assert plot.width > 400
    page = (out / MISSES_FILE).read_text()
    assert "the &lt;b&gt;far&lt;/b&gt; corner" in page and "<b>far" not in page
    assert "Worst 3 misses of 3 (4 items)" in page and 'src="misses/003.png"' in page
    # points farthest from their target first, then the answer of the wrong kind (a point for an absent target)
    assert page.index("far&lt;/b&gt; corner") < page.index("the near one") < page.index("the absent one")
    with Image.open(out / "misses" / "001.png") as drawn:
        drawn = drawn.convert("RGB")
        assert drawn.getpixel((150, 75))[1] > 150 > drawn.getpixel((150, 75))[0]  # green target outline
        red = drawn.getpixel((100 + 9, 50))
        assert red[0] > 200 and red[1] < 80  # red ring around the predicted point
    assert results["misses_path"] == str(out / MISSES_FILE)


# --- CLI ---------------------------------------------------------------------------------------

def test_cli_scores_a_dataset_and_reports_bad_options(tmp_path):
    app = typer.Typer()
    app.command()(grounding_command)
    data = _uivenus_fixture(tmp_path)
    result = CliRunner().invoke(app, ["--data", str(data), "--policy", "oracle", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "oracle: accuracy 1.000 (3/3" in result.output and "instruction_kind" in result.output
    assert (tmp_path / "out" / RESULTS_FILE).is_file()
    result = CliRunner().invoke(app, ["--data", str(data), "--policy", "oracle", "--out", str(tmp_path / "o2"),
                                      "--format", "screenspot-v2"])
    assert result.exit_code == 1 and "--box-form" in result.output
    result = CliRunner().invoke(app, ["--data", str(data), "--policy", "telepathy", "--out", str(tmp_path / "o3")])
    assert result.exit_code == 1 and "unknown policy spec" in result.output


def test_cli_prints_plain_progress_lines_to_a_pipe(tmp_path):
    """Run as a user would with output piped: progress goes to stderr as plain lines, the results to stdout."""
    data = _uivenus_fixture(tmp_path)
    uivenus = Path(sys.executable).parent / "uivenus"
    done = subprocess.run([str(uivenus), "eval", "grounding", "--data", str(data), "--policy", "oracle",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^grounding \(oracle\): 3/3 items, [0-9.]+/s, done in \d+ s$", done.stderr, re.M), done.stderr
    assert "oracle: accuracy 1.000 (3/3" in done.stdout and "items," not in done.stdout
    assert "\x1b[" not in done.stderr  # no bar, no cursor control in a log
