"""Spans of a reply: the grammar finds where the think text, the action call, the type names and each parameter
value sit in a response; token masks built from them hold exactly those characters (plus only the grammar's
punctuation that BPE merges into a boundary token), whether the tokens come from text or from a model."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uivenus.actions.calls import format_action
from uivenus.actions.grammar import format_response
from uivenus.actions.space import ActionSequence, Click, Direction, Drag, Finished, Hotkey, Scroll, Type
from uivenus.actions.spans import action_spans
from uivenus.actions.syntax import ParseError
from uivenus.train.spans import (
    SPAN_KINDS, SpanError, TokenSpans, annotate, char_mask, span_weights, token_offsets,
)

FAST = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: What BPE may merge into a span's boundary token: the grammar's own punctuation and tags, never content.
SYNTAX = set("<>/=()[]{}'\",. \n") | set("actionthinkconclusion")


def _text(text: str, span: tuple[int, int]) -> str:
    return text[span[0]:span[1]]


# --- character spans (grammar) ------------------------------------------------------------------

def test_spans_of_a_thinking_click() -> None:
    text = "<think>  The Save button is top right. </think>\n<action>Click(point=(412, 88))</action>"
    spans = action_spans(text)
    assert _text(text, spans.think) == "The Save button is top right."
    assert _text(text, spans.action) == "Click(point=(412, 88))"
    assert [_text(text, n) for n in spans.names] == ["Click"]
    assert {k: _text(text, v) for k, v in spans.params.items()} == {"point": "(412, 88)"}
    assert spans.conclusion is None


def test_comma_separated_calls_and_sequences_use_reference_box_paths() -> None:
    text = ("<action>Click(box=[10, 20]), Type('hi'),\n  Drag(start=(1, 2), end=(3, 4))</action>\n"
            "<conclusion> ok </conclusion>")
    spans = action_spans(text)
    assert [_text(text, n) for n in spans.names] == ["Click", "Type", "Drag"]
    assert {k: _text(text, v) for k, v in spans.params.items()} == {
        "0.point": "[10, 20]", "1.content": "'hi'", "2.start": "(1, 2)", "2.end": "(3, 4)"}
    assert _text(text, spans.conclusion) == "ok"
    nested = "<action>Sequence(actions=[Click(point=(1, 2)), Hotkey(keys='ctrl+c')])</action>"
    spans = action_spans(nested)
    assert [_text(nested, n) for n in spans.names] == ["Sequence", "Click", "Hotkey"]
    assert {k: _text(nested, v) for k, v in spans.params.items()} == {
        "actions": "[Click(point=(1, 2)), Hotkey(keys='ctrl+c')]", "0.point": "(1, 2)", "1.keys": "'ctrl+c'"}


def test_grounding_answers_have_a_point_or_box_and_no_type() -> None:
    for text, key, inner in (("[412,88]", "point", "412,88"), (" (1, 2, 30, 40) ", "box", "1, 2, 30, 40"),
                             ("[-1,-1]", "point", "-1,-1")):
        spans = action_spans(text)
        assert spans.names == () and _text(text, spans.params[key]) == inner
        assert _text(text, spans.action) == text.strip()


@pytest.mark.parametrize("text", [
    "Click(point=(1, 2))",  # no tags: lenient parsing would take it, spans do not
    "<action>Click(point=(1, 2))",
    "<action>Clack(point=(1, 2))</action>",
    "<action>Click(point=(1, 2), colour='red')</action>",
    "the answer is [3, 4]",
    "[1, 2, 3]",
    "[5, -3]",
])
def test_anything_strict_parsing_refuses_has_no_spans(text: str) -> None:
    with pytest.raises(ParseError):
        action_spans(text)


coordinate = st.integers(0, 1999)
point = st.tuples(coordinate, coordinate)
words = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=20).filter(
    str.strip)
single = st.one_of(
    st.builds(Click, point=point),
    st.builds(Drag, end=point, start=st.none() | point),
    st.builds(Type, content=words),
    st.builds(Hotkey, keys=st.sampled_from([("ctrl", "c"), ("alt", "f4"), ("enter",)]), repeat=st.integers(1, 3)),
    st.builds(Scroll, direction=st.sampled_from(Direction), point=st.none() | point,
              amount=st.none() | st.integers(1, 9)),
    st.builds(Finished, content=st.none() | words),
)
any_action = single | st.lists(single.filter(lambda a: not a.is_terminal), min_size=2, max_size=3).map(
    lambda actions: ActionSequence(actions=tuple(actions)))


def _expected_params(action, prefix: str = "") -> dict[str, object]:
    """Each set field of `action` as the grammar writes it (what ast reads back from the value's text)."""
    out: dict[str, object] = {}
    for name, value in ((f, getattr(action, f)) for f in action.__dataclass_fields__):
        if value is None or value == action.__dataclass_fields__[name].default:
            continue
        if name == "actions":
            out[prefix + name] = "[" + ", ".join(map(format_action, value)) + "]"
            for i, member in enumerate(value):
                out |= _expected_params(member, f"{prefix}{i}.")
        else:
            out[prefix + name] = getattr(value, "value", value)
    return out


def _frozen(value: object) -> object:
    return tuple(map(_frozen, value)) if isinstance(value, (list, tuple)) else value


@FAST
@given(any_action, st.none() | words.filter(lambda t: "</think>" not in t))
def test_every_written_response_has_exact_spans(action, think) -> None:
    text = format_response(action, think=think)
    spans = action_spans(text)
    assert _text(text, spans.action) == format_action(action)
    members = action.actions if isinstance(action, ActionSequence) else ()
    assert [_text(text, n) for n in spans.names] == [a.type.value for a in (action, *members)]
    expected = _expected_params(action)
    assert set(spans.params) == set(expected)
    for path, value in expected.items():
        written = _text(text, spans.params[path])
        assert (written if path.endswith("actions") else _frozen(ast.literal_eval(written))) == _frozen(value)
    assert spans.think is None if think is None else _text(text, spans.think) == think.strip()


# --- token masks ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tokenizer(tiny_qwen3_vl: Path):
    from uivenus.agent.policies.transformers_local import load_processor

    return load_processor(str(tiny_qwen3_vl)).tokenizer


REPLIES = [
    "<think>The Save button is at the top right.</think>\n<action>Click(point=(412, 88))</action>",
    "<think>Type the city, then search.</think>\n<action>Type(content='weather in Paris'), PressEnter()</action>",
    "<action>Hotkey(keys=['ctrl', 'c'])</action>\n<conclusion>copied</conclusion>",
    "<action>Sequence(actions=[Click(point=(5, 7)), Drag(start=(1, 2), end=(930, 44))])</action>",
    "<action>Type(content='日本語 café')</action>",
    "[527,61]",
]


def _masked(tokenizer, ids: list[int], mask: torch.Tensor) -> str:
    return tokenizer.decode([i for i, m in zip(ids, mask.tolist()) if m], skip_special_tokens=False)


def _assert_covers(decoded: str, wanted: str) -> None:
    """`decoded` is `wanted` with at most grammar punctuation merged on either side."""
    before, found, after = decoded.partition(wanted)
    assert found == wanted, f"{wanted!r} not in {decoded!r}"
    assert set(before) <= SYNTAX and set(after) <= SYNTAX, (decoded, wanted)


@pytest.mark.parametrize("reply", REPLIES)
def test_token_masks_decode_to_their_spans(tokenizer, reply: str) -> None:
    completion = reply + "<|im_end|>"
    encoded = tokenizer(completion, add_special_tokens=False, return_offsets_mapping=True)
    ids, offsets = encoded["input_ids"], [tuple(o) for o in encoded["offset_mapping"]]
    spans = annotate(completion, offsets, (0, len(reply)))
    chars = action_spans(reply)
    assert _masked(tokenizer, ids, spans.assistant) == completion
    if chars.think is not None:  # <think> and </think> are whole tokens: the inner text is exact
        assert _masked(tokenizer, ids, spans.think) == _text(reply, chars.think)
    else:
        assert not spans.think.any()
    _assert_covers(_masked(tokenizer, ids, spans.action), _text(reply, chars.action))
    for name in chars.names:  # several names: each is inside the decoded type tokens, in order
        assert _text(reply, name) in _masked(tokenizer, ids, spans.action_type)
    assert spans.action_type.any() == bool(chars.names)
    assert set(spans.params) == set(chars.params)
    for path, span in chars.params.items():
        _assert_covers(_masked(tokenizer, ids, spans.params[path]), _text(reply, span))
    # the parts are nested as they are in the text
    assert not (spans.action_type & ~spans.action).any() and not (spans.param & ~spans.action).any()
    assert not (spans.think & spans.action).any()


@pytest.mark.parametrize("reply", REPLIES)
def test_incremental_decoding_finds_the_same_tokens_as_the_offset_mapping(tokenizer, reply: str) -> None:
    completion = reply + "<|im_end|>"
    encoded = tokenizer(completion, add_special_tokens=False, return_offsets_mapping=True)
    fast = annotate(completion, [tuple(o) for o in encoded["offset_mapping"]], (0, len(reply)))
    generated = annotate(completion, token_offsets(tokenizer, encoded["input_ids"]), (0, len(reply)))
    for kind in SPAN_KINDS:
        assert torch.equal(fast.mask(kind), generated.mask(kind)), kind


def test_an_unparseable_reply_has_only_its_assistant_mask() -> None:
    text = "I would click the button"
    spans = annotate(text, [(0, 1), (1, 7), (7, len(text))])
    assert spans.assistant.all() and not spans.action.any() and not spans.think.any() and not spans.params


def test_char_mask_counts_every_overlapping_token() -> None:
    offsets = [(0, 3), (3, 5), (5, 9), (9, 9), (9, 12)]
    assert char_mask(offsets, (4, 9)) == [False, True, True, False, False]
    assert char_mask(offsets, (9, 10)) == [False, False, False, False, True]


def _spans(assistant, think, action, action_type, **params) -> TokenSpans:
    t = lambda bits: torch.tensor(bits, dtype=torch.bool)  # noqa: E731
    return TokenSpans(t(assistant), t(think), t(action), t(action_type), {k: t(v) for k, v in params.items()})


def test_span_weights_take_the_most_specific_listed_kind() -> None:
    #          think tokens | name | param value | rest of the call | end of turn
    spans = _spans([1, 1, 1, 1, 1, 1, 1], [1, 1, 0, 0, 0, 0, 0], [0, 0, 1, 1, 1, 1, 0], [0, 0, 1, 0, 0, 0, 0],
                   point=[0, 0, 0, 1, 1, 0, 0])
    assert span_weights(spans, {"assistant": 1.0}).tolist() == [1] * 7
    assert span_weights(spans, {"action": 1.0}).tolist() == [0, 0, 1, 1, 1, 1, 0]
    assert span_weights(spans, {"assistant": 1.0, "think": 0.5}).tolist() == [0.5, 0.5, 1, 1, 1, 1, 1]
    assert span_weights(spans, {"action": 0.2, "action_type": 2.0, "param": 3.0}).tolist() == pytest.approx(
        [0, 0, 2, 3, 3, 0.2, 0])
    with pytest.raises(SpanError, match="unknown span kind"):
        span_weights(spans, {"reasoning": 1.0})


def test_spans_pad_and_stack_into_a_batch() -> None:
    a = _spans([1, 1], [0, 0], [1, 1], [1, 0], point=[0, 1])
    b = _spans([1, 1, 1], [1, 0, 0], [0, 1, 1], [0, 1, 0], content=[0, 0, 1])
    batch = TokenSpans.stack([a.pad(left=1), b])
    assert batch.assistant.tolist() == [[False, True, True], [True, True, True]]
    assert batch.params["point"].tolist() == [[False, False, True], [False, False, False]]
    assert batch.params["content"].tolist() == [[False, False, False], [False, False, True]]
    assert batch.param.tolist() == [[False, False, True], [False, False, True]]
    with pytest.raises(SpanError, match="equal length"):
        TokenSpans.stack([a, b])
    with pytest.raises(SpanError, match="one shape"):
        TokenSpans(a.assistant, a.think, a.action, a.action_type, {"point": torch.zeros(3, dtype=torch.bool)})
