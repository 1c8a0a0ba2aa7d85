"""The sources a training config can name: the `SOURCES` registry (kind → reader), `SourceSpec` (one entry of a
config's `sources`) and `samples_from_spec`, which builds the reader a spec names.

A config names data by kind and options, never by import path; adding a source is one entry here, and a spec's
options are checked against its reader's parameters. The readers live in `trajectories` (recorded episodes) and
`datasets` (grounding, CAPTCHA, converted single steps).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from uivenus.train.config import ConfigError, call_with_options
from uivenus.train.samples import Samples
from uivenus.train.sources.datasets import captcha_samples, converted_samples, grounding_samples, step_samples
from uivenus.train.sources.trajectories import parquet_samples, trajectory_samples

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

__all__ = ["SOURCES", "SourceSpec", "samples_from_spec"]


#: Every kind of source a config can name, with the function that builds it from its options.
SOURCES: dict[str, Callable[..., Samples]] = {
    "trajectories": trajectory_samples,
    "parquet": parquet_samples,
    "grounding": grounding_samples,
    "captcha": captcha_samples,
    "converted": converted_samples,
    "steps": step_samples,
}


@dataclass(frozen=True)
class SourceSpec:
    """One source in a config: `{kind: grounding, annotations: data/g/annotations.json, frame_kind: rel}`, with an
    optional mixture `weight` (the share of the stream's draws it gets, relative to the other sources' weights)."""

    kind: str
    options: Mapping[str, Any] = field(default_factory=dict)
    weight: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in SOURCES:
            raise ConfigError(f"unknown source kind {self.kind!r}; use one of {', '.join(SOURCES)}")
        if self.weight is not None and not (isinstance(self.weight, int | float) and math.isfinite(self.weight)
                                            and self.weight > 0):
            raise ConfigError(f"a source's weight must be a positive number, got {self.weight!r}")
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """Read from and written as the flat form of a config file: `{kind: grounding, annotations: ..., ...}`."""
        from pydantic_core import core_schema

        def build(data: Any) -> SourceSpec:
            if isinstance(data, cls):
                return data
            if not isinstance(data, Mapping) or "kind" not in data:
                raise ConfigError(f"a source must be a mapping with a 'kind' ({', '.join(SOURCES)}) and its options, "
                                  f"got {data!r}")
            return cls(kind=data["kind"], options={k: v for k, v in data.items() if k not in ("kind", "weight")},
                       weight=data.get("weight"))

        def flatten(spec: SourceSpec) -> dict[str, Any]:
            return {"kind": spec.kind, **spec.options, **({} if spec.weight is None else {"weight": spec.weight})}

        flat = core_schema.plain_serializer_function_ser_schema(flatten)
        return core_schema.no_info_plain_validator_function(build, serialization=flat)


def samples_from_spec(spec: SourceSpec, where: str = "source") -> Samples:
    """Build the source a spec names, its options checked against the source function's parameters."""
    return call_with_options(SOURCES[spec.kind], spec.options, f"{where}({spec.kind})")

