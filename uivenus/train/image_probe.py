"""Does the screen reach the model's answer? Swap the image of one prompt for another's and measure what moves.

A model can learn to ignore its image (the miniature recipe's grounding experts did); this tells that apart from a
pipeline that never delivers it, by comparing the next-token change an image swap causes with the change a text
swap causes, and by reading the visual tokens exactly as the language model receives them (after the merger).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from uivenus.train.collate import collate
from uivenus.train.encode import Encoded, encode
from uivenus.train.samples import ChatSample, DataError

if TYPE_CHECKING:
    import torch

__all__ = ["ImageSensitivity", "answer_states", "image_sensitivity"]


@dataclass(frozen=True)
class ImageSensitivity:
    """Next-token changes at one position of the reply, and the visual tokens' spread against the text's scale.

    `*_logit_gap` is the largest |Δ logit|, `*_tv` the total variation between the two next-token distributions.
    """

    image_logit_gap: float  # the first prompt's text with the second's screen, against the first prompt
    image_tv: float
    text_logit_gap: float  # the second prompt's text with the first's screen, against the first prompt
    text_tv: float
    visual_token_gap: float  # mean L2 distance between the two screens' visual tokens, position by position
    visual_token_norm: float  # mean L2 norm of the first screen's visual tokens
    text_embedding_norm: float  # mean L2 norm of the first prompt's text token embeddings


def _with_image(item: Encoded, donor: Encoded) -> Encoded:
    return dataclasses.replace(item, pixel_values=donor.pixel_values, image_grid_thw=donor.image_grid_thw)


def _gaps(logits: torch.Tensor, positions: tuple[int, int]) -> tuple[float, float]:
    first, second = logits[0, positions[0]], logits[1, positions[1]]
    tv = 0.5 * (first.softmax(-1) - second.softmax(-1)).abs().sum()
    return float((first - second).abs().max()), float(tv)


def image_sensitivity(model: Any, processor: Any, first: ChatSample, second: ChatSample,
                      reply_tokens: int = 0) -> ImageSensitivity:
    """Compare `first` with its screen swapped for `second`'s, and with its text swapped for `second`'s, at the
    next token after `reply_tokens` tokens of each sample's own target (teacher-forced; 0: the reply's first
    token; 1 for a grounding reply "[x,y]" is the first digit of x, where the screen must matter).

    Both samples need one screen each of the same size in patches (the swap keeps the image-token count).
    """
    import torch

    a, b = encode(processor, first), encode(processor, second)
    if a.image_grid_thw is None or b.image_grid_thw is None:
        raise DataError("image_sensitivity needs two samples with a screen each")
    if not torch.equal(a.image_grid_thw, b.image_grid_thw):
        raise DataError(f"the screens of {first.id!r} and {second.id!r} have different patch grids "
                        f"({a.image_grid_thw.tolist()} vs {b.image_grid_thw.tolist()}); resize them to one size")
    seen: dict[str, torch.Tensor] = {}

    def keep_embeddings(_module: Any, _args: Any, kwargs: dict[str, Any]) -> None:
        seen["embeds"] = kwargs["inputs_embeds"]

    language_model = model.model.language_model
    pad = processor.tokenizer.pad_token_id
    if not 0 <= reply_tokens < min(len(a), len(b)) - max(a.prompt_length, b.prompt_length):
        raise DataError(f"reply_tokens must be from 0 to the shorter reply's length - 1, got {reply_tokens}")
    at = (a.prompt_length - 1 + reply_tokens, b.prompt_length - 1 + reply_tokens)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            hook = language_model.register_forward_pre_hook(keep_embeddings, with_kwargs=True)
            try:
                image_batch = collate([a, _with_image(a, b)], pad)
                image_logits = model(**image_batch.model_inputs()).logits
            finally:
                hook.remove()
            text_logits = model(**collate([a, _with_image(b, a)], pad).model_inputs()).logits
    finally:
        model.train(was_training)
    image_positions = image_batch.input_ids[0] == model.config.image_token_id
    visual = seen["embeds"][:, image_positions]
    text = seen["embeds"][0, ~image_positions]
    image_gap, image_tv = _gaps(image_logits, (at[0], at[0]))
    text_gap, text_tv = _gaps(text_logits, at)
    return ImageSensitivity(
        image_logit_gap=image_gap, image_tv=image_tv, text_logit_gap=text_gap, text_tv=text_tv,
        visual_token_gap=float((visual[0] - visual[1]).norm(dim=-1).mean()),
        visual_token_norm=float(visual[0].norm(dim=-1).mean()),
        text_embedding_norm=float(text.norm(dim=-1).mean()),
    )


def answer_states(model: Any, processor: Any, samples: list[ChatSample], reply_tokens: int = 0) -> torch.Tensor:
    """Every layer's hidden state where the next token after `reply_tokens` target tokens is predicted, one sample
    at a time: [samples, layers + 1, hidden]. A linear read-out of these says whether the screen's answer is
    *present* at the answer position, apart from whether the head has learned to use it."""
    import torch

    rows = []
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for sample in samples:
                item = encode(processor, sample)
                at = item.prompt_length - 1 + reply_tokens
                if not 0 <= reply_tokens < len(item) - item.prompt_length:
                    raise DataError(f"reply_tokens must be from 0 to the reply's length - 1, got {reply_tokens}")
                batch = collate([item], processor.tokenizer.pad_token_id)
                hidden = model(**batch.model_inputs(), output_hidden_states=True).hidden_states
                rows.append(torch.stack([layer[0, at] for layer in hidden]))
    finally:
        model.train(was_training)
    return torch.stack(rows)
