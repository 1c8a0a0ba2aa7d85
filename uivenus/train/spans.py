"""Token-level spans of an assistant reply: which tokens hold the reasoning, the action call, the action type and
each parameter, so every stage can weight its signal by action structure (SFT: which spans carry loss; MOPD: the
type tokens when the type is wrong, the parameter tokens when only they are wrong).

Character spans come from the grammar (`action_spans`); they become token masks through each token's character
offsets in the completion text — from a fast tokenizer's offset mapping for text we tokenise, or by incremental
decoding for tokens a model generated. A token belongs to a span when its characters overlap it: BPE merges
punctuation across the grammar's boundaries (`>Click`, `=(`, `))</`), so a boundary token is counted in, never
dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from uivenus.actions.spans import Span, action_spans
from uivenus.actions.syntax import ParseError

if TYPE_CHECKING:
    import torch

__all__ = ["SPAN_KINDS", "SpanError", "TokenSpans", "annotate", "char_mask", "span_weights", "token_offsets"]

#: The masks every reply has, most specific first: a token takes the weight of the first listed kind it is in.
SPAN_KINDS = ("param", "action_type", "action", "think", "assistant")


class SpanError(ValueError):
    """Span masks were asked for in a way that cannot work (unknown kind, mismatched lengths)."""


@dataclass(frozen=True)
class TokenSpans:
    """Boolean masks over one sequence (shape [L]) or a batch ([B, L]) of token positions.

    `assistant` marks every token the model produces (the reply and its end-of-turn token); the others mark the
    parts of the reply; `params` holds one mask per parameter path ("point", "content", "0.point", ...).
    A reply that does not parse has only its `assistant` mask set.
    """

    assistant: torch.Tensor
    think: torch.Tensor
    action: torch.Tensor
    action_type: torch.Tensor
    params: Mapping[str, torch.Tensor] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        shapes = {tuple(getattr(self, f.name).shape) for f in fields(self) if f.name != "params"}
        shapes |= {tuple(mask.shape) for mask in self.params.values()}
        if len(shapes) != 1:
            raise SpanError(f"span masks must share one shape, got {sorted(shapes)}")

    @property
    def param(self) -> torch.Tensor:
        """Tokens of any parameter value."""
        import torch

        out = torch.zeros_like(self.action)
        for mask in self.params.values():
            out |= mask
        return out

    def mask(self, kind: str) -> torch.Tensor:
        """The mask of one of `SPAN_KINDS`."""
        if kind not in SPAN_KINDS:
            raise SpanError(f"unknown span kind {kind!r}; use one of {', '.join(SPAN_KINDS)}")
        return self.param if kind == "param" else getattr(self, kind)

    def map(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> TokenSpans:
        """Every mask passed through `fn` (padding, moving to a device, slicing)."""
        return TokenSpans(assistant=fn(self.assistant), think=fn(self.think), action=fn(self.action),
                          action_type=fn(self.action_type), params={k: fn(v) for k, v in self.params.items()})

    def to(self, device: Any) -> TokenSpans:
        return self.map(lambda mask: mask.to(device))

    def pad(self, left: int = 0, right: int = 0) -> TokenSpans:
        """Masks widened with False positions on either side of the last dimension (prompt, padding)."""
        import torch.nn.functional as F

        return self.map(lambda mask: F.pad(mask, (left, right), value=False))

    @staticmethod
    def stack(items: Sequence[TokenSpans]) -> TokenSpans:
        """[L] masks of equal length into [B, L]; a parameter missing from a sample is all False there."""
        import torch

        if not items:
            raise SpanError("cannot stack an empty list of spans")
        if len({tuple(item.assistant.shape) for item in items}) > 1:
            raise SpanError("spans must be padded to equal length before stacking")
        names = sorted({name for item in items for name in item.params})

        def column(get: Callable[[TokenSpans], torch.Tensor | None]) -> torch.Tensor:
            masks = [get(item) for item in items]
            like = items[0].assistant
            return torch.stack([m if m is not None else torch.zeros_like(like) for m in masks])

        return TokenSpans(
            **{f.name: column(lambda item, n=f.name: getattr(item, n))
               for f in fields(TokenSpans) if f.name != "params"},
            params={name: column(lambda item, n=name: item.params.get(n)) for name in names},
        )


def char_mask(offsets: Sequence[tuple[int, int]], span: Span) -> list[bool]:
    """Which tokens (by character offsets) overlap the character span [start, end)."""
    start, end = span
    return [s < end and e > start for s, e in offsets]


def token_offsets(tokenizer: Any, ids: Sequence[int]) -> list[tuple[int, int]]:
    """Each token's [start, end) characters in `tokenizer.decode(ids)`, by incremental decoding.

    Works for any tokenizer and for generated tokens (no text to align with); a token that ends inside a
    multi-byte character extends to the next character boundary the decoded prefixes agree on.
    """
    def decode(part: Sequence[int]) -> str:
        return tokenizer.decode(list(part), skip_special_tokens=False, clean_up_tokenization_spaces=False)

    full = decode(ids)
    offsets, previous = [], 0
    for i in range(1, len(ids) + 1):
        prefix = decode(ids[:i])
        agree = previous if prefix.startswith(full[:previous]) else 0
        limit = min(len(prefix), len(full))
        while agree < limit and prefix[agree] == full[agree]:
            agree += 1
        end = max(previous, agree if i < len(ids) else len(full))
        # a token that stops inside a character covers that character (as fast tokenizers' offsets do)
        offsets.append((previous, end if end > previous else min(previous + 1, len(full))))
        previous = end
    return offsets


def annotate(text: str, offsets: Sequence[tuple[int, int]], reply: Span | None = None) -> TokenSpans:
    """Masks over the tokens whose `offsets` index `text`; `reply` is where the assistant's reply sits in it
    (default: all of it), which is parsed with the grammar. Every token is an assistant token."""
    import torch

    start, end = reply if reply is not None else (0, len(text))
    n = len(offsets)

    def mask(span: Span | None) -> torch.Tensor:
        if span is None:
            return torch.zeros(n, dtype=torch.bool)
        return torch.tensor(char_mask(offsets, (span[0] + start, span[1] + start)), dtype=torch.bool).reshape(n)

    everything = torch.ones(n, dtype=torch.bool)
    try:
        spans = action_spans(text[start:end])
    except ParseError:
        return TokenSpans(assistant=everything, think=mask(None), action=mask(None), action_type=mask(None))
    names = mask(None)
    for name in spans.names:
        names |= mask(name)
    return TokenSpans(assistant=everything, think=mask(spans.think), action=mask(spans.action), action_type=names,
                      params={path: mask(span) for path, span in spans.params.items()})


def span_weights(spans: TokenSpans, weights: Mapping[str, float]) -> torch.Tensor:
    """Per-token weights: each token takes the weight of the most specific kind listed in `weights` that holds
    it (order of `SPAN_KINDS`); tokens in no listed kind weigh 0.

    `{"assistant": 1}` trains on the whole reply, `{"action": 1}` on the action call only, and
    `{"assistant": 1, "think": 0.5}` halves the reasoning's weight.
    """
    import torch

    unknown = sorted(set(weights) - set(SPAN_KINDS))
    if unknown:
        raise SpanError(f"unknown span kind(s) {unknown}; use {', '.join(SPAN_KINDS)}")
    out = torch.zeros(spans.assistant.shape, dtype=torch.float32, device=spans.assistant.device)
    taken = torch.zeros_like(spans.assistant)
    for kind in SPAN_KINDS:
        if kind in weights:
            here = spans.mask(kind) & ~taken
            out[here] = float(weights[kind])
            taken |= here
    return out
