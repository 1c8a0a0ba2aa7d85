"""Media metrics: an MP3's ID3 tags (read with mutagen) against per-tag value rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mutagen.easyid3 import EasyID3

from uivenus.envs.osworld.metrics.matching import match_value
from uivenus.envs.osworld.metrics.readers import read_or_none
from uivenus.envs.osworld.metrics.registry import metric

__all__ = ["check_mp3_meta"]


@metric("check_mp3_meta")
def check_mp3_meta(result: Any, meta: Mapping[str, Mapping[str, Any]]) -> float:
    """1.0 when each named ID3 tag (e.g. "title", "artist"; several values joined with ",", a missing tag is "")
    satisfies its `{"method", "ref"}` rule."""
    tags = read_or_none(result, lambda p: EasyID3(str(p)))
    if tags is None:
        return 0.0
    return float(all(match_value(",".join(tags.get(name, [])), rule) for name, rule in meta.items()))
