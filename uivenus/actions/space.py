"""The unified action space: one frozen, self-validating record per action type.

Every platform (phone, browser, desktop) shares this vocabulary. A record that exists is legal: bad
types, ranges, key names, empty content and illegal sequences fail at construction with an
`ActionError` that says what was wrong. Points are carried as numbers in whatever frame the caller
is using (model frame after parsing, logical screen pixels after `coords.py`); `map_points` is the
single hook through which a frame conversion touches them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, TypeAlias

Number: TypeAlias = int | float
Point: TypeAlias = tuple[Number, Number]


class ActionError(ValueError):
    """An action record was given an illegal value; the message names the field and the rule."""


class RegistryError(RuntimeError):
    """Two tables that must cover the same keys disagree: a programming error, raised when the module imports."""


def check_covers(table: str, keys: Iterable[object], expected: Iterable[object], *, extra_ok: bool = False) -> None:
    """Raise `RegistryError` when `keys` lacks any of `expected` (or, unless `extra_ok`, holds others): the check
    every registry runs at import, where an `assert` would vanish under `python -O`."""
    have, want = set(keys), set(expected)
    missing, unexpected = want - have, set() if extra_ok else have - want
    if missing or unexpected:
        found = [f"{label} {sorted(map(str, items))}"
                 for label, items in (("missing", missing), ("unexpected", unexpected)) if items]
        raise RegistryError(f"{table}: {'; '.join(found)}")


class ActionType(StrEnum):
    CLICK = "Click"
    DOUBLE_CLICK = "DoubleClick"
    TRIPLE_CLICK = "TripleClick"
    RIGHT_CLICK = "RightClick"
    MIDDLE_CLICK = "MiddleClick"
    HOVER = "Hover"
    LONG_PRESS = "LongPress"
    DRAG = "Drag"
    MOUSE_DOWN = "MouseDown"
    MOUSE_UP = "MouseUp"
    SWIPE = "Swipe"
    SCROLL = "Scroll"
    TYPE = "Type"
    HOTKEY = "Hotkey"
    KEY_DOWN = "KeyDown"
    KEY_UP = "KeyUp"
    PRESS_BACK = "PressBack"
    PRESS_HOME = "PressHome"
    PRESS_ENTER = "PressEnter"
    PRESS_RECENT = "PressRecent"
    LAUNCH_APP = "LaunchApp"
    LAUNCH = "Launch"
    SELECT_OPTION = "SelectOption"
    GET_URL = "GetUrl"
    GET_SCREENSHOT = "GetScreenshot"
    TAKE_NOTE = "TakeNote"
    WAIT = "Wait"
    ANSWER = "Answer"
    CALL_USER = "CallUser"
    FINISHED = "Finished"
    SEQUENCE = "Sequence"


class Platform(StrEnum):
    MOBILE = "mobile"
    WEB = "web"
    DESKTOP = "desktop"


class Direction(StrEnum):
    UP = "up"
    DOWN = "down"
    LEFT = "left"
    RIGHT = "right"


A = ActionType
_ALL_PLATFORMS = frozenset(Platform)
_DESKTOP_WEB = frozenset({Platform.DESKTOP, Platform.WEB})
_MOBILE_WEB = frozenset({Platform.MOBILE, Platform.WEB})
_MOBILE_DESKTOP = frozenset({Platform.MOBILE, Platform.DESKTOP})
_ONLY = {p: frozenset({p}) for p in Platform}

#: Which platforms accept each action type (ACTIONS.md). Sequence is allowed on the web because
#: CAPTCHA pages are web pages; mobile Back/Home/Enter also work in a browser.
ACTION_PLATFORMS: Mapping[ActionType, frozenset[Platform]] = {
    A.CLICK: _ALL_PLATFORMS,
    A.DOUBLE_CLICK: _ALL_PLATFORMS,
    A.TRIPLE_CLICK: _DESKTOP_WEB,
    A.RIGHT_CLICK: _DESKTOP_WEB,
    A.MIDDLE_CLICK: _ONLY[Platform.DESKTOP],
    A.HOVER: _DESKTOP_WEB,
    A.LONG_PRESS: _MOBILE_WEB,
    A.DRAG: _ALL_PLATFORMS,
    A.MOUSE_DOWN: _ONLY[Platform.DESKTOP],
    A.MOUSE_UP: _ONLY[Platform.DESKTOP],
    A.SWIPE: _MOBILE_WEB,
    A.SCROLL: _DESKTOP_WEB,
    A.TYPE: _ALL_PLATFORMS,
    A.HOTKEY: _DESKTOP_WEB,
    A.KEY_DOWN: _ONLY[Platform.DESKTOP],
    A.KEY_UP: _ONLY[Platform.DESKTOP],
    A.PRESS_BACK: _MOBILE_WEB,
    A.PRESS_HOME: _MOBILE_WEB,
    A.PRESS_ENTER: _MOBILE_WEB,
    A.PRESS_RECENT: _ONLY[Platform.MOBILE],
    A.LAUNCH_APP: _MOBILE_DESKTOP,
    A.LAUNCH: _ONLY[Platform.WEB],
    A.SELECT_OPTION: _ONLY[Platform.WEB],
    A.GET_URL: _ONLY[Platform.WEB],
    A.GET_SCREENSHOT: _ONLY[Platform.MOBILE],
    A.TAKE_NOTE: _ALL_PLATFORMS,
    A.WAIT: _ALL_PLATFORMS,
    A.ANSWER: _ALL_PLATFORMS,
    A.CALL_USER: _ALL_PLATFORMS,
    A.FINISHED: _ALL_PLATFORMS,
    A.SEQUENCE: _DESKTOP_WEB,
}

#: Action types that end an episode.
TERMINAL_TYPES = frozenset({A.ANSWER, A.CALL_USER, A.FINISHED})
#: Hotkeys on the web hold at most this many keys.
WEB_MAX_HOTKEY_KEYS = 3
SEQUENCE_MIN, SEQUENCE_MAX = 2, 32
HOTKEY_MAX_REPEAT = 128

_MODIFIERS = {"ctrl", "control", "alt", "option", "shift", "cmd", "command", "meta", "win", "super", "fn"}
_NAMED_KEYS = {
    "enter", "return", "esc", "escape", "tab", "space", "backspace", "delete", "del", "insert", "home",
    "end", "pageup", "pagedown", "up", "down", "left", "right", "arrowup", "arrowdown", "arrowleft",
    "arrowright", "capslock", "numlock", "scrolllock", "printscreen", "prtsc", "pause", "menu",
    "volumeup", "volumedown", "volumemute", "playpause", "back", "forward",
}
#: Every key name a Hotkey/KeyDown/KeyUp accepts (lower-cased), besides any single printable character.
KEY_NAMES = frozenset(_MODIFIERS | _NAMED_KEYS | {f"f{i}" for i in range(1, 25)})


def is_key_name(key: str) -> bool:
    """A key is a known name (case-insensitive) or exactly one printable, non-space character."""
    return key.lower() in KEY_NAMES or (len(key) == 1 and key.isprintable() and not key.isspace())


# --- validation helpers -------------------------------------------------------------------------

def _fail(action: str, message: str) -> None:
    raise ActionError(f"{action}: {message}")


def _check_number(action: str, name: str, value: Any, *, minimum: float | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(action, f"{name} must be a number, got {value!r}")
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int too large for a float is no screen coordinate either
        finite = False
    if not finite:
        _fail(action, f"{name} must be finite, got {str(value)[:40]}")
    if minimum is not None and value < minimum:
        _fail(action, f"{name} must be >= {minimum}, got {value!r}")


def _check_point(action: str, name: str, value: Any) -> None:
    if not isinstance(value, tuple) or len(value) != 2:
        _fail(action, f"{name} must be an (x, y) pair, got {value!r}")
    for axis, coordinate in zip("xy", value):
        _check_number(action, f"{name}.{axis}", coordinate, minimum=0)


def _check_text(action: str, name: str, value: Any, *, required: bool) -> None:
    if value is None and not required:
        return
    if not isinstance(value, str):
        _fail(action, f"{name} must be a string, got {value!r}")
    if required and not value.strip():
        _fail(action, f"{name} must not be empty")


def _check_keys(action: str, keys: Any) -> None:
    if not isinstance(keys, tuple) or not keys:
        _fail(action, f"keys must be a non-empty list of key names, got {keys!r}")
    for key in keys:
        if not isinstance(key, str) or not is_key_name(key):
            _fail(action, f"unknown key {key!r}; use names like 'ctrl', 'shift', 'enter', 'f5' or one character")


# --- records ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Action:
    """Shared behaviour of every action record; never instantiated itself."""

    type: ClassVar[ActionType]

    def __post_init__(self) -> None:
        self._validate()

    def _validate(self) -> None:  # overridden where there is something to check
        return None

    @property
    def is_terminal(self) -> bool:
        return self.type in TERMINAL_TYPES

    @property
    def platforms(self) -> frozenset[Platform]:
        return ACTION_PLATFORMS[self.type]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: `{"type": "Click", "point": [x, y]}`; unset optional fields are left out."""
        out: dict[str, Any] = {"type": self.type.value}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            out[f.name] = _to_json(value)
        return out


def _to_json(value: Any) -> Any:
    if isinstance(value, _Action):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_to_json(v) for v in value]
    if isinstance(value, StrEnum):
        return value.value
    return value


@dataclass(frozen=True, slots=True)
class _PointAction(_Action):
    point: Point

    def _validate(self) -> None:
        _check_point(self.type, "point", self.point)


@dataclass(frozen=True, slots=True)
class Click(_PointAction):
    type: ClassVar[ActionType] = A.CLICK


@dataclass(frozen=True, slots=True)
class DoubleClick(_PointAction):
    type: ClassVar[ActionType] = A.DOUBLE_CLICK


@dataclass(frozen=True, slots=True)
class TripleClick(_PointAction):
    type: ClassVar[ActionType] = A.TRIPLE_CLICK


@dataclass(frozen=True, slots=True)
class RightClick(_PointAction):
    type: ClassVar[ActionType] = A.RIGHT_CLICK


@dataclass(frozen=True, slots=True)
class MiddleClick(_PointAction):
    type: ClassVar[ActionType] = A.MIDDLE_CLICK


@dataclass(frozen=True, slots=True)
class Hover(_PointAction):
    type: ClassVar[ActionType] = A.HOVER


@dataclass(frozen=True, slots=True)
class LongPress(_Action):
    """Press and hold; `duration` in seconds (None = the executor's default, about one second)."""

    type: ClassVar[ActionType] = A.LONG_PRESS
    point: Point
    duration: Number | None = None

    def _validate(self) -> None:
        _check_point(self.type, "point", self.point)
        if self.duration is not None:
            _check_number(self.type, "duration", self.duration, minimum=0)


@dataclass(frozen=True, slots=True)
class Drag(_Action):
    """Press at `start` (None = where the pointer already is), move to `end`, release."""

    type: ClassVar[ActionType] = A.DRAG
    end: Point
    start: Point | None = None

    def _validate(self) -> None:
        _check_point(self.type, "end", self.end)
        if self.start is not None:
            _check_point(self.type, "start", self.start)


@dataclass(frozen=True, slots=True)
class _OptionalPointAction(_Action):
    point: Point | None = None

    def _validate(self) -> None:
        if self.point is not None:
            _check_point(self.type, "point", self.point)


@dataclass(frozen=True, slots=True)
class MouseDown(_OptionalPointAction):
    """Press the left button (held across steps until MouseUp)."""

    type: ClassVar[ActionType] = A.MOUSE_DOWN


@dataclass(frozen=True, slots=True)
class MouseUp(_OptionalPointAction):
    type: ClassVar[ActionType] = A.MOUSE_UP


@dataclass(frozen=True, slots=True)
class Swipe(_Action):
    """A touch swipe from `start` to `end` (how phones scroll)."""

    type: ClassVar[ActionType] = A.SWIPE
    start: Point
    end: Point

    def _validate(self) -> None:
        _check_point(self.type, "start", self.start)
        _check_point(self.type, "end", self.end)


@dataclass(frozen=True, slots=True)
class Scroll(_Action):
    """A mouse-wheel scroll; `amount` in wheel notches (None = the executor's default)."""

    type: ClassVar[ActionType] = A.SCROLL
    direction: Direction
    point: Point | None = None
    amount: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.direction, str) and not isinstance(self.direction, Direction):
            try:
                object.__setattr__(self, "direction", Direction(self.direction.lower()))
            except ValueError:
                _fail(self.type, f"direction must be one of up/down/left/right, got {self.direction!r}")
        self._validate()

    def _validate(self) -> None:
        if not isinstance(self.direction, Direction):
            _fail(self.type, f"direction must be one of up/down/left/right, got {self.direction!r}")
        if self.point is not None:
            _check_point(self.type, "point", self.point)
        if self.amount is not None:
            if isinstance(self.amount, bool) or not isinstance(self.amount, int) or self.amount < 1:
                _fail(self.type, f"amount must be a positive integer, got {self.amount!r}")


@dataclass(frozen=True, slots=True)
class _ContentAction(_Action):
    content: str

    def _validate(self) -> None:
        _check_text(self.type, "content", self.content, required=True)


@dataclass(frozen=True, slots=True)
class Type(_ContentAction):
    """Type text into the focused field (on the desktop each newline presses Enter)."""

    type: ClassVar[ActionType] = A.TYPE


@dataclass(frozen=True, slots=True)
class Hotkey(_Action):
    """Press `keys` together, `repeat` times (e.g. ('ctrl', 'c'))."""

    type: ClassVar[ActionType] = A.HOTKEY
    keys: tuple[str, ...]
    repeat: int = 1

    def _validate(self) -> None:
        _check_keys(self.type, self.keys)
        if isinstance(self.repeat, bool) or not isinstance(self.repeat, int) or not 1 <= self.repeat <= HOTKEY_MAX_REPEAT:
            _fail(self.type, f"repeat must be an integer in 1..{HOTKEY_MAX_REPEAT}, got {self.repeat!r}")

    def to_dict(self) -> dict[str, Any]:
        out = _Action.to_dict(self)
        if self.repeat == 1:
            del out["repeat"]
        return out


@dataclass(frozen=True, slots=True)
class _KeysAction(_Action):
    keys: tuple[str, ...]

    def _validate(self) -> None:
        _check_keys(self.type, self.keys)


@dataclass(frozen=True, slots=True)
class KeyDown(_KeysAction):
    type: ClassVar[ActionType] = A.KEY_DOWN


@dataclass(frozen=True, slots=True)
class KeyUp(_KeysAction):
    type: ClassVar[ActionType] = A.KEY_UP


@dataclass(frozen=True, slots=True)
class PressBack(_Action):
    type: ClassVar[ActionType] = A.PRESS_BACK


@dataclass(frozen=True, slots=True)
class PressHome(_Action):
    type: ClassVar[ActionType] = A.PRESS_HOME


@dataclass(frozen=True, slots=True)
class PressEnter(_Action):
    type: ClassVar[ActionType] = A.PRESS_ENTER


@dataclass(frozen=True, slots=True)
class PressRecent(_Action):
    type: ClassVar[ActionType] = A.PRESS_RECENT


@dataclass(frozen=True, slots=True)
class LaunchApp(_Action):
    """Open an app by name or package (phones, desktops)."""

    type: ClassVar[ActionType] = A.LAUNCH_APP
    app: str

    def _validate(self) -> None:
        _check_text(self.type, "app", self.app, required=True)


@dataclass(frozen=True, slots=True)
class Launch(_Action):
    """Open a URL in the browser."""

    type: ClassVar[ActionType] = A.LAUNCH
    url: str

    def _validate(self) -> None:
        _check_text(self.type, "url", self.url, required=True)


@dataclass(frozen=True, slots=True)
class SelectOption(_Action):
    """Choose option `index` (0-based) of the `<select>` at `point`, or of the focused one."""

    type: ClassVar[ActionType] = A.SELECT_OPTION
    index: int
    point: Point | None = None

    def _validate(self) -> None:
        if isinstance(self.index, bool) or not isinstance(self.index, int) or self.index < 0:
            _fail(self.type, f"index must be a non-negative integer, got {self.index!r}")
        if self.point is not None:
            _check_point(self.type, "point", self.point)


@dataclass(frozen=True, slots=True)
class GetUrl(_Action):
    type: ClassVar[ActionType] = A.GET_URL


@dataclass(frozen=True, slots=True)
class GetScreenshot(_Action):
    type: ClassVar[ActionType] = A.GET_SCREENSHOT


@dataclass(frozen=True, slots=True)
class TakeNote(_ContentAction):
    """Remember something for later steps (long-horizon memory)."""

    type: ClassVar[ActionType] = A.TAKE_NOTE


@dataclass(frozen=True, slots=True)
class Wait(_Action):
    type: ClassVar[ActionType] = A.WAIT
    seconds: Number | None = None

    def _validate(self) -> None:
        if self.seconds is not None:
            _check_number(self.type, "seconds", self.seconds, minimum=0)


@dataclass(frozen=True, slots=True)
class Answer(_ContentAction):
    """Answer the question the task asked; ends the episode."""

    type: ClassVar[ActionType] = A.ANSWER


@dataclass(frozen=True, slots=True)
class CallUser(_ContentAction):
    """Hand control to the user (confirmation, missing information, failure); ends the episode."""

    type: ClassVar[ActionType] = A.CALL_USER


@dataclass(frozen=True, slots=True)
class Finished(_Action):
    """The task is done; ends the episode."""

    type: ClassVar[ActionType] = A.FINISHED
    content: str | None = None

    def _validate(self) -> None:
        _check_text(self.type, "content", self.content, required=False)


@dataclass(frozen=True, slots=True)
class Sequence(_Action):
    """Several actions executed in one step (2–32, no nesting, a terminal action only last)."""

    type: ClassVar[ActionType] = A.SEQUENCE
    actions: tuple[Action, ...] = field(default=())

    def _validate(self) -> None:
        check_action_list(self.actions, where="Sequence")


Action: TypeAlias = (
    Click | DoubleClick | TripleClick | RightClick | MiddleClick | Hover | LongPress | Drag | MouseDown
    | MouseUp | Swipe | Scroll | Type | Hotkey | KeyDown | KeyUp | PressBack | PressHome | PressEnter
    | PressRecent | LaunchApp | Launch | SelectOption | GetUrl | GetScreenshot | TakeNote | Wait | Answer
    | CallUser | Finished | Sequence
)

#: The record class of each action type: the one registry every parser and converter looks up.
ACTION_CLASSES: Mapping[ActionType, type[_Action]] = {
    cls.type: cls
    for cls in (
        Click, DoubleClick, TripleClick, RightClick, MiddleClick, Hover, LongPress, Drag, MouseDown, MouseUp,
        Swipe, Scroll, Type, Hotkey, KeyDown, KeyUp, PressBack, PressHome, PressEnter, PressRecent, LaunchApp,
        Launch, SelectOption, GetUrl, GetScreenshot, TakeNote, Wait, Answer, CallUser, Finished, Sequence,
    )
}
check_covers("ACTION_CLASSES needs a record class for every action type", ACTION_CLASSES, ActionType)
check_covers("ACTION_PLATFORMS needs the platforms of every action type", ACTION_PLATFORMS, ActionType)


def is_action(value: object) -> bool:
    return isinstance(value, _Action)


def check_action_list(actions: Any, *, where: str) -> None:
    """The rules for several actions in one step: 2–32 records, no nested Sequence, terminal only last."""
    if not isinstance(actions, tuple):
        _fail(where, f"actions must be a tuple of action records, got {type(actions).__name__}")
    if not SEQUENCE_MIN <= len(actions) <= SEQUENCE_MAX:
        _fail(where, f"needs {SEQUENCE_MIN}..{SEQUENCE_MAX} actions, got {len(actions)}")
    for i, action in enumerate(actions):
        if not is_action(action):
            _fail(where, f"item {i} is not an action record: {action!r}")
        if isinstance(action, Sequence):
            _fail(where, f"item {i} is a Sequence; sequences cannot be nested")
        if action.is_terminal and i != len(actions) - 1:
            _fail(where, f"item {i} ({action.type}) ends the episode, so it may only come last")


def check_platform(action: Action, platform: Platform) -> None:
    """Raise `ActionError` unless `platform` accepts `action` (and every action inside a Sequence)."""
    platform = Platform(platform)
    if platform not in action.platforms:
        allowed = ", ".join(sorted(p.value for p in action.platforms))
        raise ActionError(f"{action.type} is not available on {platform.value} (only on {allowed})")
    if isinstance(action, Hotkey) and platform is Platform.WEB and len(action.keys) > WEB_MAX_HOTKEY_KEYS:
        raise ActionError(f"Hotkey on the web holds at most {WEB_MAX_HOTKEY_KEYS} keys, got {list(action.keys)}")
    if isinstance(action, Sequence):
        for inner in action.actions:
            check_platform(inner, platform)


def actions_for(platform: Platform) -> tuple[ActionType, ...]:
    """The action types a platform allows, in the order of `ActionType` (prompts are built from this)."""
    return tuple(t for t in ActionType if Platform(platform) in ACTION_PLATFORMS[t])


# --- JSON ---------------------------------------------------------------------------------------

def action_from_dict(data: Mapping[str, Any]) -> Action:
    """Inverse of `to_dict`; raises `ActionError` for an unknown type or bad fields."""
    if not isinstance(data, Mapping) or "type" not in data:
        raise ActionError(f"an action dict needs a 'type' key, got {data!r}")
    try:
        cls = ACTION_CLASSES[ActionType(data["type"])]
    except ValueError:
        raise ActionError(f"unknown action type {data['type']!r}; known: {', '.join(ActionType)}") from None
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - names - {"type"}
    if unknown:
        raise ActionError(f"{cls.type}: unknown field(s) {sorted(unknown)}; fields are {sorted(names)}")
    kwargs = {name: _field_from_json(cls, name, value) for name, value in data.items() if name != "type"}
    try:
        return cls(**kwargs)  # type: ignore[return-value]
    except TypeError as exc:
        raise ActionError(f"{cls.type}: {exc}") from None


def _field_from_json(cls: type[_Action], name: str, value: Any) -> Any:
    if name == "actions" and isinstance(value, list):
        return tuple(action_from_dict(v) for v in value)
    if isinstance(value, list):
        return tuple(value)
    return value


# --- points -------------------------------------------------------------------------------------

POINT_FIELDS = ("point", "start", "end")


def iter_points(action: Action) -> Iterator[tuple[str, Point]]:
    """Every (field name, point) an action carries, Sequence members included."""
    if isinstance(action, Sequence):
        for inner in action.actions:
            yield from iter_points(inner)
        return
    for name in POINT_FIELDS:
        value = getattr(action, name, None)
        if value is not None:
            yield name, value


def map_points(action: Action, fn: Callable[[Point], Point]) -> Action:
    """A copy of `action` with every point passed through `fn` (the hook frame conversions use)."""
    if isinstance(action, Sequence):
        return Sequence(actions=tuple(map_points(a, fn) for a in action.actions))
    changes = {name: fn(value) for name in POINT_FIELDS if (value := getattr(action, name, None)) is not None}
    return dataclasses.replace(action, **changes) if changes else action
