"""The act grammar on MiniWoB++ instructions as the pages word them (one per task family, from recorded episodes)."""

from __future__ import annotations

import pytest

from uivenus.verify.instruction_grammar import ALL_FIELDS, Act, ActParse, leading_act, parse_act, tokens
from uivenus.verify.keypoints import extract_key_points


def test_tokens_keep_quoted_strings_whole_and_drop_a_sentence_period() -> None:
    words = tokens('Enter the password "Pz rs.C" into both text fields.')
    assert [t.text for t in words] == ["Enter", "the", "password", "Pz rs.C", "into", "both", "text", "fields"]
    assert [t.quoted for t in words].count(True) == 1
    assert [t.text for t in tokens("Select XN46, DeG, bXPpd")] == ["Select", "XN46", ",", "DeG", ",", "bXPpd"]


@pytest.mark.parametrize(("clause", "expected"), [
    ('Click on the "No" button', ActParse(Act.CLICK, targets=("No",), role="button")),
    ('Click the button in the dialog box labeled "x"', ActParse(Act.CLICK, targets=("x",), role="button")),
    ('Click on the link "pulvinar"', ActParse(Act.CLICK, targets=("pulvinar",), role="link")),
    ("Click on Tab #2", ActParse(Act.CLICK, targets=("#2",), role="tab")),
    ("Click button ONE", ActParse(Act.CLICK, targets=("ONE",), role="button")),
    ("Click the button", ActParse(Act.CLICK, role="button")),
    ("press submit", ActParse(Act.CLICK, targets=("submit",))),
    ("Focus into the 2nd input textbox", ActParse(Act.FOCUS, role="field", ordinal=2)),
    ("Focus into the textbox", ActParse(Act.FOCUS, role="field")),
    ('Enter the password "QXN4" into both text fields',
     ActParse(Act.TYPE, value="QXN4", role="field", fields=2, field="password")),
    ('Enter "Myron" into the text field', ActParse(Act.TYPE, value="Myron", role="field")),
    ('Type "MYRON" in all lower case letters in the text input', ActParse(Act.TYPE, value="myron", role="field")),
    ('Fill every field with "x"', ActParse(Act.TYPE, value="x", role="field", fields=ALL_FIELDS)),
    ('Enter the username "karrie"', ActParse(Act.TYPE, value="karrie", role="field", field="username")),
    ("Select XN46, DeG, bXPpd", ActParse(Act.SELECT, targets=("XN46", "DeG", "bXPpd"))),
    ("Select Haiti from the list", ActParse(Act.SELECT, targets=("Haiti",))),
    ("Select nothing", ActParse(Act.SELECT)),
    ('Close the dialog by clicking the "x"', ActParse(Act.CLICK, targets=("x",))),
])
def test_act_clauses_parse_into_act_target_role_ordinal_value_and_field_count(clause: str,
                                                                              expected: ActParse) -> None:
    assert parse_act(clause) == expected


def test_a_verbless_clause_continues_the_previous_act_and_a_question_is_no_act() -> None:
    assert parse_act('the password "yn" into the text fields', Act.TYPE) == ActParse(
        Act.TYPE, value="yn", role="field", field="password")
    assert parse_act("Marco Rossi", Act.CLICK) is None  # a capitalised verb-less clause is no continuation
    assert parse_act("Check how many rows are left") is None and leading_act("Check the box") is Act.SELECT
    assert parse_act("Write a new note") is None  # names no text to type: a state, not an act
    assert parse_act("Click Sign in").targets == ("Sign in",)  # a preposition without a phrase after it stays


def test_whole_instructions_carry_the_confirming_click_and_the_order() -> None:
    login = extract_key_points('Enter the username "chas" and the password "l1v" into the text fields and press '
                               "login.")
    assert [(p.act, p.value, p.field, p.confirm) for p in login] == [
        (Act.TYPE, "chas", "username", False), (Act.TYPE, "l1v", "password", False), (Act.CLICK, None, None, True)]
    sequence = extract_key_points("Click button ONE, then click button TWO.")
    assert [(p.targets, p.after_previous) for p in sequence] == [(("ONE",), False), (("TWO",), True)]
    boxes = extract_key_points("Select CaI, 2zZH and click Submit.")
    assert boxes[0].targets == ("CaI", "2zZH") and boxes[1].targets == ("Submit",) and boxes[1].confirm
