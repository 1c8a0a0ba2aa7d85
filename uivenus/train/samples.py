"""What training data is made of: `ChatSample` (one prompt in the agent's own message layout and the reply the
model should give to it), the `Domain` that picks a sample's Stage II reward and Stage III teacher, and `Samples`,
a named, lazy source of them.

Every reader in `uivenus.train.sources` yields these and every later step (encoding, collation, the stream) reads
them, so the record lives apart from both. Sources are lazy: a pass yields cheap references (`SampleRef`), and a
sample's screenshots load only when it is taken, so shuffle buffers hold references, not images, and resuming
skips samples without decoding them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, TypeAlias

from uivenus.agent.policies.base import Message
from uivenus.verify.rewards import ReferenceAction

__all__ = ["ChatSample", "DataError", "Domain", "SampleRef", "Samples"]


class DataError(ValueError):
    """A dataset cannot be turned into samples as asked; the message names the file or item and what to do."""


class Domain(StrEnum):
    """What a sample trains: the domain a Stage II reward and a Stage III teacher are chosen by."""

    GROUNDING = "grounding"
    CAPTCHA = "captcha"
    MOBILE = "mobile"
    WEB = "web"
    DESKTOP = "desktop"


@dataclass(frozen=True)
class ChatSample:
    """One prompt (the agent's messages, images inside) and the reply the model should give to it.

    `weight` scales the sample's loss (a Partial trajectory counts less); `reference` is the answer Stage II
    scores against (None where no action is known); `thinking` is the inference preset the prompt is built
    for (agentic steps think, grounding does not), which templates with a thinking switch render differently.
    """

    messages: tuple[Message, ...]
    target: str
    domain: Domain
    weight: float = 1.0
    reference: ReferenceAction | None = None
    thinking: bool = True
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(self.messages))
        object.__setattr__(self, "domain", Domain(self.domain))
        object.__setattr__(self, "meta", MappingProxyType(dict(self.meta)))
        if not self.messages or self.messages[-1].role != "user":
            raise DataError("a sample's messages must end with the user turn the reply answers")
        if not isinstance(self.target, str) or not self.target.strip():
            raise DataError(f"a sample needs a non-empty target reply, got {self.target!r}")
        if not (math.isfinite(self.weight) and self.weight > 0):
            raise DataError(f"a sample's weight must be a positive number, got {self.weight!r}")

    @property
    def id(self) -> str:
        return str(self.meta.get("id", ""))


#: A sample not built yet: calling it loads its images and builds it.
SampleRef: TypeAlias = Callable[[], ChatSample]


@dataclass(frozen=True)
class Samples:
    """A named source of samples; each pass over `refs()` lists them afresh, in a fixed order, unbuilt."""

    name: str
    refs: Callable[[], Iterator[SampleRef]]

    def __iter__(self) -> Iterator[ChatSample]:
        return (ref() for ref in self.refs())

    def count(self) -> int:
        return sum(1 for _ in self.refs())
