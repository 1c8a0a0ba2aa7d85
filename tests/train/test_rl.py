"""Stage II: replies sampled from a tiny model are rewarded against the reference action, the clipped policy
gradient moves probability towards the better replies, the whole stage runs through the shared trainer (with a KL
to the reference), and sampling also works through an OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from PIL import Image, ImageDraw

from uivenus.agent.policies import policy_from_spec
from uivenus.agent.serve import ServerThread, create_app
from uivenus.train.collate import Batch, collate
from uivenus.train.config import ConfigError, load_config
from uivenus.train.encode import encode
from uivenus.train.rl import RLConfig, RLLoss, train_rl
from uivenus.train.sampling import SamplingConfig, score_rollouts
from uivenus.train.sft import SFTConfig, train_sft
from uivenus.train.sources import SourceSpec, samples_from_spec
from uivenus.train.trainer import load_model

pytestmark = pytest.mark.usefixtures("torch_single_thread")

QUIET = {"resume": None, "tensorboard": False, "progress": False, "schedule": "constant", "shuffle_buffer": 0}


@pytest.fixture(scope="module")
def grounding(tmp_path_factory: pytest.TempPathFactory) -> SourceSpec:
    """Two screens with one coloured square each (ScreenSpot-style records)."""
    root = tmp_path_factory.mktemp("grounding")
    (root / "images").mkdir()
    records = []
    for i, (colour, box) in enumerate((("red", (8, 8, 40, 40)), ("blue", (24, 24, 56, 56)))):
        image = Image.new("RGB", (64, 64), "white")
        ImageDraw.Draw(image).rectangle(box, fill=colour)
        image.save(root / "images" / f"{i}.png")
        records.append({"id": f"g{i}", "img_filename": f"{i}.png", "bbox": list(box),
                        "instruction": f"the {colour} square"})
    (root / "annotations.json").write_text(json.dumps(records))
    return SourceSpec("grounding", {"annotations": str(root / "annotations.json")})


@pytest.fixture(scope="module")
def stage1(tiny_qwen3_vl: Path, grounding: SourceSpec, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Stage I checkpoint that answers in the grounding format often enough for rewards to differ."""
    out = tmp_path_factory.mktemp("stage1")
    return train_sft(SFTConfig(model=str(tiny_qwen3_vl), out_dir=out, sources=(grounding,), lr=1e-3, max_steps=45,
                               batch_size=2, **QUIET))


def _batch(processor: object, grounding: SourceSpec) -> Batch:
    return collate([encode(processor, s) for s in samples_from_spec(grounding)], processor.tokenizer.pad_token_id)


def _config(stage1: Path, grounding: SourceSpec, out: Path, **overrides: object) -> RLConfig:
    settings = {"model": str(stage1), "out_dir": out, "sources": (grounding,), "domain": "grounding", "lr": 1e-4,
                "batch_size": 2, "sampling": SamplingConfig(k=8, max_new_tokens=10), **QUIET}
    return RLConfig(**(settings | overrides))


def test_policy_gradient_on_fixed_rollouts_lowers_the_loss_and_favours_the_best_reply(
        stage1: Path, grounding: SourceSpec, tmp_path: Path) -> None:
    from uivenus.agent.policies.transformers_local import load_processor

    processor = load_processor(str(stage1))
    model = load_model(stage1, "float32")
    loss_fn = RLLoss(_config(stage1, grounding, tmp_path), processor)
    torch.manual_seed(0)
    rewarded = loss_fn.rollout(model, _batch(processor, grounding))
    assert len(rewarded.rollouts) == 16 and rewarded.skipped == 0
    totals = torch.tensor([r.total for r in rewarded.rewards])
    assert totals.view(2, 8).std(dim=1).max() > 0, "the Stage I model must give replies of different quality"
    best, worst = int(totals.argmax()), int(totals.argmin())

    def reply_logps() -> torch.Tensor:
        with torch.no_grad():
            scored = score_rollouts(model, processor, rewarded.rollouts)
        return (scored.logp * scored.mask).sum(dim=1)

    before = reply_logps()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # plain gradient steps: the loss's own direction
    losses = []
    for _ in range(5):
        loss, metrics = loss_fn.loss(model, rewarded)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    after = reply_logps()
    assert losses[-1] < losses[0]
    assert after[best] > before[best] and after[worst] < before[worst]
    assert metrics["reward"] == pytest.approx(float(totals.mean()))


def test_train_rl_runs_through_the_trainer_with_a_kl_to_the_reference(
        stage1: Path, grounding: SourceSpec, tmp_path: Path) -> None:
    final = train_rl(_config(stage1, grounding, tmp_path, max_steps=2, kl_coef=0.1, sampling=SamplingConfig(
        k=4, max_new_tokens=12)))
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [1, 2]
    assert all(0.0 <= row["reward"] <= 1.0 and row["kl"] >= 0.0 and row["skipped"] == 0 for row in rows)
    assert rows[0]["kl"] == pytest.approx(0.0, abs=1e-6)  # the reference is the starting checkpoint
    trained, start = load_model(final, "float32").state_dict(), load_model(stage1, "float32").state_dict()
    assert any(not torch.equal(trained[name], start[name]) for name in start)


def test_rollouts_can_come_from_an_openai_compatible_server(stage1: Path, grounding: SourceSpec,
                                                            tmp_path: Path) -> None:
    from uivenus.agent.policies.transformers_local import load_processor

    processor = load_processor(str(stage1))
    im_end = processor.tokenizer.convert_tokens_to_ids("<|im_end|>")
    served = policy_from_spec(f"hf:{stage1}?device=cpu&dtype=float32")
    with ServerThread(create_app(served, "tiny-venus")) as server:
        config = _config(stage1, grounding, tmp_path, sampling=SamplingConfig(
            k=3, max_new_tokens=8, server=f"openai:{server.base_url}#tiny-venus"))
        loss_fn = RLLoss(config, processor)
        model = load_model(stage1, "float32")
        rewarded = loss_fn.rollout(model, _batch(processor, grounding))
    served.close()
    assert len(rewarded.rollouts) == 6
    assert [r.sample.id for r in rewarded.rollouts] == ["g0"] * 3 + ["g1"] * 3  # grouped by prompt
    assert all(r.sampler_logp is None and r.completion_ids[-1] == im_end for r in rewarded.rollouts)
    loss, metrics = loss_fn.loss(model, rewarded)
    assert torch.isfinite(loss) and metrics["clip_fraction"] == 0.0  # no sampler log-probs: ratio 1


def test_the_sampler_records_the_log_probs_of_the_distribution_it_drew_from(tiny_qwen3_vl: Path,
                                                                            grounding: SourceSpec) -> None:
    from transformers import TopPLogitsWarper

    from uivenus.agent.policies.transformers_local import load_processor
    from uivenus.train.sampling import ModelSampler, completion_view, encode_rollouts

    processor = load_processor(str(tiny_qwen3_vl))
    model = load_model(tiny_qwen3_vl, "float32")
    torch.manual_seed(0)
    rollouts = ModelSampler(model, processor, SamplingConfig(k=2, max_new_tokens=6, temperature=0.7, top_p=0.9)
                            ).sample(list(samples_from_spec(grounding)))
    batch = encode_rollouts(processor, rollouts)
    width, ids, mask = completion_view(batch)
    with torch.no_grad():
        logits = model(**batch.model_inputs(), logits_to_keep=width + 1).logits[:, :-1].float()
    config = model.config
    logits[..., [config.image_token_id, config.video_token_id, config.vision_start_token_id,
                 config.vision_end_token_id]] = -float("inf")  # never sampled: no pixels could back them
    rows = []
    for t in range(width):  # temperature, then top-p, as the sampler applies them
        rows.append(TopPLogitsWarper(0.9)(ids[:, :t], logits[:, t] / 0.7).log_softmax(-1))
    expected = torch.stack(rows, dim=1).gather(-1, ids[..., None])[..., 0]
    for row, rollout in enumerate(rollouts):
        n = len(rollout.completion_ids)
        assert torch.allclose(rollout.sampler_logp, expected[row, width - n:], atol=1e-4)
        assert torch.isfinite(rollout.sampler_logp).all() and bool(mask[row, width - n:].all())


def test_the_sampler_draws_the_tokens_transformers_sampling_draws(tiny_qwen3_vl: Path, grounding: SourceSpec) -> None:
    """The sampler draws each token itself (one softmax, `generate` run greedy on its pick): with the same seed it
    must draw exactly what `generate(do_sample=True)` draws from the same distribution."""
    from uivenus.agent.policies.transformers_local import load_processor
    from uivenus.train.encode import encode_prompt
    from uivenus.train.sampling import ModelSampler, _prompt_batch

    processor = load_processor(str(tiny_qwen3_vl))
    model = load_model(tiny_qwen3_vl, "float32")
    samples = list(samples_from_spec(grounding))
    torch.manual_seed(0)
    rollouts = ModelSampler(model, processor, SamplingConfig(k=2, max_new_tokens=8, min_new_tokens=3)).sample(samples)
    config = model.config
    pad = processor.tokenizer.pad_token_id
    inputs = _prompt_batch([encode_prompt(processor, s.messages, thinking=s.thinking) for s in samples], pad)
    torch.manual_seed(0)
    with torch.no_grad():
        reference = model.generate(
            **inputs, do_sample=True, temperature=1.0, top_k=0, top_p=1.0, num_return_sequences=2, max_new_tokens=8,
            min_new_tokens=3, pad_token_id=pad,
            suppress_tokens=[config.image_token_id, config.video_token_id, config.vision_start_token_id,
                             config.vision_end_token_id])
    drawn = reference[:, inputs["input_ids"].shape[1]:].tolist()
    assert len(rollouts) == len(drawn) == 2 * len(samples)
    for rollout, row in zip(rollouts, drawn):
        assert len(rollout.completion_ids) >= 3 and rollout.completion_ids == tuple(row[:len(rollout.completion_ids)])


@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_prompts_cut_from_a_stream_batch_are_what_encode_prompt_gives(tiny_qwen3_vl: Path, grounding: SourceSpec,
                                                                       padding_side: str) -> None:
    from uivenus.agent.conversation import grounding_messages
    from uivenus.agent.policies.transformers_local import load_processor
    from uivenus.actions.coords import Frame
    from uivenus.train.encode import encode_prompt
    from uivenus.train.samples import ChatSample
    from uivenus.train.sampling import batch_prompts

    processor = load_processor(str(tiny_qwen3_vl))
    wide = Image.new("RGB", (160, 64), "white")
    samples = [*samples_from_spec(grounding),
               ChatSample(grounding_messages(wide, "the wide bar", Frame.relative(160, 64)), target="[1,2]",
                          domain="grounding", thinking=False)]
    batch = collate([encode(processor, s) for s in samples], processor.tokenizer.pad_token_id, padding_side)
    for cut, sample in zip(batch_prompts(processor, batch), samples, strict=True):
        fresh = encode_prompt(processor, sample.messages, thinking=sample.thinking)
        assert cut.text == fresh.text
        for name in ("input_ids", "mm_token_type_ids", "pixel_values", "image_grid_thw"):
            assert torch.equal(getattr(cut, name), getattr(fresh, name)), name


def test_rl_config_reads_yaml_strictly(tmp_path: Path) -> None:
    path = tmp_path / "rl.yaml"
    path.write_text("model: ckpt\nsources: [{kind: grounding, annotations: a.json}]\ndomain: captcha\n"
                    "sampling: {k: 6, max_new_tokens: 32}\nreward: {format: 0.2, type: 0.3, params: 0.5}\n"
                    "method: rloo\nkl_coef: 0.05\n")
    config = load_config(path, RLConfig)
    assert (config.domain, config.sampling.k, config.reward.format, config.method) == ("captcha", 6, 0.2, "rloo")
    with pytest.raises(ConfigError, match="sampling.k must be >= 2"):
        load_config(path, RLConfig, overrides=["sampling.k=1"])
    with pytest.raises(ConfigError, match="method"):
        load_config(path, RLConfig, overrides=["method=ppo"])


def test_at_a_sampling_temperature_below_one_fresh_samples_are_not_clipped(stage1: Path, grounding: SourceSpec,
                                                                           tmp_path: Path) -> None:
    """The policy is scored at the sampling temperature, so the ratio to the sampler is 1 before any update (a
    tight clip range: this Stage I is confident enough that a T = 1 score would be within the default one)."""
    from uivenus.agent.policies.transformers_local import load_processor

    processor = load_processor(str(stage1))
    model = load_model(stage1, "float32")
    loss_fn = RLLoss(_config(stage1, grounding, tmp_path, kl_coef=0.1, clip_eps=0.02,
                             sampling=SamplingConfig(k=4, max_new_tokens=10, temperature=0.5)), processor)
    torch.manual_seed(0)
    rewarded = loss_fn.rollout(model, _batch(processor, grounding))
    _, metrics = loss_fn.loss(model, rewarded)
    assert metrics["completion_tokens"] > 2
    assert metrics["clip_fraction"] == 0.0 and metrics["kl"] == pytest.approx(0.0, abs=1e-6)
