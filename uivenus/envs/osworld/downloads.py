"""The on-disk download cache of OSWorld task files, keyed by URL: fetched once, reused offline afterwards.

A cached file is named by the SHA-256 of its URL and written atomically, so a killed download never leaves a
half file that later runs would take for the real one. Offline, a URL not in the cache is an error naming it.
"""

from __future__ import annotations

import hashlib
import shutil
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from uivenus.envs.base import SetupError
from uivenus.files import atomic_path

__all__ = ["DownloadFailed", "cached_path", "fetch", "missing"]


class DownloadFailed(SetupError):
    """A task file could not be fetched (network, HTTP error, offline and not cached); the message names the URLs."""


def cached_path(cache: Path, url: str) -> Path:
    """Where `url`'s file lives in the cache (it may not be there yet)."""
    return cache / hashlib.sha256(url.encode()).hexdigest()


def missing(cache: Path, urls: Sequence[str]) -> list[str]:
    """The URLs of `urls` not in the cache."""
    return [url for url in urls if not cached_path(cache, url).is_file()]


def fetch(cache: Path, url: str, *, offline: bool = False, timeout: float = 60.0) -> Path:
    """`url`'s file from the cache, downloading it first unless `offline`."""
    path = cached_path(cache, url)
    if path.is_file():
        return path
    if offline:
        raise DownloadFailed(f"offline and not in the download cache {cache}: {url}; "
                             "fetch it on a machine with network and copy the cache")
    cache.mkdir(parents=True, exist_ok=True)
    try:
        with (urllib.request.urlopen(url, timeout=timeout) as response,  # noqa: S310
              atomic_path(path, fsync=False) as tmp, open(tmp, "wb") as out):
            shutil.copyfileobj(response, out)
    except (OSError, urllib.error.URLError, ValueError) as exc:
        raise DownloadFailed(f"cannot download {url}: {exc}; check the URL and the network, or put the file in "
                             f"the download cache {cache}") from None
    return path
