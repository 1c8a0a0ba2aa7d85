"""The `ocr` baseline: real RapidOCR on text rendered with PIL; it points inside the named text or refuses."""

from __future__ import annotations

import json

import pytest
from PIL import Image, ImageDraw, ImageFont

from uivenus.actions.coords import Frame
from uivenus.actions.grammar import parse_grounding
from uivenus.agent.policies import Mode, PolicyError, PolicyRequest, PolicySpecError, policy_from_spec
from uivenus.agent.policies.ocr import OcrPolicy, TextBox, find_text, ocr_text_boxes, target_text
from uivenus.evals.grounding import evaluate_grounding, load_grounding

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
WORDS = {"Download report": (40, 40), "Settings": (400, 40), "Cancel": (60, 250), "Sign in": (420, 260)}


@pytest.fixture(scope="module")
def screen() -> tuple[Image.Image, dict[str, tuple[int, int, int, int]]]:
    """A 640x360 screen with a few words in DejaVu Sans, and each word's drawn box."""
    image = Image.new("RGB", (640, 360), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, 26)
    boxes = {}
    for text, origin in WORDS.items():
        draw.text(origin, text, fill="black", font=font)
        boxes[text] = draw.textbbox(origin, text, font=font)
    return image, boxes


@pytest.fixture(scope="module")
def policy() -> OcrPolicy:
    built = policy_from_spec("ocr")
    assert isinstance(built, OcrPolicy)
    return built


def _ask(policy: OcrPolicy, image: Image.Image, instruction: str, **context) -> str:
    context = {"screenshot": image, "instruction": instruction, "screen_size": image.size, **context}
    return policy.act(PolicyRequest(messages=(), mode=Mode.GROUNDING, context=context)).text


def _inside(point: tuple[float, float], box: tuple[float, float, float, float], margin: float = 2) -> bool:
    return box[0] - margin <= point[0] <= box[2] + margin and box[1] - margin <= point[1] <= box[3] + margin


def test_ocr_text_boxes_reads_every_rendered_line_where_it_was_drawn(screen):
    image, boxes = screen
    lines = {line.text: line for line in ocr_text_boxes(image)}
    assert set(lines) == set(WORDS)
    for text, drawn in boxes.items():
        line = lines[text]
        centre = ((line.box[0] + line.box[2]) / 2, (line.box[1] + line.box[3]) / 2)
        assert _inside(centre, drawn) and line.score > 0.8
    assert ocr_text_boxes(Image.new("L", (200, 100), 255)) == []


@pytest.mark.parametrize("instruction, text", [
    ("click 'Download report'", "Download report"),
    ("open the Settings", "Settings"),
    ("tap “Cancel”", "Cancel"),
    ('the "sign in" button', "Sign in"),
])
def test_ocr_policy_points_inside_the_named_text(screen, policy, instruction, text):
    image, boxes = screen
    answer = parse_grounding(_ask(policy, image, instruction))
    assert _inside(Frame.relative(*image.size).to_screen(answer.point), boxes[text])


def test_ocr_policy_refuses_text_that_is_not_on_screen(screen, policy):
    image, _ = screen
    assert _ask(policy, image, "click 'Quantum flux capacitor'") == "[-1,-1]"
    assert _ask(policy, image, "the printer icon") == "[-1,-1]"


def test_ocr_policy_answers_in_the_requests_frame_and_scales_a_hidpi_screenshot(screen, policy):
    image, boxes = screen
    answer = parse_grounding(_ask(policy, image, "'Sign in'", frame=Frame.absolute(*image.size)))
    assert _inside(answer.point, boxes["Sign in"])
    # The screenshot has twice the screen's logical pixels: the answer is in the screen's frame.
    half = Frame.absolute(320, 180)
    answer = parse_grounding(_ask(policy, image, "'Sign in'", frame=half, screen_size=(320, 180)))
    assert _inside((answer.point[0] * 2, answer.point[1] * 2), boxes["Sign in"], margin=3)


def test_ocr_policy_needs_a_screenshot_and_parses_its_spec(policy):
    with pytest.raises(PolicyError, match="context\\['screenshot'\\]"):
        policy.act(PolicyRequest(messages=(), mode=Mode.GROUNDING, context={"instruction": "x"}))
    assert policy_from_spec("ocr:0.6").threshold == 0.6
    with pytest.raises(PolicySpecError, match="threshold"):
        policy_from_spec("ocr:strict")


@pytest.mark.parametrize("instruction, target", [
    ("open “logo_final.png”", "logo_final.png"),
    ("click on 'presentation v2.mov'", "presentation v2.mov"),
    ("the user's 'Inbox' tab", "inbox"),
    ('select "Arjun Moreau"', "arjun moreau"),
    ("go to Sounds & Haptics", "sounds & haptics"),
    ("the Help menu in the menu bar", "help"),
    ("Open With", "open with"),  # nothing but stop words: the words are the text
])
def test_target_text_prefers_quotes_then_drops_command_words(instruction, target):
    assert target_text(instruction) == target


def test_find_text_locates_a_word_inside_a_longer_line_and_keeps_a_threshold():
    lines = [TextBox("File Edit View Go", (0, 0, 170, 20), 0.99), TextBox("Google", (0, 40, 60, 60), 0.99)]
    match = find_text("go", lines)
    assert match is not None and match.text == "Go" and match.score == 1.0
    assert match.box == pytest.approx((150, 0, 170, 20))  # the last 2 of 17 characters
    assert find_text("edit view", lines).box == pytest.approx((50, 0, 140, 20))
    assert find_text("contract_2022.docx", [TextBox("contract 2022.docx", (0, 0, 90, 10), 0.9)]) is not None
    assert find_text("gopher", lines) is None and find_text("", lines) is None


def test_ocr_through_the_harness_grounds_present_text_and_refuses_absent_text(screen, tmp_path):
    image, boxes = screen
    (tmp_path / "images").mkdir()
    image.save(tmp_path / "images" / "screen.png")
    records = [{"img_filename": "screen.png", "bbox": list(boxes[text]), "instruction": f"click '{text}'",
                "platform": "web", "data_type": "text", "instruction_kind": "text", "negative": False}
               for text in ("Download report", "Cancel")]
    records.append({"img_filename": "screen.png", "bbox": [-1, -1, -1, -1], "instruction": "open 'Billing'",
                    "platform": "web", "data_type": "text", "instruction_kind": "negative", "negative": True})
    (tmp_path / "annotations.json").write_text(json.dumps(records))
    results = evaluate_grounding(load_grounding(tmp_path / "annotations.json"), "ocr", tmp_path / "out",
                                 progress=False)
    assert results["accuracy"] == 1.0 and results["breakdown"]["instruction_kind"]["negative"]["hits"] == 1
