"""Desktop screens: macOS and Windows chrome around a desktop scene.

One job: compose a full desktop screen — macOS's menu bar, traffic-light title bar, dock and wallpaper icons;
Windows' title bar, menu bar, command bar or ribbon, address bar and taskbar — around a window filled with one of
`scenes.DESKTOP_SCENES`, sometimes with a window behind, an open menu, a context menu or a dialog on top.
`layout.compose` calls `macos_screen` or `windows_screen` through its table of composers.
"""

from __future__ import annotations

from uivenus.synth.grounding import components as c
from uivenus.synth.grounding import vocab
from uivenus.synth.grounding.components import esc
from uivenus.synth.grounding.icons import icon_svg
from uivenus.synth.grounding.page import Page
from uivenus.synth.grounding.scenes import DESKTOP_SCENES, dialog_overlay, fill_rows

__all__ = ["macos_screen", "windows_screen"]


def _context_menu(p: Page, x_max: float, y_max: float, y_min: float = 0) -> str:
    items = p.pick(vocab.CONTEXT_ITEMS, p.rng.randint(4, 8))
    if p.rng.random() < 0.6:
        items.insert(p.rng.randint(1, len(items) - 1), "-")
    r = p.theme.root_px
    x = p.rng.uniform(0.1, 0.7) * max(1.0, x_max - 15 * r)
    y = y_min + p.rng.uniform(0.1, 0.8) * max(1.0, y_max - y_min - (len(items) * 2 + 1) * r)
    return c.dropdown(p, items, shortcut_prefix=None, style=f"left:{x:.0f}px;top:{y:.0f}px")


def _window(box: tuple[float, float, float, float], radius: str, head: str, sidebar: str, content: str,
            status: str) -> str:
    """An app window at `box` (left, top, width, height in px): its head (title bar, toolbars), then the sidebar and
    the scene side by side, then the status bar."""
    left, top, w, h = box
    return (
        f'<div class="window" style="left:{left:.0f}px;top:{top:.0f}px;width:{w:.0f}px;height:{h:.0f}px;{radius}">'
        f'{head}<div class="body">{sidebar}<div class="main">{content}</div></div>{status}</div>'
    )


def _desktop_overlay(p: Page, open_title: str | None, x_max: float, y_max: float, y_min: float = 0) -> str:
    """Now and then a dialog or a context menu on top of the desktop; none while a menu is open."""
    roll = p.rng.random()
    if roll < 0.15 and not open_title:
        return dialog_overlay(p)
    if roll < 0.27 and not open_title:
        return _context_menu(p, x_max, y_max, y_min)
    return ""


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


def macos_screen(p: Page) -> str:
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
            f"{c.list_items(p, fill_rows(bh / r, 3.6, 10), avatars=False)}</div>"
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
    window = _window((left, top, w, h), radius, head, sidebar, content, status)
    overlay = _desktop_overlay(p, open_title, width, height - dock_h, bar_h)
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


def windows_screen(p: Page) -> str:
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
    window = _window((left, top, w, h), radius, f"{title}{bars}{address}", sidebar, content, status)
    overlay = _desktop_overlay(p, open_title, width, height - bar_h)
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
