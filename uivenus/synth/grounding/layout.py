"""Composition: a whole screen (HTML plus its candidate records) as a pure function of a random generator.

`compose` picks the platform's composer (`COMPOSERS`), which draws its chrome (macOS menu bar, window and dock;
Windows title bar and taskbar: `desktop_screens`; iOS status bar, navigation and tab bar: `ios_screens`; a web
page's header and footer: `web_screens`), fills the window with a scene (table, cards, list and reader,
settings, form, editor, icon view, dashboard, …: `scenes`) and sometimes lays an overlay on top (dialog, open
menu, context menu, action sheet, cookie banner). `simple=True` composes small screens with few, big elements for
training tiny models; those are drawn here.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from uivenus.synth.grounding import components as c
from uivenus.synth.grounding import vocab
from uivenus.synth.grounding.components import esc
from uivenus.synth.grounding.desktop_screens import macos_screen, windows_screen
from uivenus.synth.grounding.ios_screens import ios_screen
from uivenus.synth.grounding.page import Element, Group, Page
from uivenus.synth.grounding.scenes import dialog_overlay
from uivenus.synth.grounding.styles import Size, Theme, document, pick_theme
from uivenus.synth.grounding.web_screens import web_screen


@dataclass(frozen=True)
class Screen:
    """One composed screen: the page to render and what its candidates are."""

    html: str
    size: Size
    platform: str
    domain: str
    theme: Theme
    elements: tuple[Element, ...]
    groups: Mapping[str, Group]

    def element(self, gid: str) -> Element:
        return self.elements[int(gid[1:])]


def compose(rng: random.Random, platform: str, size: Size, *, simple: bool = False) -> Screen:
    """Compose one screen; the same generator state always gives the same screen."""
    theme = pick_theme(rng, platform, size, simple)
    domain = vocab.DOMAINS[rng.choice(sorted(vocab.DOMAINS))]
    page = Page(rng=rng, theme=theme, domain=domain, size=size, simple=simple)
    body = _simple(page) if simple else COMPOSERS[platform](page)
    return Screen(
        html=document(theme, body),
        size=size,
        platform=platform,
        domain=page.domain.name,
        theme=theme,
        elements=tuple(page.elements),
        groups=dict(page.groups),
    )


# --- simple screens for tiny models ------------------------------------------------------------------


def _simple_tiles(p: Page) -> str:
    apps = p.pick(vocab.IOS_APPS, p.rng.choice((4, 6)))
    cols = 2 if len(apps) == 4 or p.size[0] < p.size[1] else 3
    return f'<div style="padding:.8rem .4rem">{c.app_grid(p, apps, cols=cols, item_style="width:auto")}</div>'


def _simple_buttons(p: Page) -> str:
    labels = p.pick(p.domain.buttons + ("Cancel", "OK", "Next", "Save"), p.rng.randint(2, 4))
    buttons = "".join(c.text_button(p, t, kind="primary" if k == 0 else "") for k, t in enumerate(labels))
    return f'<div class="col" style="gap:.6rem;padding:.8rem">{buttons}</div>'


def _simple_form(p: Page) -> str:
    name, submit, fields = p.rng.choice(vocab.FORMS[:2] + vocab.FORMS[-1:])
    form = c.form(p, (name, submit, fields[:2]), cols=1, cancel=False, check=False, title=False)
    return f'<div style="padding:.6rem .8rem">{form}</div>'


def _simple_icons(p: Page) -> str:
    group = p.group("toolbar", "x")
    icons = "".join(c.icon_button(p, i, group=group) for i in p.pick(p.domain.actions, p.rng.randint(3, 5)))
    return (f'<div class="row" style="justify-content:space-around;padding:1.2rem .4rem;font-size:1.5em">{icons}</div>'
            f"{c.paragraph(p, 1)}")


def _simple_settings(p: Page) -> str:
    rows = c.settings_rows(p, p.pick(vocab.SETTINGS_ROWS, p.rng.randint(3, 4)), tinted=True)
    return f'<div style="padding-top:.6rem">{rows}</div>'


#: Simple-mode bodies: one block of a few big controls.
SIMPLE_BLOCKS: Mapping[str, Callable[[Page], str]] = {
    "tiles": _simple_tiles, "buttons": _simple_buttons, "form": _simple_form, "icons": _simple_icons,
    "list": lambda p: c.list_items(p, p.rng.randint(3, 5), avatars=p.rng.random() < 0.5),
    "settings": _simple_settings, "dialog": dialog_overlay,
}


def _simple(p: Page) -> str:
    """A small screen: a header bar and one block of 3–9 big controls."""
    rng = p.rng
    title = rng.choice([label for label, _ in p.domain.nav])
    lead = c.icon_button(p, rng.choice(("arrow-left", "chevron-left", "menu")))
    tail = "".join(c.icon_button(p, i) for i in p.pick(("more", "search", "gear", "plus", "share"), rng.randint(0, 2)))
    header = (f'<div class="toolbar" style="gap:.3rem;padding:.3rem .4rem">{lead}<span class="h3 grow" '
              f'style="white-space:nowrap;overflow:hidden">{esc(title)}</span>{tail}</div>')
    body = SIMPLE_BLOCKS[rng.choice(sorted(SIMPLE_BLOCKS))](p)
    return f'<div class="screen col">{header}<div class="grow" style="overflow:hidden">{body}</div></div>'


#: Platform -> composer of a full-size screen.
COMPOSERS: Mapping[str, Callable[[Page], str]] = {
    "macos": macos_screen, "windows": windows_screen, "ios": ios_screen, "web": web_screen,
}
