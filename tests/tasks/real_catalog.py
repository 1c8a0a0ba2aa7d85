"""A small catalog of the file manager (pcmanfm) in the explorer's schema, with the bounds and gestures read from its
real accessibility tree on our 1280x800 Xvfb desktop, for the synthesis and gate tests of real apps."""

from __future__ import annotations

from uivenus.envs.elements import UIElement
from uivenus.tasks.app_catalog import (
    AppExploration, AppFunction, Effect, ExploredState, FileChange, Gesture, Locator, RealCatalog, TreeDiff,
)
from uivenus.tasks.catalog import Param

START, DIALOG = "0000000000000000", "1111111111111111"
NEW_FOLDER = Gesture("key", text="ctrl+shift+n")
SHOWN = ("enabled", "showing", "visible")
ENTRY = UIElement("text", "", "New", (*SHOWN, "focused", "editable"), (436, 422, 466, 25), ("activate",), (0, 1, 2),
                  "pcmanfm")
OK = UIElement("push button", "OK", "", SHOWN, (806, 464, 91, 32), ("click",), (0, 1, 3), "pcmanfm")
HIDDEN = UIElement("check menu item", "Show Hidden", "", ("enabled",), None, ("click",), (0, 0, 2, 1), "pcmanfm")
HOME = UIElement("push button", "Home Folder", "", SHOWN, (511, 210, 34, 34), ("click",), (0, 0, 5), "pcmanfm")


def file_manager(*, launch: tuple[str, ...] = ("pcmanfm", "/home/user")) -> AppExploration:
    states = {START: ExploredState(START, "user", 0, (), (HOME,)),
              DIALOG: ExploredState(DIALOG, "Creating New Folder", 1, (NEW_FOLDER,), (ENTRY, OK))}
    functions = {
        "creating_new_folder": AppFunction(
            "creating_new_folder", "form", DIALOG, ENTRY, (NEW_FOLDER,),
            (Gesture("type", Locator("text", ""), "New"), Gesture("click", Locator("push button", "OK"))),
            (Param("name", "title"),), Effect(START, TreeDiff(), (FileChange("New", "created"),)),
            "create a folder in the home folder"),
        "view_show_hidden": AppFunction(
            "view_show_hidden", "toggle", START, HIDDEN, (), (Gesture("key", text="ctrl+h"),),
            (Param("value", "enum", ("on", "off")),),
            Effect(START, TreeDiff(changed=("check menu item 'Show Hidden': (none) -> checked",))),
            "show hidden files"),
        "home_folder": AppFunction(  # pressing Home when home is shown changes nothing: no task can check it
            "home_folder", "button", START, HOME, (), (Gesture("click", Locator("push button", "Home Folder")),),
            (), Effect(START), "go to the home folder"),
    }
    return AppExploration("pcmanfm", "desktop", launch, states, functions, (), START, 2, 60.0, 12.0, True)


def catalog() -> RealCatalog:
    return RealCatalog({"pcmanfm": file_manager()})


EDITOR_START, SAVE_AS = "2222222222222222", "3333333333333333"
SAVE = Gesture("key", text="ctrl+s")
NAME = UIElement("text", "", "", (*SHOWN, "focused", "editable"), (186, 58, 1021, 34), ("activate",), (0, 2, 0, 1),
                 "mousepad")
SAVE_BUTTON = UIElement("push button", "Save", "", SHOWN, (1125, 755, 86, 34), ("click",), (0, 2, 1, 2), "mousepad")
AREA = UIElement("text", "", "", (*SHOWN, "editable", "multi line"), (349, 209, 638, 449), ("activate",), (0, 0, 1),
                 "mousepad")


def text_editor() -> AppExploration:
    states = {EDITOR_START: ExploredState(EDITOR_START, "Untitled 1 - Mousepad", 0, (), (AREA,)),
              SAVE_AS: ExploredState(SAVE_AS, "Save As", 1, (SAVE,), (NAME, SAVE_BUTTON))}
    functions = {"save_as": AppFunction(
        "save_as", "form", SAVE_AS, NAME, (SAVE,),
        (Gesture("type", Locator("text", ""), "notes.txt"), Gesture("click", Locator("push button", "Save"))),
        (Param("file_name", "title"),), Effect(EDITOR_START, TreeDiff(), (FileChange("notes.txt", "created"),)),
        "save the document under a new name")}
    return AppExploration("mousepad", "desktop", ("mousepad",), states, functions, (), EDITOR_START, 2, 60.0, 9.0,
                          True)


def desktop_apps() -> RealCatalog:
    return RealCatalog({"pcmanfm": file_manager(), "mousepad": text_editor()})
