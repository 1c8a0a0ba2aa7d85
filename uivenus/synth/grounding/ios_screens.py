"""iOS screens: status bar, navigation bar, tab bar and the phone scenes between them.

One job: compose a full iOS screen — a settings page, a list, a form, cards, a player, a list above the keyboard,
or the home screen with its dock — sometimes with a dialog or an action sheet on top. `layout.compose` calls
`ios_screen` through its table of composers.
"""

from __future__ import annotations

from collections.abc import Mapping

from uivenus.synth.grounding import components as c
from uivenus.synth.grounding import vocab
from uivenus.synth.grounding.components import esc
from uivenus.synth.grounding.icons import ICONS, icon_svg
from uivenus.synth.grounding.page import Page
from uivenus.synth.grounding.scenes import Scene, dialog_overlay, fill_rows

__all__ = ["IOS_SCENES", "ios_screen"]


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
    rows = p.pick(vocab.SETTINGS_ROWS, fill_rows(h - 10, 2.9, 18))
    cut = rng.randint(2, max(2, len(rows) - 2))
    parts.append(c.settings_rows(p, rows[:cut], tinted=True) + c.settings_rows(p, rows[cut:], tinted=True))
    return "".join(parts)


def _ios_list(p: Page, w: float, h: float, *, large_title: bool = True) -> str:
    rng = p.rng
    title, back = p.domain.nav[0][0], p.domain.nav[-1][0]
    right = p.pick(["compose", "more", "Edit", "plus"], rng.randint(1, 2))
    navbar = _ios_navbar(p, "" if large_title else title, back=rng.choice((None, "Back", back)), right=right)
    large = f'<div class="large">{esc(title)}</div>' if large_title else ""
    items = c.list_items(p, fill_rows(h - 12, 3.7, 16), avatars=rng.random() < 0.7)
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
    apps = p.pick([a for a in vocab.IOS_APPS if a not in dock_apps], cols * fill_rows(p.height_rem - 14, 6.2, 6))
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


def ios_screen(p: Page) -> str:
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
    overlay = dialog_overlay(p) if roll < 0.12 else _action_sheet(p) if roll < 0.22 and scene != "keyboard" else ""
    return (f'<div class="screen col">{status}<div class="grow" style="overflow:hidden">{body}</div>{bottom}{overlay}'
            f'<div class="homebar"></div></div>')
