"""Composition: a whole screen (HTML plus its candidate records) as a pure function of a random generator.

Each platform has a composer that draws its chrome (macOS menu bar, window and dock; Windows title bar and
taskbar; iOS status bar, navigation and tab bar; a web page's header and footer), fills the window with a
scene (table, cards, list and reader, settings, form, editor, icon view, dashboard, …) and sometimes lays
an overlay on top (dialog, open menu, context menu, action sheet, cookie banner). `simple=True` composes
small screens with few, big elements for training tiny models.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from uivenus.synth.grounding import components as c
from uivenus.synth.grounding import vocab
from uivenus.synth.grounding.components import Element, Group, Page, esc
from uivenus.synth.grounding.icons import ICONS, icon_svg
from uivenus.synth.grounding.styles import Size, Theme, document, pick_theme


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


Scene = Callable[[Page, float, float], str]


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


# --- scenes: the content of a window or page, given its size in rem -------------------------------


def _fill(height_rem: float, row_rem: float, cap: int = 40) -> int:
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
        p, _fill(h, 2.2), cols, checkboxes=p.rng.random() < 0.3, row_action=action, zebra=p.rng.random() < 0.5
    )
    return f'<div class="col grow" style="overflow:hidden">{head}<div style="padding:0 .4rem">{table}</div></div>'


def scene_cards(p: Page, w: float, h: float) -> str:
    cols = max(1, min(6, int(w / 15)))
    actions = p.pick(("heart", "share", "more", "bookmark", "download", "star"), p.rng.randint(0, 2))
    button = p.rng.choice(p.domain.buttons) if p.rng.random() < 0.45 else None
    chips = ""
    if p.rng.random() < 0.5 and w > 30:
        chips = f'<div style="margin-bottom:1rem">{c.chips(p, p.pick(p.domain.tabs, 4))}</div>'
    grid = c.cards(p, cols * _fill(h, 15, 6), cols, actions=actions, button=button)
    return f'<div class="grow pad" style="overflow:hidden">{chips}{grid}</div>'


def scene_list_detail(p: Page, w: float, h: float) -> str:
    list_w = min(22.0, w * 0.42)
    items = c.list_items(p, _fill(h, 3.6, 20), avatars=p.rng.random() < 0.7, selected=p.rng.randint(-1, 2))
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
    rows = p.pick(vocab.SETTINGS_ROWS, _fill(h, 3.0, 18))
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
                     f"{c.list_items(p, _fill(h, 4, 10), avatars=True)}</div>")
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
    paragraphs = "".join(c.paragraph(p, p.rng.randint(2, 5)) for _ in range(_fill(h, 6, 8)))
    return (
        f'<div class="col grow" style="overflow:hidden">{bar}<div class="editor" style="max-width:48rem">'
        f'{c.heading(p, p.value("title"), cls="h1")}<div class="t2">{esc(p.value("date"))} · '
        f"{esc(p.value('person'))}</div>{paragraphs}</div></div>"
    )


def scene_icons(p: Page, w: float, h: float) -> str:
    cols = max(2, min(12, int(w / 7)))
    group = p.group("top row of the icon view", "x")
    items = []
    for _ in range(cols * _fill(h, 7, 6)):
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
        p, _fill(h, 2.4, 12), cols, checkboxes=False, row_action=p.rng.choice((None, "more")), zebra=False
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


# --- overlays ---------------------------------------------------------------------------------------


def _dialog(p: Page) -> str:
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


def _context_menu(p: Page, x_max: float, y_max: float, y_min: float = 0) -> str:
    items = p.pick(vocab.CONTEXT_ITEMS, p.rng.randint(4, 8))
    if p.rng.random() < 0.6:
        items.insert(p.rng.randint(1, len(items) - 1), "-")
    r = p.theme.root_px
    x = p.rng.uniform(0.1, 0.7) * max(1.0, x_max - 15 * r)
    y = y_min + p.rng.uniform(0.1, 0.8) * max(1.0, y_max - y_min - (len(items) * 2 + 1) * r)
    return c.dropdown(p, items, shortcut_prefix=None, style=f"left:{x:.0f}px;top:{y:.0f}px")


def _wallpaper_icons(p: Page, top_px: float, right: bool) -> str:
    n = p.rng.randint(2, 5)
    items = "".join(
        f'<div class="app" style="width:6.5rem"{p.mark("item", text=name, icon=icon)}>'
        f'<span class="tile" style="background:none">'
        f'{icon_svg(icon, css_class="ic big", stroke=1.5)}</span><span class="name" style="color:#fff;'
        f'text-shadow:0 1px 2px #000">{esc(name)}</span></div>'
        for name, icon in ((p.value("filename"), p.rng.choice(("folder", "file", "image"))) for _ in range(n))
    )
    side = "right:1rem" if right else "left:1rem"
    return (
        f'<div class="col" style="position:absolute;top:{top_px + 12:.0f}px;{side};gap:1rem;color:#fff">{items}</div>'
    )


# --- macOS ------------------------------------------------------------------------------------------


def _macos(p: Page) -> str:
    rng, r = p.rng, p.theme.root_px
    width, height = p.size
    app = rng.choice(p.domain.apps)
    titles = [app] + [t for t in ("File", "Edit", "View", "Go", "Format", "Window", "Help") if rng.random() < 0.8]
    open_title = rng.choice(titles[1:]) if rng.random() < 0.2 and len(titles) > 1 else None
    drop = c.dropdown(p, vocab.MENUS[open_title], shortcut_prefix="⌘") if open_title else ""
    extras = "".join(
        c.icon_button(p, i) for i in p.pick(("wifi", "battery", "search", "volume", "bluetooth"), rng.randint(2, 4))
    )
    clock = f'<span class="mt">{esc(rng.choice(vocab.WEEKDAYS))} {esc(p.value("time"))}</span>'
    menubar = c.menu_titles(
        p,
        titles,
        cls="mbar",
        open_title=open_title,
        dropdown_html=drop,
        bold_first=True,
        tail=f'<span class="spacer"></span>{extras}{clock}',
    )
    bar_h = 1.75 * r
    has_dock = rng.random() < 0.6
    dock_h = 4.9 * r if has_dock else 0
    if rng.random() < 0.35:
        left, top, w, h = 0.0, bar_h, float(width), height - bar_h - dock_h
        radius = "border-radius:0"
    else:
        w = rng.uniform(0.62, 0.92) * width
        h = rng.uniform(0.7, 0.95) * (height - bar_h - dock_h - 16)
        left = rng.uniform(0.05, 0.95) * (width - w)
        top = bar_h + 8 + rng.uniform(0, 1) * (height - bar_h - dock_h - 16 - h)
        radius = ""
    behind = ""
    if rng.random() < 0.3:
        bw, bh = w * rng.uniform(0.5, 0.8), h * rng.uniform(0.5, 0.8)
        bx, by = rng.uniform(0, width - bw), bar_h + rng.uniform(8, max(9, height - bar_h - bh - dock_h))
        behind = (
            f'<div class="window" style="left:{bx:.0f}px;top:{by:.0f}px;width:{bw:.0f}px;height:{bh:.0f}px">'
            f"{_macos_titlebar(p, rng.choice(vocab.DOMAINS[rng.choice(sorted(vocab.DOMAINS))].apps), [])}"
            f"{c.list_items(p, _fill(bh / r, 3.6, 10), avatars=False)}</div>"
        )
    w_rem, h_rem = w / r, h / r
    side_w = rng.uniform(11, 15) if w_rem > 52 else 0
    scene = rng.choice(sorted(DESKTOP_SCENES))
    icons = p.pick([i for i in p.domain.actions if i != "search"], rng.randint(2, 5))
    tools = ["sidebar"] if side_w else []
    tools += ["chevron-left", "chevron-right"] if rng.random() < 0.6 else []
    head = _macos_titlebar(
        p, rng.choice((app, p.rng.choice(p.domain.nav)[0])), tools, icons=icons, search=rng.random() < 0.6
    )
    sidebar = ""
    if side_w:
        nav = list(p.domain.nav)
        sections = [(app if rng.random() < 0.5 else None, nav[: rng.randint(3, len(nav))])]
        if rng.random() < 0.5:
            sections.append(
                (
                    "Tags" if rng.random() < 0.5 else "Locations",
                    [(t, "flag") for t in p.pick(("Red", "Orange", "Work", "Personal", "Important"), 3)],
                )
            )
        sidebar = c.sidebar(p, sections, width_rem=side_w, active=rng.choice(nav)[0])
    status = (
        c.statusbar(p, [f"{rng.randint(3, 240)} items", f"{p.value('size')} available"]) if rng.random() < 0.3 else ""
    )
    content = DESKTOP_SCENES[scene](p, w_rem - side_w, h_rem - 5)
    window = (
        f'<div class="window" style="left:{left:.0f}px;top:{top:.0f}px;width:{w:.0f}px;height:{h:.0f}px;{radius}">'
        f'{head}<div class="body">{sidebar}<div class="main">{content}</div></div>{status}</div>'
    )
    overlay = ""
    roll = rng.random()
    if roll < 0.15 and not open_title:
        overlay = _dialog(p)
    elif roll < 0.27 and not open_title:
        overlay = _context_menu(p, width, height - dock_h, bar_h)
    dock = ""
    if has_dock:
        apps = p.pick(vocab.IOS_APPS, rng.randint(6, min(16, int(width / (3.8 * r)))))
        dock = c.dock(p, apps)
    desk_icons = _wallpaper_icons(p, bar_h, right=True) if rng.random() < 0.25 and left > 9 * r else ""
    return f'<div class="screen desk">{menubar}{desk_icons}{behind}{window}{dock}{overlay}</div>'


def _macos_titlebar(p: Page, title: str, tools: list[str], *, icons: list[str] = (), search: bool = False) -> str:
    """Traffic lights, then the unified toolbar: tools left of the title and icons right of it, one group."""
    lights = "".join(
        f'<button style="background:{color}"{p.mark("button", fn=fn, obj="window")}></button>'
        for color, fn in (("#ff5f57", "close"), ("#febc2e", "minimize"), ("#28c840", "zoom"))
    )
    group = p.group("toolbar", "x") if tools or icons else None
    left = "".join(c.icon_button(p, i, group=group) for i in tools)
    buttons = "".join(c.icon_button(p, i, group=group) for i in icons)
    find = c.search_box(p, "Search", width="11rem") if search else ""
    return (
        f'<div class="titlebar"><div class="traffic">{lights}</div>{left}'
        f'<span class="h3" style="margin-left:.4rem;white-space:nowrap">{esc(title)}</span>'
        f'<span class="spacer"></span>{buttons}{find}</div>'
    )


# --- Windows ----------------------------------------------------------------------------------------


def _windows(p: Page) -> str:
    rng, r = p.rng, p.theme.root_px
    width, height = p.size
    bar_h = 3.4 * r
    app = rng.choice(p.domain.apps)
    maximized = rng.random() < 0.45
    if maximized:
        left, top, w, h = 0.0, 0.0, float(width), height - bar_h
    else:
        w, h = rng.uniform(0.6, 0.92) * width, rng.uniform(0.65, 0.95) * (height - bar_h - 10)
        left, top = rng.uniform(0, width - w), rng.uniform(0, height - bar_h - h)
    w_rem, h_rem = w / r, h / r
    controls = p.group("title bar", "x")
    winctl = "".join(
        c.icon_button(p, i, group=controls, obj="window", cls="") for i in ("minimize", "maximize", "close")
    )
    section = rng.choice(p.domain.nav)[0]
    title = (
        f'<div class="titlebar">{icon_svg(p.domain.nav[0][1])}<span style="white-space:nowrap">'
        f'{esc(section)} - {esc(app)}</span><span class="spacer"></span><div class="winctl">{winctl}</div></div>'
    )
    chrome_style = rng.choice(("menubar", "commandbar", "ribbon"))
    open_title = None
    if chrome_style == "menubar":
        titles = [t for t in ("File", "Edit", "View", "Insert", "Format", "Tools", "Help") if rng.random() < 0.75] or [
            "File"
        ]
        open_title = rng.choice(titles) if rng.random() < 0.2 else None
        drop = c.dropdown(p, vocab.MENUS[open_title], shortcut_prefix="Ctrl+") if open_title else ""
        bars = c.menu_titles(p, titles, cls="menubar", open_title=open_title, dropdown_html=drop)
        bars += c.toolbar(p, p.pick(p.domain.actions, rng.randint(3, 6)))
    elif chrome_style == "commandbar":
        icons = p.pick(
            ("scissors", "copy", "clipboard", "share", "trash", "pencil", "download", "refresh"), rng.randint(3, 6)
        )
        bars = c.toolbar(p, icons, lead=[("New", "plus")], buttons=p.pick(p.domain.buttons, rng.randint(0, 2)),
                         name="command bar")
    else:
        tabs = c.tabs(p, p.pick(vocab.WINDOWS_RIBBON_TABS, rng.randint(4, 8)), active=1, name="ribbon")
        bars = tabs + c.toolbar(
            p,
            p.pick(
                ("save", "undo", "redo", "copy", "clipboard", "scissors", "printer", "link", "image", "list"),
                rng.randint(4, 8),
            ),
            name="ribbon toolbar",
        )
    address = ""
    if rng.random() < 0.55:
        nav = p.group("navigation buttons", "x")
        crumbs = " › ".join(esc(s) for s in ("This PC", rng.choice(p.domain.nav)[0], p.value("title")))
        buttons = "".join(c.icon_button(p, i, group=nav) for i in ("arrow-left", "arrow-right", "refresh"))
        address = (
            f'<div class="address">{buttons}'
            f'<div class="crumbs">{crumbs}</div>{c.search_box(p, f"Search {section}", width="13rem")}</div>'
        )
    side_w = rng.uniform(12, 16) if w_rem > 55 else 0
    sidebar = ""
    if side_w:
        sidebar = c.sidebar(p, [(None, list(p.domain.nav))], width_rem=side_w, active=section)
    scene = rng.choice(sorted(DESKTOP_SCENES))
    content = DESKTOP_SCENES[scene](p, w_rem - side_w, h_rem - 7)
    status = (
        c.statusbar(p, [f"{rng.randint(2, 500)} items", f"{rng.randint(1, 9)} selected"]) if rng.random() < 0.4 else ""
    )
    radius = "border-radius:0" if maximized else ""
    window = (
        f'<div class="window" style="left:{left:.0f}px;top:{top:.0f}px;width:{w:.0f}px;height:{h:.0f}px;{radius}">'
        f'{title}{bars}{address}<div class="body">{sidebar}<div class="main">{content}</div></div>{status}</div>'
    )
    overlay = ""
    roll = rng.random()
    if roll < 0.15 and not open_title:
        overlay = _dialog(p)
    elif roll < 0.27 and not open_title:
        overlay = _context_menu(p, width, height - bar_h)
    desk_icons = _wallpaper_icons(p, 0, right=False) if not maximized and left > 9 * r and rng.random() < 0.5 else ""
    return f'<div class="screen desk">{desk_icons}{window}{_taskbar(p)}{overlay}</div>'


def _taskbar(p: Page) -> str:
    rng = p.rng
    group = p.group("taskbar", "x")
    apps = p.pick(
        ("folder", "globe", "mail", "calendar", "music", "image", "gear", "chat", "file", "cart"), rng.randint(4, 8)
    )
    search = c.search_box(p, "Search", width="13rem") if p.width_rem > 70 and rng.random() < 0.6 else ""
    center = c.icon_button(p, "windows", group=group) + search + "".join(c.icon_button(p, i, group=group) for i in apps)
    tray = "".join(c.icon_button(p, i, group=group) for i in p.pick(("wifi", "volume", "battery"), rng.randint(2, 3)))
    date = f"{rng.randint(1, 12)}/{rng.randint(1, 28)}/{rng.randint(2023, 2025)}"
    clock = f'<div class="clock">{esc(p.value("time"))}<br>{date}</div>'
    return f'<div class="taskbar"><div class="center">{center}</div><div class="tray">{tray}{clock}</div></div>'


# --- iOS --------------------------------------------------------------------------------------------


def _ios_status(p: Page, light: bool = False) -> str:
    color = "color:#fff" if light else ""
    icons = "".join(icon_svg(i) for i in ("signal", "wifi", "battery"))
    return (
        f'<div class="statusrow" style="{color}"><span>{p.rng.randint(1, 12)}:{p.rng.randint(0, 59):02d}</span>'
        f'<span class="row">{icons}</span></div>'
    )


def _ios_navbar(p: Page, title: str, *, back: str | None, right: list[str]) -> str:
    group = p.group("navigation bar", "x")
    left = ""
    if back:
        left = (
            f'<button class="btn ghost"{p.mark("button", text=back, icon="chevron-left", fn="back", group=group)}>'
            f"{icon_svg('chevron-left')}{esc(back)}</button>"
        )
    rights = "".join(
        c.icon_button(p, i, group=group) if i in ICONS else c.text_button(p, i, kind="ghost", group=group)
        for i in right
    )
    center = f'<span class="ntitle">{esc(title)}</span>' if title else ""
    return f'<div class="navbar" style="position:relative">{left}{center}<span class="spacer"></span>{rights}</div>'


def _ios_tabbar(p: Page, items: list[tuple[str, str]], active: int) -> str:
    group = p.group("tab bar", "x")
    cells = "".join(
        f'<div class="tbi{" active" if k == active else ""}"{p.mark("tab", text=label, icon=icon, group=group)}>'
        f"{icon_svg(icon)}<span>{esc(label)}</span></div>"
        for k, (label, icon) in enumerate(items)
    )
    return f'<div class="tabbar">{cells}</div>'


def _ios_settings(p: Page, w: float, h: float) -> str:
    rng = p.rng
    title = rng.choice(("Settings", "General", "Privacy", "Notifications"))
    parts = [_ios_navbar(p, "", back=rng.choice((None, "Back", "Settings")), right=[]),
             f'<div class="large">{esc(title)}</div>']
    if rng.random() < 0.6:
        parts.append(c.search_box(p, "Search", width="auto"))
    rows = p.pick(vocab.SETTINGS_ROWS, _fill(h - 10, 2.9, 18))
    cut = rng.randint(2, max(2, len(rows) - 2))
    parts.append(c.settings_rows(p, rows[:cut], tinted=True) + c.settings_rows(p, rows[cut:], tinted=True))
    return "".join(parts)


def _ios_list(p: Page, w: float, h: float, *, large_title: bool = True) -> str:
    rng = p.rng
    title, back = p.domain.nav[0][0], p.domain.nav[-1][0]
    right = p.pick(["compose", "more", "Edit", "plus"], rng.randint(1, 2))
    navbar = _ios_navbar(p, "" if large_title else title, back=rng.choice((None, "Back", back)), right=right)
    large = f'<div class="large">{esc(title)}</div>' if large_title else ""
    items = c.list_items(p, _fill(h - 12, 3.7, 16), avatars=rng.random() < 0.7)
    return f'{navbar}{large}{c.search_box(p, "Search", width="auto")}{items}'


def _ios_keyboard(p: Page, w: float, h: float) -> str:
    return _ios_list(p, w, h - 14, large_title=False)


def _ios_form(p: Page, w: float, h: float) -> str:
    spec = p.rng.choice(vocab.FORMS)
    navbar = _ios_navbar(p, spec[0], back=None, right=["Done"])
    form = c.form(p, spec, cols=1, cancel=False, check=p.rng.random() < 0.4, title=False)
    return f'{navbar}<div style="padding:1rem 1rem 0">{form}</div>'


def _ios_cards(p: Page, w: float, h: float) -> str:
    rng = p.rng
    parts = [f'<div class="large">{esc(rng.choice(p.domain.nav)[0])}</div>']
    if rng.random() < 0.5:
        parts.append(f'<div style="padding:0 1rem .8rem">{c.chips(p, p.pick(p.domain.tabs, 3))}</div>')
    cols = 1 if w < 30 else 2 if w < 55 else 3
    grid = c.cards(p, cols * 3, cols, actions=p.pick(("heart", "share", "more"), rng.randint(0, 2)))
    parts.append(f'<div style="padding:0 1rem">{grid}</div>')
    return "".join(parts)


def _ios_player(p: Page, w: float, h: float) -> str:
    rng = p.rng
    navbar = _ios_navbar(p, "Now Playing", back=None, right=["more"])
    a, b = p.color(), p.color()
    group = p.group("playback controls", "x")
    middle = "play" if rng.random() < 0.5 else "pause"
    controls = "".join(c.icon_button(p, i, group=group) for i in ("undo", middle, "skip"))
    extras = "".join(c.icon_button(p, i) for i in ("heart", "share", "list"))
    return (f'{navbar}<div class="player"><div class="cover" style="background:linear-gradient(135deg,{a},{b})">'
            f'{icon_svg("music")}</div>{c.heading(p, p.value("title"))}<div class="t2">{esc(p.value("artist"))}</div>'
            f'<div class="progress"><span style="width:{rng.randint(5, 95)}%"></span></div>'
            f'<div class="row" style="gap:2rem;font-size:1.6em">{controls}</div>'
            f'<div class="row" style="gap:1.4rem">{extras}</div></div>')


#: iOS scenes below the status bar (the home screen draws its own).
IOS_SCENES: Mapping[str, Scene] = {
    "settings": _ios_settings, "list": _ios_list, "keyboard": _ios_keyboard, "form": _ios_form,
    "cards": _ios_cards, "player": _ios_player,
}
_IOS_TABBED = frozenset({"list", "cards", "player"})


def _ios_home(p: Page) -> str:
    cols = 4 if p.width_rem < 34 else 6
    dock_apps = p.pick(vocab.IOS_APPS, 4)
    apps = p.pick([a for a in vocab.IOS_APPS if a not in dock_apps], cols * _fill(p.height_rem - 14, 6.2, 6))
    dock = "".join(c.app_grid(p, [a], cols=1, labels=False) for a in dock_apps)
    return (f'<div class="screen desk col">{_ios_status(p, light=True)}<div style="padding:1.2rem .8rem 0">'
            f'{c.app_grid(p, apps, cols=cols)}</div>'
            f'<div class="dots"><span class="on"></span><span></span><span></span></div>'
            f'<div class="dock">{dock}</div><div class="homebar" style="background:#fff"></div></div>')


def _action_sheet(p: Page) -> str:
    group = p.group("action sheet", "y")
    labels = p.pick(("Share", "Copy Link", "Add to Favorites", "Duplicate", "Move", "Print", "Delete"),
                    p.rng.randint(2, 4))
    acts = "".join(f'<div class="cellrow"{p.mark("button", text=t, group=group)}>{esc(t)}</div>' for t in labels)
    return (f'<div class="backdrop"></div><div class="sheet"><div class="group">{acts}</div><div class="group">'
            f'<div class="cellrow bold"{p.mark("button", text="Cancel", group=group)}>Cancel</div></div></div>')


def _ios(p: Page) -> str:
    rng = p.rng
    scene = rng.choice(("settings", "list", "list", "home", "form", "cards", "player", "keyboard"))
    if scene == "home":
        return _ios_home(p)
    status = _ios_status(p)
    nav = list(p.domain.nav)
    tabbar = _ios_tabbar(p, nav[:5], rng.randrange(min(5, len(nav)))) if scene in _IOS_TABBED else ""
    body = IOS_SCENES[scene](p, p.width_rem, p.height_rem)
    bottom = c.keyboard(p) if scene == "keyboard" else tabbar
    roll = rng.random()
    overlay = _dialog(p) if roll < 0.12 else _action_sheet(p) if roll < 0.22 and scene != "keyboard" else ""
    return (f'<div class="screen col">{status}<div class="grow" style="overflow:hidden">{body}</div>{bottom}{overlay}'
            f'<div class="homebar"></div></div>')


# --- web --------------------------------------------------------------------------------------------


def _web_header(p: Page, narrow: bool) -> str:
    rng = p.rng
    brand = (f'<div class="brand"><span class="logo">{icon_svg(rng.choice(p.domain.actions))}</span>'
             f"<span>{esc(rng.choice(p.domain.apps))}</span></div>")
    if narrow:
        icons = "".join(c.icon_button(p, i) for i in p.pick(("search", "cart", "bell", "user"), rng.randint(1, 2)))
        return f'<header class="hdr">{brand}<span class="spacer"></span>{icons}{c.icon_button(p, "menu")}</header>'
    group = p.group("navigation bar", "x")
    links = "".join(
        f'<a class="{"active" if k == 0 and rng.random() < 0.5 else ""}"{p.mark("link", text=t, group=group)}>'
        f"{esc(t)}</a>" for k, t in enumerate(p.pick(vocab.WEB_NAV, rng.randint(3, 6))))
    search = ""
    if rng.random() < 0.6:
        placeholder = rng.choice(("Search", "Search products", "Search docs", "Find anything…"))
        search = c.search_box(p, placeholder, width=f"{rng.uniform(12, 18):.1f}rem")
    icons = "".join(c.icon_button(p, i) for i in p.pick(("bell", "cart", "user", "help", "globe", "moon"),
                                                          rng.randint(0, 3)))
    auth = ""
    if rng.random() < 0.5:
        auth = c.text_button(p, "Log in", kind="ghost") + c.text_button(p, "Sign up", kind="primary")
    return (f'<header class="hdr">{brand}<nav class="nav">{links}</nav><span class="spacer"></span>'
            f"{search}{icons}{auth}</header>")


def _grid(cols: int, inner: str, style: str = "") -> str:
    return (f'<div style="display:grid;grid-template-columns:repeat({cols},minmax(0,1fr));gap:1rem;{style}">'
            f"{inner}</div>")


def _web_landing(p: Page, w: float, h: float) -> str:
    rng = p.rng
    start = rng.choice(("Get started", "Start free trial", "Try it free"))
    more = rng.choice(("Learn more", "Watch demo", "Contact sales"))
    hero = (f'<div class="hero wrap">{c.heading(p, rng.choice(vocab.HEADLINES), cls="h1")}{c.paragraph(p, 2)}'
            f'<div class="row" style="gap:.7rem">{c.text_button(p, start, kind="primary big")}'
            f'{c.text_button(p, more, kind="big")}</div></div>')
    titles = ("Real-time insights", "Secure by default", "Works offline", "Sync everywhere", "Global scale",
              "Integrations")
    feats = []
    for icon, title in zip(p.pick(("chart", "lock", "cloud", "refresh", "globe", "link"), 3), p.pick(titles, 3)):
        cta = rng.choice(("Learn more", "Read the docs", "See how", "Explore")) + " →"
        feats.append(f'<div class="panel"><span class="ibox" style="background:{p.color()}">{icon_svg(icon)}</span>'
                     f'<div class="h3" style="margin:.6rem 0 .3rem"{p.mark("heading", text=title, target=False)}>'
                     f"{esc(title)}</div>{c.paragraph(p, 1)}{c.link(p, cta)}</div>")
    return f'{hero}<div class="wrap">{_grid(1 if w < 45 else 3, "".join(feats), "padding:0 2rem")}</div>'


def _web_shop(p: Page, w: float, h: float) -> str:
    rng = p.rng
    filters = ""
    if w > 45:
        options = ("Free shipping", "On sale", "In stock", "New arrivals", "Top rated", "Eco friendly")
        checks = "".join(f"<div>{c.checkbox(p, t, on=rng.random() < 0.3)}</div>" for t in p.pick(options, 4))
        filters = f'<aside class="filters"><div class="h3">Filters</div>{checks}{c.text_button(p, "Apply")}</aside>'
    cols = max(1, min(5, int((w - (15 if filters else 0)) / 14)))
    grid = c.cards(p, cols * 3, cols, actions=p.pick(("heart", "share"), rng.randint(0, 1)), button="Add to cart")
    return f'<div class="page">{filters}<div class="grow pad" style="overflow:hidden">{grid}</div></div>'


def _web_dashboard(p: Page, w: float, h: float) -> str:
    side_w = 14 if w > 45 else 0
    side = c.sidebar(p, [(None, list(p.domain.nav))], width_rem=side_w, active=p.domain.nav[0][0]) if side_w else ""
    return f'<div class="page">{side}<div class="main">{scene_dashboard(p, w - side_w, h - 6)}</div></div>'


def _web_article(p: Page, w: float, h: float) -> str:
    rng = p.rng
    share = p.group("share bar", "x")
    icons = "".join(c.icon_button(p, i, group=share, cls="iconbtn boxed")
                    for i in p.pick(("share", "bookmark", "link", "printer", "mail", "heart"), 4))
    crumbs = " / ".join(esc(t) for t in ("Home", rng.choice(vocab.WEB_NAV), p.value("title")))
    title = f"{p.value('title')} {rng.choice(('Explained', 'in Practice', 'for Beginners', 'Revisited'))}"
    text = "".join(c.paragraph(p, rng.randint(2, 5)) for _ in range(_fill(h, 6, 8)))
    related = ""
    if w > 45:
        links = "".join(f'<div style="margin:.4rem 0">{c.link(p, p.value("subject"))}</div>' for _ in range(4))
        related = f'<aside style="width:16rem;flex:none;padding:1.5rem"><div class="h3">Related</div>{links}</aside>'
    meta = f"{esc(p.value('date'))} · {rng.randint(3, 15)} min read"
    return (f'<div class="page"><article class="grow" style="padding:1.5rem 2rem;overflow:hidden">'
            f'<div class="t2">{crumbs}</div>{c.heading(p, title, cls="h1")}'
            f'<div class="row" style="gap:.6rem;margin:.6rem 0 1rem">{c.avatar(p, p.value("person"))}'
            f'<span class="t2">{meta}</span><span class="spacer"></span>{icons}</div>{text}</article>{related}</div>')


def _web_auth(p: Page, w: float, h: float) -> str:
    rng = p.rng
    spec = rng.choice(vocab.FORMS[:2] + vocab.FORMS[-1:])
    social = "".join(c.text_button(p, f"Continue with {name}")
                     for name in p.pick(("Google", "GitHub", "Apple", "Microsoft"), rng.randint(0, 2)))
    form = c.form(p, spec, cols=1, cancel=False, check=rng.random() < 0.6)
    help_link = c.link(p, rng.choice(("Forgot password?", "Need help?", "Create an account")))
    return (f'<div class="page" style="align-items:flex-start;justify-content:center;padding-top:2rem">'
            f'<div class="panel" style="width:{min(w, 26.0):.1f}rem">{form}'
            f'<div class="col" style="gap:.5rem;margin-top:.8rem">{social}</div>'
            f'<div style="margin-top:.8rem">{help_link}</div></div></div>')


def _web_settings(p: Page, w: float, h: float) -> str:
    rng = p.rng
    sections = ("Profile", "Account", "Notifications", "Billing", "Security", "Integrations", "Team")
    tabs = c.tabs(p, p.pick(sections, rng.randint(3, 6)))
    form = c.form(p, rng.choice(vocab.FORMS), cols=1, cancel=True, check=False)
    toggles = "".join(
        f'<div class="row" style="gap:1rem;padding:.6rem 0;border-bottom:1px solid var(--grid)">'
        f'<div class="grow"><div class="t1"{p.mark("label", text=t, target=False)}>{esc(t)}</div>'
        f'<div class="t2">{esc(p.value("sentence"))}</div></div>{c.toggle(p, on=rng.random() < 0.5)}</div>'
        for t in p.pick(vocab.SETTING_TOGGLE_EXTRAS, 3))
    inner = f"<div>{form}</div><div>{c.heading(p, 'Preferences')}{toggles}</div>"
    grid = _grid(2 if w > 60 else 1, inner, "gap:2rem;padding:1.4rem 2rem")
    return f'<div class="col grow" style="overflow:hidden">{tabs}<div class="wrap">{grid}</div></div>'


def _web_table(p: Page, w: float, h: float) -> str:
    return (f'<div class="col grow wrap" style="overflow:hidden;padding:1rem">{scene_table(p, w, h - 8)}'
            f'<div class="row" style="padding:.8rem">{c.pager(p, p.rng.randint(3, 7))}</div></div>')


def _web_cards(p: Page, w: float, h: float) -> str:
    return f'<div class="wrap grow" style="overflow:hidden">{scene_cards(p, w, h - 6)}</div>'


def _web_pricing(p: Page, w: float, h: float) -> str:
    features = ("Unlimited projects", "Priority support", "Custom domains", "Analytics", "SSO", "API access",
                "Team roles", "Audit log")
    plans = []
    for k, (name, price, label) in enumerate((("Starter", "$0", "Get started"), ("Pro", "$12", "Upgrade to Pro"),
                                              ("Enterprise", "$49", "Contact sales"))):
        ticks = "".join(f'<div class="row" style="gap:.4rem">{icon_svg("check")}<span>{esc(f)}</span></div>'
                        for f in p.pick(features, 3))
        plans.append(f'<div class="panel col" style="gap:.6rem">'
                     f'<div class="h3"{p.mark("heading", text=name, target=False)}>{esc(name)}</div>'
                     f'<div class="h1">{price}<span class="t2">/mo</span></div>{ticks}'
                     f'{c.text_button(p, label, kind="primary" if k == 1 else "")}</div>')
    title = c.heading(p, "Simple, transparent pricing", cls="h1")
    grid = _grid(1 if w < 45 else 3, "".join(plans), "margin-top:1.2rem")
    return f'<div class="wrap pad" style="overflow:hidden">{title}{grid}</div>'


#: Web page bodies between the header and the footer, given the page width and height in rem.
WEB_SCENES: Mapping[str, Scene] = {
    "landing": _web_landing, "shop": _web_shop, "dashboard": _web_dashboard, "article": _web_article,
    "auth": _web_auth, "settings": _web_settings, "table": _web_table, "cards": _web_cards, "pricing": _web_pricing,
}


def _web_overlay(p: Page) -> str:
    rng = p.rng
    roll = rng.random()
    if roll < 0.12:
        return _dialog(p)
    if roll < 0.24:
        return (f'<div class="banner"><span class="grow" style="min-width:12rem">We use cookies to improve your '
                f'experience. See our {c.link(p, "Cookie Policy")}.</span>{c.text_button(p, "Manage")}'
                f'{c.text_button(p, "Accept all", kind="primary")}</div>')
    if roll < 0.32:
        message = rng.choice(("Changes saved", "Item added to cart", "Message sent", "Link copied"))
        return f'<div class="toast">{esc(message)}{c.text_button(p, "Undo", kind="ghost")}</div>'
    return ""


def _web(p: Page) -> str:
    rng = p.rng
    scene = rng.choice(sorted(WEB_SCENES))
    if scene == "shop":
        p.domain = vocab.DOMAINS["shop"]
    header = _web_header(p, narrow=p.width_rem < 48)
    body = WEB_SCENES[scene](p, p.width_rem - 3, p.height_rem)
    footer = ""
    if rng.random() < 0.5:
        group = p.group("footer", "x")
        links = "".join(c.link(p, t, group=group, cls="") for t in p.pick(vocab.FOOTER_LINKS, rng.randint(3, 6)))
        footer = f'<footer class="footer">{links}</footer>'
    return (f'<div class="screen col">{header}<div class="col grow" style="overflow:hidden;min-height:0">{body}</div>'
            f"{footer}{_web_overlay(p)}</div>")


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
    "settings": _simple_settings, "dialog": _dialog,
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
    "macos": _macos, "windows": _windows, "ios": _ios, "web": _web,
}
