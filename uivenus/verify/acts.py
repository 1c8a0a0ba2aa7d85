"""Action records: what each step of a stored episode acted on, from what the environment recorded.

One job: turn each `Step` into an `ActRecord` — the element its point hit (the recorder's DOM probe
`info["hit"]`, the env's own record `info["env"]["hit"]`, else OCR of the step's screen
around the point), what it typed, which option it selected — so that a judge can check the task's key points
against what the actions did rather than against what the agent says. The action judge (`verify.action_judge`)
reads these; `verify.trace.build_evidence` builds them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image

from uivenus.actions.points import iter_points
from uivenus.actions.space import ActionType, Hotkey, SelectOption, Type
from uivenus.envs.base import HIT_ELEMENT
from uivenus.records import Step, Trajectory
from uivenus.verify.base import ActRecord, Target
from uivenus.verify.signals import HIT_KEY
from uivenus.verify.text_evidence import found_in

__all__ = [
    "ACTING_TYPES", "DESTRUCTIVE", "DISMISSING", "ICON_NAMES", "OCR_WINDOW", "SLACK_CHARS", "act_records", "first_word",
    "names", "ocr_target", "step_target", "target_from_dom", "unconfirmed_typing",
]

#: Action types that act on the element under their point.
ACTING_TYPES = frozenset({ActionType.CLICK, ActionType.DOUBLE_CLICK, ActionType.TRIPLE_CLICK,
                          ActionType.RIGHT_CLICK, ActionType.LONG_PRESS, ActionType.SELECT_OPTION})
#: Half width and half height (pixels) of the window OCR reads around a point when no DOM record exists.
OCR_WINDOW = (90, 24)

#: Tags (and input types) -> the role they play, when the element states none.
_TAG_ROLES: Mapping[str, str] = {
    "button": "button", "a": "link", "textarea": "field", "select": "field", "option": "option",
    "summary": "button",
}
_INPUT_ROLES: Mapping[str, str] = {
    "checkbox": "checkbox", "radio": "option", "submit": "button", "button": "button", "reset": "button",
    "image": "button",
}
_ARIA_ROLES: Mapping[str, str] = {
    "button": "button", "link": "link", "tab": "tab", "checkbox": "checkbox", "switch": "checkbox",
    "radio": "option", "option": "option", "menuitem": "button", "textbox": "field", "combobox": "field",
    "searchbox": "field",
}


def _role(record: Mapping[str, Any]) -> str | None:
    aria = str(record.get("role") or "").lower()
    if aria in _ARIA_ROLES:
        return _ARIA_ROLES[aria]
    control = str(record.get("control") or record.get("tag") or "").lower()
    if control == "input":
        return _INPUT_ROLES.get(str(record.get("type") or "text").lower(), "field")
    if str(record.get("tag") or "").lower() == "label" and control != "label":
        return _role({**record, "tag": control})
    return _TAG_ROLES.get(control)


def target_from_dom(record: Mapping[str, Any]) -> Target:
    """A DOM element record (the verifier's hit test or the env's element read) as a `Target`."""
    names = " ".join(str(record[k]) for k in ("id", "name", "placeholder", "aria_label", "title", "testid")
                     if record.get(k))
    nth = record.get("nth")
    return Target(text=str(record.get("text") or ""), role=_role(record), tag=record.get("tag"),
                  label=str(record.get("label") or ""), names=names,
                  nth=int(nth) if isinstance(nth, int) and nth > 0 else None,
                  interactive=record.get("interactive") if isinstance(record.get("interactive"), bool) else None)


def ocr_target(image: Image.Image, point: tuple[float, float], window: tuple[int, int] = OCR_WINDOW
               ) -> Target | None:
    """The text OCR reads at `point` on `image`: the text line under the point, else the nearest one within the
    window around it; None when OCR reads nothing there."""
    from uivenus.agent.policies.ocr import ocr_text_boxes

    x, y = point
    left, top = max(0, int(x - window[0])), max(0, int(y - window[1]))
    right, bottom = min(image.width, int(x + window[0])), min(image.height, int(y + window[1]))
    if right - left < 4 or bottom - top < 4:
        return None
    boxes = ocr_text_boxes(image.crop((left, top, right, bottom)))
    if not boxes:
        return None
    px, py = x - left, y - top

    def distance(box: Any) -> float:
        x0, y0, x1, y1 = box.box
        return max(x0 - px, 0, px - x1) + max(y0 - py, 0, py - y1)

    nearest = min(boxes, key=distance)
    return Target(text=nearest.text.strip(), source="ocr")


def _dom_record(step: Step) -> Mapping[str, Any] | None:
    for record in (step.info.get(HIT_KEY), (step.info.get("env") or {}).get(HIT_ELEMENT)):
        if isinstance(record, Mapping) and "tag" in record:  # tag None: the point hit nothing at all
            return record
    return None


def step_target(step: Step, screen: Image.Image | None, *, ocr: bool = True) -> Target | None:
    """What the step's point acted on: its DOM record, else OCR of its screen around the point (with `ocr`)."""
    record = _dom_record(step)
    if record is not None:
        return target_from_dom(record)
    point = next((p for _, p in iter_points(step.action)), None) if step.action is not None else None
    if ocr and screen is not None and point is not None:
        return ocr_target(screen, point)
    return None


def act_records(trajectory: Trajectory, screens: Sequence[Image.Image | None], *, ocr: bool = True
                ) -> tuple[ActRecord, ...]:
    """One record per step with an action; a pointer action's target is read as `step_target` says."""
    out = []
    for step, screen in zip(trajectory.steps, screens, strict=True):
        action = step.action
        if action is None:
            continue
        point = next((p for _, p in iter_points(action)), None)
        target = step_target(step, screen, ocr=ocr) if action.type in ACTING_TYPES else None
        selected = None
        if isinstance(action, SelectOption):
            chosen = (step.info.get("env") or {}).get("selected")
            selected = str(chosen["text"]) if isinstance(chosen, Mapping) and chosen.get("text") else None
        out.append(ActRecord(
            index=step.index, type=action.type.value, executed=bool(step.executed), terminal=action.is_terminal,
            point=(float(point[0]), float(point[1])) if point is not None else None, target=target,
            typed=action.content if isinstance(action, Type) else None, selected=selected,
            keys=tuple(action.keys) if isinstance(action, Hotkey) else ()))
    return tuple(out)


#: Executed acts after which typed text counts as sent: a click (a Save/Send button) or a key press (Enter).
_CONFIRMING_TYPES = frozenset(t.value for t in ACTING_TYPES) | {ActionType.HOTKEY.value}


def unconfirmed_typing(acts: Sequence[ActRecord]) -> int | None:
    """The step of the last executed Type when nothing confirmed it afterwards (no click, no key press, no trailing
    newline) before the episode ended, else None: such text may sit unsent in its field, so the screen showing it
    is no evidence that the app took it."""
    done = [a for a in acts if a.executed and not a.terminal]
    last = next((a for a in reversed(done) if a.typed is not None), None)
    if last is None or last.typed.endswith("\n"):  # type: ignore[union-attr]
        return None
    confirmed = any(a.index > last.index and a.type in _CONFIRMING_TYPES for a in done)
    return None if confirmed else last.index


#: A target's text may be this many characters longer than the literal it must contain (a button's icon text, a
#: label's colon); longer texts are containers that contain everything.
SLACK_CHARS = 40

#: Literals that name a control by its icon, and the words its accessible name uses instead ("the "x"" is the
#: close button, whose text is "Close").
ICON_NAMES: Mapping[str, tuple[str, ...]] = {"x": ("close",), "×": ("close",), "✕": ("close",)}


def names(target: Target, literal: str) -> bool:
    """The target's text, label or identifying attributes name `literal` (equal, or containing it as words in a
    text not much longer; an icon literal also by its accessible name); a target known not to be a control (a
    container, blank space) names nothing."""
    if target.interactive is False:
        return False
    for wanted in (literal, *ICON_NAMES.get(literal.strip().casefold(), ())):
        for text in (target.text, target.label, target.names):
            if text and len(text) <= len(wanted) + SLACK_CHARS and found_in(wanted, [text]):
                return True
    return False


#: Controls that throw a pending change away, and controls that destroy: clicking one the task does not name undoes
#: or damages the work ("Cancel" on the move dialog, "Delete" where the task said archive).
DISMISSING = frozenset({"cancel", "close", "discard", "dismiss", "×", "✕", "x"})
DESTRUCTIVE = frozenset({"delete", "remove", "reset", "erase", "trash", "discard", "uninstall"})


def first_word(target: Target) -> str:
    """The first word of what a control says (its text, else its label), lower-cased: the verb of a button."""
    words = (target.text or target.label).split()
    return words[0].casefold().strip(".,:!") if words else ""
