"""A capability catalog from a written description of an app's features (`catalog_from_docs`), and the
descriptions shipped for the sandbox apps (`bundled_docs`).

Docs are the second builder beside exploration: each Markdown bullet follows one of the sentence patterns in
`DOC_RULES` and becomes one function, named by the rules in `uivenus.tasks.naming` so that it merges with what
exploration found. A bullet no rule understands is an error that quotes it, never a silent skip.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from uivenus.tasks.catalog import ENUM, INT, RECORD_PREFIX, AppCatalog, Catalog, CatalogError, Function, Param
from uivenus.tasks.naming import VERBS, plural, singular, slug
from uivenus.tasks.unsafe import unsafe_categories
from uivenus.tasks.vocabularies import field_domain

__all__ = ["DOCS_DIR", "DOC_RULES", "PARAM_PHRASES", "RECORD_VERBS", "bundled_docs", "catalog_from_docs"]

DOCS_DIR = Path(__file__).parent / "docs"


PARAM_PHRASES: tuple[tuple[str, str], ...] = (
    (r"recipient(?: address)?", "to"), (r"(?:full )?name", "name"), (r"phone(?: number)?", "phone"),
    (r"e-?mail(?: address)?", "email"), (r"title", "title"), (r"body|text", "body"), (r"subject", "subject"),
    (r"(?:postal |shipping )?address", "address"), (r"card number", "card_number"),
    (r"expiry(?: date)?", "expiry"), (r"security code|cvc", "cvc"),
)
#: Verbs whose object is a record the app already holds: the function gets a parameter naming it.
RECORD_VERBS = frozenset({"edit", "pin", "delete", "favorite", "archive", "read", "reply", "forward"})
_ITEM = re.compile(r"^(?P<label>.+?)\s*\(`(?P<id>[^`]+)`\)$|^`(?P<bare>[^`]+)`$")
_INT_RANGE = re.compile(r"(?:an? )?(?P<name>[\w ]+?) from (?P<low>-?\d+) to (?P<high>-?\d+)")
_ENUM_PARAM = re.compile(r"(?:an? )?(?P<name>[\w ]+?) \((?P<items>[^)]*`[^)]*)\)")


def _items(text: str) -> tuple[list[str], dict[str, str]]:
    """'Wi-Fi (`wifi`), Bluetooth (`bluetooth`) or `x`' -> (["wifi", "bluetooth", "x"], labels)."""
    values, labels = [], {}
    for part in re.split(r",\s*|\s+or\s+|\s+and\s+", text.strip().rstrip(".")):
        part = part.strip()
        if not part:
            continue
        m = _ITEM.match(part)
        value = (m.group("id") or m.group("bare")) if m else slug(part)
        values.append(value)
        labels[value] = m.group("label") if m and m.group("label") else part.strip("`")
    return values, labels


def _param_from_phrase(phrase: str) -> Param | None:
    phrase = re.sub(r"^(?:an?|the|its|their)\s+", "", phrase.strip().rstrip(".")).strip()
    optional = phrase.startswith("optional ")
    phrase = re.sub(r"^(?:optional|new)\s+", "", phrase)
    if m := _INT_RANGE.fullmatch(phrase):
        return Param(slug(m.group("name")), INT, low=int(m.group("low")), high=int(m.group("high")), optional=optional)
    if m := _ENUM_PARAM.fullmatch(phrase):
        values, labels = _items(m.group("items"))
        return Param(slug(m.group("name")), ENUM, values=tuple(values), labels=labels, optional=optional)
    for pattern, name in PARAM_PHRASES:
        if re.fullmatch(pattern, phrase):
            return Param(name, field_domain(name), optional=optional)
    return Param(slug(phrase), field_domain(slug(phrase)), optional=optional) if phrase else None


def _split_list(text: str) -> list[str]:
    """'a, b and c (x or y)' -> ['a', 'b', 'c (x or y)']: commas and 'and' outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char == ",":
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    out = []
    for part in parts:
        out.extend(re.split(r"\s+and\s+(?![^(]*\))", part.strip().removeprefix("and ")))
    return [p for p in out if p.strip()]


def _params(text: str | None) -> tuple[Param, ...]:
    if not text:
        return ()
    return tuple(p for p in (_param_from_phrase(part) for part in _split_list(text)) if p is not None)


def _toggle_rule(m: re.Match[str], app: str) -> Function:
    values, labels = _items(m.group("items"))
    return Function(app, "set_toggle", params=(Param("which", ENUM, tuple(values), labels),
                                              Param("value", ENUM, ("on", "off"))))


def _range_rule(m: re.Match[str], app: str) -> Function:
    key = slug(m.group("key").split()[-1])
    return Function(app, f"set_{key}", params=(Param(key, INT, low=int(m.group("low")), high=int(m.group("high"))),))


def _choice_rule(m: re.Match[str], app: str) -> Function:
    key = slug(m.group("key").split()[-1])
    values, labels = _items(m.group("items"))
    return Function(app, f"set_{key}", params=(Param(key, ENUM, tuple(values), labels),))


def _set_text_rule(m: re.Match[str], app: str) -> Function:
    key = slug(m.group("key"))
    return Function(app, f"set_{key}", params=(Param(key, field_domain(key)),))


def _named_rule(m: re.Match[str], app: str) -> Function:
    return Function(app, m.group("name"), params=_params(m.group("rest").partition(" with ")[2]))


def _verb_rule(m: re.Match[str], app: str) -> Function | None:
    verb = VERBS.get(m.group("verb").lower())
    if verb is None:
        return None
    noun = singular(slug(m.group("noun")))
    own = slug(m.group("noun")) == app  # "reset all settings" acts on the app itself
    name = f"{verb}_to_{slug(m.group('dest'))}" if m.group("dest") else f"{verb}_{app if own else noun}"
    params = _params(m.group("params"))
    if (verb in RECORD_VERBS or m.group("dest")) and not own:  # "add a product to the cart" names a product
        params = (Param(noun, RECORD_PREFIX + plural(noun)),) + params
    return Function(app, name, params=params)


_VERB_SENTENCE = re.compile(
    r"(?P<verb>\w+) (?:a|an|the|all|one|every) (?P<noun>[\w-]+)(?: to the (?P<dest>\w+))?"
    r"(?: to their defaults| as an? \w+| from the \w+)?(?: with (?P<params>.+?))?\.?$", re.IGNORECASE)

#: The sentence patterns a docs bullet may follow, tried in order; each builds one function.
DOC_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str], str], Function | None]], ...] = (
    (re.compile(r"`(?P<name>[a-z][a-z0-9_]*)`:\s*(?P<rest>.+)$"), _named_rule),
    (re.compile(r"turn (?:a )?(?:switch|setting) on or off:\s*(?P<items>.+)$", re.IGNORECASE), _toggle_rule),
    (re.compile(r"set the (?P<key>[\w ]+?) to a value from (?P<low>-?\d+) to (?P<high>-?\d+)\.?$", re.IGNORECASE),
     _range_rule),
    (re.compile(r"(?:change|set) the (?P<key>[\w ]+?) to one of:\s*(?P<items>.+)$", re.IGNORECASE), _choice_rule),
    (re.compile(r"set the (?P<key>[\w ]+?) to an? (?:new )?(?:name|text|value)\.?$", re.IGNORECASE), _set_text_rule),
    (_VERB_SENTENCE, _verb_rule),
)


def catalog_from_docs(text: str, app: str | None = None) -> Catalog:
    """Functions from a written description of an app's features.

    Markdown: a `# app` heading opens an app (or pass `app`); each bullet is one feature written in one of the
    `DOC_RULES` patterns, e.g. "Add a contact with a name, a phone number and an optional email address."
    Enumerations name their values as `Label (`id`)`. A bullet no rule understands is an error that quotes it.
    """
    found: dict[str, dict[str, Function]] = {}
    current = app
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("# "):
            current = slug(line[2:])
            continue
        if not line.startswith(("- ", "* ")):
            continue
        sentence = line[2:].strip()
        if current is None:
            raise CatalogError(f"docs bullet {sentence!r} comes before any '# app' heading (or pass app=)")
        fn = next((built for pattern, rule in DOC_RULES if (m := pattern.match(sentence))
                   and (built := rule(m, current)) is not None), None)
        if fn is None:
            raise CatalogError(f"no docs rule understands {sentence!r}; write it like 'Create a note with a title "
                               "and a body.' or name it: '`function_name`: what it does with a …'")
        params_text = [p.name.replace("_", " ") for p in fn.params]
        unsafe = {**unsafe_categories([sentence]), **unsafe_categories(params_text, ("field",))}
        fn = replace(fn, description=sentence, unsafe=tuple(unsafe), sources=("docs",), evidence=(f"docs: {sentence}",))
        same_app = found.setdefault(current, {})
        same_app[fn.name] = same_app[fn.name].merged(fn) if fn.name in same_app else fn
    return Catalog({name: AppCatalog(name, fns) for name, fns in found.items()})


def bundled_docs(app: str) -> str:
    """The feature description shipped for a sandbox app (`uivenus/tasks/docs/<app>.md`)."""
    path = DOCS_DIR / f"{app}.md"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in DOCS_DIR.glob("*.md")))
        raise CatalogError(f"no bundled docs for {app!r}; apps with docs: {known}")
    return path.read_text(encoding="utf-8")
