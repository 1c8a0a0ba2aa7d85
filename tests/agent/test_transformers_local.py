"""The `hf:` backend on tiny random checkpoints: real loading, chat templating, batched left-padded generation.

The random model's words are noise, so the tests assert structure: text comes back for every request, in
order, greedy decoding repeats itself, and a request answers the same alone or inside a padded batch.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from uivenus.actions.coords import Frame
from uivenus.agent.conversation import Turn, build_messages, grounding_messages
from uivenus.agent.policies import Message, Mode, Policy, PolicyRequest, PolicySpecError, Sampling, policy_from_spec
from uivenus.agent.policies.transformers_local import (
    HFOptions, TransformersPolicy, image_only_processor_class, load_processor, to_chat,
)
from uivenus.agent.prompts import navigation_prompt

pytestmark = pytest.mark.usefixtures("torch_single_thread")

GREEDY = Sampling(temperature=0.0, max_new_tokens=8, thinking=False)


@pytest.fixture(scope="module")
def policy(tiny_qwen3_vl: Path) -> Iterator[TransformersPolicy]:
    with policy_from_spec(f"hf:{tiny_qwen3_vl}?device=cpu&dtype=float32") as built:
        yield built


def _grounding(colour: str, size: tuple[int, int] = (320, 640), sampling: Sampling = GREEDY) -> PolicyRequest:
    image = Image.new("RGB", size, colour)
    return PolicyRequest(grounding_messages(image, f"the {colour} area", Frame.relative(*size)),
                         mode=Mode.GROUNDING, sampling=sampling)


def _navigation() -> PolicyRequest:
    frame = Frame.relative(400, 800)
    history = [Turn(Image.new("RGB", (400, 800), "white"), "<think>home first</think>\n<action>PressHome()</action>")]
    messages = build_messages(navigation_prompt("mobile", frame), "open settings", history,
                              Image.new("RGB", (400, 800), "navy"), frame=frame, notes=["wifi is off"])
    return PolicyRequest(messages, sampling=Sampling(temperature=0.0, max_new_tokens=8, thinking=True))


def test_spec_builds_a_policy(policy: TransformersPolicy, tiny_qwen3_vl: Path) -> None:
    assert isinstance(policy, Policy)
    assert policy.name == f"hf:{tiny_qwen3_vl}"
    assert type(policy.processor) is image_only_processor_class("qwen3_vl")
    assert policy.processor.tokenizer.padding_side == "left"


def test_single_request_returns_text_usage_and_latency(policy: TransformersPolicy) -> None:
    reply = policy.act(_grounding("green"))
    assert isinstance(reply.text, str)
    assert reply.latency_s > 0
    assert reply.usage["prompt_tokens"] > 50  # prompt text plus 10x20 image tokens
    assert 1 <= reply.usage["completion_tokens"] <= GREEDY.max_new_tokens


def test_greedy_is_deterministic(policy: TransformersPolicy) -> None:
    request = _grounding("red")
    assert policy.act(request).text == policy.act(request).text


def test_batch_keeps_order_and_matches_single_answers(policy: TransformersPolicy) -> None:
    """Left padding and per-token modality ids are right only if a padded request answers as it does alone."""
    requests = [_grounding("red", (320, 640)), _navigation(), _grounding("blue", (640, 320))]
    alone = [policy.act(r) for r in requests]
    batched = policy.act_batch(requests)
    assert [r.text for r in batched] == [r.text for r in alone]
    assert [r.usage["prompt_tokens"] for r in batched] == [r.usage["prompt_tokens"] for r in alone]
    assert batched[1].usage["prompt_tokens"] > batched[0].usage["prompt_tokens"]  # long prompt + 2 images


def test_batches_are_split_by_batch_size_without_changing_answers(tiny_qwen3_vl: Path,
                                                                  policy: TransformersPolicy) -> None:
    requests = [_grounding(c) for c in ("red", "green", "blue")]
    small = policy_from_spec(f"hf:{tiny_qwen3_vl}?device=cpu&dtype=float32&batch_size=2")
    assert [r.text for r in small.act_batch(requests)] == [r.text for r in policy.act_batch(requests)]


def test_sampling_settings_are_honoured(policy: TransformersPolicy) -> None:
    sampled = Sampling(temperature=1.0, max_new_tokens=3, thinking=True)
    replies = policy.act_batch([_grounding("red", sampling=sampled), _grounding("red")])
    assert all(isinstance(r.text, str) for r in replies)
    assert replies[0].usage["completion_tokens"] <= 3


def test_max_pixels_option_shrinks_the_image_and_the_frame(tiny_qwen3_vl: Path, policy: TransformersPolicy) -> None:
    small = policy_from_spec(f"hf:{tiny_qwen3_vl}?device=cpu&dtype=float32&max_pixels=4096")
    request = _grounding("red")
    assert small.act(request).usage["prompt_tokens"] < policy.act(request).usage["prompt_tokens"]
    assert small.frame_for(1280, 720) == Frame.smart(1280, 720, factor=32, min_pixels=1024, max_pixels=4096)
    assert policy.frame_for(1280, 720).model_size == (288, 160)  # 46080 <= 224*224 pixels, multiples of 32


def test_checkpoint_naming_the_stock_processor_still_loads(tiny_qwen3_vl: Path, tmp_path: Path) -> None:
    """Released checkpoints name `Qwen3VLProcessor`, whose video half needs torchvision; images must still work."""
    copy = Path(shutil.copytree(tiny_qwen3_vl, tmp_path / "release-like"))
    config_file = copy / "processor_config.json"
    config = json.loads(config_file.read_text())
    config["processor_class"] = "Qwen3VLProcessor"
    config_file.write_text(json.dumps(config))
    processor = load_processor(str(copy))
    assert processor.image_processor.patch_size == 16
    inputs = processor(text=["<|vision_start|><|image_pad|><|vision_end|>"], images=[Image.new("RGB", (64, 64))],
                       return_tensors="pt")
    assert inputs["image_grid_thw"].tolist() == [[1, 4, 4]]


def test_to_chat_keeps_images_in_placeholder_order() -> None:
    first, second = Image.new("RGB", (8, 8), "red"), Image.new("RGB", (8, 8), "blue")
    chat, images = to_chat([Message("system", ("S",)), Message("user", ("a", first, "b", second))])
    assert chat == [{"role": "system", "content": [{"type": "text", "text": "S"}]},
                    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image"},
                                                 {"type": "text", "text": "b"}, {"type": "image"}]}]
    assert images == [first, second]


def test_options_are_parsed_explicitly() -> None:
    options = HFOptions.parse("/ckpt/venus?device=cuda:1&dtype=bfloat16&max_pixels=1003520&batch_size=4&attn=sdpa")
    assert options == HFOptions(path="/ckpt/venus", device="cuda:1", dtype="bfloat16", max_pixels=1003520,
                                batch_size=4, attn="sdpa")
    assert HFOptions.parse("./ckpt") == HFOptions(path="./ckpt")
    assert HFOptions.parse("./ckpt?device=auto").resolved().device in ("cpu", "cuda")


@pytest.mark.parametrize(("spec", "match"), [
    ("hf:", "needs a checkpoint path"),
    ("hf:./ckpt?dtype=int3", "dtype must be one of"),
    ("hf:./ckpt?max_pixels=lots", "max_pixels must be an integer"),
    ("hf:./ckpt?batch_size=0", "batch_size must be positive"),
    ("hf:./ckpt?device=tpu", "device must be"),
    ("hf:./ckpt?temperature=0.1", "unknown hf option 'temperature'"),
    ("hf:./ckpt?device", "key=value"),
])
def test_bad_specs_fail_before_loading(spec: str, match: str) -> None:
    with pytest.raises(PolicySpecError, match=match):
        policy_from_spec(spec)


def _tiny_qwen2_5_vl(out: Path) -> Path:
    """A random Qwen2.5-VL (patch 14, windowed vision attention) sharing the tiny tokenizer."""
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    from uivenus.train.tiny import CHAT_TEMPLATE, build_tiny_tokenizer

    tokenizer = build_tiny_tokenizer(1000)
    token_id = tokenizer.convert_tokens_to_ids
    config = Qwen2_5_VLConfig(
        text_config={"vocab_size": len(tokenizer), "hidden_size": 64, "intermediate_size": 128,
                     "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
                     "pad_token_id": tokenizer.pad_token_id, "bos_token_id": None,
                     "eos_token_id": token_id("<|im_end|>"),
                     "rope_parameters": {"rope_type": "default", "rope_theta": 1e6, "mrope_section": [8, 4, 4]}},
        vision_config={"depth": 2, "hidden_size": 64, "intermediate_size": 128, "num_heads": 2, "patch_size": 14,
                       "window_size": 56, "fullatt_block_indexes": [1], "out_hidden_size": 64},
        image_token_id=token_id("<|image_pad|>"), video_token_id=token_id("<|video_pad|>"),
        vision_start_token_id=token_id("<|vision_start|>"), vision_end_token_id=token_id("<|vision_end|>"))
    image_processor = Qwen2VLImageProcessorPil(patch_size=14,
                                               size={"shortest_edge": 28 * 28, "longest_edge": 196 * 196})
    processor = image_only_processor_class("qwen2_5_vl")(image_processor=image_processor, tokenizer=tokenizer,
                                                         chat_template=CHAT_TEMPLATE)
    Qwen2_5_VLForConditionalGeneration(config).save_pretrained(out)
    processor.save_pretrained(out)
    return out


def test_qwen2_5_vl_family_loads_and_batches(tmp_path: Path) -> None:
    from transformers import Qwen2_5_VLForConditionalGeneration

    path = _tiny_qwen2_5_vl(tmp_path / "qwen2_5_vl")
    with policy_from_spec(f"hf:{path}?device=cpu&dtype=float32") as qwen25:
        assert isinstance(qwen25.model, Qwen2_5_VLForConditionalGeneration)
        assert qwen25.frame_for(1920, 1080).factor == 28
        requests = [_grounding("red", (300, 200)), _grounding("blue", (200, 500))]
        assert [r.text for r in qwen25.act_batch(requests)] == [qwen25.act(r).text for r in requests]
