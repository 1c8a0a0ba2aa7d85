"""Metrics over what the OS getters print: `timedatectl`, GNOME's favourite apps, a directory listing, the
clipboard, the text scaling factor."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from uivenus.envs.osworld.metrics.matching import rule_type
from uivenus.envs.osworld.metrics.registry import metric

__all__ = ["check_gnome_favorite_apps", "check_moved_jpgs", "check_text_enlarged", "is_in_vm_clickboard",
           "is_shortcut_on_desktop", "is_utc_0", "is_vlc_fullscreen"]


@metric("is_utc_0")
def is_utc_0(result: Any) -> float:
    """1.0 when `timedatectl`'s "Time zone" line ends in "+0000)"."""
    if not isinstance(result, str):
        return 0.0
    zone = next((line for line in result.splitlines() if line.strip().startswith("Time zone:")), "")
    return float(zone.rstrip().endswith("+0000)"))


@metric("check_gnome_favorite_apps")
def check_gnome_favorite_apps(result: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when the printed list (gsettings' "['a.desktop', ...]", parsed as a literal, never evaluated) holds
    exactly the expected apps, in any order."""
    try:
        apps = ast.literal_eval(result) if isinstance(result, str) else result
    except (ValueError, SyntaxError):
        return 0.0
    if not isinstance(apps, list | tuple):
        return 0.0
    return float(len(apps) == len(rule["expected"]) and set(apps) == set(rule["expected"]))


@metric("check_moved_jpgs")
def check_moved_jpgs(result: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when the directory tree's children are exactly the expected file names."""
    if not isinstance(result, Mapping):
        return 0.0
    names = [child.get("name") for child in result.get("children", [])]
    return float(len(names) == len(rule["expected"]) and set(names) == set(rule["expected"]))


@metric("is_in_vm_clickboard")
def is_in_vm_clickboard(config: Mapping[str, Any], terminal_output: Any) -> float:
    """1.0 when the clipboard text holds the expected string (or every string of an expected list). The benchmark
    passes the rules first and the clipboard second."""
    if not isinstance(terminal_output, str):
        return 0.0
    wanted = config["expected"]
    return float(all(w in terminal_output for w in (wanted if isinstance(wanted, list) else [wanted])))


@metric("check_text_enlarged")
def check_text_enlarged(result: Any) -> float:
    """1.0 when the text scaling factor is above 1."""
    try:
        return float(float(result) > 1.0)
    except (TypeError, ValueError):
        return 0.0


@metric("is_shortcut_on_desktop")
def is_shortcut_on_desktop(shortcuts: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when some .desktop file on the desktop (path -> content) has the line `Name=<name>` (type "name") or
    `Exec=<command>` (type "exec")."""
    kind = rule_type(rule, "is_shortcut_on_desktop", ("name", "exec"))
    if not isinstance(shortcuts, Mapping):
        return 0.0
    line = f"{kind.capitalize()}={rule[kind]}"
    return float(any(line in str(content).splitlines() for content in shortcuts.values()))


@metric("is_vlc_fullscreen")
def is_vlc_fullscreen(window_size: Any, screen_size: Any) -> float:
    """1.0 when VLC's window is exactly the screen's size (both mappings with "width" and "height")."""
    if not isinstance(window_size, Mapping) or not isinstance(screen_size, Mapping):
        return 0.0
    return float(all(window_size.get(k) == screen_size.get(k) is not None for k in ("width", "height")))
