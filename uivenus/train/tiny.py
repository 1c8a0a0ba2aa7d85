"""A tiny, randomly initialised Qwen3-VL checkpoint built offline, for tests and CPU experiments.

Nothing is downloaded: the tokenizer is a byte-level BPE trained here on a corpus generated from our own
prompts, conversation layout and action grammar (so action names, brackets and `<think>` tags are short
token sequences and digits are single tokens, as in Qwen's tokenizer), the model is built from a config that
satisfies transformers 5's strict Qwen3-VL checks (docs/TINY_MODELS.md), and the processor is the image-only
Qwen3-VL processor (no torchvision needed). The result is an ordinary checkpoint directory that loads with
`AutoModelForImageTextToText.from_pretrained` and `AutoProcessor.from_pretrained`, so the code under test is
the same code that runs a released UI-Venus model.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from PIL import Image

from uivenus.actions.coords import Frame
from uivenus.actions.grammar import format_response
from uivenus.actions.grounding import format_grounding
from uivenus.actions.space import ACTION_CLASSES, Direction, Platform, action_from_dict
from uivenus.agent.conversation import Turn, build_messages
from uivenus.agent.policies.transformers_local import image_only_processor_class
from uivenus.agent.prompts import action_specs, grounding_prompt, navigation_prompt

__all__ = ["CHAT_TEMPLATE", "SPECIAL_TOKENS", "TinyModelError", "build_tiny_qwen3_vl", "build_tiny_tokenizer",
           "tiny_corpus"]

HEAD_DIM = 32
#: Qwen's control tokens; the first one is also unknown, end-of-text and padding token.
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                  "<|image_pad|>", "<|video_pad|>")
#: Reasoning tags are whole tokens (as in Qwen3) but not special: decoding keeps them.
THINK_TOKENS = ("<think>", "</think>")

#: ChatML with images as `<|vision_start|><|image_pad|><|vision_end|>`; `{% generation %}` marks what the
#: assistant wrote, for `return_assistant_tokens_mask` in training.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['role'] == 'assistant' %}{% generation %}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}"
    "{% endif %}<|im_end|>{% endgeneration %}{{ '\\n' }}"
    "{% else %}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


class TinyModelError(ValueError):
    """The requested tiny model cannot be built (bad size); the message says which sizes work."""


# --- corpus -------------------------------------------------------------------------------------

_WORDS = tuple("""
search settings wifi bluetooth send message open close the a of to in on for with button menu cart price name
email hello world file folder save login logout next previous page red blue green yellow square circle icon tab
window list item view edit delete copy paste cancel confirm submit back home recent apps notes contacts mail
calendar photos camera music maps weather clock alarm timer download upload share print search bar text field
password username account profile order checkout pay total address phone number date time today tomorrow
monday friday morning evening first last new old add remove select all none filter sort by from subject reply
forward archive draft inbox sent trash spam label star read unread title body document report table chart
slide sheet cell row column font bold italic size color theme dark light mode volume brightness battery
screen display language keyboard privacy security update install app store game video news book hotel flight
ticket train bus taxi restaurant food coffee shop product review rating comment like follow friend group
""".split())
_KEY_COMBOS = (("ctrl", "c"), ("ctrl", "v"), ("ctrl", "a"), ("alt", "tab"), ("enter",), ("ctrl", "shift", "t"))


def _point(rng: random.Random) -> list[int]:
    return [rng.randrange(1000), rng.randrange(1000)]


def _words(rng: random.Random) -> str:
    return " ".join(rng.choices(_WORDS, k=rng.randint(1, 4)))


#: A random legal value per field name (the same names as the records'), for sample responses.
_FIELD_SAMPLES: Mapping[str, Callable[[random.Random], Any]] = {
    "point": _point,
    "start": _point,
    "end": _point,
    "content": _words,
    "keys": lambda rng: list(rng.choice(_KEY_COMBOS)),
    "repeat": lambda rng: rng.randint(1, 5),
    "direction": lambda rng: rng.choice(list(Direction)).value,
    "amount": lambda rng: rng.randint(1, 10),
    "duration": lambda rng: rng.choice([0.5, 1, 2]),
    "seconds": lambda rng: rng.randint(1, 5),
    "app": lambda rng: rng.choice(["Settings", "Chrome", "Files", "Mail"]),
    "url": lambda rng: f"https://{rng.choice(_WORDS)}.example.com/{rng.choice(_WORDS)}",
    "index": lambda rng: rng.randint(0, 9),
    "actions": lambda rng: [{"type": "Click", "point": _point(rng)} for _ in range(rng.randint(2, 4))],
}


def _sample_response(rng: random.Random, platform: Platform) -> str:
    spec = rng.choice(action_specs(platform))
    data = {"type": spec.name}
    for f in dataclasses.fields(ACTION_CLASSES[spec.type]):
        if f.name not in spec.optional or rng.random() < 0.5:
            data[f.name] = _FIELD_SAMPLES[f.name](rng)
    think = f"I see the {_words(rng)} and should act on it." if rng.random() < 0.7 else None
    return format_response(action_from_dict(data), think=think)


def tiny_corpus(seed: int = 0, responses: int = 600) -> Iterator[str]:
    """Text the tiny tokenizer learns from: our prompts, conversation wording, responses and grounding answers."""
    rng = random.Random(seed)
    frames = (Frame.relative(1080, 2400), Frame.smart(1280, 720, factor=32))
    pixel = Image.new("RGB", (8, 8))
    for platform in Platform:
        for frame in frames:
            for thinking in (True, False):
                yield navigation_prompt(platform, frame, thinking=thinking)
        history = [Turn(pixel, _sample_response(rng, platform)) for _ in range(3)]
        for message in build_messages("", _words(rng), history, pixel, frame=frames[0], notes=[_words(rng)]):
            yield message.text
    for frame in frames:
        yield grounding_prompt(_words(rng), frame)
    for _ in range(responses):
        yield _sample_response(rng, rng.choice(list(Platform)))
        yield format_grounding(tuple(_point(rng)) if rng.random() < 0.9 else None)


# --- tokenizer ----------------------------------------------------------------------------------

def build_tiny_tokenizer(vocab_size: int = 2000, *, seed: int = 0) -> Any:
    """A `Qwen2Tokenizer` whose byte-level BPE was trained on `tiny_corpus`, with Qwen's special tokens."""
    from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers, trainers
    from tokenizers.models import BPE
    from transformers import AddedToken, Qwen2Tokenizer
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    # the same normalisation and pre-tokenisation as Qwen2Tokenizer, so the merges mean the same there
    bpe = Tokenizer(BPE(unk_token=None, continuing_subword_prefix="", end_of_word_suffix="", fuse_unk=False,
                        byte_fallback=False))
    bpe.normalizer = normalizers.NFC()
    bpe.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size - len(SPECIAL_TOKENS) - len(THINK_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(tiny_corpus(seed), trainer)
    model = json.loads(bpe.to_str())["model"]
    tokenizer = Qwen2Tokenizer(
        vocab=model["vocab"], merges=[tuple(pair) for pair in model["merges"]],
        unk_token=SPECIAL_TOKENS[0], eos_token=SPECIAL_TOKENS[0], pad_token=SPECIAL_TOKENS[0],
        extra_special_tokens=list(SPECIAL_TOKENS[1:]),
    )
    tokenizer.add_tokens([AddedToken(token, special=False, normalized=False) for token in THINK_TOKENS])
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


# --- model --------------------------------------------------------------------------------------

def _mrope_section(head_dim: int) -> list[int]:
    """Split head_dim/2 rotary frequencies over (time, height, width) like Qwen3-VL's 24/20/20 of 64."""
    half = head_dim // 2
    spatial = half * 5 // 16
    return [half - 2 * spatial, spatial, spatial]


def _config(tokenizer: Any, *, hidden: int, layers: int, vision_hidden: int, vision_layers: int) -> Any:
    from transformers import Qwen3VLConfig

    heads = hidden // HEAD_DIM
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in (
        ("image", "<|image_pad|>"), ("video", "<|video_pad|>"), ("start", "<|vision_start|>"),
        ("end", "<|vision_end|>"), ("im_end", "<|im_end|>"))}
    text = {
        "vocab_size": len(tokenizer), "hidden_size": hidden, "intermediate_size": 2 * hidden,
        "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": max(1, heads // 2),
        "head_dim": HEAD_DIM, "max_position_embeddings": 8192, "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": None, "eos_token_id": ids["im_end"],
        "rope_parameters": {"rope_type": "default", "rope_theta": 1_000_000.0,
                            "mrope_section": _mrope_section(HEAD_DIM), "mrope_interleaved": True},
    }
    vision = {
        "depth": vision_layers, "hidden_size": vision_hidden, "intermediate_size": 2 * vision_hidden,
        "num_heads": max(1, vision_hidden // HEAD_DIM), "patch_size": 16, "spatial_merge_size": 2,
        "temporal_patch_size": 2, "out_hidden_size": hidden, "num_position_embeddings": 256,
        "deepstack_visual_indexes": [vision_layers - 1],
    }
    return Qwen3VLConfig(text_config=text, vision_config=vision, image_token_id=ids["image"],
                         video_token_id=ids["video"], vision_start_token_id=ids["start"],
                         vision_end_token_id=ids["end"], tie_word_embeddings=True)


def _check_sizes(hidden: int, layers: int, vision_hidden: int, vision_layers: int) -> None:
    for name, value in (("hidden", hidden), ("vision_hidden", vision_hidden)):
        if value < HEAD_DIM or value % HEAD_DIM:
            raise TinyModelError(f"{name} must be a positive multiple of {HEAD_DIM} (e.g. 64, 128, 256), got {value}")
    for name, value in (("layers", layers), ("vision_layers", vision_layers)):
        if value < 1:
            raise TinyModelError(f"{name} must be >= 1 (2..4 is typical), got {value}")


def build_tiny_qwen3_vl(
    out_dir: str | Path,
    *,
    hidden: int = 128,
    layers: int = 2,
    vocab_size: int = 2000,
    vision_hidden: int = 64,
    vision_layers: int = 2,
    min_pixels: int = 32 * 32,
    max_pixels: int = 224 * 224,
    seed: int = 0,
    vision_pos_scale: float = 1.0,
) -> Path:
    """Write a random Qwen3-VL checkpoint (model, tokenizer, image-only processor) to `out_dir` and return it.

    The vocabulary has at most `vocab_size` tokens (the built-in corpus saturates near 1,650); images are resized
    by the processor to at most `max_pixels` (patch 16, merge 2: one image token per 32x32 pixels).
    `vision_pos_scale` multiplies the vision position embeddings: at 1.0 they are ~60x smaller than the patch
    embeddings, so a visual token barely says where it is (50 lets a tiny model ground; docs/results/recipe-shapes).
    """
    import torch
    from transformers import Qwen3VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    _check_sizes(hidden, layers, vision_hidden, vision_layers)
    if not (vision_pos_scale > 0 and math.isfinite(vision_pos_scale)):
        raise TinyModelError("vision_pos_scale must be a positive number (1.0: as initialised), "
                             f"got {vision_pos_scale}")
    out = Path(out_dir)
    tokenizer = build_tiny_tokenizer(vocab_size, seed=seed)
    config = _config(tokenizer, hidden=hidden, layers=layers, vision_hidden=vision_hidden,
                     vision_layers=vision_layers)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen3VLForConditionalGeneration(config)
    with torch.no_grad():
        model.model.visual.pos_embed.weight.mul_(vision_pos_scale)
    model.generation_config.eos_token_id = [tokenizer.convert_tokens_to_ids("<|im_end|>"), tokenizer.eos_token_id]
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.bos_token_id = None
    image_processor = Qwen2VLImageProcessorPil(patch_size=16, merge_size=2, temporal_patch_size=2,
                                               size={"shortest_edge": min_pixels, "longest_edge": max_pixels})
    processor = image_only_processor_class("qwen3_vl")(image_processor=image_processor, tokenizer=tokenizer,
                                                       chat_template=CHAT_TEMPLATE)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out
