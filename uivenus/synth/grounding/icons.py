"""The shipped icon set: small 24x24 stroke SVGs, each with the names people call it and what it does.

Instructions refer to icons by meaning ("the trash icon") and by function ("delete this message"), so every
icon carries its nouns, a function key (phrases live in `vocab.FUNCTIONS`) and a `kin`: icons that look or
mean alike share one, and a negative instruction never names an icon whose kin is on screen.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Icon:
    name: str
    nouns: tuple[str, ...]  # "the {noun} icon"
    fn: str | None  # a key of vocab.FUNCTIONS, None when the icon only decorates
    kin: str  # look-alike / mean-alike family
    body: str  # SVG children in a 24x24 viewBox, stroked with currentColor
    filled: bool = False  # drawn with fill instead of stroke


def _gear() -> str:
    points = []
    for i in range(32):  # 8 teeth, 4 points each: outer-outer-inner-inner
        angle = 2 * math.pi * i / 32 - math.pi / 32
        radius = 10 if i % 4 in (0, 1) else 7.6
        points.append(f"{12 + radius * math.cos(angle):.2f} {12 + radius * math.sin(angle):.2f}")
    return f'<polygon points="{" ".join(points)}"/><circle cx="12" cy="12" r="3"/>'


def _sun() -> str:
    rays = "".join(
        f'<line x1="{12 + 8 * math.cos(a):.2f}" y1="{12 + 8 * math.sin(a):.2f}" '
        f'x2="{12 + 10.5 * math.cos(a):.2f}" y2="{12 + 10.5 * math.sin(a):.2f}"/>'
        for a in (i * math.pi / 4 for i in range(8))
    )
    return f'<circle cx="12" cy="12" r="4.5"/>{rays}'


_ICONS = (
    Icon("trash", ("trash", "trash can", "bin", "garbage can"), "delete", "delete",
         '<polyline points="3 6 5 6 21 6"/><path d="M19 6l-1 14a2 2 0 0 1-2 2H8a2 2 0 0 1-2-2L5 6m3 0V4a2 2 0 0 1 '
         '2-2h4a2 2 0 0 1 2 2v2"/><line x1="10" y1="11" x2="10" y2="17"/><line x1="14" y1="11" x2="14" y2="17"/>'),
    Icon("gear", ("gear", "cog", "settings"), "settings", "settings", _gear()),
    Icon("search", ("magnifying glass", "magnifier", "search"), "search", "search",
         '<circle cx="11" cy="11" r="7"/><line x1="21" y1="21" x2="16.2" y2="16.2"/>'),
    Icon("home", ("house", "home"), "home", "home",
         '<path d="M3 10.5 12 3l9 7.5V20a1 1 0 0 1-1 1h-5v-6H9v6H4a1 1 0 0 1-1-1z"/>'),
    Icon("user", ("person", "user", "profile", "account"), "profile", "user",
         '<circle cx="12" cy="8" r="4"/><path d="M4 21c0-4.4 3.6-7 8-7s8 2.6 8 7"/>'),
    Icon("bell", ("bell", "notification bell"), "notifications", "bell",
         '<path d="M18 8a6 6 0 0 0-12 0c0 7-3 9-3 9h18s-3-2-3-9"/><path d="M13.7 21a2 2 0 0 1-3.4 0"/>'),
    Icon("heart", ("heart",), "like", "favorite",
         '<path d="M20.8 4.6a5.5 5.5 0 0 0-7.8 0L12 5.7l-1-1.1a5.5 5.5 0 0 0-7.8 7.8l1 1.1L12 21l7.8-7.5 '
         '1-1.1a5.5 5.5 0 0 0 0-7.8z"/>'),
    Icon("star", ("star",), "favorite", "favorite",
         '<polygon points="12 2 15.1 8.3 22 9.3 17 14.1 18.2 21 12 17.8 5.8 21 7 14.1 2 9.3 8.9 8.3 12 2"/>'),
    Icon("bookmark", ("bookmark", "ribbon"), "bookmark", "favorite",
         '<path d="M19 21l-7-5-7 5V5a2 2 0 0 1 2-2h10a2 2 0 0 1 2 2z"/>'),
    Icon("plus", ("plus", "plus sign", "add"), "add", "add",
         '<line x1="12" y1="5" x2="12" y2="19"/><line x1="5" y1="12" x2="19" y2="12"/>'),
    Icon("close", ("X", "cross", "close"), "close", "close",
         '<line x1="18" y1="6" x2="6" y2="18"/><line x1="6" y1="6" x2="18" y2="18"/>'),
    Icon("check", ("check mark", "tick"), "confirm", "check", '<polyline points="20 6 9 17 4 12"/>'),
    Icon("pencil", ("pencil", "pen", "edit"), "edit", "edit",
         '<path d="M17 3a2.8 2.8 0 0 1 4 4L7.5 20.5 2 22l1.5-5.5z"/><line x1="15" y1="5" x2="19" y2="9"/>'),
    Icon("compose", ("compose", "new message", "pencil and paper"), "compose", "edit",
         '<path d="M11 4H4a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h14a2 2 0 0 0 2-2v-7"/>'
         '<path d="M18.5 2.5a2.1 2.1 0 0 1 3 3L12 15l-4 1 1-4z"/>'),
    Icon("share", ("share", "three connected dots"), "share", "share",
         '<circle cx="18" cy="5" r="3"/><circle cx="6" cy="12" r="3"/><circle cx="18" cy="19" r="3"/>'
         '<line x1="8.6" y1="13.5" x2="15.4" y2="17.5"/><line x1="15.4" y1="6.5" x2="8.6" y2="10.5"/>'),
    Icon("download", ("download", "downward arrow into a tray"), "download", "transfer",
         '<path d="M21 15v4a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2v-4"/><polyline points="7 10 12 15 17 10"/>'
         '<line x1="12" y1="15" x2="12" y2="3"/>'),
    Icon("upload", ("upload", "upward arrow out of a tray"), "upload", "transfer",
         '<path d="M21 15v4a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2v-4"/><polyline points="17 8 12 3 7 8"/>'
         '<line x1="12" y1="3" x2="12" y2="15"/>'),
    Icon("refresh", ("refresh", "reload", "circular arrow"), "refresh", "refresh",
         '<polyline points="23 4 23 10 17 10"/><path d="M20.5 15a9 9 0 1 1-2.1-9.4L23 10"/>'),
    Icon("menu", ("hamburger menu", "three horizontal lines", "menu"), "menu", "more",
         '<line x1="3" y1="6" x2="21" y2="6"/><line x1="3" y1="12" x2="21" y2="12"/>'
         '<line x1="3" y1="18" x2="21" y2="18"/>'),
    Icon("more", ("three dots", "ellipsis", "more"), "more", "more",
         '<circle cx="5" cy="12" r="1.6"/><circle cx="12" cy="12" r="1.6"/><circle cx="19" cy="12" r="1.6"/>',
         filled=True),
    Icon("more-vertical", ("vertical three dots", "kebab menu"), "more", "more",
         '<circle cx="12" cy="5" r="1.6"/><circle cx="12" cy="12" r="1.6"/><circle cx="12" cy="19" r="1.6"/>',
         filled=True),
    Icon("arrow-left", ("left arrow", "back arrow"), "back", "arrow",
         '<line x1="19" y1="12" x2="5" y2="12"/><polyline points="12 19 5 12 12 5"/>'),
    Icon("arrow-right", ("right arrow", "forward arrow"), "forward", "arrow",
         '<line x1="5" y1="12" x2="19" y2="12"/><polyline points="12 5 19 12 12 19"/>'),
    Icon("chevron-left", ("left chevron", "back chevron"), "back", "arrow", '<polyline points="15 18 9 12 15 6"/>'),
    Icon("chevron-right", ("right chevron",), "forward", "arrow", '<polyline points="9 18 15 12 9 6"/>'),
    Icon("chevron-down", ("down chevron", "dropdown arrow"), "expand", "arrow", '<polyline points="6 9 12 15 18 9"/>'),
    Icon("filter", ("funnel", "filter"), "filter", "filter",
         '<polygon points="22 3 2 3 10 12.5 10 19 14 21 14 12.5 22 3"/>'),
    Icon("calendar", ("calendar",), "calendar", "calendar",
         '<rect x="3" y="4" width="18" height="18" rx="2"/><line x1="16" y1="2" x2="16" y2="6"/>'
         '<line x1="8" y1="2" x2="8" y2="6"/><line x1="3" y1="10" x2="21" y2="10"/>'),
    Icon("clock", ("clock",), "history", "clock",
         '<circle cx="12" cy="12" r="10"/><polyline points="12 6 12 12 16 14"/>'),
    Icon("mail", ("envelope", "mail"), "mail", "mail",
         '<rect x="2" y="4" width="20" height="16" rx="2"/><polyline points="22 6 12 13 2 6"/>'),
    Icon("phone", ("phone", "telephone handset"), "call", "phone",
         '<path d="M22 16.9v3a2 2 0 0 1-2.2 2 19.8 19.8 0 0 1-8.6-3.1 19.5 19.5 0 0 1-6-6A19.8 19.8 0 0 1 '
         '2.1 4.2 2 2 0 0 1 4.1 2h3a2 2 0 0 1 2 1.7c.1.9.4 1.8.7 2.7a2 2 0 0 1-.5 2.1L8 9.8a16 16 0 0 0 6 '
         '6l1.3-1.3a2 2 0 0 1 2.1-.4c.9.3 1.8.6 2.7.7a2 2 0 0 1 1.7 2z"/>'),
    Icon("chat", ("speech bubble", "chat bubble"), "chat", "chat",
         '<path d="M21 15a2 2 0 0 1-2 2H7l-4 4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z"/>'),
    Icon("camera", ("camera",), "photo", "camera",
         '<path d="M23 19a2 2 0 0 1-2 2H3a2 2 0 0 1-2-2V8a2 2 0 0 1 2-2h4l2-3h6l2 3h4a2 2 0 0 1 2 2z"/>'
         '<circle cx="12" cy="13" r="4"/>'),
    Icon("image", ("picture", "image", "photo"), "gallery", "camera",
         '<rect x="3" y="3" width="18" height="18" rx="2"/><circle cx="8.5" cy="8.5" r="1.5"/>'
         '<polyline points="21 15 16 10 5 21"/>'),
    Icon("video", ("video camera", "video"), "video", "camera",
         '<polygon points="23 7 16 12 23 17 23 7"/><rect x="1" y="5" width="15" height="14" rx="2"/>'),
    Icon("mic", ("microphone", "mic"), "record", "mic",
         '<rect x="9" y="2" width="6" height="12" rx="3"/><path d="M19 10v2a7 7 0 0 1-14 0v-2"/>'
         '<line x1="12" y1="19" x2="12" y2="23"/>'),
    Icon("play", ("play", "triangle"), "play", "media", '<polygon points="6 3 20 12 6 21 6 3"/>', filled=True),
    Icon("pause", ("pause", "two vertical bars"), "pause", "media",
         '<rect x="6" y="4" width="4" height="16"/><rect x="14" y="4" width="4" height="16"/>', filled=True),
    Icon("skip", ("skip", "next track"), "next", "media",
         '<polygon points="5 4 15 12 5 20 5 4"/><rect x="17" y="5" width="2.5" height="14"/>', filled=True),
    Icon("volume", ("speaker", "volume"), "volume", "sound",
         '<polygon points="11 5 6 9 2 9 2 15 6 15 11 19 11 5"/><path d="M15.5 8.5a5 5 0 0 1 0 7"/>'
         '<path d="M19 5a10 10 0 0 1 0 14"/>'),
    Icon("music", ("music note", "note"), "music", "sound",
         '<path d="M9 18V5l12-2v13"/><circle cx="6" cy="18" r="3"/><circle cx="18" cy="16" r="3"/>'),
    Icon("lock", ("padlock", "lock"), "lock", "lock",
         '<rect x="4" y="11" width="16" height="11" rx="2"/><path d="M8 11V7a4 4 0 0 1 8 0v4"/>'),
    Icon("eye", ("eye",), "show", "eye",
         '<path d="M1 12s4-8 11-8 11 8 11 8-4 8-11 8-11-8-11-8z"/><circle cx="12" cy="12" r="3"/>'),
    Icon("folder", ("folder",), "open_folder", "file",
         '<path d="M22 19a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2h5l2 3h9a2 2 0 0 1 2 2z"/>'),
    Icon("file", ("document", "page", "file"), "new_file", "file",
         '<path d="M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8z"/><polyline points="14 2 14 8 20 8"/>'
         '<line x1="8" y1="13" x2="16" y2="13"/><line x1="8" y1="17" x2="14" y2="17"/>'),
    Icon("copy", ("two overlapping squares", "copy"), "copy", "file",
         '<rect x="9" y="9" width="13" height="13" rx="2"/>'
         '<path d="M5 15H4a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2h9a2 2 0 0 1 2 2v1"/>'),
    Icon("clipboard", ("clipboard",), "paste", "file",
         '<path d="M16 4h2a2 2 0 0 1 2 2v14a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2h2"/>'
         '<rect x="8" y="2" width="8" height="4" rx="1"/>'),
    Icon("scissors", ("scissors",), "cut", "scissors",
         '<circle cx="6" cy="6" r="3"/><circle cx="6" cy="18" r="3"/><line x1="20" y1="4" x2="8.1" y2="15.9"/>'
         '<line x1="14.5" y1="14.5" x2="20" y2="20"/><line x1="8.1" y1="8.1" x2="12" y2="12"/>'),
    Icon("paperclip", ("paperclip", "clip"), "attach", "paperclip",
         '<path d="M21.4 11.1l-9.2 9.2a6 6 0 0 1-8.5-8.5l9.2-9.2a4 4 0 0 1 5.7 5.7l-9.2 9.2a2 2 0 0 1-2.8-2.8'
         'l8.5-8.5"/>'),
    Icon("send", ("paper plane", "send"), "send", "send",
         '<line x1="22" y1="2" x2="11" y2="13"/><polygon points="22 2 15 22 11 13 2 9 22 2"/>'),
    Icon("cart", ("shopping cart", "cart"), "cart", "cart",
         '<circle cx="9" cy="21" r="1"/><circle cx="20" cy="21" r="1"/>'
         '<path d="M1 1h4l2.7 13.4a2 2 0 0 0 2 1.6h9.7a2 2 0 0 0 2-1.6L23 6H6"/>'),
    Icon("pin", ("map pin", "location marker", "pin"), "location", "pin",
         '<path d="M21 10c0 7-9 13-9 13s-9-6-9-13a9 9 0 0 1 18 0z"/><circle cx="12" cy="10" r="3"/>'),
    Icon("wifi", ("wifi", "wireless signal"), "wifi", "signal",
         '<path d="M5 12.5a11 11 0 0 1 14 0"/><path d="M1.4 9a16 16 0 0 1 21.2 0"/>'
         '<path d="M8.5 16.1a6 6 0 0 1 7 0"/><line x1="12" y1="20" x2="12.01" y2="20"/>'),
    Icon("bluetooth", ("bluetooth",), "bluetooth", "signal",
         '<polyline points="6.5 6.5 17.5 17.5 12 23 12 1 17.5 6.5 6.5 17.5"/>'),
    Icon("battery", ("battery",), "battery", "battery",
         '<rect x="1" y="6" width="18" height="12" rx="2"/><line x1="23" y1="13" x2="23" y2="11"/>'
         '<rect x="3.5" y="8.5" width="9" height="7" fill="currentColor" stroke="none"/>'),
    Icon("signal", ("signal bars", "cellular signal"), "cellular", "signal",
         '<rect x="2" y="16" width="3.5" height="5"/><rect x="7.5" y="12" width="3.5" height="9"/>'
         '<rect x="13" y="8" width="3.5" height="13"/><rect x="18.5" y="4" width="3.5" height="17"/>', filled=True),
    Icon("globe", ("globe", "world"), "language", "globe",
         '<circle cx="12" cy="12" r="10"/><line x1="2" y1="12" x2="22" y2="12"/>'
         '<path d="M12 2a15.3 15.3 0 0 1 4 10 15.3 15.3 0 0 1-4 10 15.3 15.3 0 0 1-4-10 15.3 15.3 0 0 1 4-10z"/>'),
    Icon("info", ("info", "letter i in a circle"), "info", "info",
         '<circle cx="12" cy="12" r="10"/><line x1="12" y1="16" x2="12" y2="11"/>'
         '<line x1="12" y1="8" x2="12.01" y2="8"/>'),
    Icon("help", ("question mark", "help"), "help", "info",
         '<circle cx="12" cy="12" r="10"/><path d="M9.1 9a3 3 0 0 1 5.8 1c0 2-3 3-3 3"/>'
         '<line x1="12" y1="17" x2="12.01" y2="17"/>'),
    Icon("grid", ("grid", "four squares"), "grid_view", "view",
         '<rect x="3" y="3" width="7" height="7"/><rect x="14" y="3" width="7" height="7"/>'
         '<rect x="14" y="14" width="7" height="7"/><rect x="3" y="14" width="7" height="7"/>'),
    Icon("list", ("list", "bulleted list"), "list_view", "view",
         '<line x1="8" y1="6" x2="21" y2="6"/><line x1="8" y1="12" x2="21" y2="12"/>'
         '<line x1="8" y1="18" x2="21" y2="18"/><line x1="3" y1="6" x2="3.01" y2="6"/>'
         '<line x1="3" y1="12" x2="3.01" y2="12"/><line x1="3" y1="18" x2="3.01" y2="18"/>'),
    Icon("sun", ("sun",), "brightness", "theme", _sun()),
    Icon("moon", ("moon", "crescent moon"), "dark_mode", "theme",
         '<path d="M21 12.8A9 9 0 1 1 11.2 3 7 7 0 0 0 21 12.8z"/>'),
    Icon("printer", ("printer",), "print", "printer",
         '<polyline points="6 9 6 2 18 2 18 9"/>'
         '<path d="M6 18H4a2 2 0 0 1-2-2v-5a2 2 0 0 1 2-2h16a2 2 0 0 1 2 2v5a2 2 0 0 1-2 2h-2"/>'
         '<rect x="6" y="14" width="12" height="8"/>'),
    Icon("save", ("floppy disk", "save"), "save", "save",
         '<path d="M19 21H5a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2h11l5 5v11a2 2 0 0 1-2 2z"/>'
         '<polyline points="17 21 17 13 7 13 7 21"/><polyline points="7 3 7 8 15 8"/>'),
    Icon("link", ("chain link", "link"), "link", "link",
         '<path d="M10 13a5 5 0 0 0 7.5.5l3-3a5 5 0 0 0-7-7l-1.7 1.7"/>'
         '<path d="M14 11a5 5 0 0 0-7.5-.5l-3 3a5 5 0 0 0 7 7l1.7-1.7"/>'),
    Icon("undo", ("undo arrow", "curved arrow pointing left"), "undo", "undo",
         '<polyline points="9 14 4 9 9 4"/><path d="M20 20v-7a4 4 0 0 0-4-4H4"/>'),
    Icon("redo", ("redo arrow", "curved arrow pointing right"), "redo", "undo",
         '<polyline points="15 14 20 9 15 4"/><path d="M4 20v-7a4 4 0 0 1 4-4h12"/>'),
    Icon("archive", ("archive box", "archive"), "archive", "archive",
         '<polyline points="21 8 21 21 3 21 3 8"/><rect x="1" y="3" width="22" height="5"/>'
         '<line x1="10" y1="12" x2="14" y2="12"/>'),
    Icon("flag", ("flag",), "flag", "flag",
         '<path d="M4 15s1-1 4-1 5 2 8 2 4-1 4-1V3s-1 1-4 1-5-2-8-2-4 1-4 1z"/><line x1="4" y1="22" x2="4" y2="15"/>'),
    Icon("logout", ("exit arrow", "log out"), "logout", "logout",
         '<path d="M9 21H5a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2h4"/><polyline points="16 17 21 12 16 7"/>'
         '<line x1="21" y1="12" x2="9" y2="12"/>'),
    Icon("chart", ("bar chart", "chart"), "stats", "chart",
         '<line x1="18" y1="20" x2="18" y2="10"/><line x1="12" y1="20" x2="12" y2="4"/>'
         '<line x1="6" y1="20" x2="6" y2="14"/>'),
    Icon("cloud", ("cloud",), "sync", "cloud",
         '<path d="M18 10h-1.3A8 8 0 1 0 9 20h9a5 5 0 0 0 0-10z"/>'),
    Icon("sidebar", ("sidebar", "panel"), "toggle_sidebar", "view",
         '<rect x="3" y="3" width="18" height="18" rx="2"/><line x1="9" y1="3" x2="9" y2="21"/>'),
    Icon("minimize", ("minus", "minimize"), "minimize", "window",
         '<line x1="5" y1="12" x2="19" y2="12"/>'),
    Icon("maximize", ("square", "maximize"), "maximize", "window",
         '<rect x="5" y="5" width="14" height="14" rx="1"/>'),
    Icon("windows", ("Windows logo", "start"), "start", "start",
         '<rect x="3" y="3" width="8.5" height="8.5"/><rect x="12.5" y="3" width="8.5" height="8.5"/>'
         '<rect x="3" y="12.5" width="8.5" height="8.5"/><rect x="12.5" y="12.5" width="8.5" height="8.5"/>',
         filled=True),
)

#: Every shipped icon by name.
ICONS: Mapping[str, Icon] = {icon.name: icon for icon in _ICONS}


def icon_svg(name: str, *, css_class: str = "ic", stroke: float = 2.0) -> str:
    """The inline SVG of one icon; `data-icon` lets the renderer list every icon drawn on the page."""
    icon = ICONS[name]
    paint = 'fill="currentColor" stroke="none"' if icon.filled else (
        f'fill="none" stroke="currentColor" stroke-width="{stroke:g}" stroke-linecap="round" stroke-linejoin="round"')
    return (f'<svg class="{css_class}" data-icon="{name}" viewBox="0 0 24 24" {paint} aria-hidden="true">'
            f"{icon.body}</svg>")
