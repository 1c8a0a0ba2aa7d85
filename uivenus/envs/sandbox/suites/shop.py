"""Shop tasks: buy with card payment, pick the cheapest search result, add to and tidy the cart, express checkout.

Checkers compare the cart and the orders exactly (product ids and quantities, card's last four digits,
shipping name, address and speed), so buying the wrong thing, the wrong amount or paying when the task
only fills the cart all fail.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from uivenus.actions.space import Action, Finished, Platform
from uivenus.envs.sandbox.solving import SolverError, choose, failed, fill, passed, tap, tid
from uivenus.envs.sandbox.tasks import CheckResult, DomQuery, SandboxTask, register


def product(id: str, name: str, price: int, category: str, color: str, description: str) -> dict[str, Any]:
    """One catalogue entry in the app's state format (price in cents)."""
    return {"id": id, "name": name, "price": price, "category": category, "color": color, "description": description}


#: The catalogue every task starts from (the app's defaults, apps/shop/app.js).
CATALOGUE = (
    product("p1", "Blue Mug", 1200, "Kitchen", "#2f6fd6", "A 350 ml stoneware mug with a deep blue glaze."),
    product("p2", "Red Mug", 1200, "Kitchen", "#d1352b", "The same sturdy stoneware mug in a bright red glaze."),
    product("p3", "Travel Mug", 1850, "Kitchen", "#5b6770",
            "Insulated stainless steel travel mug with a leak-proof lid."),
    product("p4", "Wireless Headphones", 7999, "Audio", "#222831", "Bluetooth on-ear headphones, 30 hours of battery."),
    product("p5", "Noise-Cancelling Headphones", 12900, "Audio", "#3a3f58",
            "Over-ear headphones with active noise cancelling."),
    product("p6", "Sport Earbuds Headphones", 4950, "Audio", "#1b998b",
            "Sweat-resistant in-ear headphones with ear hooks."),
    product("p7", "AA Batteries (8-pack)", 649, "Home", "#e0a100", "Long-lasting alkaline AA batteries, pack of 8."),
    product("p8", "Desk Lamp", 3490, "Home", "#f2c14e", "LED desk lamp with three brightness levels."),
    product("p9", "Notebook A5", 450, "Office", "#7b4b94", "Dotted A5 notebook, 120 pages."),
    product("p10", "Gel Pens (10-pack)", 725, "Office", "#e76f51", "Smooth 0.5 mm gel pens in ten colours."),
    product("p11", "Water Bottle", 1500, "Sports", "#2a9d8f", "750 ml BPA-free bottle with a flip-top lid."),
    product("p12", "Yoga Mat", 2990, "Sports", "#8ab17d", "6 mm non-slip yoga mat with a carrying strap."),
)


def catalogue(**prices: int) -> list[dict[str, Any]]:
    """The catalogue with some prices changed (keyword: product id)."""
    return [{**p, "price": prices.get(p["id"], p["price"])} for p in CATALOGUE]


def line(product_id: str, qty: int) -> dict[str, Any]:
    return {"productId": product_id, "qty": qty}


# --- checking ----------------------------------------------------------------------------------------

def _cart(lines: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    return {c["productId"]: c["qty"] for c in lines}


def _expect_cart(state: Mapping[str, Any], want: Mapping[str, int]) -> CheckResult | None:
    have = _cart(state.get("cart", []))
    return None if have == dict(want) else failed(f"the cart holds {have}, expected {dict(want)}")


def _expect_no_order(setup: Mapping[str, Any], state: Mapping[str, Any]) -> CheckResult | None:
    new = len(state.get("orders", [])) - len(setup.get("orders", []))
    return failed(f"{new} order(s) were placed, but the task only changes the cart") if new else None


def _expect_order(setup: Mapping[str, Any], state: Mapping[str, Any], *, items: Mapping[str, int], card_last4: str,
                  name: str, address: str, shipping: str) -> CheckResult:
    orders = state.get("orders", [])[len(setup.get("orders", [])):]
    if len(orders) != 1:
        return failed(f"{len(orders)} new orders were placed, expected exactly one")
    order = orders[0]
    got = {"items": {i["productId"]: i["qty"] for i in order["items"]}, "card_last4": order["cardLast4"],
           "name": " ".join(order["name"].split()), "address": " ".join(order["address"].split()),
           "shipping": order["shipping"], "status": order["status"]}
    want = {"items": dict(items), "card_last4": card_last4, "name": name, "address": address,
            "shipping": shipping, "status": "paid"}
    for key, value in want.items():
        if got[key] != value:
            return failed(f"order #{order['id']} has {key} {got[key]!r}, expected {value!r}")
    return _expect_cart(state, {}) or passed(f"order #{order['id']} paid: {dict(items)}, card ending {card_last4}")


# --- solving ------------------------------------------------------------------------------------------

def product_id(q: DomQuery, name: str) -> str:
    for p in q.app_state()["products"]:
        if p["name"] == name:
            return p["id"]
    raise SolverError(f"the shop sells no {name!r}")


def search(q: DomQuery, text: str) -> Iterator[Action]:
    yield from fill(q, tid("search"), text)
    yield from tap(q, tid("search-go"))


def add_to_cart(q: DomQuery, pid: str, qty: int) -> Iterator[Action]:
    """From a product list: open the product, step the quantity up to `qty`, add it."""
    yield from tap(q, tid("product-card", id=pid))
    for _ in range(qty - 1):
        yield from tap(q, tid("qty-plus"))
    yield from tap(q, tid("add-to-cart"))


def checkout(q: DomQuery, *, name: str, address: str, card: str, expiry: str, cvc: str,
             shipping: str) -> Iterator[Action]:
    """From anywhere: open the cart, check out, fill the form, choose delivery and pay."""
    yield from tap(q, tid("cart-button"))
    yield from tap(q, tid("checkout"))
    yield from fill(q, tid("full-name"), name)
    yield from fill(q, tid("address"), address)
    if q.platform is Platform.WEB:
        yield from choose(q, tid("shipping"), shipping)
    else:
        yield from tap(q, tid(f"ship-{shipping}"))
    yield from fill(q, tid("card-number"), card)
    yield from fill(q, tid("card-expiry"), expiry)
    yield from fill(q, tid("card-cvc"), cvc)
    yield from tap(q, tid("pay-now"))  # consequential: the card is charged


def solve_buy_mugs(q: DomQuery) -> Iterator[Action]:
    yield from search(q, "mug")
    yield from add_to_cart(q, product_id(q, "Blue Mug"), 2)
    yield from checkout(q, name="Ana Lima", address="12 Harbor St, Lisbon", card="4242 4242 4242 4242",
                        expiry="12/28", cvc="123", shipping="standard")
    yield Finished()


def _cheapest(products: Sequence[Mapping[str, Any]], word: str) -> Mapping[str, Any]:
    return min((p for p in products if word in p["name"].lower()), key=lambda p: (p["price"], p["id"]))


def solve_cheapest_headphones(q: DomQuery) -> Iterator[Action]:
    yield from search(q, "headphones")
    yield from add_to_cart(q, _cheapest(q.app_state()["products"], "headphones")["id"], 1)
    yield Finished()


def solve_add_batteries(q: DomQuery) -> Iterator[Action]:
    yield from search(q, "batteries")
    yield from add_to_cart(q, product_id(q, "AA Batteries (8-pack)"), 3)
    yield Finished()


def solve_tidy_cart(q: DomQuery) -> Iterator[Action]:
    yield from tap(q, tid("cart-button"))
    yield from tap(q, f"{tid('cart-line', id=product_id(q, 'Desk Lamp'))} {tid('line-remove')}")
    yield from tap(q, f"{tid('cart-line', id=product_id(q, 'Notebook A5'))} {tid('line-minus')}")
    yield Finished()


def solve_express_checkout(q: DomQuery) -> Iterator[Action]:
    yield from checkout(q, name="Sam Lee", address="9 Elm Road, Porto", card="5555 5555 5555 4444",
                        expiry="09/27", cvc="321", shipping="express")
    yield Finished()


# --- the tasks ---------------------------------------------------------------------------------------

def _task(name: str, instructions: tuple[str, ...], setup: Mapping[str, Any], check, solve,
          max_steps: int = 25) -> SandboxTask:
    state = {"products": list(CATALOGUE), "cart": [], "orders": [], "lastSearch": "", "nextOrder": 1001, **setup}
    return SandboxTask(app="shop", name=name, instructions=instructions, setup=state,
                       check=lambda s: check(state, s), solve=solve, max_steps=max_steps)


PAST_ORDER = {"id": "1001", "items": [{"productId": "p9", "name": "Notebook A5", "qty": 3, "price": 450}],
              "subtotal": 1350, "shipping": "standard", "shippingCost": 0, "total": 1350, "name": "Sam Lee",
              "address": "9 Elm Road, Porto", "cardLast4": "4444", "status": "paid", "placedAt": "2026-10-02T10:14"}
HEADPHONE_PRICES = {"p4": 3999, "p6": 5450}  # a sale makes the wireless pair the cheapest


def _check_cheapest(setup: Mapping[str, Any], state: Mapping[str, Any]) -> CheckResult:
    if "headphones" not in state.get("lastSearch", "").lower():
        return failed(f"the last search was {state.get('lastSearch')!r}, expected a search for headphones")
    best = _cheapest(setup["products"], "headphones")
    return (_expect_no_order(setup, state) or _expect_cart(state, {**_cart(setup["cart"]), best["id"]: 1})
            or passed(f"{best['name']} (the cheapest headphones) is in the cart"))


register(
    _task(
        "buy_blue_mugs",
        ("Buy 2 Blue Mugs. Ship them to Ana Lima, 12 Harbor St, Lisbon, and pay with the card 4242 4242 4242 4242 "
         "(expiry 12/28, CVC 123).",
         "Order two blue mugs for Ana Lima at 12 Harbor St, Lisbon; card number 4242 4242 4242 4242, exp 12/28, "
         "CVC 123.",
         "Purchase a pair of Blue Mugs with standard delivery to Ana Lima, 12 Harbor St, Lisbon. Pay by card "
         "4242 4242 4242 4242, valid until 12/28, security code 123."),
        {},
        lambda setup, s: _expect_order(setup, s, items={"p1": 2}, card_last4="4242", name="Ana Lima",
                                       address="12 Harbor St, Lisbon", shipping="standard"),
        solve_buy_mugs,
        max_steps=40,  # search, product, cart, and a five-field checkout form
    ),
    _task(
        "cheapest_headphones",
        ("Search the shop for headphones and add the cheapest pair to my cart.",
         "Look up headphones and put the lowest-priced one in the cart (don't buy it).",
         "Find the least expensive headphones in the shop and add one to the cart."),
        {"products": catalogue(**HEADPHONE_PRICES), "cart": [line("p11", 1)]},
        _check_cheapest,
        solve_cheapest_headphones,
    ),
    _task(
        "add_batteries",
        ("Add 3 packs of AA batteries to my cart, but don't check out.",
         "Put three AA battery packs in the cart; do not place the order.",
         "I need 3 packs of AA batteries: add them to the cart only."),
        {"cart": [line("p9", 1)], "orders": [PAST_ORDER], "nextOrder": 1002},
        lambda setup, s: (_expect_no_order(setup, s) or _expect_cart(s, {"p9": 1, "p7": 3})
                          or passed("3 packs of AA batteries added next to the notebook")),
        solve_add_batteries,
    ),
    _task(
        "tidy_cart",
        ("Remove the desk lamp from my cart and reduce the notebooks to one.",
         "In the cart, delete the Desk Lamp and change the Notebook A5 quantity from 2 to 1.",
         "Clean up my cart: no desk lamp, and only a single notebook."),
        {"cart": [line("p8", 1), line("p9", 2), line("p10", 1)]},
        lambda setup, s: (_expect_no_order(setup, s) or _expect_cart(s, {"p9": 1, "p10": 1})
                          or passed("the lamp is gone and one notebook is left")),
        solve_tidy_cart,
    ),
    _task(
        "express_checkout",
        ("Check out my cart with express delivery to Sam Lee, 9 Elm Road, Porto, paying with the card "
         "5555 5555 5555 4444 (expiry 09/27, CVC 321).",
         "Buy what's in my cart, express shipping, for Sam Lee at 9 Elm Road, Porto; card 5555 5555 5555 4444, "
         "exp 09/27, CVC 321.",
         "Place the order for the items in the cart: Express (1–2 days) to Sam Lee, 9 Elm Road, Porto. "
         "Card 5555 5555 5555 4444, 09/27, code 321."),
        {"cart": [line("p11", 1), line("p12", 1)], "orders": [PAST_ORDER], "nextOrder": 1002},
        lambda setup, s: _expect_order(setup, s, items={"p11": 1, "p12": 1}, card_last4="4444", name="Sam Lee",
                                       address="9 Elm Road, Porto", shipping="express"),
        solve_express_checkout,
    ),
)
