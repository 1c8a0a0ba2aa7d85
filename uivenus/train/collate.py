"""Encoded samples as a padded batch: model inputs, labels, span masks and loss weights, padded on the left or
the right.

Every stage's trainer and the RL/MOPD samplers batch through `collate`, so padding (left for generation, right for
teacher forcing) is decided in one place and the span masks always stay aligned with the tokens.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from uivenus.train.encode import IGNORE_INDEX, Encoded
from uivenus.train.samples import ChatSample, DataError
from uivenus.train.spans import TokenSpans

if TYPE_CHECKING:
    import torch

__all__ = ["Batch", "PaddingSide", "collate", "join_rows"]


@dataclass(frozen=True)
class Batch:
    """Padded samples: model inputs ([B, L]; images concatenated in sample order), labels, span masks, weights."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    labels: torch.Tensor
    spans: TokenSpans
    weights: torch.Tensor
    samples: tuple[ChatSample, ...]
    mm_token_type_ids: torch.Tensor | None = None
    pixel_values: torch.Tensor | None = None
    image_grid_thw: torch.Tensor | None = None

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(sample.id for sample in self.samples)

    def model_inputs(self) -> dict[str, torch.Tensor]:
        """What the model's forward takes (labels left out: each stage computes its own loss)."""
        names = ("input_ids", "attention_mask", "mm_token_type_ids", "pixel_values", "image_grid_thw")
        return {name: value for name in names if (value := getattr(self, name)) is not None}

    def to(self, device: Any) -> Batch:
        tensors = {f.name: getattr(self, f.name).to(device) for f in dataclasses.fields(self)
                   if f.name not in ("spans", "samples") and getattr(self, f.name) is not None}
        return dataclasses.replace(self, spans=self.spans.to(device), **tensors)


PaddingSide: TypeAlias = Literal["left", "right"]


def join_rows(parts: Sequence[torch.Tensor]) -> torch.Tensor:
    """`torch.cat` along rows, without the copy when the parts are consecutive slices of one tensor (a batch's
    images cut into prompts and joined again): on a busy CPU every large copy can wait for a second thread."""
    import torch

    first = parts[0]
    offset, storage = first.storage_offset(), first.untyped_storage().data_ptr()
    for part in parts:
        if (not part.is_contiguous() or part.untyped_storage().data_ptr() != storage or part.dtype != first.dtype
                or part.shape[1:] != first.shape[1:] or part.storage_offset() != offset):
            return torch.cat(list(parts))
        offset += part.numel()
    rows = sum(part.shape[0] for part in parts)
    return first.as_strided((rows, *first.shape[1:]), first.stride(), first.storage_offset())


def collate(items: Sequence[Encoded], pad_id: int, padding_side: PaddingSide = "right") -> Batch:
    """Pad to the longest item (left padding puts every reply's end at the same position, as generation wants)."""
    import torch
    import torch.nn.functional as F

    if not items:
        raise DataError("cannot collate an empty list of samples")
    if padding_side not in ("left", "right"):
        raise DataError(f"padding_side must be 'left' or 'right', got {padding_side!r}")
    longest = max(len(item) for item in items)

    def pad(tensor: torch.Tensor, value: int) -> torch.Tensor:
        missing = longest - tensor.shape[-1]
        return F.pad(tensor, (missing, 0) if padding_side == "left" else (0, missing), value=value)

    def sides(item: Encoded) -> tuple[int, int]:
        missing = longest - len(item)
        return (missing, 0) if padding_side == "left" else (0, missing)

    has_mm = [item.mm_token_type_ids is not None for item in items]
    if any(has_mm) and not all(has_mm):
        raise DataError("some samples carry mm_token_type_ids and some do not; encode them with one processor")
    with_images = [item for item in items if item.pixel_values is not None]
    return Batch(
        input_ids=torch.stack([pad(item.input_ids, pad_id) for item in items]),
        attention_mask=torch.stack([pad(torch.ones(len(item), dtype=torch.long), 0) for item in items]),
        labels=torch.stack([pad(item.labels, IGNORE_INDEX) for item in items]),
        spans=TokenSpans.stack([item.spans.pad(*sides(item)) for item in items]),
        weights=torch.tensor([item.sample.weight for item in items], dtype=torch.float32),
        samples=tuple(item.sample for item in items),
        mm_token_type_ids=torch.stack([pad(item.mm_token_type_ids, 0) for item in items]) if all(has_mm) else None,
        pixel_values=join_rows([item.pixel_values for item in with_images]) if with_images else None,
        image_grid_thw=torch.cat([item.image_grid_thw for item in with_images]) if with_images else None,
    )

