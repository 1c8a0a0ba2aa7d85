"""The action judge: did the actions do what the task's key points ask, to the elements they name?

Where no checker exists (a page or app we did not write), the steps themselves are the best evidence: every action
record (`Evidence.acts`, built by `verify.acts`) says what the action's point hit — the element's text, role and
place as the DOM or accessibility tree recorded it, or the text OCR reads around the point — and what was typed or
selected. Each structured key point (`verify.keypoints`) is checked against them:

- click: some executed click hit the named target (`OK`, not `Cancel`), or an element of the named role;
- type: the value was typed, into a field (the one the last click focused; the named one when it is named), into
  as many distinct fields as asked ("both fields");
- select: every listed item ends selected and nothing else does (clicks on checkboxes counted, the last radio
  wins, a `<select>`'s picked option as the env recorded it);
- focus: the last field clicked is a field (the nth one when an ordinal is given);
- order: a "then" point only after the previous one, and the confirming click after the last edit;
- a point that asks for a state rather than an act is read off the screens as the OCR judge reads it;
- and what no key point asked for: a click on a destructive control the task does not name ("Delete" where it
  says archive), a last click that dismissed the pending change ("Cancel", "×"), and — for a task that only states
  an end state — text typed and never confirmed (no click or key press after it: the episode ended with it unsent,
  a failure, not an abstention) and a last click on the very item a clause asks to change (`ended_on_operand`:
  the run stopped after picking the note to pin, the folder to move into).

Any contradicted point is a failure; success needs every point satisfied; otherwise the judge abstains with what it
could not tell — when no action record names its target and no screen text speaks to a point.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

from uivenus.actions.space import ActionType
from uivenus.verify.acts import ACTING_TYPES, DESTRUCTIVE, DISMISSING, ICON_NAMES, first_word, names, unconfirmed_typing
from uivenus.verify.base import ActRecord, Evidence, Target, Verdict, Vote
from uivenus.verify.effects import pressed, removed, typed_state
from uivenus.verify.keypoints import (
    ALL_FIELDS, Act, KeyPoint, KeyPointKind, extract_key_points, key_point_texts, structure_clauses,
)
from uivenus.verify.text_evidence import PointStatus, ocr_lines, point_status

__all__ = [
    "DESTRUCTIVE", "DISMISSING", "ICON_NAMES", "NAVIGATION_VERBS", "ActionJudge", "PointCheck", "check_point",
    "ended_on_operand", "names", "unasked_acts",
]

_EDIT_TYPES = frozenset({ActionType.TYPE.value, ActionType.SELECT_OPTION.value})
_TOGGLE_ROLES = frozenset({"checkbox", "option"})
#: Pointer acts that click what lies under their point.
_CLICK_TYPES = frozenset(t.value for t in ACTING_TYPES if t is not ActionType.SELECT_OPTION)


class PointCheck(NamedTuple):
    """How one key point stands on the action record: its status, why, and the step that satisfied it."""

    status: PointStatus
    why: str
    at: int | None = None


def _q(text: str | None) -> str:
    return repr((text or "")[:50])


def _described(target: Target | None) -> str:
    if target is None:
        return "an unknown element"
    what = target.text or target.label or target.names or target.tag or "?"
    return f"{_q(what)} ({target.role or target.tag or 'element'}, {target.source})"


class _Record:
    """The action record as the checks read it: executed pointer acts, typed text with the field it went into."""

    def __init__(self, acts: Sequence[ActRecord]) -> None:
        done = [a for a in acts if a.executed and not a.terminal]
        self.clicks = [a for a in done if a.type in _CLICK_TYPES]
        self.selects = [a for a in done if a.type == ActionType.SELECT_OPTION.value]
        self.types: list[tuple[ActRecord, ActRecord | None]] = []
        focus: ActRecord | None = None
        for act in done:
            if act.typed is not None:
                self.types.append((act, focus))
            elif act.type in _CLICK_TYPES:
                focus = act
        self.edits = [a.index for a in done if a.type in _EDIT_TYPES
                      or (a.target is not None and a.target.role in _TOGGLE_ROLES)]
        self.any = bool(done)


def _after(candidates: Sequence[ActRecord], floor: int) -> list[ActRecord]:
    return [a for a in candidates if a.index > floor]


def _click(point: KeyPoint, record: _Record, floor: int) -> PointCheck:
    clicks = _after(record.clicks, floor)
    if point.targets:
        wanted = point.targets[0]
        match: Callable[[Target], bool] = lambda t: names(t, wanted)  # noqa: E731
        what = _q(wanted)
    elif point.role is not None:
        wanted_role = point.role
        match = lambda t: t.role == wanted_role and (point.ordinal is None or t.nth == point.ordinal)  # noqa: E731
        what = f"a {point.role}" + (f" (#{point.ordinal})" if point.ordinal else "")
    else:
        return PointCheck(PointStatus.UNDETERMINED, "names no target and no role to look for")
    hit = next((a for a in clicks if a.target is not None and match(a.target)), None)
    if hit is not None:
        return PointCheck(PointStatus.SATISFIED, f"step {hit.index} clicked {_described(hit.target)}", hit.index)
    unknown = [a.index for a in clicks if a.target is None or (not point.targets and a.target.source == "ocr")]
    if unknown:
        return PointCheck(PointStatus.UNDETERMINED, f"no click is known to hit {what}; what steps {unknown} hit "
                                                    "is unknown")
    seen = ", ".join(f"step {a.index}: {_described(a.target)}" for a in clicks[:4]) or "no click at all"
    where = " after the edits" if point.confirm else (" after the previous point" if point.after_previous else "")
    return PointCheck(PointStatus.CONTRADICTED, f"no click{where} hit {what} ({seen})")


def _field_key(act: ActRecord, focus: ActRecord | None) -> object:
    if focus is None:
        return ("unknown", act.index)
    target = focus.target
    if target is None:
        return ("point", focus.point)
    return (target.tag, target.nth, target.names, target.label)


def _typed(point: KeyPoint, record: _Record, floor: int) -> PointCheck:
    entries = [(a, f) for a, f in record.types if a.index > floor]
    if point.value is None:
        return PointCheck(PointStatus.UNDETERMINED, "names no value to type")
    right = [(a, f) for a, f in entries if a.typed is not None and a.typed.strip() == point.value.strip()]
    if not right:
        typed = ", ".join(repr(a.typed) for a, _ in entries[:4]) or "nothing"
        return PointCheck(PointStatus.CONTRADICTED, f"{point.value!r} was never typed (typed: {typed})")
    wrong_field = [f for _, f in right if f is not None and f.target is not None and f.target.role not in
                   (None, "field")]
    if len(wrong_field) == len(right):
        return PointCheck(PointStatus.CONTRADICTED, f"{point.value!r} was typed after clicking "
                                                    f"{_described(wrong_field[0].target)}, not a field")
    if point.field and point.fields == 1:
        described = [f.target for _, f in right if f is not None and f.target is not None
                     and (f.target.label or f.target.names)]
        if described and not any(names(t, point.field) for t in described):
            return PointCheck(PointStatus.CONTRADICTED, f"{point.value!r} went into "
                                                        f"{_described(described[0])}, not the {point.field} field")
    fields = {_field_key(a, f) for a, f in right}
    needed = 2 if point.fields == ALL_FIELDS else point.fields
    last = max(a.index for a, _ in right)
    if len(fields) < needed:
        return PointCheck(PointStatus.CONTRADICTED, f"{point.value!r} went into {len(fields)} field(s), "
                                                    f"{needed} asked")
    return PointCheck(PointStatus.SATISFIED, f"{point.value!r} typed into {len(fields)} field(s)", last)


def _item_names(items: Sequence[str], selected: Iterable[Target]) -> list[str]:
    """The listed items, with neighbours re-joined where "and" split one name ("Trinidad and Tobago") that a
    selected element carries whole."""
    out = list(items)
    chosen = list(selected)
    i = 0
    while i < len(out) - 1:
        joined = f"{out[i]} and {out[i + 1]}"
        if any(names(t, joined) for t in chosen):
            out[i:i + 2] = [joined]
        else:
            i += 1
    return out


def _selected(point: KeyPoint, record: _Record, floor: int) -> PointCheck:
    picks = [a for a in _after(record.selects, floor) if a.selected is not None]
    if record.selects and not picks:
        return PointCheck(PointStatus.UNDETERMINED, "which option the selects picked was not recorded")
    keyed = [a.index for a, focus in record.types if focus is not None and focus.target is not None
             and focus.target.tag == "select" and (not picks or a.index > picks[-1].index)]
    if keyed:  # typing into a focused list picks by the letters typed: which option is not on record
        return PointCheck(PointStatus.UNDETERMINED, f"steps {keyed} typed into a list, which changes its selection")
    toggles = [a for a in _after(record.clicks, floor) if a.target is not None and (
        a.target.role in _TOGGLE_ROLES or (a.target.role is None and any(names(a.target, i) for i in point.targets)))]
    if any(a.target is None for a in _after(record.clicks, floor)) and not (toggles or picks):
        return PointCheck(PointStatus.UNDETERMINED, "what the clicks hit is unknown")
    on: dict[str, Target] = {}
    for act in toggles:
        key = (act.target.label or act.target.text or act.target.names).strip()  # type: ignore[union-attr]
        if act.target.role == "option":  # type: ignore[union-attr]  # a radio: the last one wins
            on = {k: t for k, t in on.items() if t.role != "option"}
            on[key] = act.target  # type: ignore[assignment]
        elif key in on:
            del on[key]
        else:
            on[key] = act.target  # type: ignore[assignment]
    if picks:
        on[picks[-1].selected] = Target(text=picks[-1].selected, role="option")  # type: ignore[index]
    items = _item_names(point.targets, on.values())
    missing = [i for i in items if not any(names(t, i) for t in on.values())]
    extra = [k for k, t in on.items() if not any(names(t, i) for i in items)]
    if missing or extra:
        return PointCheck(PointStatus.CONTRADICTED, f"not selected: {missing or 'none'}; selected but not asked: "
                                                    f"{extra or 'none'}")
    last = max([a.index for a in toggles] + [a.index for a in picks], default=floor)
    return PointCheck(PointStatus.SATISFIED, f"exactly {list(point.targets) or 'nothing'} selected", last)


def _focused(point: KeyPoint, record: _Record, floor: int) -> PointCheck:
    clicks = _after(record.clicks, floor)
    if not clicks:
        return PointCheck(PointStatus.CONTRADICTED, "no click put the focus anywhere")
    last = clicks[-1]
    if last.target is None or (last.target.role is None and last.target.source == "ocr"):
        return PointCheck(PointStatus.UNDETERMINED, f"what step {last.index} clicked is unknown")
    if last.target.role != "field":
        return PointCheck(PointStatus.CONTRADICTED, f"the last click hit {_described(last.target)}, not a field")
    if point.ordinal is not None and last.target.nth != point.ordinal:
        if last.target.nth is None:
            return PointCheck(PointStatus.UNDETERMINED, "which field the last click hit is unknown")
        return PointCheck(PointStatus.CONTRADICTED, f"the last click hit field #{last.target.nth}, "
                                                    f"#{point.ordinal} asked")
    return PointCheck(PointStatus.SATISFIED, f"step {last.index} focused {_described(last.target)}", last.index)


#: Words by which a task asks for removal or a reset without naming the control ("get rid of", "factory defaults").
_REMOVAL_WORDS = frozenset({"rid", "restore", "factory", "default", "defaults", "clear", "empty", "wipe"})


def unasked_acts(instruction: str, acts: Sequence[ActRecord]) -> list[tuple[str, str]]:
    """What the actions did that the task's words do not ask for, as (what should hold, why it does not): a
    destructive click where the task asks to destroy nothing (archiving is a removal but destroys nothing: "Delete"
    does not do it), and a last click that dismissed the pending change ("Cancel", "×")."""
    asked = set(re.findall(r"[^\W_]+|[×✕]", instruction.casefold()))
    asked |= {name for icon in asked for name in ICON_NAMES.get(icon, ())}
    removal = bool(asked & _REMOVAL_WORDS) or any(w.startswith(d[:5]) for w in asked for d in DESTRUCTIVE)
    out = []
    clicks = [a for a in _Record(acts).clicks if a.target is not None and a.target.interactive is not False]
    harmful = None if removal else next(
        (a for a in clicks if first_word(a.target) in DESTRUCTIVE), None)  # type: ignore[arg-type]
    if harmful is not None:
        out.append(("nothing destroyed that the task does not ask for",
                    f"step {harmful.index} clicked {_described(harmful.target)}"))
    if clicks and first_word(clicks[-1].target) in DISMISSING - asked:  # type: ignore[arg-type]
        last = clicks[-1]
        out.append(("the last change is kept", f"the last click (step {last.index}) hit {_described(last.target)}"))
    return out


def _episode_checks(instruction: str, acts: Sequence[ActRecord], stateful: bool) -> list[tuple[str, PointCheck]]:
    """`unasked_acts` as contradicted checks, and (for a task that only states an end state) typed text that
    nothing confirmed."""
    out = [(text, PointCheck(PointStatus.CONTRADICTED, why)) for text, why in unasked_acts(instruction, acts)]
    pending = unconfirmed_typing(acts)
    if stateful and pending is not None:
        out.append(("the edits are confirmed", PointCheck(
            PointStatus.CONTRADICTED, f"nothing confirmed the text typed at step {pending} (no click or key after "
                                      "it): the episode ended with it unsent")))
    return out


#: Verbs by which an end-state clause asks to reach or look at an item rather than to change it ("Open the note").
NAVIGATION_VERBS = frozenset({"open", "show", "view", "go", "navigate", "visit", "find", "display", "look", "see",
                              "read", "check", "search", "browse", "locate"})


def ended_on_operand(points: Sequence[KeyPoint], acts: Sequence[ActRecord]) -> ActRecord | None:
    """The episode's last act when it was a click on the item an end-state clause asks to change (the note to pin,
    the folder to move into), else None: the run stopped on picking its operand, so whatever the screen shows of
    that item, nothing was done to it after (a switch is exempt: clicking it is the change; so are clauses that
    only ask to reach an item)."""
    done = [a for a in acts if a.executed and not a.terminal]
    last = done[-1] if done else None
    if last is None or last.type not in _CLICK_TYPES or last.target is None or last.target.role in _TOGGLE_ROLES:
        return None
    changes = [p for p in points if p.act is None and p.kind is KeyPointKind.STATE and not p.toggles
               and not set(re.findall(r"[^\W_]+", p.text.casefold())) & NAVIGATION_VERBS]
    named = any(names(last.target, literal) for point in changes for literal in point.literals)
    return last if named else None


def _reached(report: list[tuple[KeyPoint, PointCheck]]) -> list[tuple[KeyPoint, PointCheck]]:
    """A clause that only asks to find or open something it does not name exactly ("Find the note about the
    dentist") is done when a later clause, which acts on what was found, is."""
    out = list(report)
    for i, (point, check) in enumerate(report):
        words = point.text.casefold().split()
        later = [c for _, c in report[i + 1:] if c.status is PointStatus.SATISFIED]
        if (check.status is PointStatus.UNDETERMINED and point.act is None and not point.literals and words
                and words[0] in NAVIGATION_VERBS and later):
            out[i] = (point, PointCheck(PointStatus.SATISFIED, f"reached: a later point acts on it ({later[0].why})"))
    return out


_CHECKS: Mapping[Act, Callable[[KeyPoint, _Record, int], PointCheck]] = {
    Act.CLICK: _click, Act.TYPE: _typed, Act.SELECT: _selected, Act.FOCUS: _focused,
}


def check_point(point: KeyPoint, record: _Record, previous: int, last_edit: int) -> PointCheck:
    """One act key point against the record: after the previous point's step for "then", after the last edit for
    the confirming click."""
    floor = previous if point.after_previous else (last_edit if point.confirm else -1)
    return _CHECKS[point.act](point, record, floor)  # type: ignore[index]


class ActionJudge:
    """Checks the task's key points against what each action acted on (see the module docstring). Confidence stays
    below 1: the record says what was done, not what the app made of it."""

    name = "acts"
    BASE, SPAN = 0.6, 0.3

    def _points(self, evidence: Evidence) -> tuple[KeyPoint, ...]:
        from_task = extract_key_points(evidence.task.instruction)
        if not evidence.key_points or tuple(evidence.key_points) == key_point_texts(from_task):
            return from_task
        return structure_clauses([(text, False) for text in evidence.key_points])

    def _screens(self, evidence: Evidence) -> list[list[str]]:
        if evidence.screen_texts:
            return [text.splitlines() for text in evidence.screen_texts]
        return [ocr_lines(image) for image in evidence.screenshots]

    def judge(self, evidence: Evidence) -> Verdict:
        points = self._points(evidence)
        if not points:
            return Verdict(self.name, Vote.ABSTAIN, 0.0, "the task has no key points")
        record = _Record(evidence.acts)
        report: list[tuple[KeyPoint, PointCheck]] = []
        previous = -1
        screens: list[list[str]] | None = None
        for point in points:
            if point.act is not None:
                check = check_point(point, record, previous, max(record.edits, default=-1))
                previous = check.at if check.at is not None else previous
            else:
                if screens is None:
                    screens = self._screens(evidence) if (evidence.screenshots or evidence.screen_texts) else []
                final = screens[-1] if screens else []
                status, why = point_status(point, screens) if any(final) else (
                    PointStatus.UNDETERMINED, "no screen text to read")
                if status is not PointStatus.CONTRADICTED:  # what the acts did to it decides, where they speak
                    status, why = typed_state(point, evidence.acts, final, screens[0] if screens else []) or removed(
                        point, evidence.acts, final) or pressed(point, evidence.acts) or (status, why)
                if status in (PointStatus.PARTIAL, PointStatus.GONE):
                    status = PointStatus.UNDETERMINED
                check = PointCheck(status, why)
            report.append((point, check))
        report = _reached(report)
        stateful = all(p.act is None for p in points)
        extra = _episode_checks(evidence.task.instruction, evidence.acts, stateful)
        operand = ended_on_operand(points, evidence.acts)
        if operand is not None:
            extra.append(("the change is applied after the item is picked", PointCheck(
                PointStatus.CONTRADICTED, f"the last act (step {operand.index}) clicked "
                                          f"{_described(operand.target)}, the item the task changes, and the run "
                                          "ended there")))
        report += [(KeyPoint(text=text), check) for text, check in extra]
        points = tuple(p for p, _ in report)
        lines = tuple(f"{p.text}: {c.status.value} ({c.why})" for p, c in report)
        count = {status: sum(1 for _, c in report if c.status is status) for status in PointStatus}
        if count[PointStatus.CONTRADICTED]:
            confidence = self.BASE + self.SPAN * count[PointStatus.CONTRADICTED] / len(points)
            return Verdict(self.name, Vote.FAILURE, confidence,
                           f"{count[PointStatus.CONTRADICTED]} of {len(points)} key points contradicted by the "
                           "actions or the screens", lines)
        if count[PointStatus.SATISFIED] == len(points):
            return Verdict(self.name, Vote.SUCCESS, self.BASE + self.SPAN,
                           f"all {len(points)} key points done by the actions or shown on the screens", lines)
        first = next(c.why for _, c in report if c.status is not PointStatus.SATISFIED)
        return Verdict(self.name, Vote.ABSTAIN, 0.0,
                       f"{count[PointStatus.UNDETERMINED]} of {len(points)} key points cannot be told from the "
                       f"actions or the screens (first: {first})", lines)
