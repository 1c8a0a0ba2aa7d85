"""How the desktop looks: a top bar with a clock, a dock of app launchers on the left, and a wallpaper.

Computer-use models meet Ubuntu desktops (OSWorld's snapshots are one), not a black X screen; light Debian
packages come close: tint2 draws the top bar and the dock, feh sets a wallpaper that this module paints itself
(a fixed gradient, so every run looks the same), and in an OSWorld task pcmanfm shows the files of its
~/Desktop as icons where the task expects them. Every part is optional (`DesktopLook`), and a missing package
only costs its part, with a warning. The panels are started by whoever owns the task's processes: the env on the
host for its own tasks, an OSWorld task's sandbox for its tasks (so a click on a launcher starts the app there).
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

__all__ = ["BAR_HEIGHT", "DesktopLook", "desktop_icons_argv", "panel_argvs", "wallpaper"]

log = logging.getLogger(__name__)

#: Launchers of the dock, as desktop files (those not installed are left out).
DOCK_APPS = ("chromium", "thunderbird", "libreoffice-writer", "libreoffice-calc", "libreoffice-impress", "gimp",
             "vlc", "debian-xterm", "pcmanfm", "l3afpad")
APPLICATIONS = Path("/usr/share/applications")


@dataclass(frozen=True)
class DesktopLook:
    """The desktop's dress: `panels` (top bar with clock, dock of launchers), `wallpaper` (a painted gradient)."""

    panels: bool = True
    wallpaper: bool = True
    icons: bool = True  # an OSWorld task's ~/Desktop files as desktop icons (pcmanfm's desktop, over the wallpaper)
    dock_apps: tuple[str, ...] = DOCK_APPS
    colors: tuple[str, str] = ("#2c001e", "#e95420")  # the gradient's top and bottom (Ubuntu's aubergine, orange)


_BACKGROUNDS = """rounded = 0
border_width = 0
background_color = #1d1d1d 100
border_color = #1d1d1d 100

"""
_TOP_BAR = _BACKGROUNDS + """panel_items = FCF
panel_monitor = all
panel_position = top center horizontal
panel_size = 100% {bar}
panel_background_id = 1
panel_layer = top
strut_policy = follow_size
wm_menu = 0
panel_dock = 0
time1_format = %a %b %e  %H:%M
time1_font = DejaVu Sans Bold 10
clock_font_color = #ffffff 100
clock_padding = 8 2
clock_background_id = 0
"""
_DOCK = _BACKGROUNDS + """panel_items = L
panel_monitor = all
panel_position = bottom left vertical
panel_size = {height} {dock}
panel_background_id = 1
panel_layer = top
strut_policy = follow_size
panel_dock = 0
wm_menu = 0
launcher_padding = 6 8 6
launcher_background_id = 0
launcher_icon_size = 40
launcher_icon_theme = Adwaita
launcher_tooltip = 1
"""
BAR_HEIGHT, DOCK_WIDTH = 28, 56


def _dock(apps: tuple[str, ...], screen_height: int) -> str:
    items = [APPLICATIONS / f"{app}.desktop" for app in apps]
    dock = _DOCK.format(height=screen_height - BAR_HEIGHT, dock=DOCK_WIDTH)
    return dock + "".join(f"launcher_item_app = {item}\n" for item in items if item.is_file())


def panel_argvs(look: DesktopLook, folder: Path, screen_height: int, seen_as: str | None = None) -> list[list[str]]:
    """Write the panels' configs into `folder` and return the tint2 commands (paths as `seen_as` names the folder
    for whoever runs them, e.g. a sandbox); [] without panels or tint2."""
    if not look.panels:
        return []
    if shutil.which("tint2") is None:
        log.warning("tint2 is not installed: the desktop has no panel (apt-get install tint2)")
        return []
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "top.tint2rc").write_text(_TOP_BAR.format(bar=BAR_HEIGHT))
    (folder / "dock.tint2rc").write_text(_dock(look.dock_apps, screen_height))
    inside = seen_as or str(folder)
    return [["tint2", "-c", f"{inside}/top.tint2rc"], ["tint2", "-c", f"{inside}/dock.tint2rc"]]


def _rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def wallpaper(look: DesktopLook, path: Path, size: tuple[int, int]) -> list[str] | None:
    """Paint the wallpaper (a vertical gradient) to `path`; the feh command that shows it, or None."""
    if not look.wallpaper:
        return None
    if shutil.which("feh") is None:
        log.warning("feh is not installed: the desktop has no wallpaper (apt-get install feh)")
        return None
    (top, bottom), (width, height) = (_rgb(c) for c in look.colors), size
    column = Image.new("RGB", (1, height))
    for y in range(height):
        t = y / max(1, height - 1)
        column.putpixel((0, y), tuple(round(a + (b - a) * t) for a, b in zip(top, bottom, strict=True)))
    column.resize((width, height)).save(path)
    return ["feh", "--no-fehbg", "--bg-fill", str(path)]


_ICONS = """[*]
wallpaper_mode=crop
wallpaper_common=1
wallpaper={wallpaper}
desktop_bg=#2c001e
desktop_fg=#ffffff
desktop_shadow=#000000
show_wm_menu=0
show_documents=0
show_trash=0
show_mounts=0
"""


def desktop_icons_argv(look: DesktopLook, home: Path, wallpaper_inside: str) -> list[str] | None:
    """Configure pcmanfm's desktop in `home` (icons of ~/Desktop over the wallpaper at `wallpaper_inside`); the
    command that draws it, or None without icons or pcmanfm."""
    if not look.icons or shutil.which("pcmanfm") is None:
        return None
    config = home / ".config/pcmanfm/default/desktop-items-0.conf"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(_ICONS.format(wallpaper=wallpaper_inside))
    return ["pcmanfm", "--desktop", "--profile", "default"]
