"""Stage I, mid-training: supervised training on trajectories and grounding / CAPTCHA samples.

The loss is token-level cross-entropy over the reply, each token weighted by the span it belongs to (the whole
reply, the action call only, reasoning at a lower weight: `span_weights`) and by its sample's weight (a Partial
trajectory counts less), averaged over the tokens that carry weight. The loop is the shared `Trainer`.

    python -m uivenus.train.sft configs/sft_tiny.yaml [key=value ...]
    accelerate launch --config_file configs/accelerate/ddp.yaml -m uivenus.train.sft CONFIG.yaml
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from uivenus.train.collate import Batch
from uivenus.train.config import ConfigError
from uivenus.train.sources import SourceSpec
from uivenus.train.spans import SPAN_KINDS, span_weights
from uivenus.train.trainer import EvalHook, TrainConfig, Trainer, loss_eval_hook, stage_main, stream_for, token_logprobs

if TYPE_CHECKING:
    import torch

__all__ = ["SFTConfig", "SFTLoss", "main", "sft_loss", "token_weights", "train_sft"]


@dataclass(frozen=True)
class SFTConfig(TrainConfig):
    """Stage I: the shared settings plus the data (`sources`, held-out `eval_sources`) and which spans carry loss.

    `span_weights` maps span kinds (param, action_type, action, think, assistant) to weights; a token takes the
    weight of the most specific listed kind it is in, others weigh 0: `{assistant: 1}` trains on the whole reply,
    `{action: 1}` on the action call only, `{assistant: 1, think: 0.5}` halves the reasoning.
    """

    sources: tuple[SourceSpec, ...] = ()
    eval_sources: tuple[SourceSpec, ...] = ()
    eval_batches: int = 8
    span_weights: Mapping[str, float] = field(default_factory=lambda: {"assistant": 1.0})

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.sources:
            raise ConfigError("sources must name at least one source of samples (kind: trajectories, grounding, ...)")
        unknown = sorted(set(self.span_weights) - set(SPAN_KINDS))
        if unknown:
            raise ConfigError(f"span_weights has unknown kind(s) {unknown}; use {', '.join(SPAN_KINDS)}")
        if not any(weight > 0 for weight in self.span_weights.values()):
            raise ConfigError("span_weights must give some span a positive weight, or nothing is trained")


def sft_loss(logprobs: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Σ w·(−log p) / #(w > 0): weighted negative log-likelihood, averaged over the tokens that carry weight."""
    counted = (weights > 0).sum().clamp(min=1)
    return -(weights * logprobs).sum() / counted


def token_weights(batch: Batch, weights_by_span: Mapping[str, float]) -> torch.Tensor:
    """Each token's loss weight: its span's weight times its sample's weight ([B, L])."""
    return span_weights(batch.spans, weights_by_span) * batch.weights[:, None]


@dataclass(frozen=True)
class SFTLoss:
    """The Stage I loss as a `Trainer` plug; metrics: weighted tokens and the mean NLL of each span kind."""

    span_weights: Mapping[str, float]

    def __call__(self, model: Any, batch: Batch) -> tuple[torch.Tensor, dict[str, float]]:
        import torch

        logprobs = token_logprobs(model, batch)
        weights = token_weights(batch, self.span_weights)
        metrics = {"tokens": float((weights > 0).sum())}
        with torch.no_grad():
            for kind in ("think", "action", "action_type", "param"):
                mask = batch.spans.mask(kind)
                metrics[f"nll_{kind}"] = float(-(logprobs * mask).sum() / mask.sum().clamp(min=1))
        return sft_loss(logprobs, weights), metrics


def train_sft(config: SFTConfig, *, eval_hooks: Sequence[EvalHook] = ()) -> Path:
    """Run Stage I as configured (resuming from `out_dir` when `resume` says so); returns the final model dir."""
    import itertools

    from uivenus.agent.policies.transformers_local import load_processor

    processor = load_processor(config.model)
    train_stream = stream_for(config, config.sources, processor)
    hooks = list(eval_hooks)
    if config.eval_sources:

        def batches() -> Iterator[Batch]:
            stream = stream_for(config, config.eval_sources, processor, where="eval_sources",
                                shuffle=False)  # from the start every time
            stream.shard(trainer.accelerator.process_index, trainer.accelerator.num_processes)
            return itertools.islice(iter(stream), config.eval_batches)

        hooks.append(loss_eval_hook(batches))
    trainer = Trainer(config, SFTLoss(dict(config.span_weights)), train_stream, processor=processor,
                      eval_hooks=hooks)
    return trainer.train()


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m uivenus.train.sft CONFIG.yaml [key=value ...]`: train and print the final model directory."""
    stage_main(argv, __doc__, SFTConfig, train_sft)


if __name__ == "__main__":
    main()
