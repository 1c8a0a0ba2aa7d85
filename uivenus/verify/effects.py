"""End-state key points read off the action record: what was typed and confirmed, what was picked and then removed.

A task that states an end state ("Add a contact named Ana Lima with the number 555-0101", "Delete old-invoice.pdf
from Downloads") leaves a final screen that shows it only in part: a list hides the new event's time, a toast still
names the deleted file, another mail from the same sender stays in the inbox. The acts say more, and for any app:

- a new value the clause names (one the first screen did not show) that no act typed or clicked and the final
  screen does not show was never entered (`typed_state` contradicts);
- a value the clause names was typed and then confirmed — the next act after the typing is a confirming control
  ("Save", "Send", "Create", "OK", "Move here") or Enter — so the app took it (`typed_state`);
- the item a removal clause names was picked (a click on an element naming it) and a removing control ("Delete",
  "Remove", "Archive" for an archive clause) was clicked after it, with no confirmation question left open on the
  final screen (`removed`); a removal clause whose item nothing removed and the final screen still shows is
  contradicted.

- a clause that names its object only by a pronoun ("send it", "pin it", "delete that note") asks for the press of
  the control its verb names: done when a click hit a control of that name, contradicted when none did (`pressed`).

Each check returns None when the acts cannot speak to the clause: the screen reading decides then.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from uivenus.actions.space import ActionType
from uivenus.verify.acts import ACTING_TYPES, DESTRUCTIVE, DISMISSING, first_word, names
from uivenus.verify.base import ActRecord
from uivenus.verify.keypoints import KeyPoint, KeyPointKind, is_when
from uivenus.verify.text_evidence import PointStatus, checkable, found_in, spellings

__all__ = ["CONFIRMING", "PRESSING", "REMOVING", "confirmed_values", "pressed", "removed", "typed_state"]

#: First words of controls that commit what was typed or picked (a dialog's or form's submit button).
CONFIRMING = frozenset({"save", "send", "submit", "ok", "done", "create", "apply", "confirm", "yes", "update",
                        "reply", "post", "move", "rename", "continue", "finish"})
#: A removal clause's verb -> the first words of the controls that carry it out.
REMOVING = {"archive": frozenset({"archive"}), **dict.fromkeys(
    ("delete", "remove", "trash", "discard", "erase", "uninstall", "clear"), DESTRUCTIVE | {"clear", "trash"})}
_POINTER = frozenset(t.value for t in ACTING_TYPES)
_ENTER = re.compile(r"^(?:enter|return)$", re.IGNORECASE)


def _done(acts: Sequence[ActRecord]) -> list[ActRecord]:
    return [a for a in acts if a.executed and not a.terminal]


def _confirms(act: ActRecord) -> bool:
    """A click on a confirming control, or Enter."""
    if act.type == ActionType.HOTKEY.value:
        return bool(act.keys) and any(_ENTER.match(k) for k in act.keys)
    return act.type in _POINTER and act.target is not None and first_word(act.target) in CONFIRMING


def confirmed_values(acts: Sequence[ActRecord]) -> list[str]:
    """Every typed text that was committed: it ends with a newline, or the next pointer or key act after it
    confirms (a click anywhere else first — on another field — defers to the next one)."""
    done = _done(acts)
    out = []
    for i, act in enumerate(done):
        if act.typed is None:
            continue
        if act.typed.endswith("\n"):
            out.append(act.typed.strip())
            continue
        later = [a for a in done[i + 1:] if a.type in _POINTER or a.type == ActionType.HOTKEY.value]
        committing = [a for a in later if _confirms(a) or (a.target is not None and first_word(a.target)
                                                            in DISMISSING)]
        if committing and _confirms(committing[0]):
            out.append(act.typed.strip())
    return out


def _typed(literal: str, values: Sequence[str]) -> bool:
    return any(found_in(literal, spellings(value)) for value in values)


_EXACT = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|[\w-]+\.[a-z][a-z0-9]{1,4}|(?:\D*\d){5,}\D*")


def _exact(literal: str, text: str) -> bool:
    """A value the task spells out to be entered: quoted, an e-mail, a file name, a phone-like number (names found by
    capitals and dates, times and small numbers that pickers set are not)."""
    quoted = any(f"{a}{literal}{b}" in text for a, b in ('""', "“”", "''"))
    return (quoted or _EXACT.fullmatch(literal.strip()) is not None) and not is_when(literal)


def typed_state(point: KeyPoint, acts: Sequence[ActRecord], final: Sequence[str], first: Sequence[str] = ()
                ) -> tuple[PointStatus, str] | None:
    """An end-state clause against what was typed: satisfied when some literal it names was typed and confirmed
    and every other one was typed and confirmed, clicked, or shows on the final screen; contradicted when an exact
    new value it names (`_exact`, and not on the first screen) was never typed, clicked nor shown at the end; else
    None."""
    if point.kind is not KeyPointKind.STATE or point.toggles:
        return None
    literals = [lit for lit in point.literals if checkable(lit)]
    values = confirmed_values(acts)
    clicks = [a.target for a in _done(acts) if a.type in _POINTER and a.target is not None]
    anything = [a.typed for a in _done(acts) if a.typed is not None]
    missing = [lit for lit in literals if _exact(lit, point.text) and not found_in(lit, first)
               and not found_in(lit, final) and not _typed(lit, anything) and not any(names(t, lit) for t in clicks)]
    if missing:
        return PointStatus.CONTRADICTED, f"{missing} never typed, clicked nor shown at the end"
    typed = [lit for lit in literals if _typed(lit, values)]
    rest = [lit for lit in literals if lit not in typed and not found_in(lit, final)
            and not any(names(t, lit) for t in clicks)]
    if not typed or rest:
        return None
    return PointStatus.SATISFIED, f"typed and confirmed: {typed}; the rest shown or clicked"


def _pending_question(final: Sequence[str], verbs: frozenset[str]) -> str | None:
    """A line of the final screen that asks to confirm the removal ("Delete “old-invoice.pdf”?")."""
    for line in final:
        words = set(re.findall(r"[^\W_]+", line.casefold()))
        if "?" in line and words & verbs:
            return line.strip()
    return None


def removed(point: KeyPoint, acts: Sequence[ActRecord], final: Sequence[str]) -> tuple[PointStatus, str] | None:
    """A removal clause against the acts: satisfied when its item was picked and then removed (no confirmation
    question left open), contradicted when nothing removed it and the final screen still shows it; else None."""
    verb = point.text.split(maxsplit=1)[0].casefold() if point.text.strip() else ""
    literals = [lit for lit in point.literals if checkable(lit)]
    if point.kind is not KeyPointKind.REMOVAL or verb not in REMOVING or not literals:
        return None
    controls = REMOVING[verb]
    clicks = [a for a in _done(acts) if a.type in _POINTER and a.target is not None]
    removals: list[tuple[ActRecord, ActRecord | None]] = []  # each removing click with the item picked before it
    pick: ActRecord | None = None
    for act in clicks:
        word = first_word(act.target)  # type: ignore[arg-type]
        if word in controls:
            named = any(names(act.target, lit) for lit in literals)  # type: ignore[arg-type]
            removals.append((act, act if named else pick))
        elif word not in CONFIRMING | DISMISSING:
            pick = act
    if not removals:
        if all(found_in(lit, final) for lit in literals):
            return PointStatus.CONTRADICTED, f"no click removed {literals} and the final screen still shows it"
        return None
    picked = [lit for lit in literals if any(item is not None and names(item.target, lit)  # type: ignore[arg-type]
                                             for _, item in removals)]
    if not picked:  # the clause names no item the acts removed ("delete it from Downloads"): nothing to say
        return None
    for removal, item in removals:  # the named item went, and another with it
        if item is not None and not any(names(item.target, lit) for lit in literals):  # type: ignore[arg-type]
            picked_text = item.target.text[:40]  # type: ignore[union-attr]
            return PointStatus.CONTRADICTED, (f"step {removal.index} also removed what step {item.index} picked "
                                              f"({picked_text!r}), which the task does not name")
    removal = removals[-1][0]
    question = _pending_question(final, controls)
    if question is not None:
        return PointStatus.CONTRADICTED, f"the final screen still asks {question[:80]!r}"
    clicked = removal.target.text  # type: ignore[union-attr]
    return PointStatus.SATISFIED, f"picked {picked}, then step {removal.index} clicked {clicked!r}"


#: Verbs that are also the names of the controls that do them ("send it": the Send button).
PRESSING = frozenset({"send", "pin", "unpin", "archive", "delete", "remove", "save", "submit", "reply", "forward",
                      "star", "unstar", "share", "post", "publish", "reset", "trash"})
_PRONOUNS = frozenset("it them that this these those his her their its".split())


def pressed(point: KeyPoint, acts: Sequence[ActRecord]) -> tuple[PointStatus, str] | None:
    """A "VERB it" clause against the clicks: satisfied by a click on a control whose first word is the verb,
    contradicted when no click hit one; None for any other clause (one that names its object, or another verb)."""
    words = point.text.casefold().split()
    if len(words) < 2 or words[0] not in PRESSING or words[1] not in _PRONOUNS or any(
            checkable(lit) for lit in point.literals):
        return None
    hits = [a for a in _done(acts) if a.type in _POINTER and a.target is not None
            and first_word(a.target) == words[0]]
    if not hits:
        return PointStatus.CONTRADICTED, f"no click hit a {words[0]!r} control"
    clicked = hits[-1].target.text[:40]  # type: ignore[union-attr]
    return PointStatus.SATISFIED, f"step {hits[-1].index} clicked {clicked!r}"
