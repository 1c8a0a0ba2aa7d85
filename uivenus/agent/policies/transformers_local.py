"""The `hf:PATH` backend: a Qwen2-VL / Qwen2.5-VL / Qwen3-VL family checkpoint run locally with transformers.

UI-Venus models are Qwen-VL checkpoints, so the same code runs a released 9B model on a GPU and the tiny
test model on a CPU. Options follow the path as a query string, each parsed by a named converter:

    hf:./ckpt?device=cpu&dtype=float32&max_pixels=1003520&min_pixels=3136&batch_size=4&attn=sdpa

The stock Qwen-VL processors also build a video processor, which needs torchvision; where that fails (or
`AutoProcessor` hands back a bare tokenizer) an image-only subclass of the family's processor, registered with
`AutoProcessor`, loads the same files. Heavy imports (torch, transformers) happen inside the functions.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from uivenus.actions.coords import Frame
from uivenus.agent.policies.base import (
    Message, PolicyBase, PolicyError, PolicyReply, PolicyRequest, PolicySpecError, Sampling, register_policy,
    spec_options,
)

__all__ = ["HFOptions", "TransformersPolicy", "completion_length", "image_only_processor_class", "load_processor",
           "register_image_only_processors", "stop_ids_of", "to_chat"]

#: The families we know how to load without a video processor: model_type -> (processor, config) in transformers.
_FAMILIES: Mapping[str, tuple[str, str]] = {
    "qwen2_vl": ("Qwen2VLProcessor", "Qwen2VLConfig"),
    "qwen2_5_vl": ("Qwen2_5_VLProcessor", "Qwen2_5_VLConfig"),
    "qwen3_vl": ("Qwen3VLProcessor", "Qwen3VLConfig"),
    "qwen3_vl_moe": ("Qwen3VLProcessor", "Qwen3VLMoeConfig"),
}


@functools.cache
def image_only_processor_class(model_type: str) -> type:
    """`ImageOnly<Family>Processor`: the family's processor without the video processor, registered with
    `AutoProcessor` (so a checkpoint saved with it loads through `AutoProcessor.from_pretrained`)."""
    try:
        processor_name, config_name = _FAMILIES[model_type]
    except KeyError:
        raise PolicyError(f"no image-only processor for model_type {model_type!r}; "
                          f"known families: {', '.join(sorted(_FAMILIES))}") from None
    import transformers

    base = getattr(transformers, processor_name)
    config_class = getattr(transformers, config_name)

    def __init__(self: Any, image_processor: Any = None, tokenizer: Any = None, chat_template: str | None = None,
                 **kwargs: Any) -> None:
        # the base signature lists video_processor third; the mixin only keeps the attributes named here
        base.__init__(self, image_processor, tokenizer, None, chat_template=chat_template, **kwargs)

    name = f"ImageOnly{processor_name}"
    cls = type(name, (base,), {"__init__": __init__, "__module__": __name__, "__qualname__": name,
                               "__doc__": f"{processor_name} for images only (no torchvision needed)."})
    transformers.AutoProcessor.register(config_class, cls, exist_ok=True)
    return cls


def register_image_only_processors() -> None:
    """Make every family's image-only processor known to `AutoProcessor` (idempotent)."""
    for model_type in _FAMILIES:
        image_only_processor_class(model_type)


#: A Hugging Face hub repo id (`org/name`), which `from_pretrained` may take in place of a local directory.
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def check_checkpoint(path: str) -> None:
    """Refuse a checkpoint path that names nothing: a local path (anything but a hub id `org/name`) must be a
    directory, so a typo is one line naming it rather than a failed hub download."""
    local = Path(path).expanduser()
    if local.is_dir():
        return
    if local.exists():
        raise PolicySpecError(f"hf checkpoint {path} is a file; hf:PATH takes a checkpoint directory")
    if not _HUB_ID.fullmatch(path) or path.startswith("."):
        raise PolicySpecError(f"no checkpoint at {path} (no such directory); hf:PATH takes a local checkpoint "
                              f"directory such as one `uivenus train sft` wrote")


def load_processor(path: str) -> Any:
    """`AutoProcessor` for `path`, falling back to the family's image-only processor when the stock one cannot be
    built here (no torchvision) or only a tokenizer comes back."""
    from transformers import AutoConfig, AutoProcessor

    register_image_only_processors()
    try:
        processor = AutoProcessor.from_pretrained(path)
    except (ImportError, OSError, ValueError, TypeError) as exc:  # the stock video processor is the usual cause
        processor, reason = None, f"AutoProcessor failed ({type(exc).__name__}: {exc})"
    else:
        reason = f"AutoProcessor returned a {type(processor).__name__} without an image processor"
    if getattr(processor, "image_processor", None) is not None:
        return processor
    model_type = AutoConfig.from_pretrained(path).model_type
    if model_type not in _FAMILIES:
        raise PolicyError(f"cannot build an image processor for {path}: {reason}, and model_type {model_type!r} "
                          f"is not one of {', '.join(sorted(_FAMILIES))}")
    return image_only_processor_class(model_type).from_pretrained(path)


# --- options ------------------------------------------------------------------------------------

_DTYPES = ("auto", "float32", "float16", "bfloat16")


def _positive_int(name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise PolicySpecError(f"hf option {name} must be an integer, got {text!r}") from None
    if value <= 0:
        raise PolicySpecError(f"hf option {name} must be positive, got {value}")
    return value


def _choice(choices: tuple[str, ...]) -> Callable[[str, str], str]:
    def parse(name: str, text: str) -> str:
        if text not in choices:
            raise PolicySpecError(f"hf option {name} must be one of {', '.join(choices)}, got {text!r}")
        return text

    return parse


def _device(name: str, text: str) -> str:
    if not (text in ("auto", "cpu", "mps") or text.split(":")[0] == "cuda"):
        raise PolicySpecError(f"hf option {name} must be auto, cpu, mps, cuda or cuda:N, got {text!r}")
    return text


def _text(name: str, text: str) -> str:
    return text


#: Each spec option and the converter that checks it.
_OPTION_PARSERS: Mapping[str, Callable[[str, str], Any]] = {
    "device": _device,
    "dtype": _choice(_DTYPES),
    "max_pixels": _positive_int,
    "min_pixels": _positive_int,
    "batch_size": _positive_int,
    "attn": _text,
}


@dataclass(frozen=True)
class HFOptions:
    """Where and how to run the checkpoint; `auto` picks CUDA + bfloat16 when there is a GPU, else CPU + float32."""

    path: str
    device: str = "auto"
    dtype: str = "auto"
    max_pixels: int | None = None
    min_pixels: int | None = None
    batch_size: int = 8
    attn: str | None = None  # attn_implementation: sdpa, eager, flash_attention_2

    @classmethod
    def parse(cls, spec: str) -> HFOptions:
        """`PATH?key=value&...` (the part of an `hf:` spec after the prefix)."""
        path, _, query = spec.partition("?")
        if not path:
            raise PolicySpecError("hf spec needs a checkpoint path: hf:PATH[?device=cpu&dtype=float32&...]")
        return cls(path=path, **spec_options(query, _OPTION_PARSERS, "hf"))

    def resolved(self) -> HFOptions:
        """Replace `auto` with the concrete device and dtype of this machine."""
        import torch

        device = self.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype = self.dtype
        if dtype == "auto":
            dtype = "bfloat16" if device.startswith("cuda") else "float32"
        return replace(self, device=device, dtype=dtype)


# --- messages -----------------------------------------------------------------------------------

def to_chat(messages: Sequence[Message]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Our messages as the processor's chat format, plus the images in the order their placeholders appear."""
    chat, images = [], []
    for message in messages:
        parts = []
        for part in message.content:
            if isinstance(part, str):
                parts.append({"type": "text", "text": part})
            else:
                parts.append({"type": "image"})
                images.append(part)
        chat.append({"role": message.role, "content": parts})
    return chat, images


# --- the policy ---------------------------------------------------------------------------------

class TransformersPolicy(PolicyBase):
    """Generates with a local checkpoint; `act_batch` batches requests that share sampling settings."""

    def __init__(self, options: HFOptions) -> None:
        import torch
        from transformers import AutoModelForImageTextToText

        check_checkpoint(options.path)
        self.options = options.resolved()
        self.name = f"hf:{options.path}"
        try:
            self.processor = load_processor(options.path)
        except OSError as exc:  # a hub id that is not there, or no network to fetch it
            raise PolicyError(f"cannot load checkpoint {options.path}: {' '.join(str(exc).split())}") from None
        image_processor = self.processor.image_processor
        if options.max_pixels or options.min_pixels:
            from transformers.image_utils import SizeDict

            image_processor.size = SizeDict(shortest_edge=options.min_pixels or image_processor.size.shortest_edge,
                                            longest_edge=options.max_pixels or image_processor.size.longest_edge)
        self.processor.tokenizer.padding_side = "left"  # new tokens must follow every prompt directly
        extra = {"attn_implementation": options.attn} if options.attn else {}
        self.model = AutoModelForImageTextToText.from_pretrained(
            options.path, dtype=getattr(torch, self.options.dtype), **extra).to(self.options.device).eval()

    def frame_for(self, width: int, height: int) -> Frame:
        """The smart frame this checkpoint's image processor implies for a `width` x `height` screen."""
        image_processor = self.processor.image_processor
        return Frame.smart(width, height, factor=image_processor.patch_size * image_processor.merge_size,
                           min_pixels=image_processor.size.shortest_edge,
                           max_pixels=image_processor.size.longest_edge)

    def act(self, request: PolicyRequest) -> PolicyReply:
        return self.act_batch([request])[0]

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyReply]:
        """Answers in request order; each reply's latency is the wall time of the batch it was generated in."""
        replies: list[PolicyReply | None] = [None] * len(requests)
        groups: dict[Sampling, list[int]] = {}
        for index, request in enumerate(requests):
            groups.setdefault(request.sampling, []).append(index)
        for sampling, indices in groups.items():
            for start in range(0, len(indices), self.options.batch_size):
                chunk = indices[start:start + self.options.batch_size]
                for index, reply in zip(chunk, self._generate([requests[i].messages for i in chunk], sampling)):
                    replies[index] = reply
        return replies  # type: ignore[return-value]

    def _thinking_switch(self, sampling: Sampling) -> dict[str, bool]:
        """`enable_thinking` for Qwen3-style templates that read it; other templates would reject the keyword."""
        template = self.processor.chat_template
        uses_switch = "enable_thinking" in (template if isinstance(template, str) else str(template))
        return {"enable_thinking": sampling.thinking} if uses_switch else {}

    def prompt_inputs(self, conversations: Sequence[Sequence[Message]], sampling: Sampling) -> Any:
        """The left-padded model inputs generation starts from: public so that a check can feed the model exactly
        what `act_batch` feeds it (e.g. that evaluation sees the screen as training does)."""
        texts, images = [], []
        for messages in conversations:
            chat, chat_images = to_chat(messages)
            texts.append(self.processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False,
                                                            **self._thinking_switch(sampling)))
            images += chat_images
        inputs = self.processor(text=texts, images=images or None, padding=True, return_tensors="pt")
        return inputs.to(self.options.device)

    def _generate(self, conversations: Sequence[Sequence[Message]], sampling: Sampling) -> list[PolicyReply]:
        import torch

        started = time.perf_counter()
        inputs = self.prompt_inputs(conversations, sampling)
        greedy = sampling.temperature <= 0
        settings: dict[str, Any] = {"max_new_tokens": sampling.max_new_tokens, "do_sample": not greedy}
        if not greedy:
            settings |= {"temperature": sampling.temperature, "top_p": sampling.top_p}
        try:
            with torch.inference_mode():
                output = self.model.generate(**inputs, **settings)
        except (RuntimeError, ValueError) as exc:
            raise PolicyError(f"{self.name} failed to generate: {exc}; check the device/dtype options and that "
                              "the checkpoint matches its processor") from exc
        new_tokens = output[:, inputs["input_ids"].shape[1]:]
        texts = self.processor.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
        latency = time.perf_counter() - started
        stop_ids = stop_ids_of(self.model.generation_config, self.processor.tokenizer)
        prompt_lengths = inputs["attention_mask"].sum(dim=1).tolist()
        return [
            PolicyReply(text=text, latency_s=latency,
                        usage={"prompt_tokens": int(prompt), "completion_tokens": completion_length(row, stop_ids)})
            for text, prompt, row in zip(texts, prompt_lengths, new_tokens.tolist())
        ]

    def close(self) -> None:
        self.model = None
        self.processor = None


def stop_ids_of(generation_config: Any, tokenizer: Any) -> frozenset[int]:
    """The ids that end a reply: the generation config's end-of-sequence ids and the tokenizer's pad id."""
    eos = generation_config.eos_token_id
    ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
    if tokenizer.pad_token_id is not None:
        ids.add(tokenizer.pad_token_id)
    return frozenset(ids)


def completion_length(tokens: list[int], stop_ids: frozenset[int]) -> int:
    """Generated tokens up to and including the first stop token (the rest is padding)."""
    for position, token in enumerate(tokens):
        if token in stop_ids:
            return position + 1
    return len(tokens)


@register_policy("hf")
def _hf_policy(spec: str) -> TransformersPolicy:
    return TransformersPolicy(HFOptions.parse(spec))
