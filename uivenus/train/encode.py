"""Samples as tokens: the chat template rendered through the model's processor (images expanded to their tokens),
the reply's labels (IGNORE_INDEX over the prompt) and the span masks of the reply's parts.

Supervised samples (`encode`) and replies a model generated (`encode_completion`, for RL and distillation) are
assembled by one function, so a trained-on token means the same in all three stages; a template that rewrites
the reply is an error, never silently trained on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from uivenus.agent.policies.base import Message
from uivenus.agent.policies.transformers_local import to_chat
from uivenus.train.samples import ChatSample, DataError
from uivenus.train.spans import TokenSpans, annotate, token_offsets

if TYPE_CHECKING:
    import torch

__all__ = [
    "IGNORE_INDEX", "Encoded", "PromptInputs", "SampleTooLongError", "TemplateError", "chat_template_kwargs", "encode",
    "encode_completion", "encode_prompt",
]

IGNORE_INDEX = -100  # label of a position that carries no loss (what transformers' losses skip)


class SampleTooLongError(DataError):
    """A sample's prompt and reply exceed `max_length` tokens (the stream skips and counts these)."""


class TemplateError(DataError):
    """The processor's chat template does not render the reply as given (it rewrites or drops it)."""


def chat_template_kwargs(processor: Any, thinking: bool) -> dict[str, bool]:
    """`enable_thinking` for templates that read it (Qwen3 style); others would reject the keyword."""
    template = processor.chat_template
    return {"enable_thinking": thinking} if "enable_thinking" in str(template) else {}


@dataclass(frozen=True)
class PromptInputs:
    """A prompt as the model takes it (1-D tensors for one sample), ready for generation or for a reply."""

    text: str
    input_ids: torch.Tensor
    mm_token_type_ids: torch.Tensor | None = None
    pixel_values: torch.Tensor | None = None
    image_grid_thw: torch.Tensor | None = None


def encode_prompt(processor: Any, messages: Sequence[Message], *, thinking: bool = True) -> PromptInputs:
    """The chat template with the generation prompt, through the processor (images expanded to their tokens)."""
    chat, images = to_chat(messages)
    text = processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False,
                                         **chat_template_kwargs(processor, thinking))
    inputs = processor(text=[text], images=images or None, return_tensors="pt")
    mm = inputs.get("mm_token_type_ids")
    return PromptInputs(text=text, input_ids=inputs["input_ids"][0], mm_token_type_ids=None if mm is None else mm[0],
                        pixel_values=inputs.get("pixel_values"), image_grid_thw=inputs.get("image_grid_thw"))


@dataclass(frozen=True)
class Encoded:
    """One sample as tokens: the prompt then the reply; `labels` are IGNORE_INDEX outside the reply and `spans`
    mark the reply's parts over the same positions."""

    input_ids: torch.Tensor
    labels: torch.Tensor
    spans: TokenSpans
    prompt_length: int
    sample: ChatSample
    mm_token_type_ids: torch.Tensor | None = None
    pixel_values: torch.Tensor | None = None
    image_grid_thw: torch.Tensor | None = None

    def __len__(self) -> int:
        return int(self.input_ids.shape[0])


def _completion(processor: Any, sample: ChatSample, prompt: PromptInputs) -> tuple[str, tuple[int, int]]:
    """The text the model produces after the prompt (the reply and the template's end of turn) and where the
    reply sits in it."""
    chat, _ = to_chat(sample.messages)
    chat.append({"role": "assistant", "content": [{"type": "text", "text": sample.target}]})
    full = processor.apply_chat_template(chat, tokenize=False, **chat_template_kwargs(processor, sample.thinking))
    if not full.startswith(prompt.text):
        raise TemplateError(f"sample {sample.id!r}: the chat template renders the conversation with a reply "
                            "differently from the prompt it renders for generation; it cannot be trained on as is")
    rest = full[len(prompt.text):]
    start = rest.find(sample.target)
    if start < 0:
        raise TemplateError(f"sample {sample.id!r}: the chat template rewrites the assistant reply (e.g. it moves "
                            "<think> text); use a template that renders assistant content verbatim")
    end = start + len(sample.target)
    return rest[:end] + rest[end:].rstrip(), (start, end)


def _assemble(prompt: PromptInputs, ids: Sequence[int], spans: TokenSpans, sample: ChatSample,
              max_length: int | None) -> Encoded:
    import torch

    length = len(prompt.input_ids) + len(ids)
    if max_length is not None and length > max_length:
        raise SampleTooLongError(f"sample {sample.id!r} has {length} tokens, more than max_length={max_length}")
    completion = torch.tensor(list(ids), dtype=torch.long)
    prompt_length = len(prompt.input_ids)
    mm = prompt.mm_token_type_ids
    return Encoded(
        input_ids=torch.cat([prompt.input_ids, completion]),
        labels=torch.cat([torch.full((prompt_length,), IGNORE_INDEX, dtype=torch.long), completion]),
        spans=spans.pad(left=prompt_length), prompt_length=prompt_length, sample=sample,
        mm_token_type_ids=None if mm is None else torch.cat([mm, torch.zeros(len(ids), dtype=mm.dtype)]),
        pixel_values=prompt.pixel_values, image_grid_thw=prompt.image_grid_thw,
    )


def encode(processor: Any, sample: ChatSample, max_length: int | None = None) -> Encoded:
    """The sample's prompt and target reply as training tokens (the reply tokenised on its own, as the model
    would produce it after the prompt, with the template's end-of-turn token)."""
    prompt = encode_prompt(processor, sample.messages, thinking=sample.thinking)
    text, reply = _completion(processor, sample, prompt)
    tokenizer = processor.tokenizer
    if getattr(tokenizer, "is_fast", False):
        encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        ids, offsets = encoded["input_ids"], [tuple(o) for o in encoded["offset_mapping"]]
    else:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        offsets = token_offsets(tokenizer, ids)
    return _assemble(prompt, ids, annotate(text, offsets, reply), sample, max_length)


def encode_completion(processor: Any, prompt: PromptInputs, completion_ids: Sequence[int], sample: ChatSample,
                      max_length: int | None = None) -> Encoded:
    """A prompt and tokens a model generated after it (ending at its stop token, no padding), for RL and
    distillation: spans come from decoding the tokens, so the exact sampled ids are what is trained on."""
    tokenizer = processor.tokenizer
    ids = list(completion_ids)
    offsets = token_offsets(tokenizer, ids)
    text = tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
    special = set(tokenizer.all_special_ids)
    reply_end = next((offsets[i][0] for i, token in enumerate(ids) if token in special), len(text))
    return _assemble(prompt, ids, annotate(text, offsets, (0, reply_end)), sample, max_length)
