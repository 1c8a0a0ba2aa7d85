"""The screen reaches the tiny model's answer: an image swap moves its next-token logits, and training reaches
the vision tower (the miniature recipe's grounding experts ignore the image by learning, not by a pipeline fault)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from PIL import Image

from uivenus.train.collate import collate
from uivenus.train.encode import IGNORE_INDEX, encode
from uivenus.train.image_probe import answer_states, image_sensitivity
from uivenus.train.samples import DataError
from uivenus.train.sources.datasets import grounding_samples

pytestmark = pytest.mark.usefixtures("torch_single_thread")


@pytest.fixture(scope="module")
def loaded(tiny_qwen3_vl: Path) -> tuple:
    from uivenus.agent.policies.transformers_local import load_processor
    from uivenus.train.trainer import load_model

    return load_model(tiny_qwen3_vl, "float32"), load_processor(str(tiny_qwen3_vl))


def test_two_screens_give_different_logits_on_a_fresh_tiny_model(tmp_path: Path, grounding_squares,
                                                                 loaded: tuple) -> None:
    model, processor = loaded
    first, second, third = list(grounding_samples(grounding_squares(tmp_path, n=3)))
    swapped = image_sensitivity(model, processor, first, second)
    assert swapped.image_logit_gap > 1e-3 and swapped.image_tv > 1e-5
    assert swapped.text_logit_gap > 1e-4  # "red" against "blue" moves it too
    assert swapped.visual_token_gap > 0.01 * swapped.visual_token_norm  # the LM sees two different screens
    assert swapped.text_embedding_norm > 0
    at_first_digit = image_sensitivity(model, processor, first, second, reply_tokens=1)  # after "["
    assert at_first_digit.image_logit_gap > 1e-3 and at_first_digit.image_logit_gap != swapped.image_logit_gap
    with pytest.raises(DataError, match="reply_tokens"):
        image_sensitivity(model, processor, first, second, reply_tokens=50)
    same_screen = dataclasses.replace(third, messages=first.messages)  # first's text and screen, another target
    unchanged = image_sensitivity(model, processor, first, same_screen)
    assert unchanged.image_logit_gap < 1e-5 and unchanged.text_logit_gap < 1e-5 and unchanged.visual_token_gap < 1e-5


def test_answer_states_carry_the_screen_only_past_the_embeddings(tmp_path: Path, grounding_squares,
                                                                   loaded: tuple) -> None:
    import torch

    model, processor = loaded
    first, second = list(grounding_samples(grounding_squares(tmp_path, n=2)))
    other_screen = dataclasses.replace(second, messages=(dataclasses.replace(
        first.messages[0], content=(second.messages[0].content[0], *first.messages[0].content[1:])),))
    states = answer_states(model, processor, [first, other_screen], reply_tokens=1)  # at x's first digit
    assert states.shape == (2, model.config.text_config.num_hidden_layers + 1, model.config.text_config.hidden_size)
    assert torch.equal(states[0, 0], states[1, 0])  # the same token "[": the same input embedding
    assert (states[0, -1] - states[1, -1]).norm() > 1e-4 * states[0, -1].norm()  # the screen reached it
    again = answer_states(model, processor, [first], reply_tokens=1)
    assert torch.allclose(again[0], states[0], atol=1e-6)
    with pytest.raises(DataError, match="reply_tokens"):
        answer_states(model, processor, [first], reply_tokens=50)


def test_screens_of_different_sizes_are_a_clear_error(tmp_path: Path, grounding_squares, loaded: tuple) -> None:
    model, processor = loaded
    annotations = grounding_squares(tmp_path, n=2)
    Image.new("RGB", (128, 64), "white").save(annotations.parent / "images" / "g1.png")
    first, wide = list(grounding_samples(annotations))
    with pytest.raises(DataError, match="different patch grids"):
        image_sensitivity(model, processor, first, wide)


def test_an_sft_loss_sends_gradient_to_every_part_of_the_vision_tower(tmp_path: Path, grounding_squares,
                                                                      loaded: tuple) -> None:
    import torch

    model, processor = loaded
    items = [encode(processor, sample) for sample in grounding_samples(grounding_squares(tmp_path, n=2))]
    batch = collate(items, processor.tokenizer.pad_token_id)
    model.zero_grad()
    logits = model(**batch.model_inputs()).logits
    loss = torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), batch.labels[:, 1:].flatten(),
                                             ignore_index=IGNORE_INDEX)
    loss.backward()
    visual = model.model.visual
    parts = {"patch_embed": visual.patch_embed.proj.weight, "pos_embed": visual.pos_embed.weight,
             "first block": visual.blocks[0].attn.qkv.weight, "merger": visual.merger.linear_fc2.weight,
             "deepstack merger": visual.deepstack_merger_list[0].linear_fc2.weight}
    for name, weight in parts.items():
        assert weight.requires_grad and weight.grad is not None and weight.grad.norm() > 0, name
    model.zero_grad()


def test_the_evaluation_policy_feeds_the_screen_as_training_does(tmp_path: Path, grounding_squares,
                                                                 tiny_qwen3_vl: Path) -> None:
    """The recipe's evaluation (a left-padded batch through TransformersPolicy) and training (one encoded prompt)
    give the same next-token logits, so a model that reads the screen in training reads it in evaluation too."""
    import torch

    from uivenus.agent.policies.base import Sampling
    from uivenus.agent.policies.transformers_local import HFOptions, TransformersPolicy
    from uivenus.train.encode import encode_prompt

    annotations = grounding_squares(tmp_path, n=2)
    records = json.loads(annotations.read_text())
    records[1]["instruction"] = "the blue square at the top of the page, next to the list"  # a longer prompt
    annotations.write_text(json.dumps(records))
    short, long = list(grounding_samples(annotations))
    policy = TransformersPolicy(HFOptions(str(tiny_qwen3_vl), device="cpu", dtype="float32"))
    try:
        inputs = policy.prompt_inputs([short.messages, long.messages], Sampling(temperature=0, max_new_tokens=4,
                                                                                thinking=False))
        assert inputs["attention_mask"][0, 0] == 0  # the shorter prompt is padded on the left
        with torch.no_grad():
            batched = policy.model(**inputs).logits[:, -1]
            for row, sample in enumerate((short, long)):
                prompt = encode_prompt(policy.processor, sample.messages, thinking=False)
                single = policy.model(input_ids=prompt.input_ids[None],
                                      mm_token_type_ids=prompt.mm_token_type_ids[None],
                                      pixel_values=prompt.pixel_values, image_grid_thw=prompt.image_grid_thw).logits
                assert torch.allclose(batched[row], single[0, -1], atol=1e-4)
    finally:
        policy.close()
