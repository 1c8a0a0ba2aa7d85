"""Phrasing: the words that ask for a function call, and the instructions composed from them.

One job: turn calls into instructions. `PHRASES` holds several clause templates per catalog function;
`phrase_call` fills the ones that name exactly a call's parameters (or falls back to the function's description),
and `compose` joins the clauses of one or several calls into whole instructions. Both synthesizers
(`tasks.synthesis`, `tasks.llm_synthesis`) and the tests phrase tasks through it, so a task reads the same
whichever made it; adding a function's wording is adding one entry here.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence

from uivenus.tasks.catalog import Function, FunctionCall

__all__ = ["PHRASES", "compose", "phrase_call", "sentence"]

#: Clauses that ask for one call (lower-case, no final stop), several per function. A template is used only
#: when it names exactly the parameters the call has (so an optional email is never silently left out).
PHRASES: dict[str, tuple[str, ...]] = {
    "settings.set_toggle": ("turn {which} {value}", "switch {which} {value}", "turn {which} {value} in Settings"),
    "settings.set_brightness": ("set the screen brightness to {brightness}%",
                                "change the brightness to {brightness} percent",
                                "make the display brightness {brightness}%"),
    "settings.set_language": ("change the display language to {language}", "switch the language to {language}",
                              "set the system language to {language}"),
    "settings.set_device_name": ('rename this device to "{device_name}"', "change the device name to {device_name}",
                                 'set the name of this device to "{device_name}"'),
    "settings.reset_settings": ("reset all settings to their defaults", "restore the default settings",
                                "put every setting back to its default"),
    "notes.create_note": ('create a note titled "{title}" with the text "{body}"',
                          'add a new note called {title} that says "{body}"',
                          'write a note with the title "{title}" and the body "{body}"'),
    "notes.edit_note": ('change the note "{note}" so its title is "{title}" and its text "{body}"',
                        'edit my {note} note: title "{title}", text "{body}"',
                        'update the note "{note}" to the title "{title}" with the text "{body}"'),
    "notes.pin_note": ('pin the note "{note}"', "pin my {note} note",
                       'keep the note "{note}" at the top by pinning it'),
    "notes.delete_note": ('delete the note "{note}"', "remove my {note} note", 'get rid of the note "{note}"'),
    "contacts.add_contact": ("add a contact named {name} with the number {phone}",
                             "create a new contact: {name}, phone {phone}",
                             "save {name}'s number, {phone}, to my contacts",
                             "add {name} to my contacts with phone {phone} and email {email}",
                             "create a contact for {name} (phone {phone}, email {email})",
                             "new contact: {name}, {phone}, {email}"),
    "contacts.favorite_contact": ("mark {contact} as a favourite", "add {contact} to my favourite contacts",
                                  "star the contact {contact}"),
    "contacts.delete_contact": ("delete {contact} from my contacts", "remove the contact {contact}",
                                "delete the contact of {contact}"),
    "mail.send_message": ('send an email to {to} with the subject "{subject}" and the message "{body}"',
                          'email {to}: subject {subject}, body "{body}"',
                          'write to {to} with the subject "{subject}" saying "{body}" and send it'),
    "mail.read_message": ('open the email "{message}"', 'read the message titled "{message}"',
                          'show me the mail "{message}"'),
    "mail.archive_message": ('archive the email "{message}"', 'move the message "{message}" to the archive',
                             'put the mail "{message}" in the archive'),
    "mail.delete_message": ('delete the email "{message}"', 'move the message "{message}" to the trash',
                            'throw away the mail "{message}"'),
    "shop.add_to_cart": ("add {quantity} × {product} to my cart", "put {quantity} of the {product} in the cart",
                         "add the {product} to my cart, quantity {quantity}"),
}

_JOINERS: tuple[Callable[[list[str]], str], ...] = (
    lambda parts: ", then ".join(parts),
    lambda parts: "First " + "; after that, ".join(parts),
    lambda parts: "Please " + ", ".join(parts[:-1]) + " and " + parts[-1],
)


def sentence(clause: str) -> str:
    clause = clause.strip()
    return clause[:1].upper() + clause[1:] + ("" if clause.endswith((".", "!", "?")) else ".")


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def _values(fn: Function, call: FunctionCall) -> dict[str, str]:
    out = {}
    for name, value in call.params.items():
        param = fn.param(name)
        out[name] = param.label(value) if param is not None else str(value)
    return out


def phrase_call(fn: Function, call: FunctionCall) -> list[str]:
    """The clauses asking for `call` (templates naming exactly its parameters; else one from the description)."""
    values = _values(fn, call)
    usable = [t for t in PHRASES.get(call.key, ()) if _fields(t) == set(values)]
    if usable:
        return [t.format(**values) for t in usable]
    described = (fn.description or fn.name.replace("_", " ")).rstrip(".")
    given = ", ".join(f"{k.replace('_', ' ')} {v!r}" for k, v in values.items())
    return [(described[:1].lower() + described[1:]) + (f" ({given})" if given else "")]


def compose(clauses: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """Phrasings of a task from the clauses of its calls: one per template for one call, joined for several."""
    if len(clauses) == 1:
        return tuple(dict.fromkeys(sentence(c) for c in clauses[0]))
    out = [sentence(join([c[(v + i) % len(c)] for i, c in enumerate(clauses)])) for v, join in enumerate(_JOINERS)]
    return tuple(dict.fromkeys(out))
