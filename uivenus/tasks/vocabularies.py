"""Parameter vocabularies: the values a text parameter takes, by domain (`person_name`, `phone`, …), and the
domain of a form field by its name or input type.

Synthesis draws task parameters from these lists and exploration types their first value into the fields it
finds, so both speak about the same contacts, notes and phone numbers; a catalog `Param` names its domain.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["FIELD_DOMAINS", "INPUT_TYPE_DOMAINS", "VOCABULARIES", "field_domain"]


#: Values a sampler draws for each text domain, and that exploration types into fields of that domain
#: (the first value). Some are plausible but invalid for some apps (phone numbers with too few digits):
#: learning that is what constraints are for.
VOCABULARIES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "person_name": ("Sam Lee", "Ana Lima", "Priya Nair", "Jonas Berg", "Mei Chen", "Omar Haddad", "Lucia Romano",
                    "Kofi Mensah"),
    "phone": ("555-0142", "+1 (555) 014-7788", "555-01", "020 7946 0321", "12-34", "555-0199", "(555) 273-9917",
              "+1 555 0100 2233 4455 66"),
    "email": ("sam.lee@example.com", "ana.lima@example.org", "priya@example.net", "jonas.berg@example.de",
              "mei.chen@example.com"),
    "title": ("Packing list", "Weekend plans", "Birthday ideas", "Meeting notes", "Reading list", "Garden jobs"),
    "text": ("passport, charger, sunscreen", "Call the plumber on Monday", "Buy flour and yeast",
             "Ask about the budget review", "Water the basil every day"),
    "subject": ("Lunch", "Project update", "Weekend plans", "Quick question", "Train tickets"),
    "device_name": ("Kitchen Tablet", "Living Room Phone", "Travel Phone", "Studio Tablet"),
    "address": ("12 Harbor St, Lisbon", "9 Elm Road, Porto", "4 Mill Lane, Leeds"),
    "card_number": ("4242 4242 4242 4242", "5555 5555 5555 4444"),
    "expiry": ("12/28", "09/27"),
    "cvc": ("123", "321"),
    # real apps' fields (`tasks.real_domains`): what a font box, a file name or a short name field takes
    "font_name": ("DejaVu Sans", "DejaVu Serif", "DejaVu Sans Mono", "Liberation Sans", "Liberation Serif",
                  "Liberation Mono"),
    "file_name": ("notes", "report", "budget", "draft", "minutes", "todo"),
    "word": ("apple", "river", "garden", "lantern", "harbor", "meadow"),
})

#: The text domain of a parameter (or form field) by its name.
FIELD_DOMAINS: Mapping[str, str] = MappingProxyType({
    "name": "person_name", "full_name": "person_name", "phone": "phone", "email": "email", "to": "email",
    "title": "title", "body": "text", "text": "text", "subject": "subject", "device_name": "device_name",
    "address": "address", "card_number": "card_number", "expiry": "expiry", "cvc": "cvc",
})

#: Input types that say what a field holds when its name does not.
INPUT_TYPE_DOMAINS: Mapping[str, str] = MappingProxyType({"tel": "phone", "email": "email"})


def field_domain(name: str, input_type: str | None = None) -> str:
    """The vocabulary domain of a field called `name` (falls back on its input type, then plain text)."""
    return FIELD_DOMAINS.get(name) or INPUT_TYPE_DOMAINS.get(input_type or "") or "text"
