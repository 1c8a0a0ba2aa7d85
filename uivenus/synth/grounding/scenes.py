"""Scenes: the content of a window or page, given its size in rem, and the dialog any platform may lay on top.

One job: fill the frame a platform's chrome leaves — a table, cards, a list and reader, settings, a form, an
editor, an icon view, a dashboard (`DESKTOP_SCENES`) — and draw the modal dialog every composer may show
(`dialog_overlay`). The chrome around them is each platform's own module (`desktop_screens`, `ios_screens`,
`web_screens`); the web reuses the table, cards and dashboard scenes, so they live here rather than with the
desktop chrome.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from uivenus.synth.grounding import components as c
from uivenus.synth.grounding import vocab
from uivenus.synth.grounding.components import esc
from uivenus.synth.grounding.icons import icon_svg
from uivenus.synth.grounding.page import Page

__all__ = ["DESKTOP_SCENES", "Scene", "dialog_overlay", "fill_rows"]

Scene = Callable[[Page, float, float], str]


def fill_rows(height_rem: float, row_rem: float, cap: int = 40) -> int:
    """Enough rows to run past the bottom (the cut-off ones are dropped after layout)."""
    return max(2, min(cap, math.ceil(height_rem / row_rem) + 1))


def scene_table(p: Page, w: float, h: float) -> str:
    head = ""
    if p.rng.random() < 0.6:
        title = p.rng.choice(p.domain.nav)[0]
        seg = c.tabs(p, p.pick(p.domain.tabs, p.rng.randint(2, 4)), segmented=True) if w > 45 else ""
        head = (
            f'<div class="row pad" style="gap:1rem;padding-bottom:.5rem">{c.heading(p, title)}'
            f'<span class="spacer"></span>{seg}</div>'
        )
    cols = max(2, min(len(p.domain.columns), int(w / 13)))
    action = p.rng.choice((None, None, "more", "trash", "star", "download", "pencil"))
    table = c.data_table(
        p, fill_rows(h, 2.2), cols, checkboxes=p.rng.random() < 0.3, row_action=action, zebra=p.rng.random() < 0.5
    )
    return f'<div class="col grow" style="overflow:hidden">{head}<div style="padding:0 .4rem">{table}</div></div>'


def scene_cards(p: Page, w: float, h: float) -> str:
    cols = max(1, min(6, int(w / 15)))
    actions = p.pick(("heart", "share", "more", "bookmark", "download", "star"), p.rng.randint(0, 2))
    button = p.rng.choice(p.domain.buttons) if p.rng.random() < 0.45 else None
    chips = ""
    if p.rng.random() < 0.5 and w > 30:
        chips = f'<div style="margin-bottom:1rem">{c.chips(p, p.pick(p.domain.tabs, 4))}</div>'
    grid = c.cards(p, cols * fill_rows(h, 15, 6), cols, actions=actions, button=button)
    return f'<div class="grow pad" style="overflow:hidden">{chips}{grid}</div>'


def scene_list_detail(p: Page, w: float, h: float) -> str:
    list_w = min(22.0, w * 0.42)
    items = c.list_items(p, fill_rows(h, 3.6, 20), avatars=p.rng.random() < 0.7, selected=p.rng.randint(-1, 2))
    subject = p.value("subject")
    sender = p.value("person")
    actions = c.toolbar(
        p,
        p.pick(("archive", "trash", "flag", "share", "printer", "more"), p.rng.randint(2, 5)),
        buttons=p.pick(p.domain.buttons, p.rng.randint(0, 2)),
        name="message toolbar",
    )
    detail = (
        f'<div class="col grow" style="overflow:hidden">{actions}<div class="editor">'
        f'{c.heading(p, subject)}<div class="row" style="gap:.7rem">{c.avatar(p, sender)}<div>'
        f'<div class="t1">{esc(sender)}</div><div class="t2">{esc(p.value("email"))}</div></div>'
        f'<span class="spacer"></span><span class="t2">{esc(p.value("date"))}</span></div>'
        f"{c.paragraph(p, p.rng.randint(3, 6))}{c.paragraph(p, p.rng.randint(2, 5))}</div></div>"
    )
    if w < 40:
        return f'<div class="col grow" style="overflow:hidden">{items}</div>'
    return (
        f'<div class="row grow" style="align-items:stretch;overflow:hidden"><div style="width:{list_w:.1f}rem;'
        f'border-right:1px solid var(--border);overflow:hidden;flex:none">{items}</div>{detail}</div>'
    )


def scene_settings(p: Page, w: float, h: float) -> str:
    rows = p.pick(vocab.SETTINGS_ROWS, fill_rows(h, 3.0, 18))
    cut = p.rng.randint(2, max(2, len(rows) - 2))
    title = p.rng.choice(("General", "Settings", "Preferences", p.rng.choice(vocab.SETTINGS_ROWS)[0]))
    width = min(w - 2, 42.0)
    return (
        f'<div class="grow" style="overflow:hidden;padding:1.2rem 0"><div style="width:{width:.1f}rem;margin:0 auto">'
        f'<div style="padding:0 1rem .8rem">{c.heading(p, title)}</div>'
        f"{c.settings_rows(p, rows[:cut], tinted=p.rng.random() < 0.7)}"
        f"{c.settings_rows(p, rows[cut:], tinted=p.rng.random() < 0.7)}</div></div>"
    )


def scene_form(p: Page, w: float, h: float) -> str:
    spec = p.rng.choice(vocab.FORMS)
    cols = 2 if w > 60 and len(spec[2]) > 3 else 1
    width = min(w - 3, 30.0 * cols + 4)
    inner = c.form(p, spec, cols=cols, cancel=p.rng.random() < 0.6, check=p.rng.random() < 0.5)
    panel = (
        f'<div class="card" style="width:{width:.1f}rem;flex:none;padding:1.4rem;'
        f'border-radius:calc(var(--radius)*2)">{inner}</div>'
    )
    aside = ""
    if w - width > 30:  # room beside the form: recent items or preferences
        if p.rng.random() < 0.5:
            head = c.heading(p, p.rng.choice(("Recent", "Activity", "Suggestions", "History")), cls="h3")
            aside = (f'<div class="card grow" style="max-width:36rem;overflow:hidden"><div class="pad">{head}</div>'
                     f"{c.list_items(p, fill_rows(h, 4, 10), avatars=True)}</div>")
        else:
            rows = c.settings_rows(p, p.pick(vocab.SETTINGS_ROWS, 5), tinted=True)
            aside = f'<div class="grow" style="max-width:36rem">{rows}</div>'
    return (
        f'<div class="row grow" style="overflow:hidden;padding:1.5rem;gap:1.5rem;align-items:flex-start;'
        f'justify-content:center">{panel}{aside}</div>'
    )


def scene_editor(p: Page, w: float, h: float) -> str:
    bar = c.toolbar(
        p,
        p.pick(("undo", "redo", "link", "image", "paperclip", "list", "printer", "save"), p.rng.randint(3, 6)),
        name="formatting toolbar",
    )
    paragraphs = "".join(c.paragraph(p, p.rng.randint(2, 5)) for _ in range(fill_rows(h, 6, 8)))
    return (
        f'<div class="col grow" style="overflow:hidden">{bar}<div class="editor" style="max-width:48rem">'
        f'{c.heading(p, p.value("title"), cls="h1")}<div class="t2">{esc(p.value("date"))} · '
        f"{esc(p.value('person'))}</div>{paragraphs}</div></div>"
    )


def scene_icons(p: Page, w: float, h: float) -> str:
    cols = max(2, min(12, int(w / 7)))
    group = p.group("top row of the icon view", "x")
    items = []
    for _ in range(cols * fill_rows(h, 7, 6)):
        name = p.value("filename")
        icon = p.rng.choice(("folder", "folder", "file", "image", "music"))
        tint = "var(--accent)" if icon == "folder" else "var(--muted)"
        attrs = p.mark("item", text=name, icon=icon, group=group if len(items) < cols else None)  # first row only
        items.append(
            f'<div class="app" style="width:6rem"{attrs}>'
            f'<span class="tile" style="color:{tint};background:none">{icon_svg(icon, css_class="ic big", stroke=1.5)}'
            f'</span><span class="name">{esc(name)}</span></div>'
        )
    return (
        f'<div class="grow pad" style="overflow:hidden"><div class="apps" '
        f'style="grid-template-columns:repeat({cols},minmax(0,1fr))">{"".join(items)}</div></div>'
    )


def scene_dashboard(p: Page, w: float, h: float) -> str:
    n = max(1, min(4, int(w / 16)))
    title = p.rng.choice(("Overview", "Dashboard", "This month", "Performance"))
    bar = (
        f'<div class="row" style="gap:.6rem;margin-bottom:1rem">{c.heading(p, title)}<span class="spacer"></span>'
        f"{c.text_button(p, p.rng.choice(p.domain.buttons))}"
        f"{c.text_button(p, 'Export', icon='download', kind='primary')}</div>"
    )
    chart = (
        f'<div class="stat" style="margin:1rem 0"><div class="row">'
        f'<span class="t1">{esc(p.rng.choice(("Revenue", "Visitors", "Orders")))}</span><span class="spacer"></span>'
        f'{c.tabs(p, ["7D", "30D", "90D", "1Y"], segmented=True, name="range selector")}'
        f"</div>{c.bar_chart(p, max(6, min(24, int(w / 2.5))))}</div>"
    )
    cols = max(2, min(len(p.domain.columns), int(w / 14)))
    table = c.data_table(
        p, fill_rows(h, 2.4, 12), cols, checkboxes=False, row_action=p.rng.choice((None, "more")), zebra=False
    )
    return f'<div class="grow pad" style="overflow:hidden">{bar}{c.stat_cards(p, n)}{chart}{table}</div>'


DESKTOP_SCENES: Mapping[str, Scene] = {
    "table": scene_table,
    "cards": scene_cards,
    "list_detail": scene_list_detail,
    "settings": scene_settings,
    "form": scene_form,
    "editor": scene_editor,
    "icons": scene_icons,
    "dashboard": scene_dashboard,
}


def dialog_overlay(p: Page) -> str:
    name = p.value("filename")
    options = (
        (
            f"Delete “{name}”?",
            "This item will be deleted immediately. You can’t undo this action.",
            (("Cancel", ""), ("Delete", "danger")),
            "",
        ),
        (
            "Do you want to save the changes?",
            "Your changes will be lost if you don’t save them.",
            (("Don’t Save", ""), ("Cancel", ""), ("Save", "primary")),
            "",
        ),
        (
            (f"“{p.rng.choice(p.domain.apps)}” would like to access your "
             f"{p.rng.choice(('camera', 'contacts', 'location', 'photos'))}"),
            "You can change this later in Privacy settings.",
            (("Don’t Allow", ""), ("Allow", "primary")),
            "",
        ),
        (
            "A new version is available",
            "Version 4.2 brings faster sync and bug fixes. Restart to install it.",
            (("Later", ""), ("Install now", "primary")),
            "",
        ),
        ("Rename", "Enter a new name for this item.", (("Cancel", ""), ("Rename", "primary")), "field"),
        (
            "Sign in required",
            "Your session has expired. Please sign in again to continue.",
            (("Cancel", ""), ("Sign in", "primary")),
            "",
        ),
    )
    title, text, buttons, body = p.rng.choice(options)
    if body == "field":
        body = f'<div style="padding:0 1.4rem">{c.field_input(p, "Name", "Untitled", "text", value=name)}</div>'
    return c.dialog(p, title, text, buttons, close=p.platform in ("web", "windows") and p.rng.random() < 0.6, body=body)
