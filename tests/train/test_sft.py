"""Stage I: the loss is the weighted NLL it claims to be, configs are strict, the loss falls on a tiny model in a few
steps, and a run that crashes after a checkpoint resumes to exactly the losses, data order and weights of a run that
never stopped."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image, ImageDraw

from uivenus.actions.coords import Frame
from uivenus.actions.grammar import format_response
from uivenus.actions.space import Click
from uivenus.records import Outcome, Step, TaskSpec
from uivenus.store import TrajectoryStore
from uivenus.train.config import ConfigError, apply_overrides, config_to_dict, from_dict, load_config
from uivenus.train.sft import SFTConfig, SFTLoss, sft_loss, token_weights, train_sft
from uivenus.train.sources import SourceSpec, samples_from_spec
from uivenus.train.sources.datasets import grounding_samples
from uivenus.train.spans import TokenSpans
from uivenus.train.stream import SampleStream
from uivenus.train.trainer import LATEST, TrainError, Trainer

pytestmark = pytest.mark.usefixtures("torch_single_thread")

REPO = Path(__file__).resolve().parents[2]
COLOURS = ("red", "blue", "green", "orange")


def _store(root: Path) -> Path:
    """A store run of two short episodes with thinking replies, verified Success and Partial; the loop ran them with
    a short prompt template (kept in the episode metadata, as the loop keeps its config), which keeps steps fast."""
    store = TrajectoryStore(root)
    template = root / "short.j2"
    root.mkdir(parents=True, exist_ok=True)
    template.write_text("You drive {{ platform_name }}. {{ frame.text }} Think in <think></think>, then act in "
                        "<action></action>, e.g. <action>{{ actions[0].signature }}</action>.")
    for e, verdict in enumerate(("success", "partial")):
        writer = store.episode("run", f"ep{e}", TaskSpec(id=f"t{e}", instruction="Press the square", platform="web"))
        for i in range(2):
            screen = Image.new("RGB", (96, 64), "white")
            x, y = 10 + 30 * i + 5 * e, 20 + 10 * e
            ImageDraw.Draw(screen).rectangle([x, y, x + 12, y + 12], fill=COLOURS[i + e])
            point = Frame.relative(96, 64).to_model((x + 6, y + 6))
            reply = format_response(Click(point=point), think=f"The {COLOURS[i + e]} square is the button.")
            writer.append(Step(index=i, response=reply, action=Click(point=(x + 6, y + 6)), executed=True), screen)
        writer.finish(Outcome.FINISHED, verdicts={"trace": verdict},
                      metadata={"config": {"frame": "rel", "images_in_history": 1, "prompt_template": str(template)}})
    return root / "run"


# --- the loss -------------------------------------------------------------------------------------

def test_sft_loss_is_the_weighted_mean_nll_over_weighted_tokens() -> None:
    logprobs = torch.log(torch.tensor([[0.5, 0.25, 1.0, 0.1], [0.2, 0.8, 0.5, 0.5]]))
    weights = torch.tensor([[1.0, 0.5, 0.0, 0.0], [2.0, 0.0, 1.0, 0.0]])
    expected = (1.0 * -np.log(0.5) + 0.5 * -np.log(0.25) + 2.0 * -np.log(0.2) + 1.0 * -np.log(0.5)) / 4
    assert float(sft_loss(logprobs, weights)) == pytest.approx(expected)
    assert float(sft_loss(logprobs, torch.zeros_like(weights))) == 0.0


def test_token_weights_combine_span_and_sample_weights() -> None:
    t = lambda bits: torch.tensor(bits, dtype=torch.bool)  # noqa: E731
    spans = TokenSpans(t([[1, 1, 1, 1]] * 2), t([[1, 0, 0, 0]] * 2), t([[0, 1, 1, 0]] * 2), t([[0, 1, 0, 0]] * 2),
                       {"point": t([[0, 0, 1, 0]] * 2)})

    class B:
        pass

    batch = B()
    batch.spans, batch.weights = spans, torch.tensor([1.0, 0.5])
    assert token_weights(batch, {"assistant": 1.0, "think": 0.5}).tolist() == [[0.5, 1, 1, 1], [0.25, 0.5, 0.5, 0.5]]
    assert token_weights(batch, {"action": 1.0}).tolist() == [[0, 1, 1, 0], [0, 0.5, 0.5, 0]]


# --- configs ----------------------------------------------------------------------------------------

def test_configs_are_strict_and_round_trip(tmp_path: Path, grounding_squares) -> None:
    annotations = grounding_squares(tmp_path)
    data = {"model": "m", "sources": [{"kind": "grounding", "annotations": str(annotations)}], "lr": 1e-3,
            "span_weights": {"action": 1}}
    config = from_dict(SFTConfig, data)
    assert config.sources[0] == SourceSpec("grounding", {"annotations": str(annotations)})
    assert config.span_weights == {"action": 1.0} and config.out_dir == Path("runs/train")
    assert from_dict(SFTConfig, config_to_dict(config)) == config
    for bad, message in (
        ({"learning_rate": 1e-3}, "learning_rate: unknown key"),
        ({"lr": "fast"}, "lr: Input should be a valid number"),
        ({"batch_size": "many"}, "batch_size: Input should be a valid integer"),
        ({"schedule": "cyclic"}, "schedule: Input should be 'cosine', 'linear' or 'constant'"),
        ({"sources": [{"kind": "videos"}]}, "unknown source kind 'videos'"),
        ({"sources": []}, "at least one source"),
        ({"span_weights": {"reasoning": 1.0}}, "unknown kind"),
    ):
        with pytest.raises(ConfigError, match=message):
            from_dict(SFTConfig, {**data, **bad})
    with pytest.raises(ConfigError, match=r"sources.0\(grounding\).frame: unknown key; did you mean 'frame_kind'"):
        samples_from_spec(SourceSpec("grounding", {"annotations": str(annotations), "frame": "rel"}), "sources.0")
    with pytest.raises(ConfigError, match="divisor: Input should be a valid integer"):
        samples_from_spec(SourceSpec("grounding", {"annotations": str(annotations), "divisor": "x"}))
    overridden = apply_overrides(data, ["lr=2e-4", "sources.0.frame_kind=abs", "eval_every=5"])
    assert overridden == {**data, "lr": "2e-4", "eval_every": 5,  # YAML 1.1 reads 2e-4 as text ...
                          "sources": [{"kind": "grounding", "annotations": str(annotations), "frame_kind": "abs"}]}
    assert from_dict(SFTConfig, overridden).lr == 2e-4  # ... which a float field takes as the number it is
    with pytest.raises(ConfigError, match="key=value"):
        apply_overrides(data, ["lr"])


def test_the_shipped_configs_load(tmp_path: Path) -> None:
    import yaml

    config = load_config(REPO / "configs" / "sft_tiny.yaml", SFTConfig, overrides=[f"out_dir={tmp_path}"])
    assert [s.kind for s in config.sources] == ["trajectories", "grounding"] and config.out_dir == tmp_path
    assert config.span_weights == {"assistant": 1.0, "think": 0.5}
    for name in ("ddp", "fsdp"):
        launch = yaml.safe_load((REPO / "configs" / "accelerate" / f"{name}.yaml").read_text())
        assert launch["distributed_type"] == {"ddp": "MULTI_GPU", "fsdp": "FSDP"}[name]


# --- training ---------------------------------------------------------------------------------------

def test_sft_loss_falls_on_a_tiny_model_and_the_checkpoint_loads(tmp_path: Path, grounding_squares,
                                                                  tiny_qwen3_vl: Path) -> None:
    """Overfit a handful of samples (grounding answers and thinking trajectory steps) from a YAML config."""
    annotations, run_dir = grounding_squares(tmp_path / "g"), _store(tmp_path / "store")
    step = next(iter(samples_from_spec(SourceSpec("trajectories", {"run_dir": str(run_dir)}))))
    assert step.messages[0].text.startswith("You drive a web browser.")  # the episode's own prompt template
    config_file = tmp_path / "sft.yaml"
    config_file.write_text(f"""
model: {tiny_qwen3_vl}
out_dir: {tmp_path / 'out'}
lr: 0.003
schedule: constant
batch_size: 4
max_steps: 20
log_every: 1
eval_every: 10
progress: false
span_weights: {{assistant: 1.0, think: 0.5}}
sources:
  - {{kind: grounding, annotations: {annotations}}}
  - {{kind: trajectories, run_dir: {run_dir}}}
eval_sources:
  - {{kind: grounding, annotations: {annotations}}}
eval_batches: 1
""")
    final = train_sft(load_config(config_file, SFTConfig))
    lines = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()]
    train = [line for line in lines if "loss" in line]
    evals = [line for line in lines if "eval/loss" in line]
    assert [line["step"] for line in train] == list(range(1, 21)) and [e["step"] for e in evals] == [10, 20]
    first, last = np.mean([t["loss"] for t in train[:2]]), np.mean([t["loss"] for t in train[-2:]])
    assert last < 0.35 * first, (first, last)
    assert evals[-1]["eval/loss"] < evals[0]["eval/loss"]
    assert any(t["nll_think"] > 0 for t in train) and all(t["tokens"] > 0 for t in train)
    assert list((tmp_path / "out" / "tensorboard").glob("events.out.tfevents.*"))
    assert (tmp_path / "out" / LATEST).read_text().strip() == "step-0000020"
    # the final checkpoint is an ordinary checkpoint directory: model and processor load through the Auto classes
    from transformers import AutoModelForImageTextToText

    from uivenus.agent.policies.transformers_local import load_processor

    model = AutoModelForImageTextToText.from_pretrained(final)
    im_end = load_processor(str(final)).tokenizer.convert_tokens_to_ids("<|im_end|>")
    assert im_end == model.config.text_config.eos_token_id


class Recording:
    """The SFT loss on a random half of the reply tokens, randomly scaled (so the torch, Python and NumPy RNG
    states all matter), recording what it saw."""

    def __init__(self, crash_after: int | None = None) -> None:
        self.inner = SFTLoss({"assistant": 1.0})
        self.calls: list[tuple[tuple[str, ...], float]] = []
        self.crash_after = crash_after

    def __call__(self, model, batch):
        if self.crash_after is not None and len(self.calls) == self.crash_after:
            raise KeyboardInterrupt("simulated crash")
        from uivenus.train.trainer import token_logprobs

        keep = torch.rand(batch.labels.shape) < 0.5
        scale = 1.0 + 0.1 * random.random() + 0.1 * float(np.random.rand())
        loss = scale * sft_loss(token_logprobs(model, batch), token_weights(batch, {"assistant": 1.0}) * keep)
        self.calls.append((batch.ids, loss.item()))
        return loss, {}


def test_a_run_resumed_from_a_checkpoint_matches_an_uninterrupted_one(tmp_path: Path, grounding_squares,
                                                                       tiny_qwen3_vl: Path) -> None:
    from uivenus.agent.policies.transformers_local import load_processor

    processor = load_processor(str(tiny_qwen3_vl))
    source = grounding_samples(grounding_squares(tmp_path / "g", n=5))

    def trainer(out: str, loss, resume: str | None) -> Trainer:
        config = SFTConfig(model=str(tiny_qwen3_vl), out_dir=tmp_path / out, lr=2e-3, warmup_steps=2,
                           schedule="cosine", batch_size=2, grad_accum=2, max_steps=6, save_every=3, seed=11,
                           shuffle_buffer=3, progress=False, tensorboard=False, resume=resume,
                           sources=(SourceSpec("grounding", {"annotations": "unused"}),))
        stream = SampleStream([source], processor, batch_size=2, max_length=512, seed=11, shuffle_buffer=3)
        return Trainer(config, loss, stream, processor=processor)

    straight = Recording()
    trainer("straight", straight, None).train()
    crashed = Recording(crash_after=7)  # dies in step 4, after the checkpoint of step 3
    with pytest.raises(KeyboardInterrupt):
        trainer("resumed", crashed, None).train()
    assert (tmp_path / "resumed" / LATEST).read_text().strip() == "step-0000003"
    torch.manual_seed(12345), random.seed(12345), np.random.seed(12345)  # a fresh process would not share our RNG
    resumed = Recording()
    resumed_trainer = trainer("resumed", resumed, "auto")
    assert resumed_trainer.step == 3
    final = resumed_trainer.train()
    assert len(straight.calls) == 12 and len(crashed.calls[:6]) + len(resumed.calls) == 12
    calls = crashed.calls[:6] + resumed.calls
    assert [ids for ids, _ in calls] == [ids for ids, _ in straight.calls]  # the same data, in the same order
    assert torch.allclose(torch.tensor([loss for _, loss in calls]), torch.tensor([l for _, l in straight.calls]),
                          rtol=0, atol=1e-6)
    from safetensors.torch import load_file

    a = load_file(tmp_path / "straight" / "checkpoints" / "step-0000006" / "model" / "model.safetensors")
    b = load_file(final / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    metrics = [json.loads(line) for line in (tmp_path / "resumed" / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2, 3, 4, 5, 6]  # nothing logged twice
    with pytest.raises(TrainError, match="not a complete checkpoint"):
        trainer("elsewhere", Recording(), str(tmp_path / "nowhere"))


def test_vision_lr_scale_slows_only_the_vision_tower(tmp_path: Path, grounding_squares, tiny_qwen3_vl: Path) -> None:
    """The scale reaches the optimizer: at 1e-6 the vision tower stays put while the language model moves as it
    does at scale 1, and the logged lr is the language model's."""
    from safetensors.torch import load_file

    annotations = grounding_squares(tmp_path / "g")
    start = load_file(tiny_qwen3_vl / "model.safetensors")

    def moved(scale: float) -> tuple[float, float, list[float]]:
        out = tmp_path / f"scale{scale}"
        source = SourceSpec("grounding", {"annotations": str(annotations)})
        final = train_sft(SFTConfig(model=str(tiny_qwen3_vl), out_dir=out, lr=0.003, schedule="constant",
                                    vision_lr_scale=scale, batch_size=2, max_steps=2, progress=False,
                                    tensorboard=False, sources=[source]))
        end = load_file(final / "model.safetensors")
        change = {name: float((end[name] - start[name]).abs().max()) for name in start}
        lrs = [json.loads(line)["lr"] for line in (out / "metrics.jsonl").read_text().splitlines() if "lr" in line]
        return (max(v for n, v in change.items() if ".visual." in f".{n}"),
                max(v for n, v in change.items() if ".visual." not in f".{n}"), lrs)

    vision_slow, language_slow, lrs = moved(1e-6)
    vision_full, language_full, _ = moved(1.0)
    assert vision_full > 1e-3 and language_full > 1e-3 and language_slow > 1e-3
    assert vision_slow < 1e-4 * vision_full
    assert lrs and all(lr == pytest.approx(0.003) for lr in lrs)
    with pytest.raises(TrainError, match="vision_lr_scale"):
        SFTConfig(model=str(tiny_qwen3_vl), vision_lr_scale=0.0)
