"""Phrasing quality of real-app tasks: values typed by what their field takes (font names for a font box, numbers
inside a spin button's range, short words for a search), every phrasing saying every value, nothing thin (a widget
with no name to ask for it by) or odd (a sentence in a font box) — checked on every task the bundled catalogs give."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from uivenus.envs.elements import UIElement
from uivenus.tasks.app_catalog import AppExploration, AppFunction, Effect, ExploredState, Gesture, Locator, RealCatalog
from uivenus.tasks.app_catalog import TreeDiff
from uivenus.tasks.catalog import INT, FunctionCall, Param
from uivenus.tasks.real_domains import number_param, text_param, value_problem
from uivenus.tasks.real_synthesis import RealSynthesizer, constraint_catalog, phrasing_problems
from uivenus.tasks.vocabularies import VOCABULARIES

sys.path.insert(0, str(Path(__file__).parent))
from real_catalog import catalog, desktop_apps  # noqa: E402

START, FIND = "4444444444444444", "5555555555555555"
SHOWN = ("enabled", "showing", "visible")
FONT = UIElement("text", "Font Name", "Liberation Serif", (*SHOWN, "editable"), (80, 60, 160, 24), path=(0, 1, 0))
SIZE = UIElement("spin button", "Font Size", "12", (*SHOWN, "editable"), (250, 60, 60, 24), path=(0, 1, 1),
                 value_range=(6.0, 96.0))
ICON = UIElement("push button", "", "", SHOWN, (320, 60, 24, 24), ("click",), (0, 1, 2))
SEARCH = UIElement("text", "", "", (*SHOWN, "editable"), (400, 300, 200, 24), path=(1, 0))
CTRL_F = Gesture("key", text="ctrl+f")


def _typed(widget: UIElement, name: str, domain: str, state: str = START, route: tuple = (),
           param: str = "") -> AppFunction:
    kind = "number" if widget.role == "spin button" else "text"
    return AppFunction(name, kind, state, widget, route, (Gesture("type", Locator.of(widget, [widget]), "uivenus"),),
                       (Param(param or name, domain),),
                       Effect(state, TreeDiff(changed=(f"{widget.role} value changed",))),
                       f"set {widget.name or 'the search'}")


def word_processor() -> AppExploration:
    """A catalog as explored before domains were typed: every entry "text", every spin button "number"."""
    states = {START: ExploredState(START, "Untitled 1 - Writer", 0, (), (FONT, SIZE, ICON)),
              FIND: ExploredState(FIND, "Find", 1, (CTRL_F,), (SEARCH,))}
    functions = {
        "font_name": _typed(FONT, "font_name", "text"),
        "font_size": _typed(SIZE, "font_size", "number"),
        "find": _typed(SEARCH, "find", "text", FIND, (CTRL_F,), param="text"),
        "icon": AppFunction("icon", "button", START, ICON, (), (Gesture("click", Locator.of(ICON, [ICON])),), (),
                            Effect(START, TreeDiff(added=("dialog 'Styles'",))), "an unnamed toolbar button"),
    }
    return AppExploration("writer", "desktop", ("libreoffice", "--writer"), states, functions, (), START, 2, 60.0,
                          9.0, True)


BUNDLED = {"file manager": catalog, "file manager and text editor": desktop_apps,
           "word processor": lambda: RealCatalog({"writer": word_processor()})}


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_every_phrasing_of_the_bundled_catalogs_passes_the_checks(name: str) -> None:
    real = BUNDLED[name]()
    cat = constraint_catalog(real)
    synthesis = RealSynthesizer(real, seed=0, values_per_function=4).synthesize(cat, 60)
    assert synthesis.tasks
    for task in synthesis.tasks:
        assert phrasing_problems(task, cat, real) == [], task.phrasings
        assert len(set(task.phrasings)) >= 2 and all(p[0].isupper() and p.endswith(".") for p in task.phrasings)
    assert not [d for d in synthesis.dropped if d.reason.startswith("odd task") and "no name" not in d.reason]


def test_values_are_typed_by_role_and_name_and_thin_tasks_are_dropped() -> None:
    real = RealCatalog({"writer": word_processor()})
    cat = constraint_catalog(real)
    assert cat.function("writer.font_name").params == (Param("font_name", "font_name"),)
    assert cat.function("writer.font_size").params == (Param("font_size", INT, low=6, high=96),)
    assert cat.function("writer.find").params == (Param("text", "word"),)  # an unnamed entry of "Find"
    synthesis = RealSynthesizer(real, seed=1, values_per_function=4).synthesize(cat, 60)
    values = {(c.function, v) for t in synthesis.tasks for c in t.calls for v in c.params.values()}
    assert {v for f, v in values if f == "font_name"} <= set(VOCABULARIES["font_name"])
    assert all(6 <= v <= 96 for f, v in values if f == "font_size")
    assert {v for f, v in values if f == "find"} <= set(VOCABULARIES["word"])
    assert not any(c.function == "icon" for t in synthesis.tasks for c in t.calls)
    assert any("writer.icon: its push button has no name" in d.reason for d in synthesis.dropped)
    find = next(t for t in synthesis.tasks if [c.function for c in t.calls] == ["find"])
    assert any("the text field" in p for p in find.phrasings)  # an unnamed field is named by its role
    # a sentence typed into the font box, or a size out of range, is odd; a phrasing that drops the value, thin
    font = next(t for t in synthesis.tasks if [c.function for c in t.calls] == ["font_name"])
    odd = replace(font, calls=(FunctionCall("writer", "font_name", {"font_name": "Call the plumber on Monday"}),))
    assert any("is a phrase, not a font name" in p for p in phrasing_problems(odd, cat, real))
    big = replace(font, calls=(FunctionCall("writer", "font_size", {"font_size": 400}),))
    assert any("not an integer from 6 to 96" in p for p in phrasing_problems(big, cat, real))
    unsaid = replace(font, phrasings=(font.spec.instruction, "Change the font in writer."))
    assert any("does not say" in p for p in phrasing_problems(unsaid, cat, real))


def test_domain_rules() -> None:
    assert text_param("name", UIElement("text", ""), where="Save As").domain == "file_name"
    assert text_param("text", UIElement("text", "", states=("multi line",))).domain == "text"
    assert text_param("text", UIElement("text", ""), where="Untitled 1 - Mousepad").domain == "word"  # not a title
    assert number_param("copies", UIElement("spin button", "Copies", value_range=(0, 2 ** 31))) == \
        Param("copies", INT, low=0, high=100)  # GTK's unbounded spin button: its first hundred values
    assert number_param("zoom").low == 50 and number_param("copies") == Param("copies", INT, low=1, high=10)
    assert value_problem(Param("font", "font_name"), "Comic Sans") is not None
    assert value_problem(Param("name", "file_name"), "quarterly report") is None  # any short name will do
