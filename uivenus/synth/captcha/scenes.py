"""The realistic pages a challenge sits in: login, checkout, sign-up and comment forms, filled with seeded data.

A scene only writes the page's own content; where the card goes is the composer's business (`page.py`), so a
scene never affects the grading geometry. Each scene has a desktop and a phone arrangement through CSS.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from html import escape

from uivenus.synth.captcha.base import Rng


@dataclass(frozen=True)
class Brand:
    name: str
    accent: str  # CSS colour of buttons and the logo
    tagline: str


BRANDS = (
    Brand("Northwind Bank", "#1f5fbf", "Banking that keeps up with you."),
    Brand("Lumen Outfitters", "#c2571a", "Gear for every trail."),
    Brand("Cobalt Mail", "#2b6f6a", "Private email, no ads."),
    Brand("Fieldnote", "#6b3fa0", "A forum for curious people."),
    Brand("Harbor Air", "#0b7a99", "Fly the friendly coast."),
    Brand("Pinecrest Market", "#2e7d32", "Fresh groceries, delivered."),
    Brand("Atlas Cloud", "#37474f", "Infrastructure without the headaches."),
    Brand("Maple & Co.", "#a3342d", "Home goods made to last."),
)
FIRST = ("Jordan", "Priya", "Mateo", "Aiko", "Samuel", "Lena", "Omar", "Grace", "Tomas", "Nadia")
LAST = ("Rivera", "Chen", "Okafor", "Schmidt", "Haddad", "Novak", "Larsen", "Iyer", "Moreau", "Kim")
STREETS = ("Birch Lane", "Harbor Street", "Elm Avenue", "Market Road", "Cedar Court", "Hillside Drive")
CITIES = (("Portland", "97205"), ("Madison", "53703"), ("Austin", "78701"), ("Raleigh", "27601"),
          ("Boulder", "80302"), ("Savannah", "31401"))
PRODUCTS = (("Trail running shoes", 89.0), ("Merino wool socks (3-pack)", 24.5), ("Insulated bottle", 32.0),
            ("Canvas backpack", 64.0), ("Rain shell jacket", 129.0), ("Headlamp", 27.95), ("Camp mug", 14.0))
ARTICLES = (
    ("What a week of slow mornings taught me",
     ("I gave myself one hour each morning with no screens and no plans. The first two days were restless; "
      "by Thursday the hour had turned into the calmest part of the day."),
     "The surprise was how much it changed the evenings, too: less scrolling, earlier nights."),
    ("A beginner's guide to sourdough starters",
     ("A starter is just flour, water and patience. Feed it at the same time every day and keep it warm, "
      "and in about a week it will double reliably after each feeding."),
     "If it smells like nail polish, it is hungry, not ruined. Feed it more often."),
    ("Five small changes that made our team faster",
     ("We stopped scheduling status meetings and started writing short notes instead. Reviews got smaller, "
      "and we agreed on a rule: nobody waits more than a day for feedback."),
     "None of this needed new tools, only a few habits we actually kept."),
)
COMMENTS = ("Great read, thanks for sharing this!", "I tried this last month and it really works.",
            "Could you write a follow-up on the details?", "Bookmarked. The second tip was new to me.")


@dataclass(frozen=True)
class Scene:
    title: str  # the document title
    body: str  # the page content (header, main column, primary button)


def _field(label: str, value: str, kind: str = "text") -> str:
    return (f'<label class="pg-field"><span>{escape(label)}</span>'
            f'<input type="{kind}" value="{escape(value)}" tabindex="-1"></label>')


def _person(rng: Rng) -> tuple[str, str]:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    return f"{first} {last}", f"{first.lower()}.{last.lower()}@example.com"


def _header(brand: Brand, links: tuple[str, ...]) -> str:
    nav = "".join(f"<a>{escape(link)}</a>" for link in links)
    return (f'<header class="pg-top"><div class="pg-logo"><b style="background:{brand.accent}">'
            f'{escape(brand.name[0])}</b>{escape(brand.name)}</div><nav>{nav}</nav></header>')


def _main(heading: str, sub: str, inner: str, button: str, brand: Brand) -> str:
    return (f'<div class="pg-col"><main class="pg-main"><h1>{escape(heading)}</h1><p class="pg-sub">{escape(sub)}</p>'
            f'{inner}</main><div class="pg-actions"><button class="pg-primary" type="button" '
            f'style="background:{brand.accent}">{escape(button)}</button>'
            '<p class="pg-note">Please complete the security check to continue.</p></div></div>')


def _login(rng: Rng, brand: Brand) -> Scene:
    _, email = _person(rng)
    inner = (_field("Email address", email, "email") + _field("Password", "correct-horse-9", "password")
             + '<label class="pg-check"><input type="checkbox" checked tabindex="-1"> Keep me signed in</label>'
             + '<a class="pg-link">Forgot your password?</a>')
    body = _header(brand, ("Personal", "Business", "Help")) + _main(
        f"Sign in to {brand.name}", brand.tagline, inner, "Sign in", brand)
    return Scene(f"Sign in – {brand.name}", body)


def _checkout(rng: Rng, brand: Brand) -> Scene:
    name, email = _person(rng)
    city, zipcode = rng.choice(CITIES)
    items = rng.sample(PRODUCTS, 2)
    total = sum(price for _, price in items) + 5.99
    rows = "".join(f"<li><span>{escape(n)}</span><b>${p:.2f}</b></li>" for n, p in items)
    inner = ('<ol class="pg-steps"><li>Cart</li><li class="on">Shipping</li><li>Payment</li></ol>'
             + _field("Full name", name) + _field("Email", email, "email")
             + _field("Street address", f"{rng.randint(12, 980)} {rng.choice(STREETS)}")
             + f'<div class="pg-row">{_field("City", city)}{_field("ZIP code", zipcode)}</div>'
             + f'<ul class="pg-summary">{rows}<li><span>Shipping</span><b>$5.99</b></li>'
             f'<li class="tot"><span>Total</span><b>${total:.2f}</b></li></ul>')
    body = _header(brand, ("Shop", "Deals", "Orders", "Cart (2)")) + _main(
        "Checkout", "Secure checkout – your order is almost complete.", inner, f"Place order · ${total:.2f}", brand)
    return Scene(f"Checkout – {brand.name}", body)


def _signup(rng: Rng, brand: Brand) -> Scene:
    name, email = _person(rng)
    inner = (_field("Full name", name) + _field("Email address", email, "email")
             + _field("Create password", "Blue-lantern-42", "password")
             + '<label class="pg-check"><input type="checkbox" checked tabindex="-1"> I agree to the Terms of '
             'Service and Privacy Policy</label>')
    body = _header(brand, ("Features", "Pricing", "Sign in")) + _main(
        f"Create your {brand.name} account", "It takes less than a minute.", inner, "Create account", brand)
    return Scene(f"Sign up – {brand.name}", body)


def _comment(rng: Rng, brand: Brand) -> Scene:
    name, _ = _person(rng)
    title, first, second = rng.choice(ARTICLES)
    inner = (f'<article class="pg-article"><h2>{escape(title)}</h2><p>{escape(first)}</p><p>{escape(second)}</p>'
             '</article><h3 class="pg-h3">Leave a comment</h3>' + _field("Name", name)
             + f'<label class="pg-field"><span>Comment</span><textarea tabindex="-1">{escape(rng.choice(COMMENTS))}'
             "</textarea></label>")
    body = _header(brand, ("Latest", "Topics", "Write")) + _main(
        f"{brand.name} community", f"Posted by {rng.choice(FIRST)} · {rng.randint(2, 48)} comments",
        inner, "Post comment", brand)
    return Scene(f"{title} – {brand.name}", body)


#: The page kinds a challenge can be embedded in.
SCENES: Mapping[str, Callable[[Rng, Brand], Scene]] = {
    "login": _login,
    "checkout": _checkout,
    "signup": _signup,
    "comment": _comment,
}
