"""The page being composed: the candidate records one screen collects while its components write HTML.

One job: say what the targets of a screen are. `Page.mark` registers an `Element` (role, visible text, icon,
function, group) and returns the attributes that tie it to its HTML, `Page.group` names a visual row or column
for ordinal instructions, and the rest of `Page` is the composer's shared state (random generator, theme, domain,
size). The component library (`components`) and the platform composers write into a `Page`; instructions
(`instructions`) and the generator read its records without needing the library, so the records live apart.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from uivenus.synth.grounding import vocab
from uivenus.synth.grounding.icons import ICONS
from uivenus.synth.grounding.styles import Size, Theme

__all__ = ["ROLE_NOUNS", "Element", "Group", "Page"]

#: Role -> the noun an instruction uses for it.
ROLE_NOUNS: Mapping[str, str] = {
    "button": "button",
    "icon_button": "button",
    "link": "link",
    "tab": "tab",
    "menu": "menu",
    "menu_item": "menu item",
    "item": "item",
    "field": "text field",
    "search": "search box",
    "checkbox": "checkbox",
    "toggle": "switch",
    "app": "app",
    "key": "key",
    "label": "label",
    "heading": "heading",
    "setting": "option",
    "title": "title",
    "chip": "filter chip",
    "page": "page button",
}


@dataclass(frozen=True)
class Element:
    """One candidate target as the composer wrote it; its box comes later, from the DOM."""

    gid: str
    role: str
    text: str | None  # visible label (a single text node), placeholder for fields
    icon: str | None  # icon drawn inside it
    fn: str | None  # vocab.FUNCTIONS key
    obj: str  # what its function acts on ("message", "window")
    group: str | None
    target: bool  # False: only an anchor for relations (labels, headings)

    @property
    def noun(self) -> str:
        return ROLE_NOUNS[self.role]

    @property
    def data_type(self) -> str:
        return "text" if self.text else "icon"


@dataclass(frozen=True)
class Group:
    """Elements in one visual row (axis x) or column (axis y), for ordinal instructions."""

    gid: str
    name: str  # "toolbar", "tab bar", "sidebar"
    axis: str


@dataclass
class Page:
    """Collects the candidates of one screen while its components write HTML."""

    rng: random.Random
    theme: Theme
    domain: vocab.Domain
    size: Size
    simple: bool = False
    elements: list[Element] = field(default_factory=list)
    groups: dict[str, Group] = field(default_factory=dict)

    @property
    def platform(self) -> str:
        return self.theme.platform

    @property
    def width_rem(self) -> float:
        return self.size[0] / self.theme.root_px

    @property
    def height_rem(self) -> float:
        return self.size[1] / self.theme.root_px

    def mark(
        self,
        role: str,
        *,
        text: str | None = None,
        icon: str | None = None,
        fn: str | None = None,
        obj: str | None = None,
        group: str | None = None,
        target: bool = True,
    ) -> str:
        """Register a candidate; returns the attributes to put on its HTML element."""
        if fn is None:
            fn = vocab.TEXT_FUNCTIONS.get(text) if text else (ICONS[icon].fn if icon else None)
        gid = f"g{len(self.elements)}"
        self.elements.append(Element(gid, role, text, icon, fn, obj or self.domain.obj, group, target))
        return f' data-gid="{gid}"' + (f' data-fn="{fn}"' if fn else "")

    def group(self, name: str, axis: str) -> str:
        gid = f"G{len(self.groups)}"
        self.groups[gid] = Group(gid, name, axis)
        return gid

    def pick(self, items: Sequence, k: int) -> list:
        """k distinct items in random order (fewer if there are fewer)."""
        return self.rng.sample(list(items), min(k, len(items)))

    def color(self) -> str:
        return self.rng.choice(vocab.APP_COLORS)

    def value(self, kind: str) -> str:
        return vocab.VALUES[kind](self.rng)
