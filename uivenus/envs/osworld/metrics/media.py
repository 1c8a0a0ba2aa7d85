"""Media metrics: an MP3's ID3 tags (read with mutagen) against per-tag value rules; what VLC is playing."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from mutagen.easyid3 import EasyID3

from uivenus.envs.osworld.metrics.matching import match_value, rule_type
from uivenus.envs.osworld.metrics.readers import read_or_none
from uivenus.envs.osworld.metrics.registry import metric

__all__ = ["check_mp3_meta", "is_vlc_playing"]


@metric("check_mp3_meta")
def check_mp3_meta(result: Any, meta: Mapping[str, Mapping[str, Any]]) -> float:
    """1.0 when each named ID3 tag (e.g. "title", "artist"; several values joined with ",", a missing tag is "")
    satisfies its `{"method", "ref"}` rule."""
    tags = read_or_none(result, lambda p: EasyID3(str(p)))
    if tags is None:
        return 0.0
    return float(all(match_value(",".join(tags.get(name, [])), rule) for name, rule in meta.items()))


def _playing_file(status: ET.Element) -> str | None:
    for name in ("filename", "title", "uri", "location", "name"):
        text = status.findtext(f'information/category[@name="meta"]/info[@name="{name}"]')
        if text:
            return text
    return None


@metric("is_vlc_playing")
def is_vlc_playing(result: Any, rule: Mapping[str, Any]) -> float:
    """Over VLC's HTTP status.xml: 1.0 when it is playing and the item is `rule["file_name"]` (type "file_name":
    the shown name ends with it) or comes from `rule["url"]` (type "url": the URL occurs in the shown name)."""
    status = read_or_none(result, lambda p: ET.fromstring(p.read_bytes()))
    if status is None or status.findtext("state") != "playing":
        return 0.0
    shown = _playing_file(status)
    if shown is None:
        return 0.0
    if rule_type(rule, "is_vlc_playing", ("file_name", "url")) == "file_name":
        return float(shown.endswith(rule["file_name"]))
    return float(rule["url"] in shown or shown == rule["url"].rstrip("/").rsplit("/", 1)[-1])
