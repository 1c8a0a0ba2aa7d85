"""Key points of a task: what must visibly hold for the task to count as done, taken from the instruction only.

Judges that read the task (WebJudge-style VLM judges, the OCR evidence judge, the action judge) check each key
point separately, so a key point must say nothing the instruction does not: the instruction is split into clauses
(sentences, "and", "then", "but", commas), quoted strings, numbers, e-mail addresses, file names and proper names
are kept exactly as written, and superlatives ("cheapest", "latest") become sort/filter key points.

A clause that asks for something done to an element also carries its structure (`structure_clauses`), as the
grammar of `verify.instruction_grammar` parses it: the act (click, type, select, focus), the target literal(s), the
role (button, link, tab, field, checkbox, option), the ordinal ("the 2nd input"), the value to type and how many
fields get it ("both fields"), the field it goes into; and, across clauses, whether it must follow the previous
point ("then") and whether it is the final confirming action (the click after the edits). A clause without a verb takes
the previous clause's ("Enter the username "a" and the password "b""). The optional VLM path asks a model for the list
and keeps its answer only if it parses strictly and invents no literal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from types import MappingProxyType

from uivenus.agent.policies.base import Message, Mode, Policy, PolicyRequest, Sampling
from uivenus.verify.instruction_grammar import ALL_FIELDS, ROLE_WORDS, Act, leading_act, parse_act

__all__ = [
    "ALL_FIELDS", "Act", "KeyPoint", "KeyPointError", "KeyPointKind", "ROLE_WORDS", "SUPERLATIVES", "Toggle",
    "extract_key_points", "is_when", "key_point_texts", "literal_tokens", "parse_key_point", "parse_vlm_key_points",
    "structure_clauses", "vlm_key_points", "VLM_KEY_POINTS_PROMPT",
]


class KeyPointError(ValueError):
    """A model's key-point list is malformed or invents what the instruction does not say."""


class KeyPointKind(StrEnum):
    STATE = "state"  # something that must hold at the end (a value entered, an item created, a page reached)
    REMOVAL = "removal"  # something that must be gone at the end (deleted, removed, archived, cleared)
    SORT_FILTER = "sort_filter"  # a superlative: the chosen item must be the extreme one by some order


@dataclass(frozen=True)
class Toggle:
    """A switch the key point wants in a state: `Toggle("Wi-Fi", "off")`."""

    subject: str
    state: str  # "on" | "off"


@dataclass(frozen=True)
class KeyPoint:
    text: str  # the clause exactly as the instruction words it (or the sort/filter statement)
    kind: KeyPointKind = KeyPointKind.STATE
    literals: tuple[str, ...] = ()  # quoted strings, numbers, e-mails, file names, names — verbatim
    toggles: tuple[Toggle, ...] = ()
    act: Act | None = None  # None: a state the end must show, not an act on an element
    targets: tuple[str, ...] = ()  # the element(s) acted on, as written; SELECT: every item (none: "nothing")
    role: str | None = None  # button, link, tab, field, checkbox, option (see ROLE_WORDS)
    ordinal: int | None = None  # "the 2nd input" -> 2
    value: str | None = None  # TYPE: what must be typed (case changed as the clause asks)
    fields: int = 1  # TYPE: how many distinct fields get the value (ALL_FIELDS: every one)
    field: str | None = None  # TYPE: which field, when named ("username")
    after_previous: bool = False  # "then": done only after the previous key point's act
    confirm: bool = False  # the final confirming click, after the edits (type/select) it confirms


#: Superlative -> the order it asks for (what a sort/filter key point states; nothing more is inferred).
SUPERLATIVES: Mapping[str, str] = MappingProxyType({
    "cheapest": "lowest price", "least expensive": "lowest price", "lowest-priced": "lowest price",
    "most expensive": "highest price", "priciest": "highest price", "highest-priced": "highest price",
    "latest": "most recent date", "newest": "most recent date", "most recent": "most recent date",
    "oldest": "earliest date", "earliest": "earliest date",
    "highest-rated": "highest rating", "best-rated": "highest rating", "top-rated": "highest rating",
    "best rated": "highest rating", "lowest-rated": "lowest rating", "worst-rated": "lowest rating",
    "most popular": "most popular", "largest": "largest size", "biggest": "largest size",
    "smallest": "smallest size", "shortest": "shortest duration", "longest": "longest duration",
    "fastest": "fastest", "closest": "shortest distance", "nearest": "shortest distance",
    "farthest": "longest distance",
})

#: Leading verbs that make a clause a removal (its literals must be gone at the end).
_REMOVAL_VERBS = frozenset({"delete", "remove", "archive", "clear", "discard", "trash", "uninstall", "erase"})
#: Capitalised words at a clause start that are imperative verbs or determiners, not names.
_NOT_NAMES = frozenset({
    "add", "archive", "book", "buy", "cancel", "change", "check", "choose", "clear", "click", "close", "copy",
    "create", "delete", "download", "edit", "enable", "disable", "enter", "find", "fill", "go", "install", "keep",
    "launch", "look", "make", "mark", "move", "open", "order", "pay", "pin", "play", "put", "rename", "reopen",
    "reply", "reset", "return", "save", "schedule", "search", "select", "send", "set", "share", "ship", "show",
    "sort", "star", "switch", "tap", "turn", "type", "unpin", "update", "upload", "use", "write", "remove",
    "discard", "erase", "uninstall", "trash", "the", "a", "an", "my", "this", "that", "these", "those", "please",
    "then", "and", "but", "also", "i", "i'm", "it", "in", "on", "at", "to", "for", "with", "from", "by", "of", "or",
})

_QUOTES = re.compile(r'"([^"]+)"|“([^”]+)”|(?<!\w)\'([^\']+)\'(?!\w)')
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"https?://\S+[^\s.,;:!?)\]]")
_FILE = re.compile(r"(?<![\w@.])[\w][\w-]*\.(?:[a-z][a-z0-9]{1,4})(?![\w@])")
#: Numbers as written: phones "+1 (555) 014-7788", cards "4242 4242 4242 4242", dates, times, money, percents.
_NUMBER = re.compile(
    r"(?<![\w])[+$€£]?(?:\(\d+\)\s?)?\d+(?:[.,:/-]\d+)*(?:(?:\s\(\d+\)\s|\s|-)\d+(?:[.,:/-]\d+)*)*%?(?![\w])"
)
_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?"
          r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
#: Dates in words: "November 20, 2026", "Dec 3", "3 December 2026".
_DATE = re.compile(rf"\b{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"
                   rf"|\b\d{{1,2}}\s+{_MONTH}(?:\s+\d{{4}})?\b")
#: What follows a clause's first word when that word is capitalised only because it opens the sentence.
_SENTENCE_WORD = re.compile(r" +[a-z]")
_WORD = re.compile(r"[^\W\d_][\w'’.-]*|\d[\w-]*")
_CONNECTORS = re.compile(r"^(?:(?:and|then|but|also|so|after that|afterwards|finally)\b[\s,]*)+", re.IGNORECASE)
#: Clause separators outside protected spans: sentence ends, semicolons, "then", "and", "but", and commas
#: followed by a lower-case word (a new clause: ", go back …"), not by a name or number ("Ana Lima, 12 Harbor St").
_SEPARATORS = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“'])|;\s*|,?\s+(?i:then)\s+|\s+(?i:and)\s+|,?\s+(?i:but)\s+"
                         r"|,\s*(?=[a-z])")
_THEN = re.compile(r"\b(?:then|after that|afterwards|finally)\b", re.IGNORECASE)
_TOGGLE_AFTER = re.compile(r"^(?:(?:turn|switch|set|keep|leave|toggle)\s+)?(?P<subject>.+?)\s+(?P<state>on|off)$",
                           re.IGNORECASE)
_ENABLING = MappingProxyType({"enable": "on", "activate": "on", "disable": "off", "deactivate": "off"})
_TOGGLE_VERB = re.compile(r"^(?P<state>enable|activate|disable|deactivate)\s+(?:the\s+)?(?P<subject>.+)$",
                          re.IGNORECASE)
_TOGGLE_PLACE = re.compile(r"\s+(?:in|on|from|under|within)\s+(?:the\s+)?[A-Z].*$")
_TOGGLE_BEFORE = re.compile(r"^(?:turn|switch|toggle)\s+(?P<state>on|off)\s+(?P<subject>.+)$", re.IGNORECASE)


# --- literals -----------------------------------------------------------------------------------

def _spans(pattern: re.Pattern[str], text: str, taken: list[tuple[int, int]]) -> Iterator[tuple[int, str]]:
    """Matches of `pattern` that overlap nothing already taken (earlier patterns win)."""
    for match in pattern.finditer(text):
        start, end = match.span()
        if any(start < e and s < end for s, e in taken):
            continue
        taken.append((start, end))
        value = next((g for g in match.groups() if g), None) if match.groups() else match.group()
        yield start, (value or match.group()).strip()


def _names(text: str, taken: list[tuple[int, int]]) -> Iterator[tuple[int, str]]:
    """Runs of capitalised words (proper names: "Ana Lima", "Wi-Fi", "GitHub"), possessive 's dropped;
    a capitalised imperative verb or determiner is no name."""
    run: list[re.Match[str]] = []

    def flush() -> Iterator[tuple[int, str]]:
        while run and run[0].group().lower().rstrip(".") in _NOT_NAMES:
            run.pop(0)
        if (len(run) == 1 and run[0].group()[1:].islower() and _SENTENCE_WORD.match(text[run[0].end():])
                and not text[:run[0].start()].strip()):
            run.clear()  # one capitalised word opening the clause before lower-case words: "Lower the brightness"
        if run:
            start, end = run[0].start(), run[-1].end()
            name = re.sub(r"['’]s$", "", text[start:end]).rstrip(".")
            taken.append((start, end))
            yield start, name
        run.clear()

    for word in _WORD.finditer(text):
        inside = any(word.start() < e and s < word.end() for s, e in taken)
        gap = text[run[-1].end():word.start()] if run else " "
        capital = word.group()[0].isupper()
        if run and (inside or not capital or gap.strip()):
            yield from flush()
        if capital and not inside:
            run.append(word)
    yield from flush()


def literal_tokens(text: str) -> tuple[str, ...]:
    """What a key point names exactly, in order of appearance: quoted strings, URLs, e-mails, file names,
    numbers and proper names (each span is claimed by the first kind that matches it)."""
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, str]] = []
    for pattern in (_QUOTES, _URL, _EMAIL, _FILE, _DATE, _NUMBER):
        found.extend(_spans(pattern, text, taken))
    found.extend(_names(text, taken))
    return tuple(dict.fromkeys(value for _, value in sorted(found) if value))


_WHEN = re.compile(rf"(?:{_DATE.pattern})|\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}:\d{{2}}(?:\s?[ap]m)?|\d{{1,3}}%?|{_MONTH}"
                   r"|(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day", re.IGNORECASE)


def is_when(literal: str) -> bool:
    """A date, clock time, weekday or small number: values a task sets with pickers and sliders as often as by
    typing them."""
    return _WHEN.fullmatch(literal.strip()) is not None


# --- clauses ------------------------------------------------------------------------------------

_PROTECTED = re.compile(rf'"[^"]*"|“[^”]*”|(?<!\w)\'[^\']*\'(?!\w)|\([^()]*\)|\d,\d|{_DATE.pattern}')


def _clause_parts(instruction: str) -> list[tuple[str, bool]]:
    """Clauses split on separators that lie outside quotes, brackets and digit groupings, each with whether a
    "then" (or "after that", "finally") led into it."""
    shield = {}

    def hide(match: re.Match[str]) -> str:
        key = f"\x00{len(shield)}\x00"
        shield[key] = match.group()
        return key

    masked = _PROTECTED.sub(hide, instruction.strip())
    out: list[tuple[str, bool]] = []
    position, then = 0, False
    for separator in [*_SEPARATORS.finditer(masked), None]:
        part = masked[position:separator.start() if separator else len(masked)]
        for key, original in shield.items():
            part = part.replace(key, original)
        leading = _CONNECTORS.match(part.strip())
        ordered = then or bool(leading and _THEN.search(leading.group()))
        part = _CONNECTORS.sub("", part.strip()).strip().rstrip(".;,!?").strip()
        if part:
            out.append((part, ordered))
        if separator is not None:
            position, then = separator.end(), bool(_THEN.search(separator.group()))
    return out


def _clauses(instruction: str) -> list[str]:
    return [text for text, _ in _clause_parts(instruction)]


def _toggles(clause: str) -> tuple[Toggle, ...]:
    """The switch a clause sets: "turn X off", "switch on X", "enable X" (on), "disable X" (off); the subject ends
    before a place ("Bluetooth in Settings" -> "Bluetooth")."""
    match = _TOGGLE_BEFORE.match(clause) or _TOGGLE_AFTER.match(clause) or _TOGGLE_VERB.match(clause)
    if match is None:
        return ()
    subject = _TOGGLE_PLACE.sub("", match.group("subject")).strip()
    if not subject or len(subject.split()) > 4:  # "send the report on" is no switch
        return ()
    state = match.group("state").lower()
    return (Toggle(subject=subject, state=_ENABLING.get(state, state)),)


def _base_point(text: str) -> KeyPoint:
    """Kind, literals and switches of one clause (no act structure)."""
    text = text.strip()
    first = text.split(maxsplit=1)[0].lower() if text else ""
    kind = KeyPointKind.REMOVAL if first in _REMOVAL_VERBS else KeyPointKind.STATE
    if text.lower().startswith("sort/filter:"):
        kind = KeyPointKind.SORT_FILTER
    return KeyPoint(text=text, kind=kind, literals=literal_tokens(text),
                    toggles=() if kind is KeyPointKind.SORT_FILTER else _toggles(text))


# --- act structure --------------------------------------------------------------------------------

def _structured(point: KeyPoint, clause: str, inherited: Act | None) -> KeyPoint:
    """`point` with the act structure the grammar parses from its clause (`verify.instruction_grammar`)."""
    parse = parse_act(clause, inherited)
    if parse is None:
        return point
    return replace(point, act=parse.act, targets=parse.targets, role=parse.role, ordinal=parse.ordinal,
                   value=parse.value, fields=parse.fields, field=parse.field)


def structure_clauses(clauses: Sequence[tuple[str, bool]]) -> tuple[KeyPoint, ...]:
    """Key points of `(clause, follows "then")` pairs, in order, with their act structure: a verb-less clause takes
    the previous clause's act (a select merges into the previous select's items), and a click after edits is the
    confirming action."""
    points: list[KeyPoint] = []
    inherited: Act | None = None
    for clause, then in clauses:
        point = _structured(_base_point(clause), clause.strip(), inherited)
        if point.act is not None:
            leading = leading_act(clause)
            if leading is None and points and point.act is Act.SELECT and points[-1].act is Act.SELECT:
                last = points[-1]
                points[-1] = replace(last, text=f"{last.text} and {clause.strip()}",
                                     targets=last.targets + point.targets)
                continue
            inherited = point.act
            edited = any(p.act in (Act.TYPE, Act.SELECT) for p in points)
            point = replace(point, after_previous=then, confirm=point.act is Act.CLICK and edited)
        points.append(point)
    for i, point in enumerate(points[:-1]):  # only the last click confirms what came before it
        if point.confirm:
            points[i] = replace(point, confirm=False)
    return tuple(points)


def parse_key_point(text: str) -> KeyPoint:
    """Classify one key point, pull out its literals and switches and its act structure (used on rule-made and
    model-made points; a verb-less clause has no act here, see `structure_clauses`)."""
    return structure_clauses([(text, False)])[0] if text.strip() else _base_point(text)


def _superlatives(clause: str) -> Iterator[KeyPoint]:
    lowered = clause.lower()
    for word, order in SUPERLATIVES.items():
        if re.search(rf"\b{re.escape(word)}\b", lowered):
            yield KeyPoint(text=f"sort/filter: {word} ({order})", kind=KeyPointKind.SORT_FILTER)


def extract_key_points(instruction: str) -> tuple[KeyPoint, ...]:
    """Rule-based key points of `instruction`: one per clause (with its act structure), plus one per superlative."""
    points: list[KeyPoint] = []
    for point in structure_clauses(_clause_parts(instruction)):
        points.append(point)
        points.extend(_superlatives(point.text))
    return tuple(dict.fromkeys(points))


def key_point_texts(points: tuple[KeyPoint, ...]) -> tuple[str, ...]:
    """The strings `Evidence.key_points` carries."""
    return tuple(p.text for p in points)


# --- the optional model path --------------------------------------------------------------------

VLM_KEY_POINTS_PROMPT = (
    "You split a task for a computer or phone into the conditions that must all hold once the task is done. "
    "Use only what the task says: do not add steps, defaults or guesses. Copy names, quoted text, numbers, "
    "dates, e-mail addresses and file names exactly as written. When the task asks for the cheapest, latest, "
    "best or any other extreme item, write that as its own condition starting with 'sort/filter:'. "
    "Answer with one condition per line, each as <point>condition</point>, and nothing else."
)
_POINT_LINE = re.compile(r"<point>([^<>\n]+)</point>")
_THINK = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)


def parse_vlm_key_points(text: str, instruction: str) -> tuple[KeyPoint, ...]:
    """Strictly read `<point>…</point>` lines; raise `KeyPointError` on anything else, or when a point names a
    literal (quoted text, number, name, …) that the instruction does not contain verbatim."""
    body = _THINK.sub("", text, count=1).strip()
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    if not lines:
        raise KeyPointError("the answer holds no <point>…</point> lines")
    points = []
    for line in lines:
        match = _POINT_LINE.fullmatch(line)
        if match is None:
            raise KeyPointError(f"expected a line '<point>condition</point>', got {line[:120]!r}")
        point = parse_key_point(match.group(1))
        invented = [lit for lit in point.literals if lit.casefold() not in instruction.casefold()]
        if invented:
            raise KeyPointError(f"key point {point.text!r} names {invented} which the task does not say")
        points.append(point)
    return tuple(dict.fromkeys(points))


def vlm_key_points(instruction: str, policy: Policy, *, max_new_tokens: int = 256) -> tuple[KeyPoint, ...]:
    """Key points from a model (greedy, no thinking); raises `KeyPointError` (bad answer) or `PolicyError`."""
    request = PolicyRequest(
        messages=(Message("system", (VLM_KEY_POINTS_PROMPT,)), Message("user", (f"Task: {instruction}",))),
        mode=Mode.GROUNDING, sampling=Sampling(temperature=0.0, max_new_tokens=max_new_tokens, thinking=False),
    )
    return parse_vlm_key_points(policy.act(request).text, instruction)

