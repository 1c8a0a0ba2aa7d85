"""Prompts built from the action records, so the allowed actions are never listed by hand a second time.

A navigation prompt tells the model which platform it drives, the actions that platform allows (from
`actions_for`, each with a signature generated from the record's fields and one description from the
`ACTION_DESCRIPTIONS` registry), the coordinate frame it must answer in, the output grammar and a few
habits (explore, copy and paste, ask before consequential steps, take notes, answer questions). A grounding
prompt asks for one centre point, or `[-1,-1]` when the instruction does not apply.

Every prompt is a Jinja template rendered with the variables of `navigation_variables` /
`grounding_variables`. The defaults live in `uivenus/agent/templates/`; to reproduce a released model's exact
wording, copy one, edit it and pass `template=Path(...)` (or build a `PromptSet` once and reuse it).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from uivenus.actions.coords import Frame, FrameKind
from uivenus.actions.points import POINT_FIELDS
from uivenus.actions.registries import check_covers
from uivenus.actions.space import (
    ACTION_CLASSES, SEQUENCE_MAX, SEQUENCE_MIN, WEB_MAX_HOTKEY_KEYS, ActionType, Direction, Platform, actions_for,
)

A = ActionType

__all__ = [
    "ACTION_DESCRIPTIONS", "CAPTCHA_GUIDANCE", "ActionSpec", "FrameSpec", "PromptError", "PromptSet", "action_specs",
    "captcha_system_prompt", "frame_spec", "grounding_prompt", "grounding_variables", "navigation_prompt",
    "navigation_variables", "render_template",
]


class PromptError(ValueError):
    """A prompt template is missing or fails to render; the message names the file and the problem."""


#: What each action does, in our words; the one registry prompts draw descriptions from.
ACTION_DESCRIPTIONS: Mapping[ActionType, str] = {
    A.CLICK: "Tap or left-click the element at point.",
    A.DOUBLE_CLICK: "Double-click (or double-tap) at point.",
    A.TRIPLE_CLICK: "Triple-click at point to select a whole line or paragraph.",
    A.RIGHT_CLICK: "Right-click at point to open its context menu.",
    A.MIDDLE_CLICK: "Middle-click at point, e.g. to open a link in a new tab.",
    A.HOVER: "Move the pointer over point without clicking, to reveal tooltips or menus.",
    A.LONG_PRESS: "Touch and hold at point (duration in seconds, optional); opens context menus and selects text.",
    A.DRAG: "Press at start, move to end and release; without start the drag begins where the pointer is.",
    A.MOUSE_DOWN: "Press the left button (at point, if given) and keep holding it across steps.",
    A.MOUSE_UP: "Release the held left button (at point, if given).",
    A.SWIPE: "Slide one finger from start to end; an upward swipe moves the content up and reveals what lies below.",
    A.SCROLL: "Turn the mouse wheel in direction (amount in notches, optional) over point, or where the pointer is.",
    A.TYPE: "Type content into the field that has the focus.",
    A.HOTKEY: "Press keys together, repeat times (optional), e.g. keys=['ctrl', 'v'] to paste.",
    A.KEY_DOWN: "Press keys and keep holding them across steps.",
    A.KEY_UP: "Release held keys.",
    A.PRESS_BACK: "Go back one screen or page.",
    A.PRESS_HOME: "Go to the home screen.",
    A.PRESS_ENTER: "Press the Enter key, e.g. to submit a search.",
    A.PRESS_RECENT: "Show the recently used apps.",
    A.LAUNCH_APP: "Open the app called app directly.",
    A.LAUNCH: "Open url in the browser.",
    A.SELECT_OPTION: "Choose entry index (counting from 0) of the drop-down list at point, or of the focused one.",
    A.GET_URL: "Read the address of the current page; it is shown to you in the next step.",
    A.GET_SCREENSHOT: "Look at the screen again without acting.",
    A.TAKE_NOTE: "Write down content you will need in later steps; your notes are shown to you every step.",
    A.WAIT: "Wait for the screen to settle (seconds, optional).",
    A.ANSWER: "Reply to a question the task asked with content; this ends the task.",
    A.CALL_USER: "Hand over to the user with content saying what you need or what went wrong; this ends the task.",
    A.FINISHED: "Declare the task complete (content: an optional summary); this ends the task.",
    A.SEQUENCE: (f"Perform {SEQUENCE_MIN} to {SEQUENCE_MAX} actions in one step; none of them a sequence, and an "
                 "action that ends the task only last."),
}

_DIRECTIONS = "|".join(repr(d.value) for d in Direction)

#: How a field is shown in a signature, by field name (the same name means the same thing in every record).
_FIELD_PLACEHOLDERS: Mapping[str, str] = {
    "point": "(x, y)",
    "start": "(x1, y1)",
    "end": "(x2, y2)",
    "content": "'text'",
    "keys": "['ctrl', 'c']",
    "repeat": "1",
    "direction": _DIRECTIONS,
    "amount": "3",
    "duration": "1.0",
    "seconds": "2",
    "app": "'app name'",
    "url": "'https://…'",
    "index": "0",
    "actions": "[action, action, …]",
}

check_covers("_FIELD_PLACEHOLDERS needs a placeholder for every action field", _FIELD_PLACEHOLDERS,
             (f.name for cls in ACTION_CLASSES.values() for f in dataclasses.fields(cls)), extra_ok=True)
check_covers("ACTION_DESCRIPTIONS needs a description for every action type", ACTION_DESCRIPTIONS, ActionType)


@dataclass(frozen=True)
class ActionSpec:
    """One line of the action list: `Scroll(direction='up'|…[, point=(x, y)][, amount=3])` and what it does."""

    type: ActionType
    signature: str
    description: str
    optional: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.type.value


def _is_optional(f: dataclasses.Field) -> bool:
    # An empty-tuple default only satisfies dataclass field order (Sequence.actions); the record still needs items.
    return f.default is not dataclasses.MISSING and f.default != ()


def _signature(action_type: ActionType) -> tuple[str, tuple[str, ...]]:
    """Required fields first, points before other fields; optional ones in brackets."""
    def rank(f: dataclasses.Field) -> tuple[bool, int]:
        return _is_optional(f), POINT_FIELDS.index(f.name) if f.name in POINT_FIELDS else len(POINT_FIELDS)

    fields = sorted(dataclasses.fields(ACTION_CLASSES[action_type]), key=rank)
    parts = []
    for i, f in enumerate(fields):
        text = f"{', ' if i else ''}{f.name}={_FIELD_PLACEHOLDERS[f.name]}"
        parts.append(f"[{text}]" if _is_optional(f) else text)
    return f"{action_type.value}({''.join(parts)})", tuple(f.name for f in fields if _is_optional(f))


@functools.cache
def action_specs(platform: Platform | str) -> tuple[ActionSpec, ...]:
    """The platform's allowed actions (exactly `actions_for(platform)`, in that order) with signatures."""
    specs = []
    for action_type in actions_for(Platform(platform)):
        signature, optional = _signature(action_type)
        specs.append(ActionSpec(action_type, signature, ACTION_DESCRIPTIONS[action_type], optional))
    return tuple(specs)


# --- coordinate frames --------------------------------------------------------------------------

@dataclass(frozen=True)
class FrameSpec:
    """What a prompt says about coordinates: the model-space size and one sentence for the model."""

    kind: FrameKind
    width: int
    height: int
    text: str

    @property
    def max_x(self) -> int:
        return self.width - 1

    @property
    def max_y(self) -> int:
        return self.height - 1


def _relative_text(frame: Frame) -> str:
    top = frame.divisor - 1
    return (f"Coordinates are integers from 0 to {top} relative to the screenshot, whatever its pixel size: "
            f"(0, 0) is the top-left corner and ({top}, {top}) the bottom-right corner.")


def _pixel_text(frame: Frame) -> str:
    width, height = frame.model_size
    return (f"Coordinates are pixels of the screenshot as you see it, which is {width}x{height}: x runs from 0 "
            f"to {width - 1} left to right, y from 0 to {height - 1} top to bottom.")


_FRAME_TEXT: Mapping[FrameKind, Callable[[Frame], str]] = {
    FrameKind.RELATIVE: _relative_text,
    FrameKind.ABSOLUTE: _pixel_text,
    FrameKind.SMART: _pixel_text,
}


def frame_spec(frame: Frame) -> FrameSpec:
    width, height = frame.model_size
    return FrameSpec(frame.kind, width, height, _FRAME_TEXT[frame.kind](frame))


# --- usage guidance -----------------------------------------------------------------------------

@dataclass(frozen=True)
class _Tip:
    """A habit worth stating, shown only where every action it names is allowed."""

    text: str
    needs: frozenset[ActionType]
    platforms: frozenset[Platform] = frozenset(Platform)


_TIPS: tuple[_Tip, ...] = (
    _Tip("Screens often continue beyond what is visible: explore with Swipe(...) before deciding that "
         "something is missing; swipe upward to see content below.", frozenset({A.SWIPE}),
         frozenset({Platform.MOBILE})),
    _Tip("Content often continues beyond the window: use Scroll(...) before deciding that something is missing.",
         frozenset({A.SCROLL})),
    _Tip("To copy text, LongPress(...) on it and choose Copy; then LongPress(...) on the target field and "
         "choose Paste.", frozenset({A.LONG_PRESS}), frozenset({Platform.MOBILE})),
    _Tip("To copy text, select it and press Hotkey(keys=['ctrl', 'c']); paste it with Hotkey(keys=['ctrl', 'v']).",
         frozenset({A.HOTKEY})),
    _Tip(f"A Hotkey(...) on the web presses at most {WEB_MAX_HOTKEY_KEYS} keys.", frozenset({A.HOTKEY}),
         frozenset({Platform.WEB})),
    _Tip("Focus a text field with Click(...) before you Type(...) into it.", frozenset({A.CLICK, A.TYPE})),
    _Tip("Open an app directly with LaunchApp(...) instead of hunting for its icon.", frozenset({A.LAUNCH_APP})),
    _Tip("Before a consequential step (paying, deleting, sending a message or an email, entering a password or "
         "other credentials, changing a setting that cannot be undone) stop and ask with CallUser(...), saying "
         "what you are about to do. Also use CallUser(...) when information is missing or the task cannot be done.",
         frozenset({A.CALL_USER})),
    _Tip("When you see something you will need later (a price, a name, a code), record it with TakeNote(...).",
         frozenset({A.TAKE_NOTE})),
    _Tip("If the task asks a question, reply with Answer(...) as soon as the screen shows the answer.",
         frozenset({A.ANSWER})),
    _Tip("When the task is done, reply Finished(...); do not repeat an action that already worked.",
         frozenset({A.FINISHED})),
    _Tip("Use Sequence(...) only for steps whose effect you can predict, such as clicking several tiles of a "
         "picture grid.", frozenset({A.SEQUENCE})),
)


def _tips(platform: Platform) -> tuple[str, ...]:
    allowed = set(actions_for(platform))
    return tuple(t.text for t in _TIPS if platform in t.platforms and t.needs <= allowed)


#: How the prompt names what the model drives.
_PLATFORM_NAMES: Mapping[Platform, str] = {
    Platform.MOBILE: "an Android phone",
    Platform.WEB: "a web browser",
    Platform.DESKTOP: "a desktop computer",
}


# --- rendering ----------------------------------------------------------------------------------

_ENV = SandboxedEnvironment(undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                            keep_trailing_newline=False, autoescape=False)


@functools.lru_cache(maxsize=64)
def _compile(source: str) -> jinja2.Template:
    return _ENV.from_string(source)


def _template_source(template: Path | None, default: str) -> tuple[str, str]:
    if template is None:
        return resources.files("uivenus.agent").joinpath("templates", default).read_text(encoding="utf-8"), default
    path = Path(template)
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except OSError as exc:
        raise PromptError(f"cannot read prompt template {path}: {exc.strerror}; pass an existing .j2 file") from None


def render_template(template: Path | None, default: str, variables: Mapping[str, Any]) -> str:
    """Render `template` (or the bundled `default`) with `variables`; undefined names are errors, not blanks."""
    source, name = _template_source(template, default)
    try:
        return _compile(source).render(**variables).strip()
    except jinja2.TemplateError as exc:
        known = ", ".join(sorted(variables))
        raise PromptError(f"prompt template {name} failed: {exc}; its variables are: {known}") from None


def navigation_variables(platform: Platform | str, frame: Frame, *, thinking: bool = True) -> dict[str, Any]:
    """What a navigation template receives (documented here, since user templates depend on it)."""
    platform = Platform(platform)
    return {
        "platform": platform.value,
        "platform_name": _PLATFORM_NAMES[platform],
        "actions": action_specs(platform),
        "frame": frame_spec(frame),
        "thinking": thinking,
        "tips": _tips(platform),
    }


def grounding_variables(instruction: str, frame: Frame) -> dict[str, Any]:
    """What a grounding template receives."""
    return {"instruction": instruction, "frame": frame_spec(frame)}


def navigation_prompt(platform: Platform | str, frame: Frame, *, thinking: bool = True,
                      template: Path | None = None) -> str:
    """The system prompt for one navigation episode on `platform`, answering in `frame`."""
    return render_template(template, "navigation.j2", navigation_variables(platform, frame, thinking=thinking))


def grounding_prompt(instruction: str, frame: Frame, template: Path | None = None) -> str:
    """The prompt asking for the centre point of the element `instruction` describes, or `[-1,-1]`."""
    return render_template(template, "grounding.j2", grounding_variables(instruction, frame))


@dataclass(frozen=True)
class PromptSet:
    """The prompts one model is run with: bundled defaults, or template files that reproduce a release."""

    navigation_template: Path | None = None
    grounding_template: Path | None = None

    def navigation(self, platform: Platform | str, frame: Frame, *, thinking: bool = True) -> str:
        return navigation_prompt(platform, frame, thinking=thinking, template=self.navigation_template)

    def grounding(self, instruction: str, frame: Frame) -> str:
        return grounding_prompt(instruction, frame, template=self.grounding_template)


CAPTCHA_GUIDANCE = """## CAPTCHA
The page shows a security check (a CAPTCHA). Solve it as a person would: click, type and drag on what you see.
Here you may give several actions in one <action> block, separated by commas, and they run in order, e.g.
<action>Click(point=(412, 530)), Click(point=(468, 502)), Click(point=(655, 871))</action>
The check grades your first complete attempt, so make it count."""


def captcha_system_prompt(platform: Platform | str, frame: Frame) -> str:
    """The navigation prompt for `platform` in `frame`, plus what is special about CAPTCHAs."""
    return f"{navigation_prompt(platform, frame)}\n\n{CAPTCHA_GUIDANCE}"
