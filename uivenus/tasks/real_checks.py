"""Checkers of tasks on real apps, written as OSWorld evaluators (a getter and a metric), so the OSWorld runner
judges a generated task exactly as it judges a public one.

One job: from an explored function (`tasks.app_catalog.AppFunction`) and the parameter values a task asks for,
say what the app must leave behind and how to read it — the file it wrote (`vm_file` / `vm_command_line`), or
the accessibility tree's final values (`accessibility_tree` + `check_accessibility_tree`). A check is *durable*
when it survives the app being closed (a file), which multi-app tasks need for their first app. A function
whose use left nothing observable gets no check, and no task is made of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any

from uivenus.records import plain
from uivenus.tasks.app_catalog import AppFunction, FileChange, GestureKind, WidgetKind

__all__ = ["CHECKS", "HOME", "INCIDENTAL", "MENU_ROLES", "TOGGLE_VALUES", "Check", "evaluator", "function_check",
           "param_gestures", "xpath_literal"]

HOME = "/home/user"
#: Home folders an app writes to on its own (caches, recent-files lists, the desktop's settings database): never
#: what a task asks for.
INCIDENTAL = frozenset({(".cache",), (".local",), (".dbus",), (".gnupg",), (".config", "dconf"), (".config", "pulse")})


@dataclass(frozen=True)
class Check:
    """One metric over one getter's value: an OSWorld evaluator's `func`, `result`, `expected` (and `options`)."""

    func: str
    result: Mapping[str, Any]
    expected: Mapping[str, Any]
    durable: bool = False  # read from a file: still true after the app is closed
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("result", "expected", "options"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))


def evaluator(checks: Sequence[Check]) -> dict[str, Any]:
    """The OSWorld `evaluator` of a task that must pass every check (a list of metrics joined by "and")."""
    if len(checks) == 1:
        one = checks[0]
        return {"func": one.func, "result": plain(one.result), "expected": plain(one.expected),
                **({"options": plain(one.options)} if one.options else {})}
    return {"func": [c.func for c in checks], "conj": "and", "result": [plain(c.result) for c in checks],
            "expected": [plain(c.expected) for c in checks], "options": [plain(c.options) for c in checks]}


def xpath_literal(text: str) -> str:
    """`text` as an XPath 1.0 string literal (XPath has no escapes: both quote kinds need concat())."""
    if "'" not in text:
        return f"'{text}'"
    if '"' not in text:
        return f'"{text}"'
    return "concat(" + ", \"'\", ".join(f"'{part}'" for part in text.split("'")) + ")"


def _tag(role: str) -> str:
    """The element name the OSWorld XML gives a role (spaces as dashes)."""
    return role.replace(" ", "-")


def _tree(xpath: str, text: str | None = None) -> Check:
    rule: dict[str, Any] = {"xpath": xpath}
    if text is not None:
        rule["text"] = text
    return Check("check_accessibility_tree", {"type": "accessibility_tree"}, {"type": "rule", "rules": [rule]})


def param_gestures(fn: AppFunction) -> dict[int, str]:
    """Which of the function's gestures carries which parameter: the typing and choosing gestures, in order."""
    carrying = [i for i, g in enumerate(fn.gestures) if g.kind in (GestureKind.TYPE, GestureKind.SELECT)]
    return {i: p.name for i, p in zip(carrying, fn.params)}


def _explored_values(fn: AppFunction) -> dict[str, str]:
    """Parameter -> the value typed or chosen while exploring (what the effect's file names show)."""
    return {name: fn.gestures[i].text for i, name in param_gestures(fn).items() if fn.gestures[i].text}


def _file_path(change: FileChange, fn: AppFunction, params: Mapping[str, Any]) -> str:
    """Where the file is for these values: the explored value in its name replaced by the asked one."""
    path = change.path
    for name, seen in _explored_values(fn).items():
        if name in params and seen in path:
            path = path.replace(seen, str(params[name]))
    return str(PurePosixPath(HOME) / path)


def _file_check(fn: AppFunction, params: Mapping[str, Any]) -> Check | None:
    """A file the function wrote: it must exist afterwards (created), or hold the asked text (modified)."""
    changes = [c for c in (fn.effect.files if fn.effect else ()) if c.change in ("created", "modified")
               and not any(PurePosixPath(c.path).parts[:len(p)] == p for p in INCIDENTAL)]
    if not changes:
        return None
    seen = _explored_values(fn).values()
    change = next((c for c in changes if any(v in c.path for v in seen)), changes[0])  # the one the values name
    path = _file_path(change, fn, params)
    texts = [str(v) for v in params.values() if isinstance(v, str) and str(v) not in path]
    if change.change == "modified" and texts:
        return Check("file_contains", {"type": "vm_file", "path": path, "dest": PurePosixPath(path).name},
                     {"type": "rule", "rules": {"expected": texts}}, durable=True)
    # stat prints the path only when it exists; argv form, never a shell: values are data.
    return Check("exact_match", {"type": "vm_command_line", "command": ["stat", "-c", "%n", "--", path]},
                 {"type": "rule", "rules": {"expected": f"{path}\n"}}, durable=True)


def _widget(fn: AppFunction) -> str:
    return f"//{_tag(fn.widget.role)}[@name={xpath_literal(fn.widget.name)}]"


#: How a toggle's value may be spelled (the explorer's enum, or a model's word) -> whether it is checked.
TOGGLE_VALUES: Mapping[str, bool] = MappingProxyType({"on": True, "true": True, "yes": True, "checked": True,
                                                      "off": False, "false": False, "no": False, "unchecked": False})


def _toggle(fn: AppFunction, params: Mapping[str, Any]) -> Check | None:
    value = TOGGLE_VALUES.get(str(next(iter(params.values()), "")).lower())
    if value is None:
        return None
    checked = "[@st:checked='true']" if value else "[not(@st:checked='true')]"
    return _tree(_widget(fn) + checked)


def _value(fn: AppFunction, params: Mapping[str, Any]) -> Check | None:
    """A text, number or choice widget shows the asked value (as its text, its value, its name, or a selected
    child) — a combo box's name is often its current choice, so the name is not required to stay."""
    if len(params) != 1:
        return None
    value = str(next(iter(params.values())))
    literal = xpath_literal(value)
    role, name = _tag(fn.widget.role), xpath_literal(fn.widget.name)
    shows = (f"text()={literal} or @name={literal} or @val:value={literal} or number(@val:value)=number({literal})"
             f" or .//*[@name={literal}][@st:selected='true']")
    where = f"(@name={name} or @name={literal})" if fn.kind is WidgetKind.CHOICE else f"@name={name}"
    return _tree(f"//{role}[{where}][{shows}]")


_ADDED = re.compile(r"^(?P<role>[a-z][a-z -]*?) (?P<q>['\"])(?P<name>.*)(?P=q)$")


#: Roles whose appearing only means a menu opened: navigation, not something a task can ask to have done.
MENU_ROLES = frozenset({"menu", "menu item", "check menu item", "radio menu item", "separator", "tear off menu item"})


def _appeared(fn: AppFunction, params: Mapping[str, Any]) -> Check | None:
    """A parameterless command: an element it made appear (e.g. a new tab) is there afterwards (an opened menu's
    items do not count)."""
    for added in (fn.effect.tree.added if fn.effect else ()):
        if (m := _ADDED.match(added)) and m["name"] and m["role"] not in MENU_ROLES:
            return _tree(f"//{_tag(m['role'])}[@name={xpath_literal(m['name'])}]")
    return None


#: How a function's use is checked when it wrote no file, by the kind of widget it is used through.
CHECKS: Mapping[WidgetKind, Callable[[AppFunction, Mapping[str, Any]], Check | None]] = MappingProxyType({
    WidgetKind.TOGGLE: _toggle, WidgetKind.TEXT: _value, WidgetKind.NUMBER: _value, WidgetKind.CHOICE: _value,
    WidgetKind.FORM: _value, WidgetKind.BUTTON: _appeared, WidgetKind.MENU_ITEM: _appeared,
    WidgetKind.TAB: _appeared, WidgetKind.LINK: _appeared,
})


def function_check(fn: AppFunction, params: Mapping[str, Any]) -> Check | None:
    """The check of one use of `fn` with `params`: the file it writes when it wrote one while exploring (durable),
    else what the tree shows; None when its use showed nothing a checker could read."""
    if fn.kind is WidgetKind.TOGGLE:  # a settings file holds every option's true/false: the widget says which
        return CHECKS[fn.kind](fn, params)
    return _file_check(fn, params) or CHECKS[fn.kind](fn, params)
