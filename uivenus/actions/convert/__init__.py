"""Converters between peers' action formats and the unified action space.

Into the space: AndroidWorld JSON, UI-TARS action strings, GUI-Owl tool calls, OpenCUA pyautogui code
(`get_converter(name).to_unified(item)`, or `convert_text(name, text)` for a whole file). Out of it:
`pyautogui_code(*actions)` for desktop harnesses and `adb_commands(action)` for phones. Nothing here
rescales coordinates; that is `uivenus.actions.coords`' job.
"""

from . import androidworld, guiowl, opencua, uitars  # noqa: F401  (each registers its converter)
from .adb import adb_commands
from .base import CONVERTERS, Converter, ConvertError, Result, convert_text, get_converter, sample_path, split_items
from .pyautogui_out import pyautogui_code

__all__ = [
    "CONVERTERS",
    "ConvertError",
    "Converter",
    "Result",
    "adb_commands",
    "convert_text",
    "get_converter",
    "pyautogui_code",
    "sample_path",
    "split_items",
]
