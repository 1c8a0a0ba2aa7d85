"""The action grammar: what released models write parses into records, records write back the same text, and
no input — however broken — raises anything but ParseError."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uivenus.actions.calls import format_action, parse_action, parse_actions
from uivenus.actions.grammar import (
    FormatError,
    Response,
    format_response,
    parse_response,
)
from uivenus.actions.grounding import GroundingAnswer, format_grounding, parse_grounding
from uivenus.actions.space import (
    TERMINAL_TYPES,
    ActionSequence,
    ActionType,
    Answer,
    CallUser,
    Click,
    Direction,
    DoubleClick,
    Drag,
    Finished,
    GetScreenshot,
    GetUrl,
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
    SelectOption,
    Swipe,
    TakeNote,
    TripleClick,
    Type,
    Wait,
    action_from_dict,
)
from uivenus.actions.syntax import MAX_CALL_CHARS, MAX_NESTING, MAX_RESPONSE_CHARS, ParseError
from uivenus.actions.values import KEY_NAMES, ActionError, is_key_name

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- strategies: a random valid record of every action type --------------------------------------

coordinate = st.integers(0, 4000) | st.floats(0, 4000, allow_nan=False, allow_infinity=False)
point = st.tuples(coordinate, coordinate)
maybe_point = st.none() | point
text = st.text(min_size=1, max_size=30).filter(str.strip)
key = st.sampled_from(sorted(KEY_NAMES)) | st.characters(exclude_categories=("Cs",)).filter(is_key_name)
keys = st.lists(key, min_size=1, max_size=4).map(tuple)
seconds = st.none() | st.integers(0, 60) | st.floats(0, 60, allow_nan=False)

#: One strategy per action type except Sequence (built from these below).
SINGLE: dict[ActionType, st.SearchStrategy] = {
    ActionType.CLICK: st.builds(Click, point=point),
    ActionType.DOUBLE_CLICK: st.builds(DoubleClick, point=point),
    ActionType.TRIPLE_CLICK: st.builds(TripleClick, point=point),
    ActionType.RIGHT_CLICK: st.builds(RightClick, point=point),
    ActionType.MIDDLE_CLICK: st.builds(MiddleClick, point=point),
    ActionType.HOVER: st.builds(Hover, point=point),
    ActionType.LONG_PRESS: st.builds(LongPress, point=point, duration=seconds),
    ActionType.DRAG: st.builds(Drag, end=point, start=maybe_point),
    ActionType.MOUSE_DOWN: st.builds(MouseDown, point=maybe_point),
    ActionType.MOUSE_UP: st.builds(MouseUp, point=maybe_point),
    ActionType.SWIPE: st.builds(Swipe, start=point, end=point),
    ActionType.SCROLL: st.builds(Scroll, direction=st.sampled_from(Direction), point=maybe_point,
                                 amount=st.none() | st.integers(1, 50)),
    ActionType.TYPE: st.builds(Type, content=text),
    ActionType.HOTKEY: st.builds(Hotkey, keys=keys, repeat=st.integers(1, 128)),
    ActionType.KEY_DOWN: st.builds(KeyDown, keys=keys),
    ActionType.KEY_UP: st.builds(KeyUp, keys=keys),
    ActionType.PRESS_BACK: st.just(PressBack()),
    ActionType.PRESS_HOME: st.just(PressHome()),
    ActionType.PRESS_ENTER: st.just(PressEnter()),
    ActionType.PRESS_RECENT: st.just(PressRecent()),
    ActionType.LAUNCH_APP: st.builds(LaunchApp, app=text),
    ActionType.LAUNCH: st.builds(Launch, url=text),
    ActionType.SELECT_OPTION: st.builds(SelectOption, index=st.integers(0, 99), point=maybe_point),
    ActionType.GET_URL: st.just(GetUrl()),
    ActionType.GET_SCREENSHOT: st.just(GetScreenshot()),
    ActionType.TAKE_NOTE: st.builds(TakeNote, content=text),
    ActionType.WAIT: st.builds(Wait, seconds=seconds),
    ActionType.ANSWER: st.builds(Answer, content=text),
    ActionType.CALL_USER: st.builds(CallUser, content=text),
    ActionType.FINISHED: st.builds(Finished, content=st.none() | text),
}
single_action = st.one_of(*SINGLE.values())
steps = st.one_of(*(s for t, s in SINGLE.items() if t not in TERMINAL_TYPES))
terminal = st.one_of(*(SINGLE[t] for t in TERMINAL_TYPES))


@st.composite
def sequences(draw) -> ActionSequence:
    body = draw(st.lists(steps, min_size=1, max_size=5))
    end = draw(st.one_of(steps, terminal))
    return ActionSequence(actions=(*body, end))


any_action = st.one_of(single_action, sequences())
think_text = st.text(max_size=60).map(str.strip).filter(lambda s: "</think>" not in s)


def test_strategies_cover_every_action_type():
    assert set(SINGLE) | {ActionType.SEQUENCE} == set(ActionType)


# --- round trips -----------------------------------------------------------------------------------

@FAST
@given(any_action)
def test_record_text_record_is_identity(action):
    text = parse_action(format_action(action))
    assert text == action
    assert type(text) is type(action)


@FAST
@given(any_action)
def test_text_record_text_is_identity(action):
    text = format_action(action)
    assert format_action(parse_action(text)) == text


@FAST
@given(any_action)
def test_record_json_record_is_identity(action):
    assert action_from_dict(json.loads(json.dumps(action.to_dict()))) == action


@FAST
@given(st.lists(single_action, min_size=1, max_size=3), st.none() | think_text, st.none() | think_text)
def test_response_round_trips(actions, think, conclusion):
    conclusion = None if conclusion is None else conclusion.replace("</conclusion>", "")
    response = parse_response(format_response(actions, think=think, conclusion=conclusion))
    assert response.actions == tuple(actions)
    assert (response.think, response.conclusion) == (think, conclusion)
    assert not response.recovered and response.notes == ()
    assert response.format() == response.raw


CANONICAL = [
    ("Click(point=(897, 937))", Click(point=(897, 937))),
    ("Type(content='hello')", Type(content="hello")),
    ("Hotkey(keys=['ctrl', 'c'])", Hotkey(keys=("ctrl", "c"))),
    ("Hotkey(keys=['ctrl', 'shift', 't'], repeat=3)", Hotkey(keys=("ctrl", "shift", "t"), repeat=3)),
    ("Swipe(start=(500, 800), end=(500, 200))", Swipe(start=(500, 800), end=(500, 200))),
    ("Scroll(point=(10, 20), direction='down', amount=3)", Scroll(direction="down", point=(10, 20), amount=3)),
    ("Scroll(direction='left')", Scroll(direction="left")),
    ("Drag(start=(1, 2), end=(3, 4))", Drag(start=(1, 2), end=(3, 4))),
    ("Drag(end=(3, 4))", Drag(end=(3, 4))),
    ("Sequence(actions=[Click(point=(1, 2)), Type(content='a')])",
     ActionSequence(actions=(Click(point=(1, 2)), Type(content="a")))),
    ("PressBack()", PressBack()),
    ("Finished()", Finished()),
    ("Finished(content='done')", Finished(content="done")),
    ("LongPress(point=(5, 6), duration=1.5)", LongPress(point=(5, 6), duration=1.5)),
    ("SelectOption(point=(7, 8), index=2)", SelectOption(index=2, point=(7, 8))),
    ("Click(point=(0.25, 0.5))", Click(point=(0.25, 0.5))),
    ("Type(content=\"it's\")", Type(content="it's")),
    ("Type(content='line1\\nline2\\t\\\\')", Type(content="line1\nline2\t\\")),
]


@pytest.mark.parametrize(("text", "record"), CANONICAL, ids=[t for t, _ in CANONICAL])
def test_canonical_text_is_what_format_writes(text, record):
    assert parse_action(text) == record
    assert format_action(record) == text


VARIANTS = [
    ("Click(box=(1, 2))", Click(point=(1, 2))),
    ("Click(point=[1, 2])", Click(point=(1, 2))),
    ('Type(content="double")', Type(content="double")),
    ("Type(content='it\\'s \"quoted\"')", Type(content="it's \"quoted\"")),
    ("Type(content='\\u00e9\\x41')", Type(content="éA")),
    ("Type(content='你好, мир ✓')", Type(content="你好, мир ✓")),
    ("Type(content='a)b]c')", Type(content="a)b]c")),
    ("Type(content='((( [[ {{ <action> </action>')", Type(content="((( [[ {{ <action> </action>")),
    ("Type(content='''tri'ple''')", Type(content="tri'ple")),
    ("Type('hi')", Type(content="hi")),
    ("Finished('done')", Finished(content="done")),
    ("Hotkey('ctrl+c', repeat=2)", Hotkey(keys=("ctrl", "c"), repeat=2)),
    ("Hotkey(keys=('ctrl', 'c'))", Hotkey(keys=("ctrl", "c"))),
    ("Hotkey(keys='ctrl+c')", Hotkey(keys=("ctrl", "c"))),
    ("Hotkey(keys='ctrl shift t')", Hotkey(keys=("ctrl", "shift", "t"))),
    ("Hotkey(keys='ctrl + shift + t')", Hotkey(keys=("ctrl", "shift", "t"))),
    ("Hotkey(keys='ctrl++')", Hotkey(keys=("ctrl", "+"))),
    ("Hotkey(keys='enter')", Hotkey(keys=("enter",))),
    ("KeyDown(keys='shift')", KeyDown(keys=("shift",))),
    ("Launch(app='Chrome')", LaunchApp(app="Chrome")),
    ("LaunchApp(app='Chrome')", LaunchApp(app="Chrome")),
    ("Launch(url='https://example.com/?q=(1)')", Launch(url="https://example.com/?q=(1)")),
    ("Swipe(amount=3, axis='vertical', point=(5, 6))", Scroll(direction="down", amount=3, point=(5, 6))),
    ("Swipe(amount=-2, axis='vertical')", Scroll(direction="up", amount=2)),
    ("Swipe(amount=4, axis='horizontal')", Scroll(direction="right", amount=4)),
    ("Swipe(point=[1, 2], axis='Horizontal', amount=-1)", Scroll(direction="left", amount=1, point=(1, 2))),
    ("  Click(\n    point=(1,\n 2),\n)  ", Click(point=(1, 2))),
    ("(Click(point=(1, 2)))", Click(point=(1, 2))),
    ("Sequence(actions=(Click(box=[1, 2]), Hotkey(keys='ctrl+v')))",
     ActionSequence(actions=(Click(point=(1, 2)), Hotkey(keys=("ctrl", "v"))))),
    ("Finished(content=None)", Finished()),
    ("Wait()", Wait()),
    ("Wait(seconds=2)", Wait(seconds=2)),
]


@pytest.mark.parametrize(("text", "record"), VARIANTS, ids=[t for t, _ in VARIANTS])
def test_accepted_spellings(text, record):
    assert parse_action(text) == record


def test_numbers_keep_their_type():
    click = parse_action("Click(point=(12, 3.5))")
    assert type(click.point[0]) is int and type(click.point[1]) is float
    assert type(parse_action("Wait(seconds=2)").seconds) is int


def test_comma_separated_calls_are_several_actions():
    text = "Click(point=(1,2)), Click(point=(3, 4)),\n Type(content='x')"
    assert parse_actions(f"({text})") == parse_actions(text.replace("\n", ""))
    assert parse_actions(text) == (Click(point=(1, 2)), Click(point=(3, 4)), Type(content="x"))
    assert parse_actions("Click(point=(1,2))") == (Click(point=(1, 2)),)
    response = parse_response(f"<action>{text}</action>")
    assert response.action == ActionSequence(actions=response.actions)
    with pytest.raises(ParseError, match="one action call"):
        parse_action(text)


def test_a_list_that_is_no_legal_sequence_has_no_single_action():
    response = parse_response("<action>Finished(), Click(point=(1, 2))</action>")
    assert len(response.actions) == 2
    with pytest.raises(ParseError, match="only come last"):
        _ = response.action


# --- responses ---------------------------------------------------------------------------------

def test_full_response_with_whitespace_everywhere():
    raw = "\n <think>\n  The button is at the bottom.\n</think>\n\n<action>\n Click(point=(897, 937))\n</action>\n" \
          "<conclusion> Clicked submit. </conclusion>\n"
    response = parse_response(raw)
    assert response == Response(raw=raw, actions=(Click(point=(897, 937)),), think="The button is at the bottom.",
                                conclusion="Clicked submit.")
    assert response.action == Click(point=(897, 937))


def test_format_response_exact_text():
    assert format_response(Click(point=(1, 2))) == "<action>Click(point=(1, 2))</action>"
    assert format_response([Type(content="a")], think="t", conclusion="c") == \
        "<think>t</think>\n<action>Type(content='a')</action>\n<conclusion>c</conclusion>"
    assert format_response((Click(point=(1, 2)), Click(point=(3, 4)))) == \
        "<action>Click(point=(1, 2)), Click(point=(3, 4))</action>"


def test_action_text_may_contain_closing_tag():
    raw = format_response(Type(content="</action> and <think>"), think="typing tags")
    assert parse_response(raw).action == Type(content="</action> and <think>")


def test_format_refuses_text_that_cannot_parse_back():
    with pytest.raises(FormatError, match="</think>"):
        format_response(PressBack(), think="a </think> b")
    with pytest.raises(FormatError, match="at least one action"):
        format_response([])


def test_response_record_rejects_no_actions():
    with pytest.raises(ActionError):
        Response(raw="", actions=())


MALFORMED = [
    ("", ["expected <action>...</action>", "no <action> here"]),
    ("   \n ", ["expected <action>...</action>"]),
    ("Click(point=(1,2))", ["expected <action>...</action>"]),
    ("<ACTION>Click(point=(1,2))</ACTION>", ["expected <action>...</action>"]),
    ("Sure! <action>Click(point=(1,2))</action>", ["expected <action>...</action>", "at char 0"]),
    ("<think>a</think> ok <action>Click(point=(1,2))</action>", ["after </think>", "at char 17"]),
    ("<think>never closed <action>Click(point=(1,2))</action>", ["expected </think>"]),
    ("<action>Click(point=(1,2))", ["expected </action>"]),
    ("<action></action>", ["the action is empty", "expected an action call"]),
    ("<action>Click(point=(1,2))</action><action>Type(content='a')</action>", ["a second <action> block"]),
    ("<action>Click(point=(1,2))</action> trailing words", ["unexpected text", "trailing words"]),
    ("<action>Click(point=(1,2))</action><conclusion>never closed", ["expected </conclusion>"]),
    ("<conclusion>c</conclusion><action>Click(point=(1,2))</action>", ["expected <action>...</action>"]),
    ("<action>Click(point=(1,2)) done</action>", ["invalid syntax"]),
    ("<action>Click(point=(1,2)</action>", ["invalid syntax", "never closed"]),
    ("<action>Type(content='abc)</action>", ["invalid syntax", "unterminated string"]),
    ("<action>Tap(point=(1,2))</action>", ["unknown action 'Tap'", "Click, DoubleClick"]),
    ("<action>click(point=(1,2))</action>", ["unknown action 'click'"]),
    ("<action>os.system('ls')</action>", ["expected an action call"]),
    ("<action>Click(point=(1,2))[0]</action>", ["expected an action call"]),
    ("<action>lambda: Click(point=(1,2))</action>", ["expected an action call"]),
    ("<action>Click(pt=(1,2))</action>", ["Click has no argument 'pt'", "(point)"]),
    ("<action>PressBack(now=True)</action>", ["PressBack has no argument 'now'", "(none)"]),
    ("<action>Click()</action>", ["Click is missing point", "Click(point=...)"]),
    ("<action>Swipe(start=(1,2))</action>", ["Swipe is missing end"]),
    ("<action>Launch()</action>", ["Launch is missing url"]),
    ("<action>Launch(app='x', url='y')</action>", ["LaunchApp has no argument 'url'"]),
    ("<action>Click(point=(1,2), point=(3,4))</action>", ["'point' repeats 'point'"]),
    ("<action>Click(box=(1,2), point=(3,4))</action>", ["'point' repeats 'box'"]),
    ("<action>Click(*pts)</action>", ["Click takes at most one positional argument"]),
    ("<action>Click(**kw)</action>", ["'**' is not allowed"]),
    ("<action>Type('a', 'b')</action>", ["at most one positional argument"]),
    ("<action>Swipe((1,2))</action>", ["Swipe takes keywords only"]),
    ("<action>Click(point=(1,))</action>", ["point must be an (x, y) pair"]),
    ("<action>Click(point=('a', 'b'))</action>", ["point.x must be a number"]),
    ("<action>Click(point=(-1, 2))</action>", ["point.x must be >= 0"]),
    ("<action>Click(point=(1" + "0" * 400 + ", 2))</action>", ["must be finite"]),
    ("<action>Wait(seconds=1e999)</action>", ["seconds must be finite"]),
    ("<action>Type(content='')</action>", ["content must not be empty"]),
    ("<action>Type(content=open('x'))</action>", ["a literal value", "for content"]),
    ("<action>Type(content='a' + 'b')</action>", ["a literal value"]),
    ("<action>Type(content=f'{x}')</action>", ["a literal value"]),
    ("<action>Type(content=b'bytes')</action>", ["content must be a string"]),
    ("<action>Hotkey(keys=['ctrl', 'nokey'])</action>", ["unknown key 'nokey'"]),
    ("<action>Hotkey(keys=[])</action>", ["keys must be a non-empty list"]),
    ("<action>Hotkey(keys=['ctrl'], repeat=0)</action>", ["repeat must be an integer in 1..128"]),
    ("<action>Scroll(direction='sideways')</action>", ["direction must be one of up/down/left/right"]),
    ("<action>Scroll(direction='down', amount=-2)</action>", ["amount must be a positive integer"]),
    ("<action>Swipe(amount=0, axis='vertical')</action>", ["Swipe amount is 0", "non-zero integer"]),
    ("<action>Swipe(amount=1.5, axis='vertical')</action>", ["Swipe amount is 1.5"]),
    ("<action>Swipe(amount=3, axis='diagonal')</action>", ["Swipe axis is 'diagonal'"]),
    ("<action>Swipe(amount=3)</action>", ["Swipe is missing axis"]),
    ("<action>Swipe(amount=3, axis='vertical', start=(1,2))</action>", ["Swipe has no argument 'start'"]),
    ("<action>Sequence(actions=[Click(point=(1,2))])</action>", ["needs 2..32 actions, got 1"]),
    ("<action>Sequence(actions=[Finished(), Click(point=(1,2))])</action>", ["may only come last"]),
    ("<action>Sequence(actions=[Sequence(actions=[PressBack(), PressBack()]), PressBack()])</action>",
     ["sequences cannot be nested"]),
    ("<action>Sequence(actions='Click')</action>", ["a list of action calls for actions"]),
    ("<action>Sequence(actions=[Click(point=(1,2)), 'x'])</action>", ["expected an action call"]),
    ("<action>()</action>", ["expected an action call"]),
    ("<action>Click(point=" + "(" * 40 + "1" + ")" * 40 + ")</action>", [f"at most {MAX_NESTING} nested brackets"]),
    ("<action>Wait(seconds=" + "-" * 9000 + "1)</action>", ["too complex"]),
    ("<action>Wait(seconds=" + "not " * 3000 + "1)</action>", ["too complex"]),
    ("<action>Type(content='" + "a" * MAX_CALL_CHARS + "')</action>", [f"at most {MAX_CALL_CHARS} characters"]),
    ("<action>PressBack()</action>" + " " * MAX_RESPONSE_CHARS, [f"at most {MAX_RESPONSE_CHARS} characters"]),
    ("<action>Type(content='\x00')</action>", ["invalid syntax"]),
]


@pytest.mark.parametrize(("raw", "phrases"), MALFORMED, ids=[f"{i}:{r[:40]}" for i, (r, _) in enumerate(MALFORMED)])
def test_malformed_responses_say_what_was_expected(raw, phrases):
    with pytest.raises(ParseError) as caught:
        parse_response(raw)
    message = str(caught.value)
    assert "expected" in message
    for phrase in phrases:
        assert phrase in message
    assert caught.value.expected in message


def test_error_positions_are_character_offsets_in_the_response():
    raw = "<think>héllo 你好 ✓</think>\n<action>Click(\n  pt=(1, 2))</action>"
    with pytest.raises(ParseError) as caught:
        parse_response(raw)
    assert caught.value.position == raw.index("pt=")
    assert caught.value.fragment.startswith("pt=(1, 2)")

    raw = "<action>  Type(content='é', x=1)</action>"
    with pytest.raises(ParseError) as caught:
        parse_response(raw)
    assert caught.value.position == raw.index("x=1")

    with pytest.raises(ParseError) as caught:
        parse_action("Click(point=(1, 2)")
    assert caught.value.position == len("Click")


def test_a_multi_line_list_reports_positions_on_its_own_lines():
    text = "Click(point=(1, 2)),\n  Click(pt=(3, 4))"
    with pytest.raises(ParseError) as caught:
        parse_actions(text)
    assert caught.value.position == text.index("pt=")


@pytest.mark.parametrize("text", [
    "Click(point=(1,2))], [Click(point=(3,4))",
    "Click(point=(1,2))), (Click(point=(3,4))",
    "Click(point=(1,2))\n]\n[Click(point=(3,4))",
])
def test_text_cannot_escape_the_line_break_fallback(text):
    with pytest.raises(ParseError):
        parse_actions(text)


def test_invalid_escapes_are_kept_without_warnings(recwarn):
    assert parse_action(r"Type(content='C:\eek\dir')") == Type(content="C:\\eek\\dir")
    assert parse_action(r"Type(content='C:\\Users')") == Type(content="C:\\Users")
    assert not recwarn.list
    with pytest.raises(ParseError, match="invalid syntax"):  # '\U' starts a unicode escape, as in Python
        parse_action(r"Type(content='C:\Users')")


def test_a_record_error_is_wrapped_with_its_message_and_position():
    raw = "<action>Hotkey(keys=['ctrl', 'zz'])</action>"
    with pytest.raises(ParseError) as caught:
        parse_response(raw)
    with pytest.raises(ActionError) as direct:
        Hotkey(keys=("ctrl", "zz"))
    assert str(direct.value) in str(caught.value)
    assert caught.value.position == raw.index("Hotkey")


# --- lenient recovery ----------------------------------------------------------------------------------

LENIENT = [
    ("<action>Click(point=(1,2))</action><action>Type(content='a')</action>",
     (Type(content="a"),), ["a second <action> block", "took the last of 2 <action> blocks"]),
    ("<action>Type(content='a')</action>\n<action>Click(point=(1,2)</action>",
     (Type(content="a"),), ["took the last well-formed (number 1) of 2 <action> blocks"]),
    ("<think>t</think><action>Click(point=(1,2))</action> I hope this works.",
     (Click(point=(1, 2)),), ["unexpected text", "I hope"]),
    ("<action>Click(point=(1,2))", (Click(point=(1, 2)),), ["expected </action>", "was not closed"]),
    ("<action>Click(point=(1,2))\n<conclusion>done</conclusion>", (Click(point=(1, 2)),), ["was not closed"]),
    ("<action>Click(point=(1,2)) because it's the button</action>",
     (Click(point=(1, 2)),), ["invalid syntax", "ignored text around the call at chars 8-26 inside <action>"]),
    ("<action>I will press Hotkey(keys='ctrl+s') now</action>", (Hotkey(keys=("ctrl", "s")),), ["ignored text"]),
    ("<action>Click(point=(1,2)), Click(point=(3,4)) are the answers</action>",
     (Click(point=(1, 2)), Click(point=(3, 4))), ["ignored text"]),
    ("I should Click(point=(9,9)). Actually: Type(content='hi')",
     (Type(content="hi"),), ["no <action> tags; used the call at chars 39-57"]),
    ("<think>maybe Click(point=(9,9))</think>\nSure: Click(point=(1,2))",
     (Click(point=(1, 2)),), ["no <action> tags"]),
    ("Answer: Sequence(actions=[Click(point=(1,2)), Type(content='x')]) done",
     (ActionSequence(actions=(Click(point=(1, 2)), Type(content="x"))),), ["no <action> tags"]),
    ("<action>Type(content='a)b')</action></action>", (Type(content="a)b"),), ["unexpected text"]),
]


@pytest.mark.parametrize(("raw", "actions", "phrases"), LENIENT, ids=[r[:40] for r, _, _ in LENIENT])
def test_lenient_recovers_the_last_well_formed_action(raw, actions, phrases):
    with pytest.raises(ParseError):
        parse_response(raw)
    response = parse_response(raw, lenient=True)
    assert response.actions == actions
    assert response.recovered
    assert response.notes[0].startswith("strict parse failed: ")
    notes = " | ".join(response.notes)
    for phrase in phrases:
        assert phrase in notes


def test_lenient_keeps_think_and_conclusion():
    raw = "<think>why</think><action>Type(content='a')</action><action>PressBack()</action><conclusion>went back" \
          "</conclusion> trailing"
    response = parse_response(raw, lenient=True)
    assert (response.action, response.think, response.conclusion) == (PressBack(), "why", "went back")


def test_lenient_leaves_a_valid_response_alone():
    raw = "<think>x</think><action>PressHome()</action>"
    assert parse_response(raw, lenient=True) == parse_response(raw)
    assert not parse_response(raw, lenient=True).recovered


@pytest.mark.parametrize("raw", [
    "nothing to do here",
    "<action>Click(pt=(1,2))</action>",
    "<action>Tap(point=(1,2))</action> Click",
    "<think>I could Click(point=(1,2))",  # a call inside unfinished thinking is not an answer
    "<think>Click(point=(1,2))</think> no call here",
    "<action>Sequence(actions=[Click(point=(1,2))])</action>",
])
def test_lenient_raises_when_nothing_well_formed_remains(raw):
    with pytest.raises(ParseError, match="lenient recovery found no well-formed action call"):
        parse_response(raw, lenient=True)


# --- no input raises anything but ParseError ---------------------------------------------------------

def _parse_everything(raw: str) -> None:
    """Run every parser on `raw`; each either returns a well-formed result or raises ParseError."""
    for parse in (parse_action, parse_actions, parse_grounding):
        try:
            parse(raw)
        except ParseError:
            pass
    for lenient in (False, True):
        try:
            response = parse_response(raw, lenient=lenient)
        except ParseError:
            continue
        assert response.actions and response.raw == raw
        assert response.recovered == (lenient and bool(response.notes))


GRAMMAR_ALPHABET = st.sampled_from(list("()[]{}'\",=+-.#\\ \n\t0123456789") + [
    "<action>", "</action>", "<think>", "</think>", "<conclusion>", "</conclusion>", "Click", "Type", "Sequence",
    "Swipe", "Hotkey", "point=", "content=", "actions=", "keys=", "box=", "amount=", "axis=", "'vertical'", "é",
    "\x00",
])


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200) | st.lists(GRAMMAR_ALPHABET, max_size=60).map("".join))
def test_arbitrary_text_raises_only_parse_error(raw):
    _parse_everything(raw)


@st.composite
def mutated_responses(draw) -> str:
    actions = draw(st.lists(any_action, min_size=1, max_size=2))
    raw = format_response(actions, think=draw(st.none() | think_text), conclusion=draw(st.none() | st.just("ok")))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(raw)))
        j = draw(st.integers(i, min(len(raw), i + 12)))
        match draw(st.sampled_from(["truncate", "insert", "delete", "duplicate"])):
            case "truncate":
                raw = raw[:i]
            case "insert":
                raw = raw[:i] + draw(st.text(min_size=1, max_size=4) | GRAMMAR_ALPHABET) + raw[i:]
            case "delete":
                raw = raw[:i] + raw[j:]
            case "duplicate":
                raw = raw[:j] + raw[i:j] + raw[j:]
    return raw


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_responses())
def test_mutated_responses_raise_only_parse_error(raw):
    _parse_everything(raw)


@pytest.mark.parametrize("raw", [
    "(" * 100_000,
    "[" * 50_000 + "]" * 50_000,
    "<action>" + "Click(" * 10_000 + "</action>",
    "Click(" * 16_000,
    "<action>Type(content='" + "(" * 5000 + "')</action>",
    "-" * 50_000 + "1",
    "not " * 20_000 + "1",
    "[1," * 30_000,
    "9" * 5000,
    "<action>Click(point=(1,2))</action>" * 2000,
])
def test_huge_and_deep_inputs_raise_only_parse_error(raw):
    _parse_everything(raw)


def test_brackets_inside_strings_do_not_count_as_nesting():
    content = "(" * (MAX_NESTING * 4) + "]" * 10
    assert parse_action(f"Type(content={content!r})") == Type(content=content)


# --- grounding -----------------------------------------------------------------------------------

GROUNDING = [
    ("[512,300]", (512, 300), None),
    ("(512, 300)", (512, 300), None),
    ("[ 12.5 , 3 ]", (12.5, 3), None),
    ("[-1,-1]", None, None),
    ("[-1, -1, -1, -1]", None, None),
    ("[10,20,30,40]", (20.0, 30.0), (10, 20, 30, 40)),
    ("<think>The icon (step 2) is near [1,2].</think>\nAnswer: [100,200]", (100, 200), None),
    ("I think [5,5] but final: [7, 8]. (3)", (7, 8), None),
    ("[[640,480]]", (640, 480), None),
]


@pytest.mark.parametrize(("raw", "point", "box"), GROUNDING, ids=[g[0][:30] for g in GROUNDING])
def test_grounding_answers(raw, point, box):
    answer = parse_grounding(raw)
    assert (answer.point, answer.box, answer.raw) == (point, box, raw)
    assert answer.refused == (point is None)


@pytest.mark.parametrize(("raw", "phrase"), [
    ("I cannot find it", "no bracketed numbers"),
    ("", "no bracketed numbers"),
    ("[1,2,3]", "has 3 numbers"),
    ("[-1, 5]", "coordinates >= 0"),
    ("[30,40,10,20]", "x1 <= x2"),
    ("[1e999, 2]", "finite"),
    ("[" + "9" * 5000 + ", 1]", "too long"),
    ("[" + "9" * 400 + ", 1]", "finite"),
    ("[1,2," + "9" * 400 + ",4]", "finite"),
])
def test_grounding_errors(raw, phrase):
    with pytest.raises(ParseError) as caught:
        parse_grounding(raw)
    assert phrase in str(caught.value) and "expected" in str(caught.value)


def test_format_grounding():
    assert format_grounding(GroundingAnswer(point=(512, 300))) == "[512,300]"
    assert format_grounding(GroundingAnswer(point=None)) == "[-1,-1]"
    assert format_grounding(parse_grounding("[10,20,31,40]")) == "[20.5,30]"
    assert format_grounding((1.0, 2.25)) == "[1,2.25]"
    assert format_grounding(None) == "[-1,-1]"


@FAST
@given(st.none() | point)
def test_grounding_round_trips(p):
    answer = parse_grounding(format_grounding(p))
    assert answer.point == p
