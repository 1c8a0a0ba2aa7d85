"""Web pages: a site's header and footer around one page body, and the web's overlays.

One job: compose a full web page — a header (brand, navigation, search, account buttons; a menu button when
narrow), a body (`WEB_SCENES`: landing, shop, dashboard, article, sign-in, settings, table, cards, pricing), an
optional footer, and sometimes a dialog, a cookie banner or a toast. `layout.compose` calls `web_screen` through
its table of composers.
"""

from __future__ import annotations

from collections.abc import Mapping

from uivenus.synth.grounding import components as c
from uivenus.synth.grounding import vocab
from uivenus.synth.grounding.components import esc
from uivenus.synth.grounding.icons import icon_svg
from uivenus.synth.grounding.page import Page
from uivenus.synth.grounding.scenes import Scene, dialog_overlay, fill_rows, scene_cards, scene_dashboard, scene_table

__all__ = ["WEB_SCENES", "web_screen"]


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
    text = "".join(c.paragraph(p, rng.randint(2, 5)) for _ in range(fill_rows(h, 6, 8)))
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
        return dialog_overlay(p)
    if roll < 0.24:
        return (f'<div class="banner"><span class="grow" style="min-width:12rem">We use cookies to improve your '
                f'experience. See our {c.link(p, "Cookie Policy")}.</span>{c.text_button(p, "Manage")}'
                f'{c.text_button(p, "Accept all", kind="primary")}</div>')
    if roll < 0.32:
        message = rng.choice(("Changes saved", "Item added to cart", "Message sent", "Link copied"))
        return f'<div class="toast">{esc(message)}{c.text_button(p, "Undo", kind="ghost")}</div>'
    return ""


def web_screen(p: Page) -> str:
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
