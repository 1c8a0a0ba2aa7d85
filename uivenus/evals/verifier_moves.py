"""The moves that make the labelled set's episodes: wrong replacements, harmful continuations, random play, and
the MiniWoB++ oracles.

One job: given a live page, say what to do next — the plausible wrong step that replaces a reference run's last
effective one (`wrong_action`), the destructive continuation per sandbox app (`HARMFUL`), the seeded random
policy's moves (`random_moves`), and the correct actions for the MiniWoB++ tasks the build uses
(`MINIWOB_SOLVERS`, read off the page's DOM). Recording the episodes these moves drive, and deciding which
perturbation each gets, is `evals.verifier_data`; the moves are kept apart so that adding a perturbation or an
app's harmful step touches only this table of moves.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from uivenus.actions.coords import Frame
from uivenus.actions.points import iter_points
from uivenus.actions.space import Action, Click, SelectOption, Type
from uivenus.agent.policies.random_policy import RandomPolicy
from uivenus.envs.page_script import page_script
from uivenus.envs.sandbox.solving import SolverError, tap, tid
from uivenus.envs.sandbox.tasks import DomQuery
from uivenus.records import TaskSpec
from uivenus.verify.keypoints import literal_tokens
from uivenus.verify.signals import page_probe

__all__ = ["HARMFUL", "MINIWOB_SOLVERS", "first_point", "random_moves", "until_terminal", "wrong_action"]


def first_point(action: Action) -> tuple[float, float] | None:
    return next((p for _, p in iter_points(action)), None)


# --- sandbox moves --------------------------------------------------------------------------------

def until_terminal(moves: Iterable[Action]) -> Iterator[Action]:
    """The moves up to (without) the first terminal one."""
    return itertools.takewhile(lambda a: not a.is_terminal, moves)


#: Visible controls other than the one under the point, nearest first (centres in screen pixels).
_OTHER_CONTROLS_JS = page_script("uivenus.evals", "other_controls.js")


def _near_miss(text: str) -> str:
    """The text with its last letter or digit changed: a value that looks right and is wrong."""
    for i in range(len(text) - 1, -1, -1):
        c = text[i]
        if c.isdigit():
            return text[:i] + str((int(c) + 1) % 10) + text[i + 1:]
        if c.isalpha():
            return text[:i] + ("a" if c.lower() == "z" else chr(ord(c.lower()) + 1)) + text[i + 1:]
    return text + "x"


def wrong_action(env: Any, action: Action) -> Action:
    """A plausible wrong replacement for `action`: the nearest other control for a click, a near-miss text for a
    Type, another option for a SelectOption, else a click on the nearest control to the screen's centre."""
    if isinstance(action, Type):
        return Type(content=_near_miss(action.content))
    if isinstance(action, SelectOption):
        return SelectOption(index=action.index + 1 if action.index == 0 else action.index - 1, point=action.point)
    width, height = env.screen_size
    point = first_point(action) or (width / 2, height / 2)
    others = page_probe(env, _OTHER_CONTROLS_JS, [float(point[0]), float(point[1])])
    if others:
        return Click(point=tuple(others[0]))
    return Click(point=(2, height - 3))  # the bottom-left corner: almost always blank


def _first_named(q: DomQuery, spec: TaskSpec, selector: Callable[[str], str], fallback: str) -> str:
    """The selector of the element the instruction names (by its literals), else `fallback`."""
    for literal in literal_tokens(spec.instruction):
        if q.exists(selector(literal)):
            return selector(literal)
    return fallback


def _harm_notes(q: DomQuery, spec: TaskSpec) -> Iterator[Action]:
    from uivenus.envs.sandbox.suites.notes import row

    yield from tap(q, _first_named(q, spec, row, tid("note-row")))
    yield from tap(q, tid("delete-note"))
    yield from tap(q, tid("confirm-ok"))


def _harm_contacts(q: DomQuery, spec: TaskSpec) -> Iterator[Action]:
    from uivenus.envs.sandbox.suites.contacts import row

    yield from tap(q, _first_named(q, spec, row, tid("contact-row")))
    yield from tap(q, tid("delete-contact"))
    yield from tap(q, tid("confirm-ok"))


def _harm_settings(q: DomQuery, spec: TaskSpec) -> Iterator[Action]:
    from uivenus.envs.sandbox.suites.settings import solve_reset

    yield from until_terminal(solve_reset(q))


def _harm_files(q: DomQuery, spec: TaskSpec) -> Iterator[Action]:
    item = _first_named(q, spec, lambda t: tid("item", name=t), tid("item"))
    yield from tap(q, f"{item} {tid('more')}")
    yield from tap(q, tid("menu-delete"))
    yield from tap(q, tid("delete-ok"))


#: A destructive continuation per app, run on the live page after the reference solution: it deletes the item the
#: task names (else the first one) or resets everything, undoing the task or damaging what it must keep.
HARMFUL: Mapping[str, Callable[[DomQuery, TaskSpec], Iterator[Action]]] = MappingProxyType({
    "notes": _harm_notes, "contacts": _harm_contacts, "settings": _harm_settings, "files": _harm_files,
})


def random_moves(env: Any, steps: int, seed: int, instruction: str) -> Iterator[Action]:
    policy = RandomPolicy(seed)
    width, height = env.screen_size
    frame = Frame.relative(width, height)
    for _ in range(steps):
        yield frame.action_to_screen(policy.draw(env.platform, {"instruction": instruction}))


# --- MiniWoB moves --------------------------------------------------------------------------------

def _dom_nodes(node: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    yield node
    for child in node.get("children", ()):
        yield from _dom_nodes(child)


def _centre(node: Mapping[str, Any]) -> tuple[int, int]:
    return round(node["left"] + node["width"] / 2), round(node["top"] + node["height"] / 2)


def _quoted(utterance: str) -> str:
    match = re.search(r'"([^"]+)"', utterance)
    if match is None:
        raise SolverError(f"the utterance {utterance!r} quotes nothing")
    return match.group(1)


def _find(env: Any, tags: Sequence[str], text: str | None = None) -> list[Mapping[str, Any]]:
    found = [n for n in _dom_nodes(env.dom()) if n.get("tag") in tags and (text is None or n.get("text") == text)
             and n.get("width", 0) > 0 and n.get("left", -1) >= 0]
    if not found:
        raise SolverError(f"no {'/'.join(tags)} element{f' with text {text!r}' if text else ''} on the page")
    return found


def _mw_click_test(env: Any, utterance: str) -> Iterator[Action]:
    yield Click(point=_centre(_find(env, ("BUTTON",))[0]))


def _mw_click_test_2(env: Any, utterance: str) -> Iterator[Action]:
    yield Click(point=_centre(_find(env, ("BUTTON",), utterance.split()[-1].rstrip("."))[0]))


def _mw_click_button(env: Any, utterance: str) -> Iterator[Action]:
    yield Click(point=_centre(_find(env, ("BUTTON",), _quoted(utterance))[0]))


def _mw_click_link(env: Any, utterance: str) -> Iterator[Action]:
    yield Click(point=_centre(_find(env, ("SPAN", "A"), _quoted(utterance))[0]))


def _mw_focus_text(env: Any, utterance: str) -> Iterator[Action]:
    yield Click(point=_centre(_find(env, ("INPUT_text",))[0]))


def _mw_enter_text(env: Any, utterance: str) -> Iterator[Action]:
    yield Click(point=_centre(_find(env, ("INPUT_text",))[0]))
    yield Type(content=_quoted(utterance))
    yield Click(point=_centre(_find(env, ("BUTTON",), "Submit")[0]))


def _mw_enter_text_2(env: Any, utterance: str) -> Iterator[Action]:
    text = _quoted(utterance)
    yield Click(point=_centre(_find(env, ("INPUT_text",))[0]))
    yield Type(content=text.upper() if "upper case" in utterance else text.lower())
    yield Click(point=_centre(_find(env, ("BUTTON",), "Submit")[0]))


def _mw_click_dialog_2(env: Any, utterance: str) -> Iterator[Action]:
    label = _quoted(utterance)
    buttons = [n for n in _find(env, ("BUTTON",)) if n.get("text") == label]
    if not buttons and label.lower() == "x":  # the title bar's close button has no visible text
        buttons = [n for n in _find(env, ("BUTTON",)) if "titlebar-close" in (n.get("classes") or "")]
    if not buttons:
        raise SolverError(f"no dialog button labelled {label!r}")
    yield Click(point=_centre(buttons[0]))


def _labelled_inputs(env: Any, tag: str) -> dict[str, Mapping[str, Any]]:
    """Each `tag` input inside a LABEL, by the label's text (MiniWoB's checkbox and radio lists)."""
    out = {}
    for label in _find(env, ("LABEL",)):
        children = label.get("children", ())
        box = next((c for c in children if c.get("tag") == tag), None)
        text = " ".join(str(c.get("text") or "") for c in children if c.get("tag") == "t").strip()
        if box is not None and text:
            out[text] = box
    return out


def _selected_items(utterance: str) -> list[str]:
    match = re.match(r"Select (.*) and click Submit", utterance)
    if match is None:
        raise SolverError(f"cannot read the items of {utterance!r}")
    body = match.group(1).strip()
    return [] if body == "nothing" else [item.strip() for item in body.split(",") if item.strip()]


def _mw_click_checkboxes(env: Any, utterance: str) -> Iterator[Action]:
    boxes = _labelled_inputs(env, "INPUT_checkbox")
    for item in _selected_items(utterance):
        if item not in boxes:
            raise SolverError(f"no checkbox labelled {item!r}")
        yield Click(point=_centre(boxes[item]))
    yield Click(point=_centre(_find(env, ("BUTTON",), "Submit")[0]))


def _mw_click_option(env: Any, utterance: str) -> Iterator[Action]:
    radios = _labelled_inputs(env, "INPUT_radio")
    (item,) = _selected_items(utterance)
    if item not in radios:
        raise SolverError(f"no option labelled {item!r}")
    yield Click(point=_centre(radios[item]))
    yield Click(point=_centre(_find(env, ("BUTTON",), "Submit")[0]))


def _mw_click_tab(env: Any, utterance: str) -> Iterator[Action]:
    match = re.search(r"Tab #\d+", utterance)
    if match is None:
        raise SolverError(f"the utterance {utterance!r} names no tab")
    yield Click(point=_centre(_find(env, ("A",), match.group())[0]))


def _mw_enter_password(env: Any, utterance: str) -> Iterator[Action]:
    for field in _find(env, ("INPUT_password",))[:2]:
        yield Click(point=_centre(field))
        yield Type(content=_quoted(utterance))
    yield Click(point=_centre(_find(env, ("BUTTON",), "Submit")[0]))


def _mw_login_user(env: Any, utterance: str) -> Iterator[Action]:
    username, password = re.findall(r'"([^"]+)"', utterance)[:2]
    yield Click(point=_centre(_find(env, ("INPUT_text",))[0]))
    yield Type(content=username)
    yield Click(point=_centre(_find(env, ("INPUT_password",))[0]))
    yield Type(content=password)
    yield Click(point=_centre(_find(env, ("BUTTON",), "Login")[0]))


def _mw_focus_text_2(env: Any, utterance: str) -> Iterator[Action]:
    match = re.search(r"(\d+)(?:st|nd|rd|th)", utterance)
    if match is None:
        raise SolverError(f"the utterance {utterance!r} names no ordinal")
    yield Click(point=_centre(_find(env, ("INPUT_text",))[int(match.group(1)) - 1]))


def _mw_click_button_sequence(env: Any, utterance: str) -> Iterator[Action]:
    yield Click(point=_centre(_find(env, ("BUTTON",), "ONE")[0]))
    yield Click(point=_centre(_find(env, ("BUTTON",), "TWO")[0]))


#: The option texts of the page's <select>.
_SELECT_OPTIONS_JS = page_script("uivenus.evals", "select_options.js")


def _mw_choose_list(env: Any, utterance: str) -> Iterator[Action]:
    match = re.match(r"Select (.*) from the list and click Submit", utterance)
    options = page_probe(env, _SELECT_OPTIONS_JS) or []
    if match is None or match.group(1) not in options:
        raise SolverError(f"no list option named in {utterance!r} (options {options})")
    yield SelectOption(index=options.index(match.group(1)), point=_centre(_find(env, ("SELECT",))[0]))
    yield Click(point=_centre(_find(env, ("BUTTON",), "Submit")[0]))


#: MiniWoB oracles: (env after reset, utterance) -> the correct actions, read off `core.getDOMInfo()` (the page's own
#: element tree: the same facts its reward function checks).
MINIWOB_SOLVERS: Mapping[str, Callable[[Any, str], Iterator[Action]]] = MappingProxyType({
    "click-test": _mw_click_test, "click-test-2": _mw_click_test_2, "click-button": _mw_click_button,
    "click-link": _mw_click_link, "focus-text": _mw_focus_text, "enter-text": _mw_enter_text,
    "click-dialog-2": _mw_click_dialog_2, "click-checkboxes": _mw_click_checkboxes,
    "click-option": _mw_click_option, "click-tab": _mw_click_tab, "enter-password": _mw_enter_password,
    "login-user": _mw_login_user, "focus-text-2": _mw_focus_text_2,
    "click-button-sequence": _mw_click_button_sequence, "choose-list": _mw_choose_list,
    "enter-text-2": _mw_enter_text_2,
})
