"""OSWorld's getters (`evaluator.result` / `expected` specs): registry `GETTERS`, type -> `fn(ctx, spec) -> value`.

A getter reads the final state the way the public benchmark's getter of that type does on its VM: file getters
copy the root's file into the episode's cache and give its host `Path` (None when it does not exist, which the
metric scores 0), `rule` gives its rules, command getters give the command's output, the Chrome getters read
Chromium's DevTools port and profile. Types we cannot serve are in `UNSUPPORTED_GETTERS` with the reason.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import urllib.parse
from collections.abc import Callable, Mapping
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Any

from uivenus.envs.osworld import a11y_tree, cdp
from uivenus.envs.osworld.apps import CHROME_PROFILE
from uivenus.envs.osworld.context import TaskContext
from uivenus.envs.osworld.downloads import fetch
from uivenus.envs.osworld.setup_steps import StepError, task_command

__all__ = ["SYSTEM_PYTHON", "GETTERS", "UNSUPPORTED_GETTERS", "GetterError", "UnsupportedGetter", "get", "getter"]


#: The Python that has Debian's pyatspi (the accessibility tree is read with it, inside the task's root).
SYSTEM_PYTHON = "/usr/bin/python3"


class GetterError(StepError):
    """A getter spec is malformed or its state cannot be read; the message names the getter."""


class UnsupportedGetter(GetterError):
    """A getter type we do not serve (`UNSUPPORTED_GETTERS` says why), or an unknown one."""


Getter = Callable[[TaskContext, Mapping[str, Any]], Any]
_GETTERS: dict[str, Getter] = {}
#: Getter type -> how its value is read (`@getter` fills it).
GETTERS: Mapping[str, Getter] = MappingProxyType(_GETTERS)
#: Getter types we refuse, and why.
UNSUPPORTED_GETTERS: Mapping[str, str] = MappingProxyType({
    "cloud_file": "downloads the expected file from the benchmark's cloud storage (supported once cached: "
                  "give it as cache_file)",
    "vscode_config": "VS Code is not in Debian",
    "googledrive_file": "needs a Google account",
    "vm_terminal_output": "reads GNOME Terminal's text through its accessibility tree; our xterm exposes none",
    "vlc_playing_info": "reads the web interface OSWorld's VM image enables in VLC; not served yet",
    "info_from_website": "loads a live website; not implemented",
    "number_of_search_results": "loads a live search page; not implemented",
    "active_tab_html_parse": "site-specific HTML extraction rules; not implemented",
})


def getter(name: str) -> Callable[[Getter], Getter]:
    def register(fn: Getter) -> Getter:
        if name in _GETTERS:
            raise ValueError(f"getter {name!r} is registered twice")
        _GETTERS[name] = fn
        return fn
    return register


def get(ctx: TaskContext, spec: Any) -> Any:
    """The value of getter spec `{"type": ..., ...}`."""
    kind = spec.get("type") if isinstance(spec, Mapping) else None
    if kind in UNSUPPORTED_GETTERS:
        raise UnsupportedGetter(f"getter {kind!r} is not supported: {UNSUPPORTED_GETTERS[kind]}")
    fn = _GETTERS.get(kind) if isinstance(kind, str) else None
    if fn is None:
        raise UnsupportedGetter(f"unknown getter {kind!r} in {spec!r}; known: {', '.join(sorted(_GETTERS))}")
    return fn(ctx, spec)


def _field(spec: Mapping[str, Any], name: str) -> Any:
    if name not in spec:
        raise GetterError(f"getter {spec.get('type')!r} needs {name!r}, got {dict(spec)}")
    return spec[name]


def _copy_out(ctx: TaskContext, source: Path, dest: str) -> Path | None:
    """`source` copied into the episode's cache as `dest`; None when it is not a file."""
    if not source.is_file():
        return None
    target = ctx.task_cache / PurePosixPath(dest).name
    ctx.task_cache.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


@getter("vm_file")
def vm_file(ctx: TaskContext, spec: Mapping[str, Any]) -> Path | None | list[Path | None]:
    """A file of the root (a list of them with `multi`; `gives` picks which of them the metric receives)."""
    paths, dests = _field(spec, "path"), _field(spec, "dest")
    if not spec.get("multi"):
        return _copy_out(ctx, ctx.root.host_path(paths), dests)
    got = [_copy_out(ctx, ctx.root.host_path(p), d) for p, d in zip(paths, dests, strict=True)]
    gives = spec.get("gives", [0])
    return got[gives[0]] if len(gives) == 1 else [got[i] for i in gives]


def _tree(folder: Path) -> dict[str, Any]:
    children: list[dict[str, Any]] = []
    for entry in sorted(folder.iterdir()):
        folder_below = entry.is_dir() and not entry.is_symlink()
        children.append(_tree(entry) if folder_below else {"type": "file", "name": entry.name})
    return {"type": "directory", "name": folder.name, "children": children}


@getter("list_directory")
def list_directory(ctx: TaskContext, spec: Mapping[str, Any]) -> dict[str, Any] | None:
    """A folder of the root as a tree: {"type": "directory", "name", "children": [...]} with {"type": "file",
    "name"} leaves (names sorted); None when it is not a folder."""
    folder = ctx.root.host_path(_field(spec, "path"))
    return _tree(folder) if folder.is_dir() else None


@getter("vm_screen_size")
def vm_screen_size(ctx: TaskContext, spec: Mapping[str, Any]) -> dict[str, int]:
    width, height = ctx.desktop.screen_size()
    return {"width": width, "height": height}


@getter("vm_window_size")
def vm_window_size(ctx: TaskContext, spec: Mapping[str, Any]) -> dict[str, int] | None:
    """The size of the app's window (`app_class_name`, its WM class); None when it has none."""
    size = ctx.desktop.window_size(_field(spec, "app_class_name"))
    return None if size is None else {"width": size[0], "height": size[1]}


@getter("cache_file")
def cache_file(ctx: TaskContext, spec: Mapping[str, Any]) -> Path | None:
    """An expected file by URL, through the download cache."""
    return _copy_out(ctx, fetch(ctx.downloads, _field(spec, "path"), offline=ctx.offline), _field(spec, "dest"))


@getter("rule")
def rule(ctx: TaskContext, spec: Mapping[str, Any]) -> Any:
    return _field(spec, "rules")


#: The named days of OSWorld's relative-time rules, as offsets from today.
_RELATIVE = {"today": 0, "tomorrow": 1, "yesterday": -1}


@getter("rule_relativeTime")
def rule_relative_time(ctx: TaskContext, spec: Mapping[str, Any]) -> Any:
    """The rules with `expected` filled from `relativeTime`: `{"from": "today"|"tomorrow"|"yesterday"|"N days
    later"|"N days ago"}` formatted with `expected["time_format"]` (strftime) or the rule's own format string."""
    rules = dict(_field(spec, "rules"))
    relative = rules.get("relativeTime", {})
    start = str(relative.get("from", "today"))
    if start in _RELATIVE:
        days = _RELATIVE[start]
    else:
        count, unit, *direction = start.split()
        if not unit.startswith("day"):
            raise GetterError(f"rule_relativeTime: only day offsets are supported, got {start!r}")
        days = int(count) * (-1 if direction and direction[0] == "ago" else 1)
    when = datetime.now() + timedelta(days=days)
    expected = rules.get("expected")
    if isinstance(expected, Mapping):
        rules["expected"] = {k: when.strftime(v) if isinstance(v, str) else v for k, v in expected.items()}
    elif isinstance(expected, str):
        rules["expected"] = when.strftime(expected)
    return rules


@getter("vm_command_line")
def vm_command_line(ctx: TaskContext, spec: Mapping[str, Any]) -> str:
    """The standard output of a command run as `user` in the root."""
    command = task_command(_field(spec, "command"), bool(spec.get("shell")))
    return ctx.root.run(command, timeout=float(spec.get("timeout", 60))).stdout


@getter("vm_command_error")
def vm_command_error(ctx: TaskContext, spec: Mapping[str, Any]) -> str:
    command = task_command(_field(spec, "command"), bool(spec.get("shell")))
    return ctx.root.run(command, timeout=float(spec.get("timeout", 60))).stderr


def _config_file(ctx: TaskContext, spec: Mapping[str, Any], folder: str, default: str) -> Path | None:
    name = spec.get("file_name", default)
    return _copy_out(ctx, ctx.root.host_path(f"{folder}/{name}"), spec.get("dest", PurePosixPath(name).name))


@getter("vlc_config")
def vlc_config(ctx: TaskContext, spec: Mapping[str, Any]) -> Path | None:
    """VLC's settings file (`~/.config/vlc/vlcrc`), written when VLC quits or saves its preferences."""
    return _config_file(ctx, spec, "/home/user/.config/vlc", "vlcrc")


@getter("gimp_config_file")
def gimp_config_file(ctx: TaskContext, spec: Mapping[str, Any]) -> Path | None:
    """A file of GIMP's settings folder (`~/.config/GIMP/2.10/<file_name>`)."""
    return _config_file(ctx, spec, "/home/user/.config/GIMP/2.10", "gimprc")


@getter("vm_wallpaper")
def vm_wallpaper(ctx: TaskContext, spec: Mapping[str, Any]) -> Path | None:
    """The desktop's wallpaper image: the file `~/.fehbg` (our desktop's wallpaper setter) points at."""
    fehbg = ctx.root.host_path("/home/user/.fehbg")
    if not fehbg.is_file():
        return None
    quoted = [part for part in fehbg.read_text().split("'")[1::2] if part.startswith("/")]
    return _copy_out(ctx, ctx.root.host_path(quoted[-1]), spec.get("dest", "wallpaper.png")) if quoted else None


@getter("accessibility_tree")
def accessibility_tree(ctx: TaskContext, spec: Mapping[str, Any]) -> str:
    """The desktop's accessibility tree as OSWorld's XML, read over the root's AT-SPI bus by the system Python."""
    if not Path(SYSTEM_PYTHON).is_file():
        raise GetterError(f"accessibility_tree needs {SYSTEM_PYTHON} with pyatspi: apt-get install python3-pyatspi")
    done = ctx.root.run([SYSTEM_PYTHON, "-c", Path(a11y_tree.__file__).read_text()], timeout=60)
    if done.returncode != 0 or not done.stdout.startswith("<desktop-frame"):
        raise GetterError(f"the accessibility tree could not be read: {done.stderr.strip()[-400:]}; "
                          "apt-get install python3-pyatspi at-spi2-core")
    return done.stdout


# --- Chromium ----------------------------------------------------------------------------------

def _tab_info(tab: cdp.Tab) -> dict[str, str]:
    return {"title": tab.title, "url": tab.url}


@getter("open_tabs_info")
def open_tabs_info(ctx: TaskContext, spec: Mapping[str, Any]) -> list[dict[str, str]]:
    return [_tab_info(t) for t in cdp.tabs(ctx.cdp_port)]


def _active(ctx: TaskContext) -> cdp.Tab | None:
    tabs = cdp.tabs(ctx.cdp_port)
    return tabs[0] if tabs else None


@getter("active_tab_info")
def active_tab_info(ctx: TaskContext, spec: Mapping[str, Any]) -> dict[str, str] | None:
    tab = _active(ctx)
    return None if tab is None else _tab_info(tab)


@getter("active_url_from_accessTree")
def active_url_from_access_tree(ctx: TaskContext, spec: Mapping[str, Any]) -> str | None:
    """The active tab's URL (OSWorld reads the address bar; DevTools knows the same URL)."""
    tab = _active(ctx)
    return None if tab is None else tab.url


@getter("active_tab_url_parse")
def active_tab_url_parse(ctx: TaskContext, spec: Mapping[str, Any]) -> dict[str, Any] | None:
    """The active URL's query parameters named in `parse_keys` (first value each; `replace` renames keys)."""
    tab = _active(ctx)
    if tab is None:
        return None
    query = urllib.parse.parse_qs(urllib.parse.urlparse(tab.url).query)
    found = {key: query[key][0] for key in spec.get("parse_keys", ()) if key in query}
    renames = spec.get("replace", {})
    return {renames.get(k, k): v for k, v in found.items()}


def _profile_json(ctx: TaskContext, name: str) -> Any:
    """A JSON file of Chromium's profile (`Default/Preferences`, `Local State`, ...); None if absent or unreadable."""
    path = ctx.root.host_path(f"{CHROME_PROFILE}/{name}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _profile_rows(ctx: TaskContext, spec: Mapping[str, Any], name: str, query: str) -> list[tuple[Any, ...]] | None:
    """Rows of a profile database, read from a copy (Chromium keeps the live file locked); None if absent."""
    copy = _copy_out(ctx, ctx.root.host_path(f"{CHROME_PROFILE}/Default/{name}"), spec.get("dest", name))
    if copy is None:
        return None
    try:
        with closing(sqlite3.connect(copy)) as db:
            return db.execute(query).fetchall()
    except sqlite3.Error:
        return None


@getter("history")
def history(ctx: TaskContext, spec: Mapping[str, Any]) -> list[tuple[Any, ...]] | None:
    """The browsing history as (url, title, last_visit_time) rows."""
    return _profile_rows(ctx, spec, "History", "SELECT url, title, last_visit_time FROM urls")


@getter("cookie_data")
def cookie_data(ctx: TaskContext, spec: Mapping[str, Any]) -> list[tuple[Any, ...]] | None:
    """Every row of the profile's cookie table."""
    return _profile_rows(ctx, spec, "Cookies", "SELECT * FROM cookies")


@getter("profile_name")
def profile_name(ctx: TaskContext, spec: Mapping[str, Any]) -> str | None:
    return ((_profile_json(ctx, "Default/Preferences") or {}).get("profile") or {}).get("name")


@getter("chrome_language")
def chrome_language(ctx: TaskContext, spec: Mapping[str, Any]) -> str:
    """The browser's UI locale (`Local State` intl.app_locale), "en-US" when never set."""
    return str(((_profile_json(ctx, "Local State") or {}).get("intl") or {}).get("app_locale", "en-US"))


#: Chromium's font sizes when the user never changed them.
DEFAULT_FONT_SIZES: Mapping[str, int] = MappingProxyType(
    {"default_fixed_font_size": 13, "default_font_size": 16, "minimum_font_size": 13})


@getter("chrome_font_size")
def chrome_font_size(ctx: TaskContext, spec: Mapping[str, Any]) -> dict[str, Any]:
    """The font sizes of `Preferences` webkit.webprefs (Chromium's defaults when never set)."""
    webkit = (_profile_json(ctx, "Default/Preferences") or {}).get("webkit") or {}
    return dict(webkit.get("webprefs") or DEFAULT_FONT_SIZES)


@getter("enabled_experiments")
def enabled_experiments(ctx: TaskContext, spec: Mapping[str, Any]) -> list[str]:
    """The chrome://flags experiments turned on (`Local State` browser.enabled_labs_experiments)."""
    return list(((_profile_json(ctx, "Local State") or {}).get("browser") or {}).get("enabled_labs_experiments", []))


@getter("extensions_installed_from_shop")
def extensions_installed_from_shop(ctx: TaskContext, spec: Mapping[str, Any]) -> list[Any]:
    """The manifests of the profile's installed extensions (`Default/Extensions/<id>/<version>/manifest.json`)."""
    folder = ctx.root.host_path(f"{CHROME_PROFILE}/Default/Extensions")
    manifests = []
    for manifest in sorted(folder.glob("*/*/manifest.json")):
        try:
            manifests.append(json.loads(manifest.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return manifests


@getter("bookmarks")
def bookmarks(ctx: TaskContext, spec: Mapping[str, Any]) -> Any:
    """The profile's bookmark roots (`bookmark_bar`, `other`, `synced`), as Chrome stores them."""
    data = _profile_json(ctx, "Default/Bookmarks")
    return None if data is None else data.get("roots")


@getter("enable_do_not_track")
def enable_do_not_track(ctx: TaskContext, spec: Mapping[str, Any]) -> str:
    prefs = _profile_json(ctx, "Default/Preferences") or {}
    return "true" if prefs.get("enable_do_not_track") else "false"


@getter("default_search_engine")
def default_search_engine(ctx: TaskContext, spec: Mapping[str, Any]) -> str:
    prefs = _profile_json(ctx, "Default/Preferences") or {}
    provider = prefs.get("default_search_provider_data", {}).get("template_url_data", {})
    return str(provider.get("short_name", "Google"))
