"""The action records: every type validates itself, knows its platforms and round-trips through JSON."""

import json
from dataclasses import dataclass
from typing import get_args

import pytest

from uivenus.actions.points import iter_points, map_points
from uivenus.actions.registries import RegistryError
from uivenus.actions.space import (
    ACTION_CLASSES,
    TERMINAL_TYPES,
    Action,
    ActionSequence,
    ActionType,
    Click,
    Drag,
    Finished,
    Hotkey,
    Platform,
    Scroll,
    Type,
    Wait,
    action_from_dict,
    action_type,
    actions_for,
    check_platform,
)
from uivenus.actions.values import ActionError

EXAMPLES = {
    ActionType.CLICK: {"point": (10, 20)},
    ActionType.DOUBLE_CLICK: {"point": (10, 20)},
    ActionType.TRIPLE_CLICK: {"point": (10, 20)},
    ActionType.RIGHT_CLICK: {"point": (10, 20)},
    ActionType.MIDDLE_CLICK: {"point": (10, 20)},
    ActionType.HOVER: {"point": (10.5, 20.25)},
    ActionType.LONG_PRESS: {"point": (1, 2), "duration": 1.5},
    ActionType.DRAG: {"start": (1, 2), "end": (3, 4)},
    ActionType.MOUSE_DOWN: {"point": (5, 6)},
    ActionType.MOUSE_UP: {},
    ActionType.SWIPE: {"start": (500, 800), "end": (500, 200)},
    ActionType.SCROLL: {"direction": "down", "point": (3, 3), "amount": 5},
    ActionType.TYPE: {"content": "héllo\n'wörld'"},
    ActionType.HOTKEY: {"keys": ("ctrl", "shift", "t"), "repeat": 3},
    ActionType.KEY_DOWN: {"keys": ("shift",)},
    ActionType.KEY_UP: {"keys": ("shift",)},
    ActionType.PRESS_BACK: {},
    ActionType.PRESS_HOME: {},
    ActionType.PRESS_ENTER: {},
    ActionType.PRESS_RECENT: {},
    ActionType.LAUNCH_APP: {"app": "Settings"},
    ActionType.LAUNCH: {"url": "http://127.0.0.1:8000/"},
    ActionType.SELECT_OPTION: {"index": 2, "point": (40, 50)},
    ActionType.GET_URL: {},
    ActionType.GET_SCREENSHOT: {},
    ActionType.TAKE_NOTE: {"content": "code 4821"},
    ActionType.WAIT: {"seconds": 2},
    ActionType.ANSWER: {"content": "42"},
    ActionType.CALL_USER: {"content": "Please confirm the payment."},
    ActionType.FINISHED: {"content": "done"},
    ActionType.SEQUENCE: {"actions": (Click(point=(1, 1)), Type(content="x"), Finished())},
}


def test_every_type_has_an_example():
    assert set(EXAMPLES) == set(ActionType)


@pytest.mark.parametrize("action_type", list(ActionType))
def test_json_round_trip(action_type):
    action = ACTION_CLASSES[action_type](**EXAMPLES[action_type])
    assert action.type is action_type
    as_json = json.dumps(action.to_dict())
    assert action_from_dict(json.loads(as_json)) == action


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: Click(point=(-1, 5)), "point.x must be >= 0"),
        (lambda: Click(point=(1,)), "(x, y) pair"),
        (lambda: Click(point=("1", 2)), "must be a number"),
        (lambda: Click(point=(True, 2)), "must be a number"),
        (lambda: Click(point=(float("nan"), 2)), "finite"),
        (lambda: Type(content="   "), "must not be empty"),
        (lambda: Type(content=5), "must be a string"),
        (lambda: Hotkey(keys=("ctrl", "blorp")), "unknown key 'blorp'"),
        (lambda: Hotkey(keys=()), "non-empty list"),
        (lambda: Hotkey(keys=("a",), repeat=0), "repeat must be an integer in 1..128"),
        (lambda: Hotkey(keys=("a",), repeat=129), "repeat"),
        (lambda: Scroll(direction="sideways"), "direction must be one of"),
        (lambda: Scroll(direction="up", amount=0), "amount must be a positive integer"),
        (lambda: Wait(seconds=-1), "seconds must be >= 0"),
        (lambda: ActionSequence(actions=(Click(point=(1, 1)),)), "needs 2..32 actions"),
        (lambda: ActionSequence(actions=tuple(Click(point=(1, 1)) for _ in range(33))), "needs 2..32 actions"),
        (lambda: ActionSequence(actions=(Finished(), Click(point=(1, 1)))), "may only come last"),
        (lambda: ActionSequence(actions=(Click(point=(1, 1)),
                                         ActionSequence(actions=(Click(point=(1, 1)), Finished())))), "nested"),
        (lambda: ActionSequence(actions=(Click(point=(1, 1)), "Click")), "not an action record"),
    ],
)
def test_illegal_records_fail_at_construction(build, message):
    with pytest.raises(ActionError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        build()


def test_records_are_frozen():
    click = Click(point=(1, 2))
    with pytest.raises(AttributeError):
        click.point = (3, 4)  # type: ignore[misc]


def test_platforms():
    assert ActionType.PRESS_RECENT in actions_for(Platform.MOBILE)
    assert ActionType.PRESS_RECENT not in actions_for(Platform.WEB)
    assert ActionType.MIDDLE_CLICK in actions_for(Platform.DESKTOP)
    assert ActionType.LAUNCH in actions_for(Platform.WEB) and ActionType.LAUNCH not in actions_for(Platform.DESKTOP)
    check_platform(Hotkey(keys=("ctrl", "c")), Platform.WEB)
    with pytest.raises(ActionError, match="at most 3 keys"):
        check_platform(Hotkey(keys=("ctrl", "alt", "shift", "t")), Platform.WEB)
    check_platform(Hotkey(keys=("ctrl", "alt", "shift", "t")), Platform.DESKTOP)
    with pytest.raises(ActionError, match="not available on mobile"):
        check_platform(Scroll(direction="down"), Platform.MOBILE)
    with pytest.raises(ActionError, match="MiddleClick is not available on web"):
        middle = ACTION_CLASSES[ActionType.MIDDLE_CLICK](point=(1, 1))
        check_platform(ActionSequence(actions=(Click(point=(1, 1)), middle)), Platform.WEB)


def test_unknown_dicts_are_errors():
    with pytest.raises(ActionError, match="unknown action type 'Tap'"):
        action_from_dict({"type": "Tap", "point": [1, 2]})
    with pytest.raises(ActionError, match="unknown field"):
        action_from_dict({"type": "Click", "point": [1, 2], "box": [1, 2]})
    with pytest.raises(ActionError, match="needs a 'type' key"):
        action_from_dict({"point": [1, 2]})
    with pytest.raises(ActionError, match="Click"):
        action_from_dict({"type": "Click"})


def test_map_points_touches_every_point_once():
    seq = ActionSequence(actions=(Drag(start=(1, 2), end=(3, 4)), Click(point=(5, 6)), Type(content="a")))
    doubled = map_points(seq, lambda p: (p[0] * 2, p[1] * 2))
    assert [p for _, p in iter_points(doubled)] == [(2, 4), (6, 8), (10, 12)]
    assert Drag(end=(1, 1)).start is None and map_points(Drag(end=(1, 1)), lambda p: (9, 9)) == Drag(end=(9, 9))


def test_huge_integers_are_action_errors_not_overflow():
    with pytest.raises(ActionError, match="finite"):
        Click(point=(10**400, 1))


def test_each_record_class_is_declared_once_and_the_tables_follow():
    assert list(ACTION_CLASSES) == list(ActionType)  # one class per type, in declaration order
    assert all(cls.type is t for t, cls in ACTION_CLASSES.items())
    assert set(get_args(Action)) == set(ACTION_CLASSES.values())
    assert TERMINAL_TYPES == {ActionType.ANSWER, ActionType.CALL_USER, ActionType.FINISHED}
    assert ActionType.DOUBLE_CLICK == "DoubleClick" and ActionType.GET_URL == "GetUrl"
    with pytest.raises(RegistryError, match="closed"):
        @action_type("Louder", platforms=frozenset(Platform))
        @dataclass(frozen=True)
        class Louder:
            volume: int = 0


def test_the_python_name_action_sequence_is_not_what_models_and_stores_see():
    sequence = ActionSequence(actions=(Click(point=(1, 2)), Finished()))
    assert ActionSequence.type is ActionType.SEQUENCE == "Sequence"
    assert sequence.to_dict()["type"] == "Sequence" and action_from_dict(sequence.to_dict()) == sequence
