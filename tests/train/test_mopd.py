"""Stage III: the hint reaches the teacher and never the student, teacher and student are aligned on the completion
although their prompts differ in length, the action-aware weights land on the right tokens of real replies, and
the reverse KL to the teacher falls on a tiny model in a few steps of the shared trainer."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from PIL import Image

from uivenus.actions.coords import Frame
from uivenus.actions.space import ActionSequence, Click, Type
from uivenus.agent.conversation import grounding_messages
from uivenus.agent.policies.transformers_local import load_processor
from uivenus.train.config import ConfigError, load_config
from uivenus.train.encode import encode_completion, encode_prompt
from uivenus.train.losses import ActionCorrectness, ActionWeights, action_aware_weights
from uivenus.train.mopd import MOPDConfig, MOPDLoss, action_correctness, action_hint, teacher_messages, train_mopd
from uivenus.train.samples import ChatSample, Domain
from uivenus.train.sampling import ModelSampler, Rollout, SamplingConfig, completion_view, encode_rollouts
from uivenus.train.sources import SourceSpec
from uivenus.train.spans import TokenSpans
from uivenus.train.tiny import build_tiny_qwen3_vl
from uivenus.train.trainer import TrainError, load_model
from uivenus.verify.rewards import ReferenceAction

pytestmark = pytest.mark.usefixtures("torch_single_thread")

CLICK = ReferenceAction(Click(point=(500, 500)), boxes={"point": (450, 450, 550, 550)})


def _variant(source: Path, out: Path, *, sharpen: float, max_pixels: int | None = None) -> Path:
    """A checkpoint with `source`'s tokenizer whose logits are `sharpen` times larger (a more confident model),
    optionally with an image processor that makes fewer image tokens."""
    from transformers.image_utils import SizeDict

    model = load_model(source, "float32")
    with torch.no_grad():
        model.model.language_model.norm.weight.mul_(sharpen)
    model.save_pretrained(out)
    processor = load_processor(str(source))
    if max_pixels is not None:
        processor.image_processor.size = SizeDict(shortest_edge=32 * 32, longest_edge=max_pixels)
    processor.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def models(tiny_qwen3_vl: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(student, teacher): the teacher is a sharper model that sees each screenshot at fewer image tokens."""
    root = tmp_path_factory.mktemp("mopd_models")
    student = _variant(tiny_qwen3_vl, root / "student", sharpen=3.0)
    teacher = _variant(tiny_qwen3_vl, root / "teacher", sharpen=6.0, max_pixels=32 * 32 * 2)
    return student, teacher


def _sample(name: str, reference: ReferenceAction, size: tuple[int, int] = (96, 64)) -> ChatSample:
    image = Image.new("RGB", size, "white")
    messages = grounding_messages(image, f"the {name} button", Frame.relative(*size))
    return ChatSample(messages=messages, target="[500,500]", domain=Domain.GROUNDING, reference=reference,
                      thinking=False, meta={"id": name})


def _loss(student: Path, teacher: Path, **overrides: object) -> MOPDLoss:
    config = MOPDConfig(**({"model": str(student), "sources": (SourceSpec("grounding", {"annotations": "x"}),),
                            "teachers": {"grounding": str(teacher)}} | overrides))
    return MOPDLoss(config, load_processor(str(student)))


# --- the hint and the alignment --------------------------------------------------------------------

def test_the_hint_reaches_the_teacher_only(models: tuple[Path, Path]) -> None:
    student, teacher = models
    loss = _loss(student, teacher, hint=True)
    samples = [_sample("ok", CLICK), _sample("absent", ReferenceAction(None, negative=True))]
    torch.manual_seed(0)
    rollouts = ModelSampler(load_model(student, "float32"), loss.processor, SamplingConfig(k=2, max_new_tokens=4)
                            ).sample(samples)
    decode = loss.processor.tokenizer.decode
    student_batch = encode_rollouts(loss.processor, rollouts)  # what the student is scored on
    (teacher_part,) = loss.teacher_batches(rollouts)
    hints = [action_hint(CLICK)] * 2 + [action_hint(samples[1].reference)] * 2
    assert hints[0] == "(hint: the correct action type is Click)"
    for row, hint in enumerate(hints):
        assert "hint" not in decode(student_batch.input_ids[row]) and "hint" not in rollouts[row].prompt.text
        assert hint in decode(teacher_part.batch.input_ids[row])
    image_token = load_model(teacher, "float32").config.image_token_id
    assert (teacher_part.batch.input_ids == image_token).sum() < (student_batch.input_ids == image_token).sum()


def test_the_hint_names_every_member_of_a_sequence_and_is_appended_to_the_last_user_turn() -> None:
    captcha = ReferenceAction(ActionSequence(actions=(Click(point=(1, 2)), Type(content="ab"))),
                              boxes={"0.point": (0, 0, 5, 5)})
    sample = _sample("captcha", captcha)
    hinted = teacher_messages(sample, hint=True)
    assert hinted[:-1] == sample.messages[:-1]
    assert hinted[-1].content == (*sample.messages[-1].content, "\n(hint: the correct action types are Click, Type)")
    assert teacher_messages(sample, hint=False) == sample.messages


def test_teacher_log_probs_are_aligned_on_the_completion(models: tuple[Path, Path]) -> None:
    student, teacher = models
    loss = _loss(student, teacher, hint=True)
    processor = loss.processor
    samples = [_sample("a", CLICK, (96, 64)), _sample("b", CLICK, (64, 128))]
    torch.manual_seed(1)
    drawn = ModelSampler(load_model(student, "float32"), processor, SamplingConfig(k=2, max_new_tokens=7)
                         ).sample(samples)
    # replies of different lengths, as models stop at different points
    rollouts = [Rollout(r.sample, r.prompt, r.completion_ids[:n], r.text) for r, n in zip(drawn, (7, 3, 5, 1))]
    width = 7
    aligned = loss.teacher_logps(rollouts, width, "cpu")
    model, teacher_processor = loss.teacher(Domain.GROUNDING)
    for row, rollout in enumerate(rollouts):
        prompt = encode_prompt(teacher_processor, teacher_messages(rollout.sample, True), thinking=False)
        one = encode_completion(teacher_processor, prompt, rollout.completion_ids, rollout.sample)
        with torch.no_grad():
            logits = model(input_ids=one.input_ids[None], attention_mask=torch.ones_like(one.input_ids)[None],
                           mm_token_type_ids=one.mm_token_type_ids[None], pixel_values=one.pixel_values,
                           image_grid_thw=one.image_grid_thw).logits[0]
        n = len(rollout.completion_ids)
        alone = logits[-n - 1:-1].log_softmax(-1).gather(-1, torch.tensor(rollout.completion_ids)[:, None])[:, 0]
        assert torch.allclose(aligned[row, width - n:], alone, atol=1e-5), row
        assert torch.count_nonzero(aligned[row, :width - n]) == 0


def test_a_teacher_that_encodes_like_the_student_scores_the_students_own_inputs(models: tuple[Path, Path]) -> None:
    from uivenus.train.sampling import score_rollouts

    student, _ = models
    loss = _loss(student, student, hint=False, teachers={"grounding": str(student), "captcha": str(student)})
    model = load_model(student, "float32")
    samples = [_sample("a", CLICK), replace(_sample("b", CLICK, (64, 128)), domain=Domain.CAPTCHA)]
    torch.manual_seed(2)
    rollouts = ModelSampler(model, loss.processor, SamplingConfig(k=2, max_new_tokens=5)).sample(samples)
    with torch.no_grad():
        scored = score_rollouts(model, loss.processor, rollouts)
    for subset in (rollouts, rollouts[:2]):  # two domains: prompts reused; one domain: the student's very batch
        batch = scored.batch if len(subset) == len(rollouts) else encode_rollouts(loss.processor, subset)
        parts = loss.teacher_batches(subset, "cpu", batch)
        assert (parts[0].batch.pixel_values is batch.pixel_values) == (len(parts) == 1)  # reused, not re-encoded
        teacher = loss.teacher_logps(subset, scored.width, "cpu", batch)
        assert torch.allclose(teacher, scored.logp[:len(subset)] * scored.mask[:len(subset)], atol=1e-5)


def test_a_teacher_must_share_the_students_vocabulary(tiny_qwen3_vl: Path, tmp_path: Path) -> None:
    other = build_tiny_qwen3_vl(tmp_path / "other", seed=1, hidden=64, layers=1, vision_layers=1)
    with pytest.raises(TrainError, match="vocabulary"):
        _loss(tiny_qwen3_vl, other).teacher(Domain.GROUNDING)


# --- action-aware weights on real replies ----------------------------------------------------------

def _weights(processor: object, reply: str, reference: ReferenceAction) -> tuple[ActionCorrectness, list, list]:
    """The reply as generated tokens (with the end-of-turn token), its correctness and per-token weights."""
    sample = _sample("w", reference)
    prompt = encode_prompt(processor, sample.messages, thinking=False)
    ids = processor.tokenizer(reply, add_special_tokens=False)["input_ids"]
    ids.append(processor.tokenizer.convert_tokens_to_ids("<|im_end|>"))
    encoded = encode_completion(processor, prompt, ids, sample)
    n = len(ids)
    spans = TokenSpans.stack([encoded.spans.map(lambda mask: mask[-n:])])
    correctness = action_correctness(reply, reference)
    weights = action_aware_weights(spans, [correctness], ActionWeights(think=0.1))[0].tolist()
    return correctness, [processor.tokenizer.decode([i]) for i in ids], weights


def test_action_aware_weights_on_real_replies(tiny_qwen3_vl: Path) -> None:
    processor = load_processor(str(tiny_qwen3_vl))
    think = "<think>the button is on the right</think>\n"

    kind, tokens, weights = _weights(processor, think + "<action>Click(point=(510, 490))</action>", CLICK)
    assert kind is ActionCorrectness.CORRECT and weights == [0.0] * len(tokens)

    kind, tokens, weights = _weights(processor, think + "<action>Click(point=(120, 870))</action>", CLICK)
    assert kind is ActionCorrectness.PARAM_WRONG
    pushed = "".join(t for t, w in zip(tokens, weights) if w > 1.0)
    assert all(digit in pushed for digit in "120870") and "Click" not in pushed and "think" not in pushed
    assert [w for t, w in zip(tokens, weights) if t.strip() in ("right", "button")] == pytest.approx([0.1, 0.1])
    assert weights[-1] == 0.0  # the end of turn is no parameter

    kind, tokens, weights = _weights(processor, think + "<action>Type(content='hello there')</action>", CLICK)
    assert kind is ActionCorrectness.TYPE_WRONG
    pushed = "".join(t for t, w in zip(tokens, weights) if w > 1.0)
    assert "Type" in pushed and "hello" not in pushed and "there" not in pushed

    kind, tokens, weights = _weights(processor, "I would click the button", CLICK)
    assert kind is ActionCorrectness.UNPARSEABLE and weights == [1.0] * len(tokens)

    kind, tokens, weights = _weights(processor, "[-1,-1]", CLICK)  # refused a target that is there
    assert kind is ActionCorrectness.TYPE_WRONG
    assert "".join(t for t, w in zip(tokens, weights) if w > 1.0) == "[-1,-1]"


def test_replies_with_the_right_action_give_no_gradient(models: tuple[Path, Path]) -> None:
    student, teacher = models
    loss_fn = _loss(student, teacher, alpha=0.0)
    processor = loss_fn.processor
    end = processor.tokenizer.convert_tokens_to_ids("<|im_end|>")
    rollouts = []
    for reply in ("[505,495]", "[120,870]"):  # inside the target box; outside it
        sample = _sample("r", CLICK)
        ids = (*processor.tokenizer(reply, add_special_tokens=False)["input_ids"], end)
        rollouts.append(Rollout(sample, encode_prompt(processor, sample.messages, thinking=False), ids, reply))
    model = load_model(student, "float32")
    loss, metrics = loss_fn.loss(model, rollouts[:1])
    loss.backward()
    assert float(loss.detach()) == 0.0 and metrics["correct"] == 1.0
    assert all(p.grad is None or torch.count_nonzero(p.grad) == 0 for p in model.parameters())
    loss, metrics = loss_fn.loss(model, rollouts)
    loss.backward()
    assert metrics["param_wrong"] == 0.5 and any(p.grad is not None and torch.count_nonzero(p.grad) > 0
                                                 for p in model.parameters())


# --- the loss falls -------------------------------------------------------------------------------

def _reverse_kl(student: Path, loss: MOPDLoss, rollouts: list[Rollout]) -> float:
    """KL(π_student ‖ π_teacher) over the whole vocabulary at every completion position of fixed rollouts."""
    student_batch = encode_rollouts(loss.processor, rollouts)
    width, _, mask = completion_view(student_batch)
    (part,) = loss.teacher_batches(rollouts)
    teacher_model, _ = loss.teacher(Domain.GROUNDING)
    with torch.no_grad():
        ls = load_model(student, "float32")(**student_batch.model_inputs(), logits_to_keep=width + 1).logits
        lt = teacher_model(**part.batch.model_inputs(), logits_to_keep=width + 1).logits
    ls, lt = ls[:, :-1].log_softmax(-1), lt[:, :-1].log_softmax(-1)
    kl = (ls.exp() * (ls - lt)).sum(-1)
    return float((kl * mask).sum() / mask.sum())


def test_the_full_divergence_takes_the_exact_kl_to_each_domains_hinted_teacher(models: tuple[Path, Path]) -> None:
    student, teacher = models
    loss_fn = _loss(student, teacher, divergence="full", hint=True)
    model = load_model(student, "float32")
    torch.manual_seed(3)
    rollouts = ModelSampler(model, loss_fn.processor, SamplingConfig(k=2, max_new_tokens=6)).sample(
        [_sample("a", CLICK), _sample("b", CLICK, (64, 128))])
    width = max(len(r.completion_ids) for r in rollouts)
    dists = loss_fn.teacher_logps(rollouts, width, "cpu", distributions=True)
    ids = encode_rollouts(loss_fn.processor, rollouts).input_ids[:, -width:]
    sampled = loss_fn.teacher_logps(rollouts, width, "cpu")
    # the same teacher, prompts (hinted) and alignment as the sampled form's
    assert torch.allclose(dists.gather(-1, ids.unsqueeze(-1)).squeeze(-1), sampled, atol=1e-5)
    loss, metrics = loss_fn.loss(model, rollouts)
    exact = _reverse_kl(student, loss_fn, rollouts)
    assert metrics["full_kl"] == pytest.approx(exact, rel=1e-4) and exact > 0.01
    if metrics["unparseable"] == 1.0:  # every token weighted 1, importance weights ≈ 1: the loss is about the KL
        assert float(loss.detach()) == pytest.approx(metrics["full_kl"], rel=1e-2)
    loss.backward()
    assert any(p.grad is not None and torch.count_nonzero(p.grad) > 0 for p in model.parameters())


@pytest.mark.parametrize("divergence", ["sampled", "full"])
def test_reverse_kl_to_the_teacher_falls_in_a_few_steps(models: tuple[Path, Path], tmp_path: Path,
                                                        divergence: str) -> None:
    student, teacher = models
    annotations = tmp_path / "g" / "annotations.json"
    (annotations.parent / "images").mkdir(parents=True)
    records = []
    for i, size in enumerate(((96, 64), (64, 96))):
        Image.new("RGB", size, "white").save(annotations.parent / "images" / f"{i}.png")
        records.append({"img_filename": f"{i}.png", "bbox": [8, 8, 40, 40], "instruction": f"the box {i}"})
    annotations.write_text(json.dumps(records))
    config = MOPDConfig(model=str(student), out_dir=tmp_path / "run", teachers={"grounding": str(teacher)},
                        sources=(SourceSpec("grounding", {"annotations": str(annotations)}),), lr=1e-4,
                        max_steps=10, batch_size=2, sampling=SamplingConfig(k=8, max_new_tokens=12), resume=None,
                        schedule="constant", shuffle_buffer=0, tensorboard=False, progress=False,
                        divergence=divergence)
    loss = MOPDLoss(config, load_processor(str(student)))
    from uivenus.train.sources import samples_from_spec

    torch.manual_seed(0)
    fixed = ModelSampler(load_model(student, "float32"), loss.processor, SamplingConfig(k=4, max_new_tokens=12)
                         ).sample(list(samples_from_spec(config.sources[0])))
    before = _reverse_kl(student, loss, fixed)
    final = train_mopd(config)
    after = _reverse_kl(final, loss, fixed)
    assert after < 0.9 * before, (before, after)
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert len(rows) == 10 and all(row["unparseable"] == 1.0 and row["weighted_tokens"] == 1.0 and row["skipped"] == 0
                                   and ("full_kl" in row) == (divergence == "full") for row in rows)


def test_mopd_config_reads_yaml_strictly(tmp_path: Path) -> None:
    path = tmp_path / "mopd.yaml"
    path.write_text("model: ckpt\nsources: [{kind: grounding, annotations: a.json}]\n"
                    "teachers: {grounding: experts/g, captcha: experts/c}\naction_weights: {think: 0.05, param: 3}\n"
                    "sampling: {k: 2, max_new_tokens: 64}\nalpha: 0.2\n")
    config = load_config(path, MOPDConfig)
    assert config.teachers == {Domain.GROUNDING: "experts/g", Domain.CAPTCHA: "experts/c"}
    assert (config.action_weights, config.alpha, config.sampling.k, config.hint) == (
        ActionWeights(param=3.0, type=2.0, think=0.05), 0.2, 2, True)
    with pytest.raises(ConfigError, match="k >= 2"):
        load_config(path, MOPDConfig, overrides=["sampling.k=1"])
    with pytest.raises(ConfigError, match="mobile"):
        load_config(path, MOPDConfig, overrides=["teachers.phone=x"])
    assert config.divergence == "sampled" and load_config(path, MOPDConfig, ["divergence=full"]).divergence == "full"
    with pytest.raises(ConfigError, match=r"divergence must be one of \['sampled', 'full'\], got 'forward'"):
        load_config(path, MOPDConfig, overrides=["divergence=forward"])


@pytest.mark.parametrize("divergence", ["sampled", "full"])
@pytest.mark.parametrize("temperature", [0.5, 1.0])
def test_at_any_sampling_temperature_fresh_samples_have_importance_weights_of_one(models: tuple[Path, Path],
                                                                                   temperature: float,
                                                                                   divergence: str) -> None:
    """The student is scored at the sampling temperature: under unchanged weights its log-probs are the sampler's,
    so no token is truncated; the teacher too, so a teacher that is the student has no reverse KL to it (the full
    distributions' too)."""
    student, _ = models
    loss_fn = _loss(student, student, hint=False, divergence=divergence,
                    sampling=SamplingConfig(k=4, max_new_tokens=8, temperature=temperature))
    model = load_model(student, "float32")
    torch.manual_seed(3)
    rollouts = ModelSampler(model, loss_fn.processor, loss_fn.config.sampling).sample(
        [_sample("a", CLICK), _sample("b", CLICK, (64, 128))])
    _, metrics = loss_fn.loss(model, rollouts)
    assert metrics["completion_tokens"] > 4
    assert metrics["is_dropped"] == 0.0
    assert metrics["sampler_mismatch"] < 5e-3, metrics  # mean |log π_θ − log μ| per token: IS weights ≈ 1
    assert abs(metrics["reverse_kl"]) < 1e-5
    assert abs(metrics.get("full_kl", 0.0)) < 1e-5
