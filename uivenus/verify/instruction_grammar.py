"""A small grammar for the acts an instruction clause asks for: tokens, then phrases, then the act's structure.

Key points need the structure of an act clause ("Enter the password "yA" into both text fields", "Focus into the
2nd input textbox", "Select AU, gHF2 from the list"), not a split on commas with patterns on top. A clause is read
as tokens (quoted strings, ordinals, words, punctuation) and parsed by this grammar:

    clause      := VERB rest | rest "by" CLICKING ["on"] object      (a verb-less clause takes the previous verb)
    TYPE rest   := [field-words] QUOTED (PP)*          PP := ("into"|"in"|"to") [DET] [QUANT] word* [ROLE]
                                                          a PP with "case" in it asks for a letter case
    SELECT rest := item ("," | "and" | "or" item)* [PP] item := QUOTED | word+;  "nothing" / "none": no items
    CLICK rest  := ["on"] [DET] [ORDINAL] [ROLE] (QUOTED | word+) [ROLE] [PP] ["labeled" QUOTED]
    FOCUS rest  := ["into"|"on"] [DET] [ORDINAL] word* [ROLE]

`parse_act` returns the parse (`ActParse`: act, targets, role, ordinal, value, letter case, quantified field count,
named field); `verify.keypoints` turns it into a key point's fields.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

__all__ = ["ALL_FIELDS", "Act", "ActParse", "ROLE_WORDS", "VERBS", "Token", "leading_act", "parse_act", "tokens"]


class Act(StrEnum):
    """What a clause asks done to an element."""

    CLICK = "click"  # click / tap / press the target
    TYPE = "type"  # enter a value into a field
    SELECT = "select"  # select (check, choose) exactly the listed items
    FOCUS = "focus"  # put the focus into a field


#: `ActParse.fields` when the value goes into every field ("all fields", "each field").
ALL_FIELDS = -1

#: Leading verbs of a clause -> the act they ask for.
VERBS: Mapping[str, Act] = MappingProxyType({
    **dict.fromkeys(("click", "tap", "press", "hit", "push", "submit"), Act.CLICK),
    **dict.fromkeys(("enter", "type", "input", "fill", "write"), Act.TYPE),
    **dict.fromkeys(("select", "choose", "check", "pick", "tick"), Act.SELECT),
    **dict.fromkeys(("focus",), Act.FOCUS),
})
#: Words after a leading verb that make the clause a question to answer, not an act ("check how many", "check
#: whether", "select which"): the verb asks to look, not to tick or click.
_INSPECTING = frozenset("how whether if that what which when where who why out".split())
#: Words naming an element's role -> the role.
ROLE_WORDS: Mapping[str, str] = MappingProxyType({
    "button": "button", "buttons": "button", "link": "link", "links": "link", "tab": "tab", "tabs": "tab",
    "checkbox": "checkbox", "checkboxes": "checkbox", "option": "option", "options": "option", "radio": "option",
    "field": "field", "fields": "field", "textbox": "field", "textboxes": "field", "input": "field",
    "inputs": "field", "textarea": "field", "box": "field",
})
_ORDINAL_WORDS = MappingProxyType({w: i for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth".split(), 1)})
_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)|(" + "|".join(_ORDINAL_WORDS) + r")", re.IGNORECASE)
_DETERMINERS = frozenset("the a an this that".split())
_PREPOSITIONS = frozenset("into in to onto on at".split())
#: Prepositions that end a clicked or selected object's name ("the button in the dialog", "Haiti from the list").
_CUTTING = frozenset("from in inside within on of".split())
_QUANTIFIERS = MappingProxyType({"both": 2, "all": ALL_FIELDS, "each": ALL_FIELDS, "every": ALL_FIELDS})
_CLICKING = frozenset({"clicking", "tapping", "pressing"})
#: Words that describe a field generically (they name no particular field).
_GENERIC_FIELD = frozenset("text input inputs field fields box boxes textbox textboxes area".split())
_TOKEN = re.compile(r'"(?P<q1>[^"]+)"|“(?P<q2>[^”]+)”|(?<!\w)\'(?P<q3>[^\']+)\'(?!\w)|(?P<word>#?\w[\w\'’.#-]*)'
                    r"|(?P<punct>[,;:()])")


@dataclass(frozen=True)
class Token:
    text: str
    quoted: bool = False

    @property
    def low(self) -> str:
        return self.text.casefold()


@dataclass(frozen=True)
class ActParse:
    """The structure of one act clause."""

    act: Act
    targets: tuple[str, ...] = ()  # CLICK: the element's name; SELECT: every item (none: "nothing")
    role: str | None = None
    ordinal: int | None = None
    value: str | None = None  # TYPE: the quoted value, in the letter case asked for
    fields: int = 1  # TYPE: how many fields get the value (ALL_FIELDS: every one)
    field: str | None = None  # TYPE: the field named before the value ("the username "kim"")


def tokens(clause: str) -> list[Token]:
    """Quoted strings (whole), words (a sentence's last period dropped) and the punctuation that separates items."""
    out = []
    for match in _TOKEN.finditer(clause):
        quoted = next((match.group(g) for g in ("q1", "q2", "q3") if match.group(g)), None)
        if quoted is not None:
            out.append(Token(quoted, quoted=True))
        elif match.group("word"):
            out.append(Token(match.group("word").rstrip(".")))
        else:
            out.append(Token(match.group("punct")))
    return out


def _ordinal(token: Token) -> int | None:
    match = None if token.quoted else _ORDINAL.fullmatch(token.text)
    if match is None:
        return None
    return int(match.group(1)) if match.group(1) else _ORDINAL_WORDS[match.group(2).lower()]


def _role(words: Sequence[Token]) -> str | None:
    return next((ROLE_WORDS[t.low] for t in words if not t.quoted and t.low in ROLE_WORDS), None)


def leading_act(clause: str) -> Act | None:
    """The act a clause's leading verb asks for (None without one, and for "check how many …")."""
    return _leading(tokens(clause))


def _leading(words: Sequence[Token]) -> Act | None:
    if not words or words[0].quoted or (len(words) > 1 and words[1].low in _INSPECTING):
        return None
    return VERBS.get(words[0].low)


def _cut(words: Sequence[Token]) -> list[Token]:
    """The object's own words: up to the first cutting preposition after its first word that opens a phrase with a
    determiner ("Haiti from the list", not "Sign in")."""
    for i, token in enumerate(words):
        following = words[i + 1].low if i + 1 < len(words) else ""
        if i and not token.quoted and token.low in _CUTTING and following in _DETERMINERS:
            return list(words[:i])
    return list(words)


def _quantity(phrase: Sequence[Token]) -> int | None:
    """How many fields a phrase that names fields quantifies ("both text fields" -> 2, "every field" -> all)."""
    if _role(phrase) != "field":
        return None
    return next((_QUANTIFIERS[t.low] for t in phrase if t.low in _QUANTIFIERS), None)


def _typed(rest: Sequence[Token]) -> ActParse | None:
    """TYPE: field words, the quoted value, then prepositional phrases (a letter case, the destination)."""
    at = next((i for i, t in enumerate(rest) if t.quoted), None)
    if at is None:  # "Write a new note" names no text to type
        return None
    value = rest[at].text
    before = [t for t in rest[:at] if t.text not in ",:"]
    named = [t.text for t in before if t.low not in _GENERIC_FIELD | _DETERMINERS] if len(before) <= 2 else []
    fields = _quantity(before) or 1  # "Fill every field with "x""
    phrases: list[list[Token]] = []
    for token in rest[at + 1:]:
        if not token.quoted and token.low in _PREPOSITIONS:
            phrases.append([])
        elif phrases:
            phrases[-1].append(token)
    for phrase in phrases:
        lows = [t.low for t in phrase]
        if "case" in lows:
            value = value.upper() if "upper" in lows else value.lower() if "lower" in lows else value
        else:
            fields = _quantity(phrase) or fields
    return ActParse(Act.TYPE, value=value, role="field", fields=fields, field=" ".join(named) or None)


def _items(rest: Sequence[Token]) -> tuple[str, ...]:
    """SELECT: the listed items ("AU, HF2" -> both; "nothing" -> none)."""
    words = _cut(rest)
    quoted = [t.text for t in words if t.quoted]
    if quoted:
        return tuple(quoted)
    items: list[list[str]] = [[]]
    for token in words:
        if token.text == "," or token.low in ("and", "or"):
            items.append([])
        elif token.low not in _DETERMINERS:
            items[-1].append(token.text)
    names = [" ".join(words) for words in items if words]
    return () if [n.lower() for n in names] in (["nothing"], ["none"], ["no items"]) else tuple(names)


def _object(rest: Sequence[Token]) -> tuple[str | None, str | None, int | None]:
    """CLICK / FOCUS: the object's name (a quoted label anywhere wins), its role and its ordinal."""
    role = _role(rest)
    ordinal = next((o for o in map(_ordinal, rest) if o is not None), None)
    quoted = next((t.text for t in rest if t.quoted), None)
    if quoted is not None:
        return quoted, role, ordinal
    words = [t for t in _cut([t for t in rest if t.low not in ("on", "onto", "at", "to")])
             if t.low not in _DETERMINERS and _ordinal(t) is None and t.text not in ",:;()"]
    while len(words) > 1 and words[0].low in ROLE_WORDS:
        words.pop(0)
    while words and words[-1].low in ROLE_WORDS:
        words.pop()
    return (" ".join(t.text for t in words) or None), role, ordinal


def parse_act(clause: str, inherited: Act | None = None) -> ActParse | None:
    """The act structure of `clause` (a verb-less clause continues `inherited`; a capitalised one only a list of
    items), or None when it asks for no act on an element."""
    words = tokens(clause)
    act, rest = _leading(words), words[1:]
    clicking = next((i for i, t in enumerate(words) if t.low in _CLICKING), None)
    if clicking is not None and act is not Act.CLICK:  # "Close the dialog by clicking the "x""
        act, rest = Act.CLICK, words[clicking + 1:]
    if act is None:
        if inherited is None or not words or (clause.strip()[:1].isupper() and inherited is not Act.SELECT):
            return None
        act, rest = inherited, words
    if act is Act.TYPE:
        return _typed(rest)
    if act is Act.SELECT:
        return ActParse(act, targets=_items(rest), role=_role(rest))
    target, role, ordinal = _object(rest)
    if act is Act.FOCUS:
        return ActParse(act, role=role or "field", ordinal=ordinal)
    return ActParse(act, targets=(target,) if target else (), role=role, ordinal=ordinal)
