"""The unified action space: one frozen, self-validating record per action type, declared once.

Every platform (phone, browser, desktop) shares this vocabulary. A record that exists is legal: bad types, ranges,
key names, empty content and illegal sequences fail at construction with an `ActionError` (the value rules are in
`values.py`). Each record class is declared in one place, its `@action_type(name, platforms=...)` line: the name
models write, the platforms that accept it, whether it ends the episode. `ActionType`, `ACTION_CLASSES` and
`TERMINAL_TYPES` are derived from those declarations after the last record. Points are carried as numbers in
whatever frame the caller is using (model frame after parsing, logical screen pixels after `coords.py`);
`points.py` reads and rewrites them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias, TypeVar, get_args

from .registries import RegistryError, check_covers
from .values import ActionError, check_keys, check_number, check_point, check_text, fail

Number: TypeAlias = int | float
Point: TypeAlias = tuple[Number, Number]


class Platform(StrEnum):
    MOBILE = "mobile"
    WEB = "web"
    DESKTOP = "desktop"


class Direction(StrEnum):
    UP = "up"
    DOWN = "down"
    LEFT = "left"
    RIGHT = "right"


_ALL = frozenset(Platform)
_DESKTOP_WEB = frozenset({Platform.DESKTOP, Platform.WEB})
_MOBILE_WEB = frozenset({Platform.MOBILE, Platform.WEB})
_MOBILE_DESKTOP = frozenset({Platform.MOBILE, Platform.DESKTOP})
_MOBILE, _WEB, _DESKTOP = (frozenset({p}) for p in (Platform.MOBILE, Platform.WEB, Platform.DESKTOP))

#: Hotkeys on the web hold at most this many keys.
WEB_MAX_HOTKEY_KEYS = 3
SEQUENCE_MIN, SEQUENCE_MAX = 2, 32
HOTKEY_MAX_REPEAT = 128


# --- declaring an action type -------------------------------------------------------------------

#: Every record class by the type name it was declared with, in declaration order (the order prompts list them in).
_DECLARED: dict[str, type[_Action]] = {}
_closed = False
_R = TypeVar("_R", bound="type[_Action]")


def action_type(name: str, *, platforms: frozenset[Platform], terminal: bool = False) -> Callable[[_R], _R]:
    """Declare the record class below it as action type `name` (the word models write), accepted on `platforms`;
    a `terminal` action ends the episode. Only this module declares actions: the registry closes after the last one.

    A decorator, not `__init_subclass__` keywords: `@dataclass(slots=True)` replaces the class it is given with a
    new one, created without those keywords; a decorator above it is the one place that sees the final class.
    """
    def declare(cls: _R) -> _R:
        if _closed:
            raise RegistryError(f"{cls.__name__}: the action space is closed; declare action types in space.py")
        if name in _DECLARED:
            raise RegistryError(f"action type {name!r} is declared twice: {_DECLARED[name].__name__}, {cls.__name__}")
        if not platforms or not all(isinstance(p, Platform) for p in platforms):
            raise RegistryError(f"{name}: platforms must be a non-empty set of Platform, got {platforms!r}")
        cls.platforms, cls.is_terminal = frozenset(platforms), terminal
        _DECLARED[name] = cls
        return cls
    return declare


# --- records ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Action:
    """Shared behaviour of every action record; never instantiated itself."""

    if TYPE_CHECKING:  # class attributes, not dataclass fields: set by @action_type and when the registry closes
        type: ClassVar[ActionType]
        platforms: ClassVar[frozenset[Platform]]
        is_terminal: ClassVar[bool]

    def __post_init__(self) -> None:
        self._validate()

    def _validate(self) -> None:  # overridden where there is something to check
        return None

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
        check_point(self.type, "point", self.point)


@action_type("Click", platforms=_ALL)
@dataclass(frozen=True, slots=True)
class Click(_PointAction):
    """A left click at `point`."""


@action_type("DoubleClick", platforms=_ALL)
@dataclass(frozen=True, slots=True)
class DoubleClick(_PointAction):
    """Two left clicks at `point`."""


@action_type("TripleClick", platforms=_DESKTOP_WEB)
@dataclass(frozen=True, slots=True)
class TripleClick(_PointAction):
    """Three left clicks at `point` (selects a line or a paragraph)."""


@action_type("RightClick", platforms=_DESKTOP_WEB)
@dataclass(frozen=True, slots=True)
class RightClick(_PointAction):
    """A right click at `point` (opens a context menu)."""


@action_type("MiddleClick", platforms=_DESKTOP)
@dataclass(frozen=True, slots=True)
class MiddleClick(_PointAction):
    """A middle click at `point`."""


@action_type("Hover", platforms=_DESKTOP_WEB)
@dataclass(frozen=True, slots=True)
class Hover(_PointAction):
    """Move the pointer to `point` without clicking."""


@action_type("LongPress", platforms=_MOBILE_WEB)
@dataclass(frozen=True, slots=True)
class LongPress(_Action):
    """Press and hold; `duration` in seconds (None = the executor's default, about one second)."""

    point: Point
    duration: Number | None = None

    def _validate(self) -> None:
        check_point(self.type, "point", self.point)
        if self.duration is not None:
            check_number(self.type, "duration", self.duration, minimum=0)


@action_type("Drag", platforms=_ALL)
@dataclass(frozen=True, slots=True)
class Drag(_Action):
    """Press at `start` (None = where the pointer already is), move to `end`, release."""

    end: Point
    start: Point | None = None

    def _validate(self) -> None:
        check_point(self.type, "end", self.end)
        if self.start is not None:
            check_point(self.type, "start", self.start)


@dataclass(frozen=True, slots=True)
class _OptionalPointAction(_Action):
    point: Point | None = None

    def _validate(self) -> None:
        if self.point is not None:
            check_point(self.type, "point", self.point)


@action_type("MouseDown", platforms=_DESKTOP)
@dataclass(frozen=True, slots=True)
class MouseDown(_OptionalPointAction):
    """Press the left button (held across steps until MouseUp)."""


@action_type("MouseUp", platforms=_DESKTOP)
@dataclass(frozen=True, slots=True)
class MouseUp(_OptionalPointAction):
    """Release the left button (pressed by MouseDown)."""


@action_type("Swipe", platforms=_MOBILE_WEB)
@dataclass(frozen=True, slots=True)
class Swipe(_Action):
    """A touch swipe from `start` to `end` (how phones scroll)."""

    start: Point
    end: Point

    def _validate(self) -> None:
        check_point(self.type, "start", self.start)
        check_point(self.type, "end", self.end)


@action_type("Scroll", platforms=_DESKTOP_WEB)
@dataclass(frozen=True, slots=True)
class Scroll(_Action):
    """A mouse-wheel scroll; `amount` in wheel notches (None = the executor's default)."""

    direction: Direction
    point: Point | None = None
    amount: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.direction, str) and not isinstance(self.direction, Direction):
            try:
                object.__setattr__(self, "direction", Direction(self.direction.lower()))
            except ValueError:
                fail(self.type, f"direction must be one of up/down/left/right, got {self.direction!r}")
        self._validate()

    def _validate(self) -> None:
        if not isinstance(self.direction, Direction):
            fail(self.type, f"direction must be one of up/down/left/right, got {self.direction!r}")
        if self.point is not None:
            check_point(self.type, "point", self.point)
        if self.amount is not None:
            if isinstance(self.amount, bool) or not isinstance(self.amount, int) or self.amount < 1:
                fail(self.type, f"amount must be a positive integer, got {self.amount!r}")


@dataclass(frozen=True, slots=True)
class _ContentAction(_Action):
    content: str

    def _validate(self) -> None:
        check_text(self.type, "content", self.content, required=True)


@action_type("Type", platforms=_ALL)
@dataclass(frozen=True, slots=True)
class Type(_ContentAction):
    """Type text into the focused field (on the desktop each newline presses Enter)."""


@action_type("Hotkey", platforms=_DESKTOP_WEB)
@dataclass(frozen=True, slots=True)
class Hotkey(_Action):
    """Press `keys` together, `repeat` times (e.g. ('ctrl', 'c'))."""

    keys: tuple[str, ...]
    repeat: int = 1

    def _validate(self) -> None:
        check_keys(self.type, self.keys)
        repeat = self.repeat
        if isinstance(repeat, bool) or not isinstance(repeat, int) or not 1 <= repeat <= HOTKEY_MAX_REPEAT:
            fail(self.type, f"repeat must be an integer in 1..{HOTKEY_MAX_REPEAT}, got {self.repeat!r}")

    def to_dict(self) -> dict[str, Any]:
        out = _Action.to_dict(self)
        if self.repeat == 1:
            del out["repeat"]
        return out


@dataclass(frozen=True, slots=True)
class _KeysAction(_Action):
    keys: tuple[str, ...]

    def _validate(self) -> None:
        check_keys(self.type, self.keys)


@action_type("KeyDown", platforms=_DESKTOP)
@dataclass(frozen=True, slots=True)
class KeyDown(_KeysAction):
    """Press `keys` and hold them across steps until KeyUp."""


@action_type("KeyUp", platforms=_DESKTOP)
@dataclass(frozen=True, slots=True)
class KeyUp(_KeysAction):
    """Release `keys` held by KeyDown."""


@action_type("PressBack", platforms=_MOBILE_WEB)
@dataclass(frozen=True, slots=True)
class PressBack(_Action):
    """The system Back button (in a browser: history back)."""


@action_type("PressHome", platforms=_MOBILE_WEB)
@dataclass(frozen=True, slots=True)
class PressHome(_Action):
    """The system Home button."""


@action_type("PressEnter", platforms=_MOBILE_WEB)
@dataclass(frozen=True, slots=True)
class PressEnter(_Action):
    """The Enter key."""


@action_type("PressRecent", platforms=_MOBILE)
@dataclass(frozen=True, slots=True)
class PressRecent(_Action):
    """The phone's recent-apps button."""


@action_type("LaunchApp", platforms=_MOBILE_DESKTOP)
@dataclass(frozen=True, slots=True)
class LaunchApp(_Action):
    """Open an app by name or package (phones, desktops)."""

    app: str

    def _validate(self) -> None:
        check_text(self.type, "app", self.app, required=True)


@action_type("Launch", platforms=_WEB)
@dataclass(frozen=True, slots=True)
class Launch(_Action):
    """Open a URL in the browser."""

    url: str

    def _validate(self) -> None:
        check_text(self.type, "url", self.url, required=True)


@action_type("SelectOption", platforms=_WEB)
@dataclass(frozen=True, slots=True)
class SelectOption(_Action):
    """Choose option `index` (0-based) of the `<select>` at `point`, or of the focused one."""

    index: int
    point: Point | None = None

    def _validate(self) -> None:
        if isinstance(self.index, bool) or not isinstance(self.index, int) or self.index < 0:
            fail(self.type, f"index must be a non-negative integer, got {self.index!r}")
        if self.point is not None:
            check_point(self.type, "point", self.point)


@action_type("GetUrl", platforms=_WEB)
@dataclass(frozen=True, slots=True)
class GetUrl(_Action):
    """Ask for the current page's URL (an observation request)."""


@action_type("GetScreenshot", platforms=_MOBILE)
@dataclass(frozen=True, slots=True)
class GetScreenshot(_Action):
    """Ask for a fresh screenshot (an observation request)."""


@action_type("TakeNote", platforms=_ALL)
@dataclass(frozen=True, slots=True)
class TakeNote(_ContentAction):
    """Remember something for later steps (long-horizon memory)."""


@action_type("Wait", platforms=_ALL)
@dataclass(frozen=True, slots=True)
class Wait(_Action):
    """Wait `seconds` (None = the executor's default) for the screen to settle."""

    seconds: Number | None = None

    def _validate(self) -> None:
        if self.seconds is not None:
            check_number(self.type, "seconds", self.seconds, minimum=0)


@action_type("Answer", platforms=_ALL, terminal=True)
@dataclass(frozen=True, slots=True)
class Answer(_ContentAction):
    """Answer the question the task asked; ends the episode."""


@action_type("CallUser", platforms=_ALL, terminal=True)
@dataclass(frozen=True, slots=True)
class CallUser(_ContentAction):
    """Hand control to the user (confirmation, missing information, failure); ends the episode."""


@action_type("Finished", platforms=_ALL, terminal=True)
@dataclass(frozen=True, slots=True)
class Finished(_Action):
    """The task is done; ends the episode."""

    content: str | None = None

    def _validate(self) -> None:
        check_text(self.type, "content", self.content, required=False)


@action_type("Sequence", platforms=_DESKTOP_WEB)
@dataclass(frozen=True, slots=True)
class ActionSequence(_Action):
    """Several actions executed in one step (2–32, no nesting, a terminal action only last); models write it, and
    trajectories store it, as `Sequence`. Allowed on the web because CAPTCHA pages are web pages."""

    actions: tuple[Action, ...] = field(default=())

    def _validate(self) -> None:
        check_action_list(self.actions, where="Sequence")


# --- the registry, closed: everything below is derived from the declarations above ----------------

#: Every action type, as models write it (`ActionType.DOUBLE_CLICK == "DoubleClick"`), in declaration order.
ActionType = StrEnum("ActionType", [(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper(), name) for name in _DECLARED],
                     module=__name__)
for _name, _cls in _DECLARED.items():
    _cls.type = ActionType(_name)
_closed = True
del _name, _cls

#: The record class of each action type: the one registry every parser and converter looks up.
ACTION_CLASSES: Mapping[ActionType, type[_Action]] = {cls.type: cls for cls in _DECLARED.values()}
#: Action types that end an episode.
TERMINAL_TYPES = frozenset(t for t, cls in ACTION_CLASSES.items() if cls.is_terminal)

#: Any action record. The one list besides the declarations, kept because every signature that takes an action is
#: annotated with it and a type checker cannot read a union computed at runtime; the check below keeps it whole.
Action: TypeAlias = (
    Click | DoubleClick | TripleClick | RightClick | MiddleClick | Hover | LongPress | Drag | MouseDown
    | MouseUp | Swipe | Scroll | Type | Hotkey | KeyDown | KeyUp | PressBack | PressHome | PressEnter
    | PressRecent | LaunchApp | Launch | SelectOption | GetUrl | GetScreenshot | TakeNote | Wait | Answer
    | CallUser | Finished | ActionSequence
)
check_covers("the Action union needs every declared record class", get_args(Action), ACTION_CLASSES.values())


def is_action(value: object) -> bool:
    return isinstance(value, _Action)


def check_action_list(actions: Any, *, where: str) -> None:
    """The rules for several actions in one step: 2–32 records, no nested Sequence, terminal only last."""
    if not isinstance(actions, tuple):
        fail(where, f"actions must be a tuple of action records, got {type(actions).__name__}")
    if not SEQUENCE_MIN <= len(actions) <= SEQUENCE_MAX:
        fail(where, f"needs {SEQUENCE_MIN}..{SEQUENCE_MAX} actions, got {len(actions)}")
    for i, action in enumerate(actions):
        if not is_action(action):
            fail(where, f"item {i} is not an action record: {action!r}")
        if isinstance(action, ActionSequence):
            fail(where, f"item {i} is a Sequence; sequences cannot be nested")
        if action.is_terminal and i != len(actions) - 1:
            fail(where, f"item {i} ({action.type}) ends the episode, so it may only come last")


def check_platform(action: Action, platform: Platform) -> None:
    """Raise `ActionError` unless `platform` accepts `action` (and every action inside a Sequence)."""
    platform = Platform(platform)
    if platform not in action.platforms:
        allowed = ", ".join(sorted(p.value for p in action.platforms))
        raise ActionError(f"{action.type} is not available on {platform.value} (only on {allowed})")
    if isinstance(action, Hotkey) and platform is Platform.WEB and len(action.keys) > WEB_MAX_HOTKEY_KEYS:
        raise ActionError(f"Hotkey on the web holds at most {WEB_MAX_HOTKEY_KEYS} keys, got {list(action.keys)}")
    if isinstance(action, ActionSequence):
        for inner in action.actions:
            check_platform(inner, platform)


def actions_for(platform: Platform) -> tuple[ActionType, ...]:
    """The action types a platform allows, in the order of `ActionType` (prompts are built from this)."""
    return tuple(t for t in ActionType if Platform(platform) in ACTION_CLASSES[t].platforms)


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
