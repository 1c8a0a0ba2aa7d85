"""Metrics over applications' settings files: JSON settings (VS Code style), Firefox/Thunderbird `prefs.js`,
Thunderbird message filters, GIMP's `gimprc`-style S-expressions and VLC's `vlcrc`."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

import yaml

from uivenus.envs.osworld.metrics.matching import expect_unexpect, match_value, partial_record, rule_type
from uivenus.envs.osworld.metrics.readers import read_or_none, read_text
from uivenus.envs.osworld.metrics.registry import metric

__all__ = ["check_config_status", "check_json", "check_qt_slider_colours", "check_json_keybindings",
           "check_json_settings", "check_thunderbird_filter", "check_thunderbird_prefs", "is_included_all_json_objects",
           "is_vlc_recordings_folder", "vlcrc_value", "xcu_value"]

_OOR = "{http://openoffice.org/2001/registry}"


def xcu_value(path: object, item_path: str, prop: str) -> str | None:
    """A setting from LibreOffice's registrymodifications.xcu: the value of `prop` in the item at `item_path`
    (e.g. "/org.openoffice.Office.Writer/DefaultFont", "Standard"); None when unset or unreadable."""
    tree = read_or_none(path, ET.parse)
    if tree is None:
        return None
    found = None
    for item in tree.getroot().iter("item"):
        if item.get(f"{_OOR}path") == item_path:
            for node in item.iter("prop"):
                if node.get(f"{_OOR}name") == prop:
                    found = node.findtext("value")
    return found


def _json(path: Any, *, skip_first_line: bool = False, yaml_text: bool = False) -> Any:
    """The JSON (or YAML) document in the file; None when it is missing or does not parse."""
    text = read_text(path)
    if text is None:
        return None
    body = text.split("\n", 1)[1] if skip_first_line and "\n" in text else text
    try:
        return yaml.safe_load(body) if yaml_text else json.loads(body)
    except (json.JSONDecodeError, yaml.YAMLError):
        return None


@metric("check_json_settings")
def check_json_settings(result: Any, expected: Mapping[str, Any]) -> float:
    """1.0 when the JSON settings file has every key of `expected["expected"]` with that value."""
    data = _json(result)
    return float(isinstance(data, dict) and all(k in data and data[k] == v for k, v in expected["expected"].items()))


@metric("check_json_keybindings")
def check_json_keybindings(result: Any, expected: Mapping[str, Any]) -> float:
    """1.0 when the keybindings list (the file, or the file after a comment first line) holds `expected["expected"]`."""
    for data in (_json(result), _json(result, skip_first_line=True)):
        if isinstance(data, list):
            return float(expected["expected"] in data)
    return 0.0


def _at(data: Any, path: list[Any]) -> tuple[bool, Any]:
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return False, None
    return True, data


@metric("check_json")
def check_json(result: Any, rules: Mapping[str, Any], is_yaml: bool = False) -> float:
    """Over a JSON (or, with `is_yaml`, YAML) file: every `expect` entry (`key` path, `method`, `ref`) finds its
    value and matches; no `unexpect` entry that finds a value matches it."""
    data = _json(result, yaml_text=is_yaml)
    if data is None:
        return 0.0
    for rule in rules.get("expect", []):
        found, value = _at(data, rule["key"])
        if not found or not match_value(value, rule):
            return 0.0
    for rule in rules.get("unexpect", []):
        found, value = _at(data, rule["key"])
        if found and value is not None and match_value(value, rule):
            return 0.0
    return 1.0


_PREF = re.compile(r'^user_pref\("(?P<key>(?:[^"]|\\")+)", (?P<val>.+)\);$')


def _prefs(text: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for line in text.splitlines():
        hit = _PREF.match(line.strip())
        if hit is not None:
            try:
                found[hit["key"]] = json.loads(hit["val"])
            except json.JSONDecodeError:
                continue
    return found


@metric("check_thunderbird_prefs")
def check_thunderbird_prefs(result: Any, rule: Mapping[str, Any]) -> float:
    """Over a `prefs.js`: every `expect` preference is set and matches its rule; no `unexpect` one matches."""
    text = read_text(result)
    if text is None:
        return 0.0
    prefs = _prefs(text)
    expect, unexpect = rule.get("expect", {}), rule.get("unexpect", {})
    return float(all(k in prefs and match_value(prefs[k], r) for k, r in expect.items())
                 and not any(k in prefs and match_value(prefs[k], r) for k, r in unexpect.items()))


_CONDITION = re.compile(r'\b(?:AND|OR) \((?:[\w ]+),(?:[\w \']+),(?:"(?:(?:[^"]|\")+)"|(?:[^)]+))\)|\bALL\b')
_FILTER_FIELDS = ("name", "enabled", "type", "action", "actionValue", "condition")


def _filters(text: str) -> list[dict[str, Any]]:
    """Thunderbird's msgFilterRules.dat: `key="value"` lines; a filter ends with its `condition` line."""
    filters, current = [], {}
    for line in text.splitlines():
        key, _, raw = line.partition("=")
        if key not in _FILTER_FIELDS:
            continue
        value = raw.strip()[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        current[key] = _CONDITION.findall(value) if key == "condition" else value
        if key == "condition":
            filters.append(current)
            current = {}
    return filters


@metric("check_thunderbird_filter")
def check_thunderbird_filter(result: Any, rules: Mapping[str, Any]) -> float:
    """Each `expect` partial filter (e.g. {"name": ..., "action": "Move to folder"}) matches a filter; no
    `unexpect` one matches any."""
    text = read_text(result)
    if text is None:
        return 0.0
    return float(expect_unexpect(_filters(text), rules.get("expect", []), rules.get("unexpect", []), partial_record))


@metric("check_config_status")
def check_config_status(result: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when a line of the S-expression config (GIMP's) reads `(key ... value)`; `key` may be a [first, second]
    pair naming the line's first two words."""
    text = read_text(result)
    if text is None:
        return 0.0
    keys = [rule["key"]] if isinstance(rule["key"], str) else list(rule["key"])
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        words = line.strip().lstrip("(").rstrip(")").split()
        if len(words) > len(keys) - 1 and words[:len(keys)] == keys and words[-1] == rule["value"]:
            return 1.0
    return 0.0


def vlcrc_value(text: str, key: str) -> str | None:
    """The last uncommented `key=value` setting in a vlcrc text, or None when it is not set."""
    found = None
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and not line.startswith("#") and name.strip() == key:
            found = value.strip()
    return found


@metric("is_vlc_recordings_folder")
def is_vlc_recordings_folder(result: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when VLC's `input-record-path` is `rule["recording_file_path"]`."""
    text = read_text(result)
    return float(text is not None and vlcrc_value(text, "input-record-path") == rule["recording_file_path"])


def _vlcrc_metric(key: str, rule_key: str, default: str, *, set_or_not: bool = False) -> None:
    """Register VLC's check of one vlcrc setting: the value (VLC's default when unset) must equal the rule's
    `rule_key` (an int rule value compares as its text). `set_or_not` reads any non-empty value as "1"."""

    def check(result: Any, rule: Mapping[str, Any]) -> float:
        text = read_text(result)
        if text is None:
            return 0.0
        value = vlcrc_value(text, key)
        value = default if value is None else value
        if set_or_not:
            value = "1" if value else "0"
        return float(value == str(rule[rule_key]))

    check.__name__ = check.__qualname__ = f"check_{key.replace('-', '_')}"
    check.__doc__ = f"1.0 when vlcrc's `{key}` (default {default!r}) is `rule[{rule_key!r}]`."
    metric(f"check_{key.replace('-', '_')}")(check)


#: The vlcrc settings the benchmark checks one by one: (key, rule field, VLC's default, any-value-means-set).
VLCRC_CHECKS = (
    ("qt-bgcone", "expected_qt_bgcone", "1", False),
    ("qt-max-volume", "expected_qt_max_volume", "125", False),
    ("qt-minimal-view", "expected_qt_minimal_view", "0", False),
    ("global-key-play-pause", "expected_global_key_play_pause", "", True),
    ("one-instance-when-started-from-file", "expected_one_instance_when_started_from_file", "1", False),
    ("play-and-exit", "expected_play_and_exit", "0", False),
)
for _key, _field, _default, _flag in VLCRC_CHECKS:
    _vlcrc_metric(_key, _field, _default, set_or_not=_flag)


@metric("is_included_all_json_objects")
def is_included_all_json_objects(expected: Any, result: Any) -> float:
    """1.0 when the result JSON file has every key of the expected one with the same value. The benchmark passes
    the expected file first."""
    want, have = _json(expected), _json(result)
    return float(isinstance(want, dict) and isinstance(have, dict)
                 and all(k in have and have[k] == v for k, v in want.items()))


_SLIDER_DEFAULT = "153;210;153;20;210;20;255;199;15;245;39;29"


@metric("check_qt_slider_colours")
def check_qt_slider_colours(result: Any, rule: Mapping[str, Any]) -> float:
    """VLC's volume-slider colours (`qt-slider-colours`, VLC's default when unset): equal to
    `rule["expected_qt_slider_colours"]` ("match"), or every colour dark, each channel below 100 ("blackish")."""
    kind = rule_type(rule, "check_qt_slider_colours", ("match", "blackish"))
    text = read_text(result)
    if text is None:
        return 0.0
    colours = vlcrc_value(text, "qt-slider-colours") or _SLIDER_DEFAULT
    if kind == "match":
        return float(colours == rule["expected_qt_slider_colours"])
    try:
        values = [int(v) for v in colours.split(";")]
    except ValueError:
        return 0.0
    return float(all(v < 100 for v in values))
