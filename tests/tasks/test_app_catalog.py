"""The real-app catalog's records: JSON round trip, locators, malformed files."""

from __future__ import annotations

import json

import pytest

from uivenus.envs.elements import UIElement, element_at, tree_hash
from uivenus.tasks.app_catalog import (
    AppExploration, AppFunction, Effect, ExploredState, Failure, FailureKind, FileChange, Gesture, Locator,
    RealCatalog, TreeDiff,
)
from uivenus.tasks.catalog import ENUM, CatalogError, Param

SHOWN = ("enabled", "showing", "visible")
OK = UIElement("push button", "OK", states=SHOWN, bounds=(10, 10, 80, 30), actions=("click",), path=(0, 1))
WRAP = UIElement("check-box", "Wrap", states=(*SHOWN, "checked"), bounds=(10, 50, 80, 20), path=(0, 2))
PANEL = UIElement("panel", "", states=SHOWN, bounds=(0, 0, 200, 200), path=(0,))


def test_element_normalises_and_hits_the_deepest_actionable() -> None:
    assert WRAP.role == "check box" and WRAP.actionable
    assert element_at([PANEL, OK, WRAP], (20, 20)) == OK
    assert element_at([PANEL, OK, WRAP], (150, 150)) == PANEL
    assert element_at([PANEL, OK], (500, 500)) is None
    assert UIElement.from_dict(json.loads(json.dumps(WRAP.to_dict()))) == WRAP


def test_tree_hash_ignores_positions_and_volatile_roles_but_not_checked_states() -> None:
    moved = UIElement("push button", "OK", states=SHOWN, bounds=(99, 99, 80, 30), path=(0, 1))
    clock = UIElement("status bar", "12:01", states=SHOWN, bounds=(0, 190, 200, 10), path=(0, 3))
    unchecked = UIElement("check box", "Wrap", states=SHOWN, bounds=(10, 50, 80, 20), path=(0, 2))
    assert tree_hash([PANEL, OK, WRAP]) == tree_hash([PANEL, moved, WRAP, clock])
    assert tree_hash([PANEL, OK, WRAP]) != tree_hash([PANEL, OK, unchecked])


def test_catalog_round_trips_and_locators_find_their_element(tmp_path) -> None:  # noqa: ANN001
    route = (Gesture("click", Locator("menu", "Format")), Gesture("key", text="escape"))
    fn = AppFunction("format_wrap", "toggle", "s1", WRAP, route=route,
                     gestures=(Gesture("click", Locator.of(WRAP, [PANEL, OK, WRAP])),),
                     params=(Param("wrap", ENUM, values=("on", "off")),),
                     effect=Effect("s2", TreeDiff(changed=("check box 'Wrap': checked -> (none)",)),
                                   (FileChange(".config/app/settings.ini", "modified", 42),)))
    exploration = AppExploration("editor", "desktop", ("mousepad",),
                                 {"s1": ExploredState("s1", "Editor", 0, (), (OK,))},
                                 {fn.name: fn}, (Failure(FailureKind.STUCK_DIALOG, "s1", route[0], "Escape"),),
                                 start="s1", max_depth=2, time_limit_s=30, elapsed_s=3.5, complete=True)
    catalog = RealCatalog({"editor": exploration})
    catalog.save(tmp_path / "c.json")
    again = RealCatalog.load(tmp_path / "c.json")
    assert again.to_dict() == catalog.to_dict() and again.apps["editor"] == exploration
    assert again.apps["editor"].counts() == {"states": 1, "functions": 1, "failures": 1}
    assert fn.gestures[0].target.find([PANEL, OK, WRAP]) == WRAP  # type: ignore[union-attr]
    assert Locator("push button", "Cancel").find([OK]) is None


def test_malformed_catalogs_raise_catalog_errors(tmp_path) -> None:  # noqa: ANN001
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(CatalogError, match="not JSON"):
        RealCatalog.load(tmp_path / "bad.json")
    with pytest.raises(CatalogError, match="schema"):
        RealCatalog.from_dict({"schema": "other", "apps": {}})
    with pytest.raises(CatalogError, match="malformed"):
        RealCatalog.from_dict({"schema": "uivenus.app-catalog/1", "apps": {"x": {"functions": {}}}})
    with pytest.raises(ValueError):
        Failure("exploded")
    with pytest.raises(CatalogError, match="snake_case"):
        AppFunction("Bad Name", "button", "s1", OK)
