"""The tiny Qwen3-VL factory: an offline checkpoint that loads through the Auto classes and runs a forward pass."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from PIL import Image

from uivenus.agent.policies.transformers_local import image_only_processor_class
from uivenus.train.tiny import SPECIAL_TOKENS, TinyModelError, build_tiny_qwen3_vl

pytestmark = pytest.mark.usefixtures("torch_single_thread")


@pytest.fixture(scope="module")
def loaded(tiny_qwen3_vl: Path) -> tuple:
    from transformers import AutoModelForImageTextToText, AutoProcessor

    return AutoModelForImageTextToText.from_pretrained(tiny_qwen3_vl), AutoProcessor.from_pretrained(tiny_qwen3_vl)


def test_auto_classes_give_the_qwen3_vl_model_and_the_image_only_processor(loaded: tuple) -> None:
    from transformers import Qwen2Tokenizer, Qwen3VLForConditionalGeneration

    model, processor = loaded
    assert isinstance(model, Qwen3VLForConditionalGeneration)
    assert type(processor) is image_only_processor_class("qwen3_vl")  # not a bare tokenizer
    assert isinstance(processor.tokenizer, Qwen2Tokenizer)
    assert processor.image_processor.patch_size == model.config.vision_config.patch_size == 16


def test_config_ids_are_the_tokenizers_own(loaded: tuple) -> None:
    model, processor = loaded
    tokenizer, config = processor.tokenizer, model.config
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in SPECIAL_TOKENS}
    assert config.image_token_id == ids["<|image_pad|>"] and config.video_token_id == ids["<|video_pad|>"]
    assert config.vision_start_token_id == ids["<|vision_start|>"]
    assert config.vision_end_token_id == ids["<|vision_end|>"]
    assert config.text_config.vocab_size == len(tokenizer)
    assert tokenizer.pad_token_id == ids["<|endoftext|>"]
    assert ids["<|im_end|>"] in model.generation_config.eos_token_id
    assert len(set(ids.values())) == len(SPECIAL_TOKENS)


def test_tokenizer_splits_digits_and_keeps_reasoning_tags(loaded: tuple) -> None:
    tokenizer = loaded[1].tokenizer
    reply = "<think>the red square</think>\n<action>Click(point=(905, 17))</action>"
    tokens = tokenizer.tokenize(reply)
    assert tokens[0] == "<think>" and "</think>" in tokens
    assert all(len(t.lstrip("Ġ")) == 1 for t in tokens if any(c.isdigit() for c in t))
    assert "Click" in "".join(tokens) and len(tokens) < 30  # the grammar was in the corpus: few tokens
    ids = tokenizer(reply)["input_ids"]
    assert tokenizer.decode(ids, skip_special_tokens=True) == reply


def test_chat_template_places_images_and_marks_the_assistant_span(loaded: tuple) -> None:
    tokenizer = loaded[1].tokenizer
    chat = [{"role": "system", "content": "S"},
            {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image"}]},
            {"role": "assistant", "content": "<action>PressHome()</action>"}]
    text = tokenizer.apply_chat_template(chat, tokenize=False)
    assert text == ("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nlook<|vision_start|><|image_pad|>"
                    "<|vision_end|><|im_end|>\n<|im_start|>assistant\n<action>PressHome()</action><|im_end|>\n")
    out = tokenizer.apply_chat_template(chat, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    marked = [t for t, m in zip(out["input_ids"], out["assistant_masks"]) if m]
    assert tokenizer.decode(marked) == "<action>PressHome()</action><|im_end|>"
    prompt = tokenizer.apply_chat_template(chat[:2], tokenize=False, add_generation_prompt=True)
    assert prompt.endswith("<|im_start|>assistant\n")


def test_forward_pass_with_an_image_gives_a_finite_loss(loaded: tuple) -> None:
    import torch

    model, processor = loaded
    chat = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "where?"}]}]
    text = processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False) + "[12,34]"
    inputs = processor(text=[text], images=[Image.new("RGB", (224, 160), "red")], return_tensors="pt")
    assert "mm_token_type_ids" in inputs
    image_tokens = int((inputs["input_ids"] == model.config.image_token_id).sum())
    assert image_tokens == 7 * 5  # 224x160 in 32x32 merged patches
    with torch.no_grad():
        out = model(**inputs, labels=inputs["input_ids"])
    assert out.logits.shape == (1, inputs["input_ids"].shape[1], len(processor.tokenizer))
    assert torch.isfinite(out.loss)


def test_checkpoint_is_small(tiny_qwen3_vl: Path) -> None:
    total = sum(f.stat().st_size for f in tiny_qwen3_vl.iterdir())
    assert total < 10 * 2**20
    assert json.loads((tiny_qwen3_vl / "config.json").read_text())["model_type"] == "qwen3_vl"


def test_sizes_are_settable_quick_and_deterministic(tiny_qwen3_vl: Path, tmp_path: Path) -> None:
    from transformers import AutoConfig

    options = {"hidden": 64, "layers": 3, "vocab_size": 1000, "max_pixels": 128 * 128, "seed": 3}
    started = time.perf_counter()
    path = build_tiny_qwen3_vl(tmp_path / "small", **options)
    assert time.perf_counter() - started < 10
    config = AutoConfig.from_pretrained(path)
    assert (config.text_config.hidden_size, config.text_config.num_hidden_layers) == (64, 3)
    assert config.text_config.vocab_size <= 1000
    size = json.loads((path / "processor_config.json").read_text())["image_processor"]["size"]
    assert size["longest_edge"] == 128 * 128
    default_vocab = json.loads((tiny_qwen3_vl / "tokenizer.json").read_text())["model"]["vocab"]
    assert len(default_vocab) > config.text_config.vocab_size  # the vocabulary size is honoured

    again = build_tiny_qwen3_vl(tmp_path / "again", **options)
    assert (again / "model.safetensors").read_bytes() == (path / "model.safetensors").read_bytes()
    assert (again / "tokenizer.json").read_text() == (path / "tokenizer.json").read_text()


def test_vision_pos_scale_multiplies_only_the_vision_position_embeddings(tmp_path: Path) -> None:
    from safetensors.torch import load_file

    options = {"hidden": 64, "layers": 1, "vision_layers": 1, "max_pixels": 64 * 64}
    plain = load_file(build_tiny_qwen3_vl(tmp_path / "plain", **options) / "model.safetensors")
    scaled = load_file(build_tiny_qwen3_vl(tmp_path / "scaled", vision_pos_scale=50.0, **options)
                       / "model.safetensors")
    moved = {name for name in plain if not plain[name].equal(scaled[name])}
    assert moved == {name for name in plain if name.endswith("visual.pos_embed.weight")} and len(moved) == 1
    name = moved.pop()
    assert scaled[name].allclose(plain[name] * 50.0) and plain[name].abs().max() > 0


@pytest.mark.parametrize(("kwargs", "match"), [({"hidden": 100}, "multiple of 32"), ({"layers": 0}, "layers"),
                                               ({"vision_hidden": 16}, "vision_hidden"),
                                               ({"vision_pos_scale": 0.0}, "vision_pos_scale")])
def test_impossible_sizes_are_rejected_before_building(tmp_path: Path, kwargs: dict, match: str) -> None:
    with pytest.raises(TinyModelError, match=match):
        build_tiny_qwen3_vl(tmp_path / "x", **kwargs)
    assert not (tmp_path / "x").exists()
