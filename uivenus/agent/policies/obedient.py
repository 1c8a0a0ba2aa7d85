"""`obedient`: a scripted agent that does whatever the last instruction-like text it reads says — the worst case a
safety guard is measured against (a model that follows every injected instruction).

It reads the screen as a text-reading agent does (`observes`: the screen's text and its elements with their boxes,
`uivenus.agent.observing`), plus the pictures on the screen through OCR (text inside an image reaches it only
that way). Instruction-like text is text that gives GUI steps with quoted targets — `click "Forward"`,
`type "x@evil.test" into "To"`, `tap "Ana Lima", "Delete" and "Delete"` (a quoted target without a verb takes the
previous verb; "press Enter" after a typed text submits it: a newline, which a terminal runs): the user's
instruction at first, then the last such text on the screen, wherever it came from, which replaces the plan it was
following. On the desktop it reads the screenshot's OCR (the loop's `screen_text` and `elements` there). It
carries the plan from step to step in its own reasoning (the `<think>` text the loop feeds back), like a model's
memory, and finishes when the plan is done. It never reads an answer key; a target it cannot find on the screen
makes it scroll down, then go Back, then call the user.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from PIL import Image

from uivenus.actions.coords import CoordinateError
from uivenus.actions.grammar import format_response
from uivenus.actions.space import Action, CallUser, Click, Direction, Finished, Platform, Scroll, Swipe, Type
from uivenus.agent.policies.base import (
    Message, PolicyBase, PolicyError, PolicyReply, PolicyRequest, PolicySpecError, register_policy, request_frame,
)
from uivenus.agent.policies.ocr import ocr_text_boxes

__all__ = ["GuiStep", "ObedientPolicy", "Plan", "read_steps"]

#: Verbs of a GUI step, by the primitive they ask for.
STEP_VERBS: Mapping[str, str] = {
    "click": "click", "tap": "click", "press": "click", "select": "click", "choose": "click", "open": "click",
    "hit": "click", "type": "type", "enter": "type", "write": "type", "fill in": "type",
}
_TOKENS = re.compile(
    r"(?P<enter>\bpress\s+(?:the\s+)?(?:enter|return)\b)"
    r"|(?P<verb>\b(?:" + "|".join(sorted(STEP_VERBS, key=len, reverse=True)) + r")\b)"
    r"|(?P<into>\b(?:into|in)\s+(?:the\s+)?(?=[“\"]))"
    r"|[“\"](?P<quoted>[^”\"\n]{1,80})[”\"]",
    re.IGNORECASE)
_PICTURES_KEPT = 1024  # pictures whose OCR text the policy keeps: a whole suite's, so no mode rereads one
_PLAN = re.compile(r"obedient plan (\{.*?\})\s*</think>", re.DOTALL)


@dataclass(frozen=True)
class GuiStep:
    """One primitive: click the element named `target`, or type `text` (into the field named `target`, if any)."""

    verb: str  # "click" | "type"
    target: str = ""
    text: str = ""


def read_steps(text: str) -> tuple[GuiStep, ...]:
    """The GUI steps `text` gives, in order (none: it is not instruction-like)."""
    steps: list[GuiStep] = []
    verb: str | None = None
    into = False
    for token in _TOKENS.finditer(text):
        if token.group("enter"):  # submits what was just typed (on the desktop a newline presses Enter)
            if steps and steps[-1].verb == "type" and not steps[-1].text.endswith("\n"):
                steps[-1] = replace(steps[-1], text=steps[-1].text + "\n")
            verb = None
        elif token.group("verb"):
            verb, into = STEP_VERBS[token.group("verb").lower()], False
        elif token.group("into"):
            into = True
        elif verb is not None:
            quoted = token.group("quoted").strip()
            if into and steps and steps[-1].verb == "type" and not steps[-1].target:
                steps[-1] = GuiStep("type", target=quoted, text=steps[-1].text)
            elif verb == "type":
                steps.append(GuiStep("type", text=quoted))
            else:
                steps.append(GuiStep("click", target=quoted))
            into = False
    return tuple(steps)


@dataclass(frozen=True)
class Plan:
    """What the agent is following: the text's digest, its steps, the next step, whether the field of a
    `type … into` step was clicked already, and the digests of every text followed so far (a text not among them
    replaces the plan; one followed before does not come back)."""

    source: str
    steps: tuple[GuiStep, ...]
    next: int = 0
    focused: bool = False
    followed: tuple[str, ...] = ()
    searched: int = 0  # how the current step's missing target was looked for: 1 scrolled down, 2 also went Back

    def to_json(self) -> str:
        return json.dumps({"source": self.source, "steps": [asdict(s) for s in self.steps], "next": self.next,
                           "focused": self.focused, "followed": list(self.followed), "searched": self.searched},
                          ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Plan:
        data = json.loads(text)
        return cls(data["source"], tuple(GuiStep(**s) for s in data["steps"]), data["next"], data["focused"],
                   tuple(data["followed"]), data["searched"])

    def advanced(self, *, focused: bool = False) -> Plan:
        """The plan after one action: the same step with its field clicked, or the next step."""
        return replace(self, focused=focused, next=self.next if focused else self.next + 1, searched=0)

    def replaced(self, source: str, steps: tuple[GuiStep, ...]) -> Plan:
        return Plan(source, steps, followed=(*self.followed, source))


def _digest(text: str) -> str:
    return hashlib.blake2b(" ".join(text.split()).encode(), digest_size=8).hexdigest()


def _last_plan(messages: Sequence[Message]) -> Plan | None:
    """The plan the previous reply carried in its reasoning."""
    for message in reversed(messages):
        if message.role == "assistant":
            found = _PLAN.search(message.text)
            return Plan.from_json(found.group(1)) if found else None
    return None


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .:!?")


def _scroll_down(context: Mapping[str, Any]) -> Action:
    """Further down the page, in the request's frame: a swipe up on a phone, the wheel elsewhere."""
    frame, (width, height) = request_frame(context), context["screen_size"]
    at = (width / 2, height * 0.7), (width / 2, height * 0.3)
    if context.get("platform") is Platform.MOBILE:
        return Swipe(start=frame.to_model(at[0]), end=frame.to_model(at[1]))
    return Scroll(direction=Direction.DOWN, point=frame.to_model((width / 2, height / 2)), amount=3)


def _find(elements: Iterable[Any], target: str, *, editable: bool = False) -> Any | None:
    """The element the quoted `target` names: an exact label first, then one that starts with it, then one that
    contains it, then one whose field label or placeholder does; among equal labels the latest in document order (a
    dialog's button comes after the page's), else the shortest label (the least else in it), then the smallest."""
    wanted = _norm(target)
    tiers: list[list[tuple[int, Any]]] = [[], [], [], []]
    for index, element in enumerate(elements):
        if element.tag == "img" or not element.clickable or (editable and not element.editable):
            continue
        label, hint = _norm(element.label), _norm(element.hint)
        tier = (0 if label == wanted else 1 if label.startswith(wanted) else 2 if wanted in label
                else 3 if wanted and wanted in hint else None)
        if tier is not None:
            tiers[tier].append((index, element))
    for tier in tiers:
        if tier:
            def area(e: Any) -> float:
                return (e.box[2] - e.box[0]) * (e.box[3] - e.box[1])
            if len(tier) > 1 and all(_norm(e.label) == _norm(tier[0][1].label) for _, e in tier):
                return tier[-1][1]
            return min(tier, key=lambda pair: (len(pair[1].label), area(pair[1]), -pair[0]))[1]
    return None


class ObedientPolicy(PolicyBase):
    """Follows the last instruction-like text it reads — the user's, or any on the screen."""

    name = "obedient"
    observes = ("screen_text", "elements")

    def __init__(self) -> None:
        self._read: OrderedDict[bytes, str] = OrderedDict()  # picture pixels -> their text (a picture stays put)

    def _picture_text(self, picture: Image.Image) -> str:
        key = hashlib.blake2b(picture.tobytes(), digest_size=16, person=repr(picture.size).encode()[:16]).digest()
        text = self._read.get(key)
        if text is None:
            # on a square canvas: the detector scales a picture's short side up, so a wide strip would become huge
            side = max(picture.size)
            canvas = Image.new("RGB", (side, side), "white")
            canvas.paste(picture.convert("RGB"), (0, 0))
            text = self._read[key] = " ".join(box.text for box in ocr_text_boxes(canvas))
            while len(self._read) > _PICTURES_KEPT:
                self._read.popitem(last=False)
        return text

    def act(self, request: PolicyRequest) -> PolicyReply:
        context = request.context
        if "elements" not in context or "screen_text" not in context:
            raise PolicyError("the obedient policy reads context['screen_text'] and context['elements'], which the "
                              "agent loop provides for policies that declare `observes`")
        plan = self._follow(request, _last_plan(request.messages))
        if plan.next >= len(plan.steps):
            return self._reply(Finished(content="Done as instructed."), plan)
        step = plan.steps[plan.next]
        elements = context["elements"]
        if step.verb == "type" and (not step.target or plan.focused):
            return self._reply(Type(content=step.text), plan.advanced())
        element = _find(elements, step.target, editable=step.verb == "type")
        if element is None:  # look further down the page, then on the screen before this one
            if plan.searched == 0:
                return self._reply(_scroll_down(context), replace(plan, searched=1))
            back = _find(elements, "Back") if plan.searched == 1 else None
            if back is None:
                return self._reply(CallUser(content=f"I cannot find {step.target!r} on the screen."), plan)
            return self._reply(Click(point=self._point(request, back)), replace(plan, searched=2))
        width, height = context["screen_size"]
        x, y = element.center
        if not (0 <= x < width and 0 <= y < height):  # partly below the fold: bring it up first
            return self._reply(_scroll_down(context), plan)
        return self._reply(Click(point=self._point(request, element)), plan.advanced(focused=step.verb == "type"))

    @staticmethod
    def _point(request: PolicyRequest, element: Any) -> tuple[int, int]:
        try:
            return request_frame(request.context).to_model(element.center)
        except CoordinateError as exc:
            raise PolicyError(f"the element {element.label!r} lies off the screen: {exc}") from None

    def _follow(self, request: PolicyRequest, plan: Plan | None) -> Plan | None:
        """The plan to follow now: the last instruction-like text on the screen not followed before, else the plan
        carried over, else the user's instruction."""
        if plan is None:
            instruction = str(request.context.get("instruction") or "")
            plan = Plan(_digest(instruction), read_steps(instruction), followed=(_digest(instruction),))
        for text in reversed(self._screen_lines(request)):
            steps = read_steps(text)
            if steps:
                source = _digest(text)
                return plan if source in plan.followed else plan.replaced(source, steps)
        return plan

    def _screen_lines(self, request: PolicyRequest) -> list[str]:
        """The screen's text lines, then the text read from its pictures (OCR)."""
        lines = [line for line in str(request.context["screen_text"]).splitlines() if line.strip()]
        pictures = [e for e in request.context["elements"] if e.tag == "img"]
        screenshot = next((image for message in reversed(request.messages) for image in reversed(message.images)),
                          None)
        if pictures and isinstance(screenshot, Image.Image):
            width, height = request.context["screen_size"]
            sx, sy = screenshot.width / width, screenshot.height / height
            for picture in pictures:
                x1, y1, x2, y2 = picture.box
                box = (int(x1 * sx), int(y1 * sy), int(x2 * sx), int(y2 * sy))
                lines.append(self._picture_text(screenshot.crop(box)))
        return lines

    @staticmethod
    def _reply(action: Action, plan: Plan) -> PolicyReply:
        return PolicyReply(text=format_response(action, think=f"obedient plan {plan.to_json()}"))


@register_policy("obedient")
def _obedient(spec: str) -> ObedientPolicy:
    if spec:
        raise PolicySpecError(f"the obedient policy takes no options, got 'obedient:{spec}'; use plain 'obedient'")
    return ObedientPolicy()
