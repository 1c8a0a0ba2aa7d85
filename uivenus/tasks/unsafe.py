"""Which of the safety guard's categories (payment, deletion, sending, credentials, …) a function or a task falls
under, read from its words with the guard's own rules.

Catalog builders mark functions `unsafe` and the validity gate checks task instructions with these; asking the
guard's rule registry (`uivenus.agent.safety_rules.RULES`) rather than keeping a second keyword list means a task is
called consequential exactly when the guard would stop it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["unsafe_categories"]


def unsafe_categories(texts: Iterable[str], where: Sequence[str] = ("target",)) -> dict[str, str]:
    """The safety guard's categories that fire on any of `texts` (category -> the words that matched).

    `where` names which of the guard's rule groups read the texts: `target` (what a button does), `field`
    (what a field holds: passwords, card numbers) or `content` (what is typed).
    """
    from uivenus.agent.safety_rules import RULES, Where

    wanted = {Where(w) for w in where}
    found: dict[str, str] = {}
    for text in texts:
        for rule in RULES:
            if rule.where in wanted and rule.category.value not in found and (evidence := rule.match(text)):
                found[rule.category.value] = evidence
    return found
