"""`ocr`: grounding by reading the screen — a real, model-free baseline for the grounding harness.

It finds the instruction's target text (the quoted part, else the instruction's words without the command words
and UI nouns such as click/the/button/icon), reads the screenshot (`context["screenshot"]`) with RapidOCR, and
fuzzily matches the target against every run of consecutive words in every OCR line (difflib ratio). The best
run above the threshold is located inside its line by character position, and its centre is answered in the
request's frame (`request_frame`). No run good enough means the text is not on screen, so it answers `[-1,-1]`
(which is also how it passes negative items). `ocr_text_boxes` is the process's one OCR reader (text evidence for
judges, the safety guard's screen text).

Typed CAPTCHAs (requests whose context names a `family` in `CAPTCHA_READERS`: `text`, `arithmetic`): it finds the
answer field by its placeholder ("Enter the answer") and the Verify button, crops the picture directly above that
row, cleans it for OCR, turns what it reads into the answer (the characters; the arithmetic's value) and replies
`Click(field), Type(answer), Click(Verify)` in one action block. Any other family, or a card it cannot read, gets a
`CallUser` saying why: a wrong guess would spend the CAPTCHA's one graded attempt.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from PIL import Image, ImageFilter

from uivenus.actions.coords import CoordinateError, Frame
from uivenus.actions.grammar import format_response
from uivenus.actions.grounding import format_grounding
from uivenus.actions.space import CallUser, Click, Type
from uivenus.agent.policies.base import (
    PolicyBase, PolicyError, PolicyReply, PolicyRequest, PolicySpecError, register_policy, request_frame,
)

__all__ = ["ANSWER_PLACEHOLDER", "CAPTCHA_READERS", "DEFAULT_THRESHOLD", "STOP_WORDS", "CaptchaReader", "OcrPolicy",
           "TextBox", "TextMatch", "find_text", "ocr_text_boxes", "read_characters", "solve_arithmetic", "target_text"]

#: The least difflib ratio between the target text and an OCR word run that counts as the target.
DEFAULT_THRESHOLD = 0.8
#: Words that say what to do or what kind of element, not which one; dropped from unquoted instructions.
STOP_WORDS = frozenset("""
a an the this that these those to on in into at of for from with by and or my your its it me please
click tap press select choose open go navigate show view find hit pick toggle switch enable disable check uncheck
touch use activate launch visit
button buttons icon icons link links tab tabs menu item items option options field box entry label element
text page section area row list control symbol sign image picture bar toolbar
""".split())
_QUOTED = re.compile(r"“([^”]+)”|\"([^\"]+)\"|‘([^’]+)’|(?<!\w)'([^']+)'(?!\w)")
_WORD = re.compile(r"\S+")
_EDGE_PUNCTUATION = " \t\n.,;:!?()[]{}<>«»\"'“”‘’"
#: Screens whose OCR the process keeps: one step's screen is read by the guard, the policy's observation facts and
#: the policy itself, and a suite shows the same screen to several episodes.
_SCREENS_KEPT = 32

_ENGINE: Any = None
_ENGINE_LOCK = threading.Lock()
_READ: OrderedDict[bytes, tuple[TextBox, ...]] = OrderedDict()  # guarded by _ENGINE_LOCK


class TextBox(NamedTuple):
    """One OCR line: its text, axis-aligned box (x1, y1, x2, y2) in image pixels, and recognition score."""

    text: str
    box: tuple[float, float, float, float]
    score: float

    def distance(self, point: tuple[float, float]) -> float:
        """Pixels from `point` to the box (0 inside it)."""
        x1, y1, x2, y2 = self.box
        return math.hypot(max(x1 - point[0], 0.0, point[0] - x2), max(y1 - point[1], 0.0, point[1] - y2))


class TextMatch(NamedTuple):
    """Where a target text was found: the matched words' box in image pixels and how well they matched (0..1)."""

    text: str
    box: tuple[float, float, float, float]
    score: float


def _engine() -> Any:
    """One RapidOCR engine per process (the models load once; the direction classifier is off: screens are upright)."""
    global _ENGINE
    if _ENGINE is None:
        from rapidocr import RapidOCR

        _ENGINE = RapidOCR(params={"Global.log_level": "error", "Global.use_cls": False})
    return _ENGINE


def ocr_text_boxes(image: Image.Image) -> list[TextBox]:
    """Every text line RapidOCR reads in `image`, as (text, box, score), in reading order; a screen read lately (the
    same pixels) is answered from memory."""
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    digest = hashlib.blake2b(repr(rgb.size).encode(), digest_size=16)
    digest.update(rgb.tobytes())
    key = digest.digest()
    with _ENGINE_LOCK:  # one engine, shared by threads: its sessions run one image at a time
        if key in _READ:
            _READ.move_to_end(key)
            return list(_READ[key])
        output = _engine()(rgb)
        lines = [] if output.txts is None or output.boxes is None else [
            TextBox(str(text), (min(float(p[0]) for p in quad), min(float(p[1]) for p in quad),
                                max(float(p[0]) for p in quad), max(float(p[1]) for p in quad)), float(score))
            for text, quad, score in zip(output.txts, output.boxes, output.scores)]
        _READ[key] = tuple(lines)
        while len(_READ) > _SCREENS_KEPT:
            _READ.popitem(last=False)
    return lines


def _normalise(text: str) -> str:
    return " ".join(text.lower().split()).strip(_EDGE_PUNCTUATION)


def target_text(instruction: str) -> str:
    """The text the instruction points at: its first quoted part, else its words without `STOP_WORDS`
    (all of them when nothing else is left: "Open With" names a menu entry)."""
    quoted = _QUOTED.search(instruction)
    if quoted is not None:
        return _normalise(next(group for group in quoted.groups() if group is not None))
    words = [word for word in (w.strip(_EDGE_PUNCTUATION) for w in instruction.lower().split()) if word]
    return " ".join(word for word in words if word not in STOP_WORDS) or " ".join(words)


def _runs(line: TextBox, lengths: set[int]) -> Iterator[tuple[str, tuple[float, float, float, float]]]:
    """Runs of consecutive words of `line` of the given lengths, each with its share of the line's box."""
    words = list(_WORD.finditer(line.text))
    total = max(len(line.text), 1)
    x1, y1, x2, y2 = line.box
    for length in lengths:
        for start in range(max(len(words) - length + 1, 0)):
            first, last = words[start], words[start + length - 1]
            left = x1 + (x2 - x1) * first.start() / total
            right = x1 + (x2 - x1) * last.end() / total
            yield line.text[first.start():last.end()], (left, y1, right, y2)


def find_text(target: str, lines: list[TextBox], threshold: float = DEFAULT_THRESHOLD) -> TextMatch | None:
    """The run of OCR words most like `target` (ratio >= threshold; ties go to the surer OCR line), else None."""
    wanted = _normalise(target)
    if not wanted:
        return None
    best: tuple[float, float, TextMatch] | None = None
    for line in lines:
        lengths = {len(wanted.split()), len(_WORD.findall(line.text))}
        for text, box in _runs(line, lengths):
            ratio = difflib.SequenceMatcher(None, wanted, _normalise(text)).ratio()
            if ratio >= threshold and (best is None or (ratio, line.score) > best[:2]):
                best = (ratio, line.score, TextMatch(text, box, ratio))
    return None if best is None else best[2]


def _model_point(frame: Frame, screenshot: Image.Image, box: tuple[float, float, float, float]) -> tuple[int, int]:
    """The centre of a box in screenshot pixels, in the model frame (a HiDPI screenshot has more pixels than the
    screen)."""
    x1, y1, x2, y2 = box
    sx, sy = frame.width / screenshot.width, frame.height / screenshot.height
    return frame.to_model(((x1 + x2) / 2 * sx, (y1 + y2) / 2 * sy))


# --- typed CAPTCHAs ---------------------------------------------------------------------------------

#: The answer field's placeholder on the CAPTCHA card; the Verify button sits right of it on the same row.
ANSWER_PLACEHOLDER = "Enter the answer"
_VERIFY_LABEL = "verify"
#: The picture spans the answer row and sits directly above it, about 0.4 of the row's width tall.
_PICTURE_HEIGHT = 0.45
_PICTURE_MARGIN = 0.05


@dataclass(frozen=True)
class CaptchaReader:
    """How the ocr policy solves one typed CAPTCHA family: clean the cropped picture for OCR, then turn the text
    read from it into the answer to type (None: nothing usable was read)."""

    prepare: Callable[[Image.Image], Image.Image]
    answer: Callable[[str], str | None]


def read_characters(read: str) -> str | None:
    """Distorted characters: the letters and digits read, upper-cased (the page ignores case)."""
    return re.sub(r"[^0-9A-Za-z]", "", read).upper() or None


_OPERATORS = str.maketrans({"×": "*", "x": "*", "X": "*", "✕": "*", "·": "*", "−": "-", "–": "-", "—": "-",
                            "一": "-", "＋": "+", "＝": "="})
#: Letters OCR reads for distorted digits.
_DIGIT_LOOKALIKES = str.maketrans({"I": "1", "l": "1", "i": "1", "|": "1", "O": "0", "o": "0", "D": "0",
                                   "g": "9", "q": "9", "S": "5", "s": "5", "Z": "2", "z": "2", "B": "8"})
_EXPRESSION = re.compile(r"\d+(?:[-+*]\d+)+")


def solve_arithmetic(read: str) -> str | None:
    """The value of the problem read ("4 × 7 = ?"): what comes before "=", look-alike letters taken as digits,
    products before sums; None when that is no expression."""
    text = re.sub(r"[^0-9+*-]", "", read.translate(_OPERATORS).split("=")[0].translate(_DIGIT_LOOKALIKES))
    if not _EXPRESSION.fullmatch(text):
        return None
    total = 0
    for term in re.findall(r"[-+]?[^-+]+", text):
        value = math.prod(int(factor) for factor in term.lstrip("+-").split("*"))
        total += -value if term.startswith("-") else value
    return str(total)


def _despeckle(image: Image.Image) -> Image.Image:
    """A median filter: the dots sprinkled over the picture go, the characters' strokes stay."""
    return image.filter(ImageFilter.MedianFilter(3))


def _drop_thin_lines(image: Image.Image) -> Image.Image:
    """A grey opening: the thin lines drawn across the picture fade, the thicker digits and operators stay."""
    return image.convert("L").filter(ImageFilter.MaxFilter(3)).filter(ImageFilter.MinFilter(3))


#: Typed CAPTCHA families the ocr policy solves, by the request's `context["family"]`.
CAPTCHA_READERS: dict[str, CaptchaReader] = {
    "text": CaptchaReader(prepare=_despeckle, answer=read_characters),
    "arithmetic": CaptchaReader(prepare=_drop_thin_lines, answer=solve_arithmetic),
}


def _answer_row(lines: list[TextBox], threshold: float) -> tuple[TextMatch, TextBox] | None:
    """The answer field (by its placeholder) and the Verify button nearest to it, in screenshot pixels."""
    field = find_text(ANSWER_PLACEHOLDER, lines, threshold)
    if field is None:
        return None
    right_edge = (field.box[2], (field.box[1] + field.box[3]) / 2)
    buttons = [line for line in lines
               if difflib.SequenceMatcher(None, _VERIFY_LABEL, _normalise(line.text)).ratio() >= threshold]
    return (field, min(buttons, key=lambda line: line.distance(right_edge))) if buttons else None


def _read_picture(screenshot: Image.Image, field: TextMatch, verify: TextBox, reader: CaptchaReader) -> str:
    """The text of the picture above the answer row: the OCR lines on the row of its tallest line, left to right."""
    left, right = field.box[0], verify.box[2]
    width = right - left
    crop = screenshot.crop((int(max(left - _PICTURE_MARGIN * width, 0)),
                            int(max(field.box[1] - _PICTURE_HEIGHT * width, 0)),
                            int(min(right + _PICTURE_MARGIN * width, screenshot.width)),
                            int(max(field.box[1] - _PICTURE_MARGIN * width, 1))))
    lines = ocr_text_boxes(reader.prepare(crop))
    if not lines:
        return ""
    tallest = max(lines, key=lambda line: line.box[3] - line.box[1])
    row = [line for line in lines if tallest.box[1] <= (line.box[1] + line.box[3]) / 2 <= tallest.box[3]]
    return " ".join(line.text for line in sorted(row, key=lambda line: line.box[0]))


def _call_user(reason: str) -> PolicyReply:
    return PolicyReply(text=format_response(CallUser(content=reason)))


class OcrPolicy(PolicyBase):
    """Answers grounding requests by finding the instruction's text on the screenshot, and solves typed CAPTCHAs."""

    name = "ocr"

    def __init__(self, threshold: float = DEFAULT_THRESHOLD) -> None:
        self.threshold = threshold

    def act(self, request: PolicyRequest) -> PolicyReply:
        context = request.context
        if "family" in context:
            return self._solve_captcha(context)
        screenshot, instruction = context.get("screenshot"), context.get("instruction")
        if not isinstance(screenshot, Image.Image) or not isinstance(instruction, str):
            raise PolicyError("the ocr policy reads context['screenshot'] (a PIL image) and context['instruction']; "
                              "the grounding harness supplies both")
        match = find_text(target_text(instruction), ocr_text_boxes(screenshot), self.threshold)
        if match is None:
            return PolicyReply(text=format_grounding(None))
        try:
            return PolicyReply(text=format_grounding(_model_point(request_frame(context), screenshot, match.box)))
        except CoordinateError as exc:
            raise PolicyError(f"the matched text lies off the screen: {exc}") from None

    def _solve_captcha(self, context: Mapping[str, Any]) -> PolicyReply:
        """Read the typed CAPTCHA on the screenshot and answer it in one block, or say why it cannot."""
        family = str(context["family"])
        reader = CAPTCHA_READERS.get(family)
        if reader is None:
            return _call_user(f"The ocr policy solves only typed CAPTCHAs ({', '.join(CAPTCHA_READERS)}), "
                              f"not {family}; a person has to solve this one.")
        screenshot = context.get("screenshot")
        if not isinstance(screenshot, Image.Image):
            raise PolicyError("the ocr policy reads the CAPTCHA from context['screenshot'] (a PIL image); "
                              "the CAPTCHA harness supplies it")
        row = _answer_row(ocr_text_boxes(screenshot), self.threshold)
        if row is None:
            return _call_user(f"I cannot find the answer field ({ANSWER_PLACEHOLDER}) and its Verify button.")
        field, verify = row
        read = _read_picture(screenshot, field, verify, reader)
        answer = reader.answer(read)
        if answer is None:
            return _call_user("I cannot read the CAPTCHA picture.")
        frame = request_frame(context)
        try:
            actions = (Click(point=_model_point(frame, screenshot, field.box)), Type(content=answer),
                       Click(point=_model_point(frame, screenshot, verify.box)))
        except CoordinateError as exc:
            raise PolicyError(f"the CAPTCHA's controls lie off the screen: {exc}") from None
        seen = re.sub(r"[<>]", "", read)
        return PolicyReply(text=format_response(actions, think=f"The picture reads {seen!r}; the answer is {answer}."))


@register_policy("ocr")
def _ocr(spec: str) -> OcrPolicy:
    """`ocr`, or `ocr:THRESHOLD` (0..1, default 0.8)."""
    if not spec:
        return OcrPolicy()
    try:
        threshold = float(spec)
    except ValueError:
        threshold = -1.0
    if not 0 < threshold <= 1:
        raise PolicySpecError(f"'ocr:{spec}': the option is a match threshold in (0, 1], e.g. 'ocr:0.8'")
    return OcrPolicy(threshold)
