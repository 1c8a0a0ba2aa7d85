"""Converters between peers' action formats and the unified space: samples, refusals, fuzzing, round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uivenus.actions.convert import (
    CONVERTERS,
    ConvertError,
    adb_commands,
    convert_text,
    get_converter,
    pyautogui_code,
    sample_path,
    split_items,
)
from uivenus.actions.convert.base import SAMPLES_DIR
from uivenus.actions.space import (
    ActionSequence,
    Answer,
    CallUser,
    Click,
    Direction,
    DoubleClick,
    Drag,
    Finished,
    GetScreenshot,
    Hotkey,
    Hover,
    KeyDown,
    KeyUp,
    Launch,
    LaunchApp,
    LongPress,
    MiddleClick,
    MouseDown,
    MouseUp,
    PressBack,
    PressEnter,
    PressHome,
    PressRecent,
    RightClick,
    Scroll,
    Swipe,
    TakeNote,
    TripleClick,
    Type,
    Wait,
)

SAMPLES = Path(__file__).parent / "samples"
SCREEN = (1080, 2400)
BOXES = {3: (100, 200, 300, 260), 7: (0, 400, 1080, 1600)}
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def read(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


def expect_error(name: str, item, fragment: str, **options) -> str:
    with pytest.raises(ConvertError) as info:
        get_converter(name, **options).to_unified(item)
    message = str(info.value)
    assert fragment in message, message
    return message


# --- registry and file layouts ----------------------------------------------------------------------

def test_registry_holds_the_four_peer_formats():
    assert sorted(CONVERTERS) == ["androidworld", "guiowl", "opencua", "uitars"]
    assert all(converter.name == name for name, converter in CONVERTERS.items())


def test_unknown_format_and_unknown_option_name_what_exists():
    with pytest.raises(ConvertError, match="known formats: androidworld, guiowl, opencua, uitars"):
        get_converter("seeact")
    with pytest.raises(ConvertError, match=r"no option\(s\) \['screen'\].*none"):
        get_converter("uitars", screen=(1, 2))
    with pytest.raises(ConvertError, match="screen must be"):
        get_converter("androidworld", screen=(0, 100))
    with pytest.raises(ConvertError, match="corners swapped"):
        get_converter("androidworld", element_boxes={1: (50, 50, 10, 10)})


def test_split_items_reads_json_arrays_json_lines_and_paragraphs():
    assert split_items("") == []
    assert split_items('[{"a": 1}, "b"]') == [{"a": 1}, "b"]
    assert split_items('{"a": 1}') == [{"a": 1}]
    assert split_items('{"a": 1}\n\n"x\\ny"\n') == [{"a": 1}, "x\ny"]
    assert split_items("Thought: a\nAction: wait()\n\n  \nAction: press_home()\n") == [
        "Thought: a\nAction: wait()", "Action: press_home()"]


def test_convert_text_returns_actions_or_the_error_per_item():
    text = '{"action_type": "navigate_back"}\n{"action_type": "scroll", "direction": "up"}\n'
    back, scroll = convert_text("androidworld", text)
    assert back == (PressBack(),)
    assert isinstance(scroll, ConvertError) and "--screen 1080x2400" in str(scroll)
    assert convert_text("androidworld", text, screen=SCREEN)[1] == (Swipe(start=(540, 1200), end=(540, 2399)),)


# --- AndroidWorld -----------------------------------------------------------------------------------

ANDROIDWORLD_EXPECTED = [
    (LaunchApp("Simple Calendar Pro"),),
    (Click((540, 1320)),),
    (Click((200, 230)),),                     # element 3's box centre
    (DoubleClick((200, 880)),),
    (LongPress((200, 230)),),                 # index given as a string, as AndroidWorld allows
    (Click((200, 230)), Type("Team meeting"), PressEnter()),
    (Click((540, 300)), Type("hello world"), PressEnter()),
    (Swipe(start=(540, 1200), end=(540, 0)),),       # scroll down: finger moves up
    (Swipe(start=(540, 1000), end=(540, 1599)),),    # scroll up inside element 7: finger moves down
    (Swipe(start=(540, 1200), end=(0, 1200)),),      # scroll right: finger moves left
    (Swipe(start=(540, 1200), end=(0, 1200)),),      # swipe left: the finger's own direction
    (Swipe(start=(540, 1200), end=(540, 2399)),),
    (PressBack(),),
    (PressHome(),),
    (PressEnter(),),
    (Wait(seconds=1),),
    (Answer("Your next meeting is at 3 PM."),),
    (Finished(),),
    (CallUser("AndroidWorld agent reported the task as infeasible"),),
]


def test_androidworld_sample_maps_every_action_kind():
    results = convert_text("androidworld", read("androidworld.jsonl"), screen=SCREEN, element_boxes=BOXES)
    assert results == ANDROIDWORLD_EXPECTED


def test_scroll_is_the_inverse_of_swipe():
    aw = get_converter("androidworld", screen=SCREEN)
    for scroll, swipe in [("up", "down"), ("down", "up"), ("left", "right"), ("right", "left")]:
        assert aw.to_unified({"action_type": "scroll", "direction": scroll}) == \
            aw.to_unified({"action_type": "swipe", "direction": swipe})


@pytest.mark.parametrize(("item", "fragment", "options"), [
    ({"action_type": "click", "index": 3}, "click by element index 3 has no box", {}),
    ({"action_type": "click", "index": 9}, "boxes are known for [3, 7]", {"element_boxes": BOXES}),
    ({"action_type": "scroll", "direction": "down"}, "--screen 1080x2400", {}),
    ({"action_type": "scroll", "direction": "sideways"}, "direction must be one of", {"screen": SCREEN}),
    ({"action_type": "click", "index": 3, "x": 1, "y": 2}, "both an element index and x, y", {"element_boxes": BOXES}),
    ({"action_type": "click", "x": 10}, "needs both x and y", {}),
    ({"action_type": "click"}, "needs x, y or an element index", {}),
    ({"action_type": "click", "x": -4, "y": 2}, "point.x must be >= 0", {}),
    ({"action_type": "click", "x": "ten", "y": 2}, "x must be a finite number", {}),
    ({"action_type": "teleport"}, "unknown action_type 'teleport'", {}),
    ({"action_type": "unknown"}, "unknown action_type", {}),
    ({"action_type": "click", "x": 1, "y": 2, "colour": "red"}, "unknown field(s) ['colour']", {}),
    ({"action_type": "status", "goal_status": "maybe"}, "'complete' or 'infeasible'", {}),
    ({"action_type": "input_text", "text": ""}, "empty text", {}),
    ({"action_type": "open_app"}, "needs 'app_name'", {}),
    ("click at the button", "not a JSON action object", {}),
    ([1, 2], "JSON object with an action_type", {}),
])
def test_androidworld_refusals_say_why(item, fragment, options):
    message = expect_error("androidworld", item, fragment, **options)
    assert message.startswith("AndroidWorld ")


# --- UI-TARS ----------------------------------------------------------------------------------------

UITARS_EXPECTED = [
    (Click((200, 300)),),
    (DoubleClick((512, 384)),),
    (RightClick((640, 400)),),
    (Drag(start=(100, 200), end=(400, 200)),),
    (Hotkey(("ctrl", "c")),),
    (Type("Quarterly report\n"),),
    (Scroll("down", point=(960, 540)),),
    (Wait(seconds=5),),
    (Finished("The file has been saved."),),
    (Click((200, 300)),),                     # v1: start_box='(200,300)'
    (Click((200, 300)),),                     # v1: <|box_start|>(200,300)<|box_end|>
    (Click((200, 300)),),                     # box [100, 200, 300, 400] -> its centre
    (LongPress((300, 1200)),),
    (LaunchApp("Settings"),),
    (PressHome(),),
    (PressBack(),),
    (CallUser("UI-TARS asked the user for help"),),
    (Click((10, 20)), Type("hi")),            # two calls in one Action section
    (Type("It's 5 o'clock"),),                # unescaped quotes, as UI-TARS writes them
    (Scroll("up"),),                          # Reflection / Action_Summary sections are skipped
]


def test_uitars_sample_maps_every_action_kind():
    assert convert_text("uitars", read("uitars.jsonl")) == UITARS_EXPECTED


def test_uitars_keeps_the_model_frame_and_accepts_other_point_spellings():
    uitars = get_converter("uitars")
    assert uitars.to_unified("click(point='<point>1850 999</point>')") == (Click((1850, 999)),)
    assert uitars.to_unified("click(start_box='<bbox>10 20 30 41</bbox>')") == (Click((20, 30.5)),)
    assert uitars.to_unified("hotkey(key='ctrl+shift+t')") == (Hotkey(("ctrl", "shift", "t")),)
    assert uitars.to_unified("Action: finished()") == (Finished(),)
    assert uitars.to_unified("Action: type(content='It's')\n\nclick(point='<point>1 2</point>')") == \
        (Type("It's"), Click((1, 2)))


@pytest.mark.parametrize(("item", "fragment"), [
    ("Thought: I am not sure what to do.", "no 'Action:' line"),
    ("Action: teleport(point='<point>1 2</point>')", "unknown UI-TARS action 'teleport'"),
    ("Action: click(point='<point>abc</point>')", "is not a point like"),
    ("Action: click(point='<point>1 2 3</point>')", "is not a point like"),
    ("Action: click()", "missing point or start_box"),
    ("Action: click(point='<point>1 2</point>', button='left')", "unexpected ['button']"),
    ("Action: type(content='')", "content must not be empty"),
    ("Action: click('<point>1 2</point>')", "keyword arguments only"),
    ("Action: click(**args)", "** arguments"),
    ("Action: click(point=__import__('os').getcwd())", "not a literal value"),
    ("Action: x = click(point='<point>1 2</point>')", "is not an action call"),
    ("Action: click(point='<point>-5 2</point>')", "must be >= 0"),
    ("Action: scroll(direction='diagonal')", "direction must be one of"),
    ("Action: hotkey(key='ctrl banana')", "unknown key 'banana'"),
    ("Action: click(point='<point>1 2", "not a call like"),
    (42, "is response text"),
])
def test_uitars_refusals_say_why(item, fragment):
    assert expect_error("uitars", item, fragment).startswith("UI-TARS ")


# --- GUI-Owl ----------------------------------------------------------------------------------------

GUIOWL_EXPECTED = [
    (Click((540, 1200)),),
    (LongPress((300, 800), duration=2),),
    (Swipe(start=(540, 1800), end=(540, 600)),),
    (Type("coffee shops near me"),),
    (PressBack(),),
    (PressHome(),),
    (PressRecent(),),                         # Menu = the app background (recent apps) screen
    (PressEnter(),),
    (LaunchApp("Chrome"),),
    (Wait(seconds=2),),
    (PressRecent(),),                         # key KEYCODE_APP_SWITCH
    (Answer("The cheapest flight costs $129."),),
    (Finished(),),
    (CallUser("GUI-Owl gave up on the task (terminate status 'failure')"),),
    (Hover((100, 200)),),
    (Click((640, 360)),),
    (DoubleClick((320, 240)),),
    (TripleClick((400, 300)),),
    (RightClick((50, 60)),),
    (MiddleClick((70, 80)),),
    (Drag(start=(10, 20), end=(300, 400)),),
    (Scroll("down", point=(960, 540), amount=3),),   # pixels -3: three notches down
    (Scroll("up", amount=5),),
    (Hotkey(("ctrl", "s")),),
    (Hotkey(("ctrl", "a")), Type("hello\n")),        # clear=1, enter=1
    (Click((640, 100)), Type("report.pdf")),         # two tool calls in one response
]


def test_guiowl_sample_maps_every_action_kind():
    assert convert_text("guiowl", read("guiowl.txt")) == GUIOWL_EXPECTED


def test_guiowl_accepts_a_bare_tool_call_and_string_arguments():
    guiowl = get_converter("guiowl")
    call = {"name": "computer_use", "arguments": json.dumps({"action": "scroll", "pixels": 2.6})}
    assert guiowl.to_unified(call) == (Scroll("up", amount=3),)
    assert guiowl.to_unified(json.dumps(call)) == (Scroll("up", amount=3),)


def _tool(name: str, **arguments) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


@pytest.mark.parametrize(("item", "fragment"), [
    (_tool("mobile_use", action="key", text="volume_up"), "'volume_up' has no unified action"),
    (_tool("mobile_use", action="system_button", button="Power"), "'Power' has no unified action"),
    (_tool("browser_use", action="click", coordinate=[1, 2]), "unknown tool 'browser_use'"),
    (_tool("mobile_use", action="fly"), "mobile_use has no action 'fly'"),
    (_tool("mobile_use", action="click"), "click needs coordinate"),
    (_tool("mobile_use", action="click", coordinate=[1]), "must be a pair"),
    (_tool("computer_use", action="scroll", pixels=0), "scrolls nowhere"),
    (_tool("computer_use", action="key", keys="ctrl+c"), "unknown key 'ctrl+c'"),
    (_tool("mobile_use", action="terminate", status="maybe"), "'success' or 'failure'"),
    (_tool("mobile_use", action="type", text=""), "content must not be empty"),
    ("<tool_call>{not json}</tool_call>", "not valid JSON"),
    ("I will click the button.", "no <tool_call>"),
    ("<tool_call>[1, 2]</tool_call>", "must be a JSON object"),
])
def test_guiowl_refusals_say_why(item, fragment):
    assert expect_error("guiowl", item, fragment).startswith("GUI-Owl ")


# --- OpenCUA ----------------------------------------------------------------------------------------

OPENCUA_EXPECTED = [
    (Click((1043, 608)),),
    (Click((512, 300)),),
    (DoubleClick((100, 200)),),               # click(clicks=2)
    (RightClick((100, 200)),),                # click(button='right')
    (DoubleClick((300, 310)),),
    (RightClick((640, 400)),),
    (MiddleClick((700, 90)),),
    (Hover((300, 300)),),
    (Drag(start=(100, 500), end=(400, 500)),),  # moveTo + dragTo
    (Drag(end=(700, 500)),),                  # dragTo alone: from the current pointer
    (Scroll("down", point=(960, 540), amount=5),),
    (Scroll("up", amount=3),),
    (Scroll("right", point=(500, 500), amount=4),),
    (Scroll("left", amount=2),),
    (Click((820, 140)), Type("Hello, world!"), Hotkey(("enter",))),
    (Type("abc"),),
    (Hotkey(("tab",)), Hotkey(("tab",)), Hotkey(("enter",))),
    (Hotkey(("down",), repeat=3),),
    (Hotkey(("ctrl", "shift", "t")),),
    (TripleClick((450, 233)),),
    (Wait(),),
    (Finished(),),
    (CallUser("OpenCUA gave up on the task (terminate status 'failure')"),),
]


def test_opencua_sample_maps_every_action_kind():
    assert convert_text("opencua", read("opencua.json")) == OPENCUA_EXPECTED


@pytest.mark.parametrize(("item", "fragment"), [
    ("import os", "statement 'import os' is not a call"),
    ("os.system('ls')", "calls os.system, which is not a known action"),
    ("pyautogui.screenshot()", "calls pyautogui.screenshot"),
    ("click(1, 2)", "is not a call of a known function"),
    ("pyautogui.click(x=foo, y=2)", "arguments must be literal values"),
    ("pyautogui.click()", "acts wherever the pointer is"),
    ("pyautogui.click(x=5)", "needs both x and y"),
    ("pyautogui.click(1, 2, bogus=3)", "has no argument 'bogus'"),
    ("pyautogui.click(1, 2, x=3)", "given twice"),
    ("pyautogui.click(1, 2, 1, 0.0, 'left', 0, None, False, True, 9)", "at most 9 positional"),
    ("pyautogui.click(x=1, y=2, clicks=2, button='right')", "has no unified action"),
    ("pyautogui.dragTo(5, 5, button='right')", "only the left button"),
    ("pyautogui.scroll(0)", "scrolls nowhere"),
    ("pyautogui.press('enter', presses=1000)", "presses must be a whole number in 1..128"),
    ("pyautogui.press([])", "non-empty list of key names"),
    ("pyautogui.write(message='')", "content must not be empty"),
    ("computer.terminate(status='maybe')", "'success' or 'failure'"),
    ("pyautogui.click(x=1, y=2)\nx = 3", "statement 'x = 3'"),
    ("pyautogui.click(x=1, y=", "not Python code"),
    ("# only a comment", "no statements"),
    ({"code": "pyautogui.click(1, 2)"}, "is response text or pyautogui code"),
])
def test_opencua_refusals_name_the_statement(item, fragment):
    assert expect_error("opencua", item, fragment).startswith("OpenCUA ")


@pytest.mark.parametrize("name", ["opencua", "uitars"])
def test_code_in_model_output_is_never_run(tmp_path, name):
    marker = tmp_path / "ran"
    payloads = [
        f"open({str(marker)!r}, 'w').write('x')",
        f"pyautogui.click(x=open({str(marker)!r}, 'w').write('x'), y=1)",
        f"click(point=open({str(marker)!r}, 'w').write('x'))",
        f"pyautogui.click(x=1, y=2)\n__import__('pathlib').Path({str(marker)!r}).touch()",
    ]
    for payload in payloads:
        with pytest.raises(ConvertError):
            get_converter(name).to_unified(payload)
    assert not marker.exists()


# --- fuzzing: only ConvertError may escape ------------------------------------------------------------

def _converts_or_refuses(name: str, item, **options) -> None:
    try:
        actions = get_converter(name, **options).to_unified(item)
    except ConvertError as exc:
        assert str(exc)
        return
    assert isinstance(actions, tuple) and actions


@pytest.mark.parametrize("name", sorted(CONVERTERS))
@FUZZ
@given(text=st.text(max_size=300))
def test_any_text_converts_or_raises_convert_error(name, text):
    _converts_or_refuses(name, text)
    results = convert_text(name, text)
    assert all(isinstance(r, (tuple, ConvertError)) for r in results)


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**12), st.floats(allow_nan=True),
                         st.text(max_size=20))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


@FUZZ
@given(kind=st.sampled_from(["click", "double_tap", "long_press", "scroll", "swipe", "input_text", "open_app",
                             "status", "answer", "wait", "navigate_back", "bogus"]),
       fields=st.dictionaries(st.sampled_from(["index", "x", "y", "text", "direction", "goal_status", "app_name",
                                               "clear_text"]),
                              JSON_VALUES | st.sampled_from([3, 7, "up", "left", "complete", 500]), max_size=4))
def test_androidworld_fuzz_only_convert_error_escapes(kind, fields):
    item = {"action_type": kind, **fields}
    _converts_or_refuses("androidworld", item, screen=SCREEN, element_boxes=BOXES)
    _converts_or_refuses("androidworld", json.dumps(item))


UITARS_NAMES = ["click", "left_double", "right_single", "drag", "hotkey", "type", "scroll", "wait", "finished",
                "long_press", "open_app", "press_home", "press_back", "call_user", "nope"]
UITARS_ARGS = ["point", "start_box", "end_box", "start_point", "end_point", "key", "content", "direction",
               "app_name", "time"]
POINT_TEXTS = st.builds(lambda a, b, wrap: wrap.format(a, b), st.integers(-5, 10**5) | st.floats(-1, 1e6),
                        st.integers(-5, 10**5), st.sampled_from(["<point>{} {}</point>", "({},{})", "[{}, {}]",
                                                                  "<|box_start|>({},{})<|box_end|>", "{} {} x"]))


@FUZZ
@given(name=st.sampled_from(UITARS_NAMES),
       args=st.dictionaries(st.sampled_from(UITARS_ARGS),
                            POINT_TEXTS | JSON_SCALARS | st.lists(st.integers(), max_size=5), max_size=3),
       thought=st.text(max_size=40))
def test_uitars_fuzz_only_convert_error_escapes(name, args, thought):
    call = f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})"
    _converts_or_refuses("uitars", f"Thought: {thought}\nAction: {call}")


@FUZZ
@given(tool=st.sampled_from(["mobile_use", "computer_use", "other"]),
       action=st.sampled_from(["key", "click", "long_press", "swipe", "type", "system_button", "open", "wait",
                               "terminate", "answer", "mouse_move", "drag", "right_click", "middle_click",
                               "double_click", "triple_click", "left_click", "scroll", "left_click_drag", "zap"]),
       args=st.dictionaries(st.sampled_from(["coordinate", "coordinate2", "text", "time", "button", "status",
                                             "pixels", "keys", "clear", "enter"]),
                            JSON_VALUES | st.lists(st.integers(-3, 3000), min_size=2, max_size=2), max_size=4))
def test_guiowl_fuzz_only_convert_error_escapes(tool, action, args):
    _converts_or_refuses("guiowl", _tool(tool, action=action, **args))


OPENCUA_FUNCTIONS = ["pyautogui.click", "pyautogui.doubleClick", "pyautogui.tripleClick", "pyautogui.rightClick",
                     "pyautogui.middleClick", "pyautogui.moveTo", "pyautogui.dragTo", "pyautogui.mouseDown",
                     "pyautogui.mouseUp", "pyautogui.scroll", "pyautogui.hscroll", "pyautogui.write",
                     "pyautogui.press", "pyautogui.hotkey", "pyautogui.keyDown", "pyautogui.sleep",
                     "computer.triple_click", "computer.terminate", "computer.wait", "pyautogui.locate"]
PY_LITERALS = st.one_of(JSON_SCALARS, st.sampled_from(["left", "right", "enter", "ctrl", "success", "failure"]),
                        st.lists(st.sampled_from(["ctrl", "a", "enter", 5]), max_size=3),
                        st.tuples(st.integers(0, 99), st.integers(0, 99)))


@FUZZ
@given(calls=st.lists(st.tuples(st.sampled_from(OPENCUA_FUNCTIONS), st.lists(PY_LITERALS, max_size=3),
                                st.dictionaries(st.sampled_from(["x", "y", "clicks", "button", "presses", "keys",
                                                                 "message", "status", "answer", "seconds",
                                                                 "duration"]), PY_LITERALS, max_size=3)),
                      min_size=1, max_size=3))
def test_opencua_fuzz_only_convert_error_escapes(calls):
    code = "\n".join(f"{fn}({', '.join([*map(repr, args), *(f'{k}={v!r}' for k, v in kwargs.items())])})"
                     for fn, args, kwargs in calls)
    _converts_or_refuses("opencua", code)


# --- unified -> pyautogui -> OpenCUA -> unified ----------------------------------------------------

COORDS = st.integers(0, 4000) | st.floats(0, 4000, allow_nan=False, allow_infinity=False)
POINTS = st.tuples(COORDS, COORDS)
KEYS = st.sampled_from(["ctrl", "shift", "alt", "cmd", "enter", "tab", "esc", "pagedown", "f5", "a", "Z", "7", "/",
                        "'", '"', "\\"])
ROUND_TRIP_ACTIONS = st.one_of(
    *(st.builds(cls, POINTS) for cls in (Click, DoubleClick, TripleClick, RightClick, MiddleClick, Hover)),
    st.builds(Drag, end=POINTS, start=st.none() | POINTS),
    st.builds(MouseDown, point=st.none() | POINTS),
    st.builds(MouseUp, point=st.none() | POINTS),
    st.builds(Scroll, direction=st.sampled_from(list(Direction)), point=st.none() | POINTS,
              amount=st.integers(1, 100)),
    st.builds(Type, st.text(min_size=1).filter(str.strip)),
    st.builds(Hotkey, keys=st.tuples(KEYS), repeat=st.integers(1, 128)),
    st.builds(Hotkey, keys=st.lists(KEYS, min_size=2, max_size=4).map(tuple)),
    st.builds(KeyDown, keys=st.tuples(KEYS)),
    st.builds(KeyUp, keys=st.tuples(KEYS)),
    st.builds(Wait, seconds=st.integers(0, 600) | st.floats(0, 600)),
)


@settings(max_examples=300, deadline=None)
@given(action=ROUND_TRIP_ACTIONS)
def test_pyautogui_code_round_trips_through_opencua(action):
    code = pyautogui_code(action)
    assert get_converter("opencua").to_unified(code) == (action,)


def test_a_script_of_several_actions_round_trips():
    actions = (Click((10, 20)), Type("say \"hi\"\n"), Hotkey(("ctrl", "s")), Scroll("left", amount=2),
               Drag(start=(1, 2), end=(30, 40)), Hover((5.5, 6.25)), MouseDown(), MouseUp((7, 8)), Wait(seconds=0.5))
    code = pyautogui_code(*actions)
    assert code.splitlines()[:3] == ["pyautogui.click(x=10, y=20)", "pyautogui.write(message='say \"hi\"\\n')",
                                     "pyautogui.hotkey('ctrl', 's')"]
    assert get_converter("opencua").to_unified(code) == actions
    sequence = ActionSequence(actions=(Click((1, 1)), Type("x")))
    assert pyautogui_code(sequence) == "pyautogui.click(x=1, y=1)\npyautogui.write(message='x')"


def test_pyautogui_code_fills_defaults_and_refuses_what_pyautogui_cannot_do():
    assert pyautogui_code(Scroll("down"), Wait()) == "pyautogui.scroll(-5)\npyautogui.sleep(1)"
    assert pyautogui_code(Hotkey(("ctrl", "z"), repeat=2)) == \
        "pyautogui.hotkey('ctrl', 'z')\npyautogui.hotkey('ctrl', 'z')"
    assert pyautogui_code(PressEnter()) == "pyautogui.press('enter')"
    for action in (PressBack(), PressHome(), LaunchApp("Files"), Swipe((1, 2), (3, 4)), LongPress((1, 1)),
                   Answer("42"), Finished(), Launch("https://example.org")):
        with pytest.raises(ConvertError, match=f"{action.type} has no pyautogui code"):
            pyautogui_code(action)


# --- unified -> adb ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("action", "commands"), [
    (Click((100, 200)), [["input", "tap", "100", "200"]]),
    (Click((12.5, 7.49)), [["input", "tap", "13", "7"]]),
    (DoubleClick((5, 6)), [["input", "tap", "5", "6"], ["input", "tap", "5", "6"]]),
    (LongPress((300, 800)), [["input", "swipe", "300", "800", "300", "800", "1000"]]),
    (LongPress((300, 800), duration=2.5), [["input", "swipe", "300", "800", "300", "800", "2500"]]),
    (Swipe((540, 1800), (540, 600)), [["input", "swipe", "540", "1800", "540", "600", "300"]]),
    (Drag(start=(10, 20), end=(30, 40)), [["input", "swipe", "10", "20", "30", "40", "1000"]]),
    (Type("hello"), [["input", "text", "hello"]]),
    (Type("a b;c'd"), [["input", "text", "a%sb;c'd"]]),
    (Type("50%sure"), [["input", "text", "50%"], ["input", "text", "sure"]]),
    (Type("line one\nline two"), [["input", "text", "line%sone"], ["input", "keyevent", "KEYCODE_ENTER"],
                                  ["input", "text", "line%stwo"]]),
    (PressBack(), [["input", "keyevent", "KEYCODE_BACK"]]),
    (PressHome(), [["input", "keyevent", "KEYCODE_HOME"]]),
    (PressEnter(), [["input", "keyevent", "KEYCODE_ENTER"]]),
    (PressRecent(), [["input", "keyevent", "KEYCODE_APP_SWITCH"]]),
    (LaunchApp("com.android.settings"),
     [["monkey", "-p", "com.android.settings", "-c", "android.intent.category.LAUNCHER", "1"]]),
    (Wait(seconds=2), []),
])
def test_adb_commands_for_each_phone_action(action, commands):
    assert adb_commands(action) == commands


@pytest.mark.parametrize(("action", "fragment"), [
    (Type("café"), "cannot type 'é'"),
    (Type("tab\there"), "through an IME"),
    (LaunchApp("Settings"), "is an app name, not a package"),
    (Drag(end=(3, 4)), "give start"),
    (Scroll("down"), "Scroll is not a phone action"),
    (Hotkey(("ctrl", "c")), "Hotkey is not a phone action"),
    (Finished(), "not sent to the device"),
    (GetScreenshot(), "not sent to the device"),
    (TakeNote("remember"), "not sent to the device"),
])
def test_adb_refuses_what_input_cannot_do(action, fragment):
    with pytest.raises(ConvertError) as info:
        adb_commands(action)
    assert fragment in str(info.value)


def _typed_by_input(commands: list[list[str]]) -> str:
    """What Android's `input` would type: %s decodes to a space, KEYCODE_ENTER is a newline."""
    out = []
    for command in commands:
        if command[:2] == ["input", "text"]:
            out.append(command[2].replace("%s", " "))
        else:
            assert command == ["input", "keyevent", "KEYCODE_ENTER"]
            out.append("\n")
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(content=st.text(alphabet=st.characters(min_codepoint=10, max_codepoint=126), min_size=1).filter(str.strip))
def test_adb_text_commands_type_exactly_the_content(content):
    try:
        commands = adb_commands(Type(content))
    except ConvertError as exc:
        assert any(not (ch == "\n" or " " <= ch <= "~") for ch in content) and "IME" in str(exc)
        return
    assert all(isinstance(arg, str) and " " not in arg for command in commands for arg in command)
    assert _typed_by_input(commands) == content


# --- the package's demo samples ---------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(CONVERTERS))
def test_demo_samples_convert_cleanly(name):
    path = sample_path(name)
    assert path.parent == SAMPLES_DIR
    results = convert_text(name, path.read_text(encoding="utf-8"))
    assert len(results) >= 5
    assert all(isinstance(result, tuple) for result in results), results
    with pytest.raises(ConvertError, match="no sample for format 'seeact'"):
        sample_path("seeact")
