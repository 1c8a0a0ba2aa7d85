"""The component library: toolbars, menus, dialogs, forms, tables, lists, cards, settings, tabs, sidebars,
icon grids, status bars, keyboards. Each component writes HTML and registers its candidate elements.

A candidate carries `data-gid` (and `data-fn` when it has a function) in the HTML, and an `Element` record
on the `Page` (`page.py`) saying what it is (role, visible text, icon, function, group), so instructions can be
written from the records and checked against boxes read from the DOM after layout. Components never
nest one candidate inside another: a point inside a box then means exactly one target.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from uivenus.synth.grounding import vocab
from uivenus.synth.grounding.icons import icon_svg
from uivenus.synth.grounding.page import Page

esc = html.escape


# --- small controls -------------------------------------------------------------------------------


def icon_button(
    p: Page, icon: str, *, group: str | None = None, obj: str | None = None, cls: str = "iconbtn", fn: str | None = None
) -> str:
    attrs = p.mark("icon_button", icon=icon, group=group, obj=obj, fn=fn)
    return f'<button class="{cls}"{attrs}>{icon_svg(icon)}</button>'


def text_button(
    p: Page, label: str, *, kind: str = "", icon: str | None = None, group: str | None = None, obj: str | None = None
) -> str:
    glyph = icon_svg(icon) if icon else ""
    return (
        f'<button class="btn {kind}"{p.mark("button", text=label, icon=icon, group=group, obj=obj)}>'
        f"{glyph}{esc(label)}</button>"
    )


def link(p: Page, label: str, *, group: str | None = None, cls: str = "link") -> str:
    return f'<a class="{cls}"{p.mark("link", text=label, group=group)}>{esc(label)}</a>'


def search_box(p: Page, placeholder: str, *, width: str = "14rem", cls: str = "search") -> str:
    return (
        f'<div class="{cls}" style="width:{width}">{icon_svg("search")}'
        f'<input placeholder="{esc(placeholder)}"'
        f'{p.mark("search", text=placeholder, icon="search", fn="search")}></div>'
    )


def field_input(p: Page, label: str, placeholder: str, kind: str, *, value: str | None = None) -> str:
    """A labelled input; the label is an anchor ("the field under Email"), the input the target."""
    shown = value or placeholder
    attrs = p.mark("field", text=shown)
    label_html = f'<label class="lbl"{p.mark("label", text=label, target=False)}>{esc(label)}</label>'
    if kind == "textarea":
        control = f'<textarea class="field" placeholder="{esc(placeholder)}"{attrs}>{esc(value or "")}</textarea>'
    else:
        typ = "password" if kind == "password" and value else "text"
        val = f' value="{esc(value)}"' if value else ""
        control = f'<input class="field" type="{typ}" placeholder="{esc(placeholder)}"{val}{attrs}>'
    return f'<div class="fgroup">{label_html}{control}</div>'


def checkbox(p: Page, label: str, *, on: bool = False) -> str:
    tick = icon_svg("check", stroke=3.2) if on else ""
    return (
        f'<label class="check"{p.mark("checkbox", text=label)}><span class="box{" on" if on else ""}">{tick}</span>'
        f"{esc(label)}</label>"
    )


def toggle(p: Page, *, on: bool, obj: str | None = None) -> str:
    return f'<span class="toggle{" on" if on else ""}"{p.mark("toggle", obj=obj)}></span>'


def heading(p: Page, text: str, *, cls: str = "h2", anchor: bool = True) -> str:
    attrs = p.mark("heading", text=text, target=False) if anchor else ""
    return f'<div class="{cls}"{attrs}>{esc(text)}</div>'


def avatar(p: Page, name: str) -> str:
    initials = "".join(part[0] for part in name.split()[:2])
    return f'<span class="avatar" style="background:{p.color()}">{esc(initials)}</span>'


# --- bars -----------------------------------------------------------------------------------------


def toolbar(
    p: Page,
    icons: Sequence[str],
    *,
    title: str | None = None,
    buttons: Sequence[str] = (),
    search: str | None = None,
    lead: Sequence[tuple[str, str]] = (),
    name: str = "toolbar",
) -> str:
    """A row of controls; every button in it (lead text buttons, icons, trailing buttons) joins one group,
    so "the last button in the toolbar" means what it shows."""
    group = p.group(name, "x")
    parts = [text_button(p, label, icon=icon, kind="primary", group=group) for label, icon in lead]
    if lead:
        parts.append('<span class="sep"></span>')
    if title:
        parts.append(f'<span class="title">{esc(title)}</span>')
    split = p.rng.randint(0, len(icons))
    parts += [icon_button(p, i, group=group) for i in icons[:split]]
    if split and split < len(icons):
        parts.append('<span class="sep"></span>')
    parts += [icon_button(p, i, group=group) for i in icons[split:]]
    parts.append('<span class="spacer"></span>')
    parts += [text_button(p, b, kind="primary" if k == len(buttons) - 1 else "", group=group)
              for k, b in enumerate(buttons)]
    if search:
        parts.append(search_box(p, search, width=f"{p.rng.uniform(10, 16):.1f}rem"))
    return f'<div class="toolbar">{"".join(parts)}</div>'


def menu_titles(
    p: Page,
    titles: Sequence[str],
    *,
    cls: str,
    open_title: str | None = None,
    dropdown_html: str = "",
    bold_first: bool = False,
    tail: str = "",
) -> str:
    """Menu bar titles; the open one wraps its dropdown, positioned under it."""
    group = p.group("menu bar", "x")
    out = []
    for k, title in enumerate(titles):
        extra = " app" if bold_first and k == 0 else ""
        attrs = p.mark("menu", text=title, group=group)
        if title == open_title:
            out.append(
                f'<span class="anchor"><span class="mt open{extra}"{attrs}>{esc(title)}</span>{dropdown_html}</span>'
            )
        else:
            out.append(f'<span class="mt{extra}"{attrs}>{esc(title)}</span>')
    return f'<div class="{cls}">{"".join(out)}{tail}</div>'


def dropdown(
    p: Page,
    items: Sequence[str],
    *,
    shortcut_prefix: str | None,
    style: str = "top:calc(100% + .2rem);left:0",
    highlight: bool = True,
) -> str:
    group = p.group("menu", "y")
    hl = p.rng.randrange(len(items)) if highlight and p.rng.random() < 0.5 else -1
    rows = []
    for k, item in enumerate(items):
        if item == "-":
            rows.append('<div class="msep"></div>')
            continue
        key = vocab.SHORTCUTS.get(item) if shortcut_prefix is not None else None
        kbd = f'<span class="kbd">{esc(shortcut_prefix + key)}</span>' if key else ""
        rows.append(
            f'<div class="mi{" hl" if k == hl else ""}"{p.mark("menu_item", text=item, group=group)}>'
            f"<span>{esc(item)}</span>{kbd}</div>"
        )
    return f'<div class="menu" style="{style}">{"".join(rows)}</div>'


def tabs(p: Page, labels: Sequence[str], *, segmented: bool = False, active: int = 0, name: str = "tab bar") -> str:
    group = p.group(name, "x")
    items = "".join(
        f'<span class="tab{" active" if k == active else ""}"{p.mark("tab", text=t, group=group)}>{esc(t)}</span>'
        for k, t in enumerate(labels)
    )
    return f'<div class="seg">{items}</div>' if segmented else f'<div class="tabs">{items}</div>'


def sidebar(
    p: Page,
    sections: Sequence[tuple[str | None, Sequence[tuple[str, str]]]],
    *,
    width_rem: float,
    active: str | None = None,
) -> str:
    group = p.group("sidebar", "y")
    parts = []
    for head, items in sections:
        if head:
            parts.append(f'<div class="sb-head">{esc(head)}</div>')
        for label, icon in items:
            cls = "sb-item active" if label == active else "sb-item"
            parts.append(
                f'<div class="{cls}"{p.mark("item", text=label, icon=icon, group=group)}>'
                f"{icon_svg(icon)}<span>{esc(label)}</span></div>"
            )
    return f'<nav class="sidebar" style="width:{width_rem:.1f}rem">{"".join(parts)}</nav>'


def statusbar(p: Page, texts: Sequence[str]) -> str:
    return f'<div class="statusbar">{"".join(f"<span>{esc(t)}</span>" for t in texts)}</div>'


# --- content blocks -------------------------------------------------------------------------------


def data_table(p: Page, n_rows: int, n_cols: int, *, checkboxes: bool, row_action: str | None, zebra: bool) -> str:
    columns = list(p.domain.columns[: max(2, n_cols)])
    head = "".join(f"<th>{esc(h)}</th>" for h, _ in columns)
    if checkboxes:
        head = "<th></th>" + head
    if row_action:
        head += "<th></th>"
    selected = p.rng.randrange(n_rows) if p.rng.random() < 0.4 else -1
    rows = []
    for r in range(n_rows):
        cells = []
        if checkboxes:
            on = r == selected
            cells.append(
                f'<td><span class="box{" on" if on else ""}"{p.mark("checkbox", obj=p.domain.obj)}>'
                f"{icon_svg('check', stroke=3.2) if on else ''}</span></td>"
            )
        title_kind = columns[0][1]
        title = p.value(title_kind)
        glyph = icon_svg("file") if title_kind == "filename" else ""
        cells.append(f'<td><span class="cell"{p.mark("item", text=title)}>{glyph}<span>{esc(title)}</span></span></td>')
        for _, kind in columns[1:]:
            value = p.value(kind)
            cells.append(
                f'<td><span class="badge">{esc(value)}</span></td>' if kind == "status" else f"<td>{esc(value)}</td>"
            )
        if row_action:
            cells.append(f"<td>{icon_button(p, row_action)}</td>")
        cls = "sel" if r == selected and not checkboxes else ("zebra" if zebra and r % 2 else "")
        rows.append(f'<tr class="{cls}">{"".join(cells)}</tr>')
    return f'<table class="tbl"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def list_items(p: Page, n: int, *, avatars: bool, selected: int = -1, trailing_icon: str | None = None) -> str:
    title_kind, sub_kind, meta_kind = p.domain.row
    group = p.group("list", "y")
    rows = []
    for k in range(n):
        title, sub, meta = p.value(title_kind), p.value(sub_kind), p.value(meta_kind)
        lead = (
            avatar(p, title)
            if avatars and title_kind == "person"
            else (
                f'<span class="avatar" style="background:{p.color()}">'
                f'{icon_svg(p.rng.choice(("music", "file", "image", "pin")))}</span>'
                if avatars
                else ""
            )
        )
        body = (
            f'<div class="grow"><div class="t1">{esc(title)}</div><div class="t2">{esc(sub)}</div></div>'
            f'<span class="t2">{esc(meta)}</span>'
        )
        cls = "item sel" if k == selected else "item"
        if trailing_icon:  # the row holds a button, so the title is the row's target instead of the row
            body = (
                f'<div class="grow"><div class="t1"{p.mark("item", text=title, group=group)}>{esc(title)}</div>'
                f'<div class="t2">{esc(sub)}</div></div><span class="t2">{esc(meta)}</span>'
                f"{icon_button(p, trailing_icon)}"
            )
            rows.append(f'<div class="{cls}">{lead}{body}</div>')
        else:
            rows.append(f'<div class="{cls}"{p.mark("item", text=title, group=group)}>{lead}{body}</div>')
    return f'<div class="list">{"".join(rows)}</div>'


def cards(p: Page, n: int, cols: int, *, actions: Sequence[str] = (), button: str | None = None) -> str:
    title_kind, sub_kind, meta_kind = p.domain.row
    art_icon = {"shop": "cart", "music": "music", "photos": "image", "travel": "pin"}.get(p.domain.name, "file")
    items = []
    for _ in range(n):
        a, b = p.color(), p.color()
        title, sub, meta = p.value(title_kind), p.value(sub_kind), p.value(meta_kind)
        acts = "".join(icon_button(p, i) for i in actions)
        btn = text_button(p, button, kind="primary") if button else ""
        meta_html = (
            f'<span class="price">{esc(meta)}</span>'
            if meta_kind == "amount"
            else f'<span class="t2">{esc(meta)}</span>'
        )
        items.append(
            f'<div class="card"><div class="art" style="background:linear-gradient(135deg,{a},{b})">'
            f'{icon_svg(art_icon, css_class="ic big")}</div><div class="cb">'
            f'<div class="t1"{p.mark("title", text=title)}>{esc(title)}</div><div class="t2">{esc(sub)}</div>'
            f'<div class="actions">{meta_html}<span class="spacer"></span>{acts}</div>{btn}</div></div>'
        )
    return f'<div class="cards" style="grid-template-columns:repeat({cols},minmax(0,1fr))">{"".join(items)}</div>'


def form(
    p: Page,
    spec: tuple[str, str, tuple[tuple[str, str, str], ...]],
    *,
    cols: int,
    cancel: bool,
    check: bool,
    filled: float = 0.3,
    title: bool = True,
) -> str:
    name, submit, fields = spec
    inputs = []
    for label, placeholder, kind in fields:
        value_kind = next((v for k, v in vocab.FIELD_VALUES.items() if k in label.lower()), None)
        value = p.value(value_kind) if value_kind and p.rng.random() < filled else None
        inputs.append(field_input(p, label, placeholder, kind, value=value))
    grid = (f'<div style="display:grid;grid-template-columns:repeat({cols},minmax(0,1fr));gap:0 1rem">'
            f'{"".join(inputs)}</div>')
    extra = (
        f'<div class="fgroup">{checkbox(p, p.rng.choice(vocab.CHECKBOX_LABELS), on=p.rng.random() < 0.5)}</div>'
        if check
        else ""
    )
    buttons = (text_button(p, "Cancel") if cancel else "") + text_button(p, submit, kind="primary")
    head = heading(p, name) + '<div style="height:.8rem"></div>' if title else ""
    return f'<div>{head}{grid}{extra}<div class="row" style="gap:.6rem;justify-content:flex-end">{buttons}</div></div>'


def dialog(
    p: Page, title: str, text: str, buttons: Sequence[tuple[str, str]], *, close: bool = False, body: str = ""
) -> str:
    """A modal: backdrop over the whole screen, everything beneath it occluded."""
    close_html = f'<span class="spacer"></span>{icon_button(p, "close", obj="dialog")}' if close else ""
    acts = "".join(text_button(p, label, kind=kind, obj="dialog") for label, kind in buttons)
    return (
        f'<div class="backdrop"><div class="dialog"><div class="row dhead">'
        f'<div class="h3"{p.mark("heading", text=title, target=False)}>{esc(title)}</div>{close_html}</div>'
        f'<div class="dtext muted">{esc(text)}</div>{body}<div class="acts">{acts}</div></div></div>'
    )


def settings_rows(p: Page, rows: Sequence[tuple[str, str, str]], *, tinted: bool) -> str:
    """iOS-style cells: icon tile, label, then a switch, a value or a chevron. Rows with a switch are not one
    target, so a list holding any is no group ("the second option" would skip them)."""
    group = None if any(kind == "toggle" for _, _, kind in rows) else p.group("settings list", "y")
    out = []
    for label, icon, kind in rows:
        tile = f'<span class="ibox" style="background:{p.color()}">{icon_svg(icon)}</span>' if tinted else ""
        chevron = icon_svg("chevron-right", css_class="ic chev")
        if kind == "toggle":
            out.append(
                f'<div class="cellrow">{tile}<span class="grow"{p.mark("label", text=label, target=False)}>'
                f"{esc(label)}</span>{toggle(p, on=p.rng.random() < 0.6, obj='setting')}</div>"
            )
        else:
            value = f'<span class="muted">{esc(p.rng.choice(vocab.SETTING_VALUES))}</span>' if kind == "value" else ""
            out.append(
                f'<div class="cellrow"{p.mark("setting", text=label, icon=None, group=group)}>{tile}'
                f'<span class="grow">{esc(label)}</span>{value}{chevron}</div>'
            )
    return f'<div class="group">{"".join(out)}</div>'


def app_grid(p: Page, apps: Sequence[tuple[str, str]], *, cols: int, labels: bool = True, item_style: str = "") -> str:
    out = []
    style = f' style="{item_style}"' if item_style else ""
    for label, icon in apps:
        tile = f'<span class="tile" style="background:{p.color()}">{icon_svg(icon)}</span>'
        if labels:
            out.append(
                f'<div class="app"{style}{p.mark("app", text=label, icon=icon)}>{tile}'
                f'<span class="name">{esc(label)}</span></div>'
            )
        else:
            out.append(f'<div class="app"{style}{p.mark("app", icon=icon)}>{tile}</div>')
    return f'<div class="apps" style="grid-template-columns:repeat({cols},minmax(0,1fr))">{"".join(out)}</div>'


def dock(p: Page, apps: Sequence[tuple[str, str]], *, name: str = "dock") -> str:
    group = p.group(name, "x")
    tiles = "".join(
        f'<span class="tile"{p.mark("app", icon=icon, group=group)} style="background:{p.color()}">'
        f"{icon_svg(icon)}</span>"
        for _, icon in apps
    )
    return f'<div class="dock">{tiles}</div>'


def keyboard(p: Page) -> str:
    """An on-screen QWERTY keyboard; letter keys are targets, rows are groups."""
    rows = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
    upper = p.rng.random() < 0.5
    out = []
    for k, letters in enumerate(rows):
        group = p.group(("top", "middle", "bottom")[k] + " row of the keyboard", "x")
        keys = "".join(
            f'<span class="key"{p.mark("key", text=c.upper() if upper else c, group=group)}>'
            f"{esc(c.upper() if upper else c)}</span>"
            for c in letters
        )
        if k == 2:  # shift and backspace belong to the row, or "the rightmost key" would lie
            keys = (
                f'<span class="key wide"{p.mark("key", group=group)}>⇧</span>{keys}'
                f'<span class="key wide"{p.mark("key", group=group)}>⌫</span>'
            )
        out.append(f'<div class="kb-row">{keys}</div>')
    out.append(
        f'<div class="kb-row"><span class="key wide">123</span>'
        f'<span class="key space"{p.mark("key", text="space")}>space</span>'
        f'<span class="key wide"{p.mark("key", text="return")}>return</span></div>'
    )
    return f'<div class="keyboard">{"".join(out)}</div>'


def chips(p: Page, labels: Sequence[str]) -> str:
    group = p.group("filter bar", "x")
    on = p.rng.randrange(len(labels))
    return (
        '<div class="row" style="gap:.45rem;flex-wrap:wrap">'
        + "".join(
            f'<span class="chip{" on" if k == on else ""}"{p.mark("chip", text=t, group=group)}>{esc(t)}</span>'
            for k, t in enumerate(labels)
        )
        + "</div>"
    )


def pager(p: Page, pages: int) -> str:
    group = p.group("pagination", "x")
    current = p.rng.randint(1, pages)
    items = (
        [icon_button(p, "chevron-left", fn="back")]
        + [
            f'<span class="pg{" on" if n == current else ""}"{p.mark("page", text=str(n), group=group)}>{n}</span>'
            for n in range(1, pages + 1)
        ]
        + [icon_button(p, "chevron-right", fn="forward")]
    )
    return f'<div class="pager">{"".join(items)}</div>'


def stat_cards(p: Page, n: int) -> str:
    labels = p.pick(("Revenue", "Active users", "New orders", "Conversion", "Refunds", "Sessions", "Churn"), n)
    kinds = {"Revenue": "amount", "Refunds": "amount", "Conversion": "percent", "Churn": "percent"}
    cells = "".join(
        f'<div class="stat"><div class="t2">{esc(label)}</div>'
        f'<div class="v">{esc(p.value(kinds.get(label, "count")))}</div>'
        f'<div class="small" style="color:{p.rng.choice(("#16a34a", "#dc2626"))}">'
        f"{p.rng.choice(('+', '-'))}{p.rng.randint(1, 40)}.{p.rng.randint(0, 9)}%</div></div>"
        for label in labels
    )
    return f'<div style="display:grid;grid-template-columns:repeat({n},minmax(0,1fr));gap:1rem">{cells}</div>'


def bar_chart(p: Page, bars: int) -> str:
    spans = "".join(f'<span style="height:{p.rng.randint(15, 100)}%"></span>' for _ in range(bars))
    return f'<div class="bars">{spans}</div>'


def paragraph(p: Page, sentences: int) -> str:
    return f'<p class="para">{esc(" ".join(p.value("sentence") for _ in range(sentences)))}</p>'
