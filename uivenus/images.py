"""Facts remembered per PIL image object — its PNG bytes, its copy sized for a model, its data URL — so that work
done for a screenshot once is not redone each time it is sent again (an episode's history images go to the model
on every step). An entry lives as long as its image: it is dropped when the image is garbage collected."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from PIL import Image

__all__ = ["PerImage", "known_png", "remember_png"]

T = TypeVar("T")


class PerImage(Generic[T]):
    """Values keyed by (image object, key). PIL images compare by pixels and cannot be hashed, so the key is the
    object's identity, held weakly: the entry goes with the image, before its id can be reused."""

    def __init__(self) -> None:
        self._values: dict[tuple[int, Hashable], T] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._values)

    def get(self, image: Image.Image, key: Hashable = None) -> T | None:
        return self._values.get((id(image), key))

    def put(self, image: Image.Image, value: T, key: Hashable = None) -> T:
        entry = (id(image), key)
        with self._lock:
            if entry not in self._values:
                weakref.finalize(image, self._values.pop, entry, None)
            self._values[entry] = value
        return value

    def get_or_make(self, image: Image.Image, make: Callable[[], T], key: Hashable = None) -> T:
        """The value for (image, key), made by `make()` the first time (two threads may both make it; one wins)."""
        value = self.get(image, key)
        return value if value is not None else self.put(image, make(), key)


_PNG: PerImage[bytes] = PerImage()


def remember_png(image: Image.Image, png: bytes) -> None:
    """`png` encodes exactly `image`'s pixels (an env's screenshot as the browser gave it): senders may use it as is."""
    _PNG.put(image, png)


def known_png(image: Image.Image) -> bytes | None:
    """The PNG bytes remembered for this very image object, or None (never for a copy, however equal)."""
    return _PNG.get(image)
