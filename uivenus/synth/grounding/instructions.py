"""Instructions for a rendered screen, each provably about exactly one element, or about none.

Five kinds, one writer each: `text` (a unique visible label), `icon` (a unique icon-only control, by what
it depicts), `function` (what the control does, unique among every control on screen), `position` (an
ordinal in a visual row/column, or a relation to a uniquely labelled anchor, computed from the real
boxes) and `negative` (a label, icon or function that is nowhere on screen: answer [-1,-1]). Uniqueness
and absence are checked against everything drawn in the viewport, occluded or not, so an instruction
never hinges on a detail the image does not settle.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from uivenus.synth.grounding import vocab
from uivenus.synth.grounding.icons import ICONS
from uivenus.synth.grounding.layout import Screen
from uivenus.synth.grounding.page import Element
from uivenus.synth.grounding.render import Box, Rendered

KINDS = ("text", "icon", "function", "position", "negative")

#: Functions close enough that one on screen makes the other ambiguous.
FUNCTION_FAMILIES: Mapping[str, str] = {
    "compose": "add", "new_file": "add", "new_folder": "add", "cancel": "close", "apply": "confirm",
    "next_step": "confirm", "submit": "confirm", "like": "favorite", "bookmark": "favorite",
}
_STOP = frozenset((
    "the", "a", "an", "this", "that", "these", "to", "of", "in", "on", "for", "my", "it", "and", "or", "with",
    "from", "new", "all", "now", "some", "up", "me", "your", "is", "be", "as", "at", "by", "into", "out", "off",
    "item", "items", "selected", "something",
))
_ORDINALS = ("first", "second", "third", "fourth", "fifth")


@dataclass(frozen=True)
class Instruction:
    kind: str
    text: str
    target: str | None  # gid of the element meant; None for negatives
    absent: str | None  # negatives: "text:<label>", "icon:<name>" or "function:<key>"
    data_type: str  # "text" or "icon"

    @property
    def negative(self) -> bool:
        return self.target is None


def family(fn: str) -> str:
    return FUNCTION_FAMILIES.get(fn, fn)


def _norm(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def words(text: str) -> set[str]:
    """Content words, lower-cased and de-pluralised."""
    return {_norm(w) for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 1}


class Facts:
    """What a rendered screen shows, in the forms the writers need."""

    def __init__(self, screen: Screen, rendered: Rendered) -> None:
        self.screen = screen
        self.boxes = rendered.boxes
        self.present_boxes = rendered.present
        self.present = [screen.element(gid) for gid in rendered.present]
        self.visible = [screen.element(gid) for gid in rendered.boxes]
        self.targets = [e for e in self.visible if e.target]
        self.text_counts = Counter(t.lower() for t in rendered.texts)
        self.icon_counts = Counter(rendered.icons)
        self.kins = {ICONS[name].kin for name in rendered.icons}
        self.families = Counter(family(e.fn) for e in self.present if e.fn)
        own_icons = Counter(e.icon for e in self.present if e.icon)
        for name, count in self.icon_counts.items():  # icons drawn outside any candidate still mean their function
            if ICONS[name].fn and count > own_icons[name]:
                self.families[family(ICONS[name].fn)] += count - own_icons[name]
        self.words: set[str] = set()
        for text in rendered.texts:
            self.words |= words(text)
        for name in set(rendered.icons):
            for noun in ICONS[name].nouns:
                self.words |= words(noun)
        self.phone = screen.size[0] < 600

    def unique_text(self, element: Element) -> bool:
        return bool(element.text) and self.text_counts[element.text.lower()] == 1

    def box(self, element: Element) -> Box:
        return self.boxes[element.gid]


def _quote(rng: random.Random, text: str) -> str:
    return rng.choice((text, text, f"'{text}'", f"“{text}”", f'"{text}"'))


_TEXT_TEMPLATES: Mapping[str, tuple[str, ...]] = {
    "button": ("{t}", "click {t}", "the {t} button", "{t} button", "press {t}"),
    "link": ("{t}", "{t} link", "click the {t} link", "go to {t}"),
    "tab": ("{t} tab", "the {t} tab", "switch to the {t} tab", "open the {t} tab"),
    "menu": ("{t} menu", "open the {t} menu", "the {t} menu in the menu bar"),
    "menu_item": ("{t}", "{t} menu item", "choose {t} from the menu", "select {t}"),
    "item": ("{t}", "open {t}", "select {t}", "click on {t}"),
    "field": ("the input showing {q}", "the text box that says {q}", "the {q} field"),
    "search": ("the {q} search field", "the search box with {q} in it", "the {q} box"),
    "checkbox": ("{t} checkbox", "check {t}", "the {t} option"),
    "app": ("{t}", "open {t}", "the {t} app", "launch {t}"),
    "key": ("the {t} key", "{t} key", "press {t} on the keyboard"),
    "setting": ("{t}", "open {t} settings", "the {t} option", "go to {t}"),
    "title": ("{t}", "open {t}", "the {t} card"),
    "chip": ("{t} filter", "the {t} chip", "filter by {t}"),
    "page": ("page {t}", "go to page {t}", "the page {t} button"),
}
_ICON_TEMPLATES = ("the {n} icon", "{n} icon", "click the {n} icon", "the {n} button", "{n} button")


def write_text(facts: Facts, rng: random.Random) -> Instruction | None:
    options = [e for e in facts.targets if e.role in _TEXT_TEMPLATES and facts.unique_text(e)]
    if not options:
        return None
    element = rng.choice(options)
    templates = _TEXT_TEMPLATES[element.role]
    if facts.phone and element.role in ("button", "item", "setting", "app"):
        templates = templates + ("tap {t}",)
    text = rng.choice(templates).format(t=_quote(rng, element.text), q=f"'{element.text}'")
    return Instruction("text", text, element.gid, None, element.data_type)


def write_icon(facts: Facts, rng: random.Random) -> Instruction | None:
    options = [e for e in facts.targets if e.icon and not e.text and facts.icon_counts[e.icon] == 1]
    if not options:
        return None
    element = rng.choice(options)
    text = rng.choice(_ICON_TEMPLATES).format(n=rng.choice(ICONS[element.icon].nouns))
    group = facts.screen.groups.get(element.group) if element.group else None
    if group and rng.random() < 0.3:
        text += f" in the {group.name}"
    return Instruction("icon", text, element.gid, None, "icon")


def write_function(facts: Facts, rng: random.Random) -> Instruction | None:
    options = [e for e in facts.targets if e.fn and facts.families[family(e.fn)] == 1]
    if not options:
        return None
    element = rng.choice(options)
    text = rng.choice(vocab.FUNCTIONS[element.fn]).format(obj=element.obj)
    return Instruction("function", text, element.gid, None, element.data_type)


# --- position ---------------------------------------------------------------------------------------


def _ordinal(facts: Facts, rng: random.Random) -> Instruction | None:
    by_group: dict[str, list[Element]] = {}
    for element in facts.present:
        if element.group:
            by_group.setdefault(element.group, []).append(element)
    name_counts = Counter(facts.screen.groups[g].name for g in by_group)
    options = []
    for gid, members in by_group.items():
        group = facts.screen.groups[gid]
        every = [e for e in facts.screen.elements if e.group == gid]
        nouns = {e.noun for e in members}
        if (
            len(members) < 3
            or len(every) != len(members)
            or name_counts[group.name] != 1
            or len(nouns) != 1
            or not all(e.gid in facts.boxes and e.target for e in members)
        ):
            continue
        ordered = _aligned([(facts.box(e), e) for e in members], group.axis)
        if ordered:
            options.append((group, ordered))
    if not options:
        return None
    group, ordered = rng.choice(options)
    n = len(ordered)
    k = rng.randrange(n)
    noun = ordered[k].noun
    near, far = ("left", "right") if group.axis == "x" else ("top", "bottom")
    exclusive = all(e.group == group.gid for e in facts.present if e.noun == noun)
    where = f" in the {group.name}"
    phrases = []
    if k < len(_ORDINALS):
        phrases += [f"the {_ORDINALS[k]} {noun}{where}"]
        if k > 0:
            phrases += [f"the {_ORDINALS[k]} {noun} from the {near}{where}"]
            if exclusive:
                phrases += [f"the {_ORDINALS[k]} {noun} from the {near}"]
    back = n - 1 - k
    if back == 0:
        phrases += [f"the last {noun}{where}", f"the {far}most {noun}{where}"]
    elif back < len(_ORDINALS):
        phrases += [f"the {_ORDINALS[back]} {noun} from the {far}{where}"]
    if not phrases:
        return None
    element = ordered[k]
    return Instruction("position", rng.choice(phrases), element.gid, None, element.data_type)


def _aligned(items: list[tuple[Box, Element]], axis: str) -> list[Element] | None:
    """Members in reading order if they form one clean row (x) or column (y), else None."""
    lo, hi, a_lo, a_hi = (0, 2, 1, 3) if axis == "x" else (1, 3, 0, 2)
    items = sorted(items, key=lambda item: item[0][lo])
    for (b1, _), (b2, _) in pairwise(items):
        if b2[lo] < b1[hi] - 1:  # overlapping along the axis
            return None
    centres = [(b[a_lo] + b[a_hi]) / 2 for b, _ in items]
    smallest = min(b[a_hi] - b[a_lo] for b, _ in items)
    if max(centres) - min(centres) > smallest / 2:
        return None
    return [e for _, e in items]


_DIRECTIONS = {
    "right": ("the {n} to the right of {a}", "the {n} right of {a}"),
    "left": ("the {n} to the left of {a}", "the {n} left of {a}"),
    "below": ("the {n} under {a}", "the {n} below {a}", "the {n} just below {a}"),
    "above": ("the {n} above {a}", "the {n} just above {a}"),
}


def _gap(anchor: Box, box: Box, direction: str, overlap: float) -> float | None:
    """Distance from anchor to box in a direction, if box lies that way and overlaps it across by at least
    `overlap` of the smaller extent; else None."""
    ax1, ay1, ax2, ay2 = anchor
    bx1, by1, bx2, by2 = box
    if direction in ("right", "left"):
        shared = min(ay2, by2) - max(ay1, by1)
        if shared <= 0 or shared < overlap * min(ay2 - ay1, by2 - by1):
            return None
        gap = bx1 - ax2 if direction == "right" else ax1 - bx2
    else:
        shared = min(ax2, bx2) - max(ax1, bx1)
        if shared <= 0 or shared < overlap * min(ax2 - ax1, bx2 - bx1):
            return None
        gap = by1 - ay2 if direction == "below" else ay1 - by2
    return gap if gap >= -1 else None


def _relation(facts: Facts, rng: random.Random) -> Instruction | None:
    """'the button to the right of Cancel': the nearest target that way, clearly overlapping the anchor
    across, with no element of the same kind even loosely that way and nearly as close."""
    anchors = [e for e in facts.visible if facts.unique_text(e) and len(e.text) <= 40]
    rng.shuffle(anchors)
    for anchor in anchors[:25]:
        abox = facts.box(anchor)
        for direction in rng.sample(sorted(_DIRECTIONS), len(_DIRECTIONS)):
            found = sorted(
                (g, e.gid, e)
                for e in facts.targets
                if e is not anchor
                for g in [_gap(abox, facts.box(e), direction, 0.5)]
                if g is not None
            )
            if not found:
                continue
            gap, _, target = found[0]
            if gap > 3 * max(abox[3] - abox[1], facts.box(target)[3] - facts.box(target)[1]) + 24:
                continue
            loose = (
                _gap(abox, facts.present_boxes[e.gid], direction, 0.0)
                for e in facts.present
                if e is not target and e is not anchor and e.noun == target.noun
            )
            if any(g is not None and g < gap + 12 for g in loose):
                continue
            label = (
                f"the {_quote(rng, anchor.text)} {anchor.noun}"
                if anchor.role in ("label", "heading") and rng.random() < 0.4
                else _quote(rng, anchor.text)
            )
            text = rng.choice(_DIRECTIONS[direction]).format(n=target.noun, a=label)
            return Instruction("position", text, target.gid, None, target.data_type)
    return None


def write_position(facts: Facts, rng: random.Random) -> Instruction | None:
    first, second = (_ordinal, _relation) if rng.random() < 0.5 else (_relation, _ordinal)
    return first(facts, rng) or second(facts, rng)


# --- negatives ----------------------------------------------------------------------------------------


def _negative_labels() -> tuple[str, ...]:
    labels = set(vocab.NEGATIVE_LABELS) | set(vocab.TEXT_FUNCTIONS) | set(vocab.CONTEXT_ITEMS)
    for domain in vocab.DOMAINS.values():
        labels |= {label for label, _ in domain.nav} | set(domain.buttons) | set(domain.tabs)
    labels |= {label for label, _, _ in vocab.SETTINGS_ROWS} | {t for t in vocab.WEB_NAV}
    return tuple(sorted(label for label in labels if label != "-"))


NEGATIVE_POOL = _negative_labels()


def _absent_text(facts: Facts, rng: random.Random) -> Instruction | None:
    for label in rng.sample(NEGATIVE_POOL, 40):
        fn = vocab.TEXT_FUNCTIONS.get(label)
        if words(label) and not words(label) & facts.words and not (fn and facts.families[family(fn)]):
            template = rng.choice(("click {t}", "the {t} button", "{t}", "open {t}", "select {t}", "the {t} tab"))
            return Instruction("negative", template.format(t=_quote(rng, label)), None, f"text:{label}", "text")
    return None


def _absent_icon(facts: Facts, rng: random.Random) -> Instruction | None:
    for name in rng.sample(sorted(ICONS), len(ICONS)):
        icon = ICONS[name]
        if name in facts.icon_counts or icon.kin in facts.kins or (icon.fn and facts.families[family(icon.fn)]):
            continue
        noun = rng.choice(icon.nouns)
        if words(noun) & facts.words:
            continue
        return Instruction("negative", rng.choice(_ICON_TEMPLATES).format(n=noun), None, f"icon:{name}", "icon")
    return None


def _absent_function(facts: Facts, rng: random.Random) -> Instruction | None:
    icon_fns = {ICONS[name].fn for name in facts.icon_counts}
    for fn in rng.sample(sorted(vocab.FUNCTIONS), len(vocab.FUNCTIONS)):
        if facts.families[family(fn)] or fn in icon_fns:
            continue
        text = rng.choice(vocab.FUNCTIONS[fn]).format(obj=vocab.DOMAINS[facts.screen.domain].obj)
        if words(text) and not words(text) & facts.words:
            return Instruction("negative", text, None, f"function:{fn}", "icon")
    return None


def write_negative(facts: Facts, rng: random.Random) -> Instruction | None:
    writers = [_absent_text, _absent_icon, _absent_function]
    rng.shuffle(writers)
    for writer in writers:
        found = writer(facts, rng)
        if found:
            return found
    return None


#: Instruction kind -> writer.
WRITERS: Mapping[str, Callable[[Facts, random.Random], Instruction | None]] = {
    "text": write_text,
    "icon": write_icon,
    "function": write_function,
    "position": write_position,
    "negative": write_negative,
}
DEFAULT_WEIGHTS: Mapping[str, float] = {"text": 0.3, "icon": 0.2, "function": 0.15, "position": 0.2, "negative": 0.15}


def write_instructions(
    screen: Screen, rendered: Rendered, rng: random.Random, n: int, weights: Mapping[str, float] = DEFAULT_WEIGHTS
) -> list[Instruction]:
    """Up to n instructions with distinct targets and texts, kinds drawn by weight (others fill in)."""
    facts = Facts(screen, rendered)
    kinds: Sequence[str] = [k for k in weights if weights[k] > 0]
    out: list[Instruction] = []
    used_targets: set[str] = set()
    used_texts: set[str] = set()
    exhausted: set[str] = set()
    made: Counter[str] = Counter()
    attempts = 0
    while len(out) < n and len(exhausted) < len(kinds) and attempts < 6 * n:
        attempts += 1
        live = [k for k in kinds if k not in exhausted]
        kind = rng.choices(live, weights=[weights[k] for k in live])[0]
        found = WRITERS[kind](facts, rng)
        if found is None:
            exhausted.add(kind)
            continue
        key = found.text.lower()
        if key in used_texts or (found.target and found.target in used_targets):
            continue
        used_texts.add(key)
        if found.target:
            used_targets.add(found.target)
        out.append(found)
        made[kind] += 1
        if kind == "negative" and made[kind] >= max(1, n // 3):  # negatives never crowd out the rest
            exhausted.add(kind)
    return out
