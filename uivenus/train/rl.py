"""Stage II, step-level offline RL: one expert per domain (grounding, CAPTCHA, mobile, web, desktop).

For every step sample of the domain's data the policy draws k replies; each is scored against the sample's
reference action with the action rewards of `uivenus.verify.rewards` (format, type, point-in-box or Gaussian,
text F1, direction, refusal on negative items) — with `reward_from: verification`, that agreement is signed and
scaled by what verification said of the recorded step (its label and the trajectory's trace outcome), so agreeing
with a step of a failed trajectory is pushed down; the k rewards become group-normalised advantages (GRPO, or RLOO's
leave-one-out baseline) for a clipped policy-gradient loss, with an optional KL penalty to a frozen reference.
The ratio is taken against the sampler's own log-probabilities, so a served sampler's drift is clipped too.

    python -m uivenus.train.rl configs/rl_grounding.yaml [key=value ...]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from uivenus.train.collate import Batch
from uivenus.train.config import ConfigError
from uivenus.train.losses import ADVANTAGE_METHODS, KL_ESTIMATORS, clipped_pg_loss, group_advantages, kl_penalty
from uivenus.train.samples import ChatSample, Domain
from uivenus.train.sampling import Rollout, Sampler, SamplingConfig, batch_prompts, make_sampler, score_rollouts
from uivenus.train.sources import SourceSpec
from uivenus.train.sources.trajectories import VERIFICATION_META
from uivenus.train.trainer import TrainConfig, Trainer, TrainError, load_model, stage_main, stream_for, token_logprobs
from uivenus.train.weight_sync import weight_sync_for
from uivenus.verify.rewards import POINT_SCORERS, RewardBreakdown, RewardWeights, action_reward, verification_value

if TYPE_CHECKING:
    import torch

__all__ = ["REWARD_SOURCES", "RLConfig", "RLLoss", "RewardedRollouts", "frozen_model", "is_sharded", "main", "train_rl",
           "unwrap"]


@dataclass(frozen=True)
class RLConfig(TrainConfig):
    """Stage II: the shared settings, the domain's data, and how replies are sampled, rewarded and optimised.

    `domain` None trains on every sample of `sources`; set, it trains that domain's expert on its samples only.
    `reference` is the frozen model of the KL penalty (default: the starting checkpoint `model`).
    """

    sources: tuple[SourceSpec, ...] = ()
    domain: Domain | None = None
    sampling: SamplingConfig = SamplingConfig(k=4)
    generation_batch: int = 8
    method: Literal["grpo", "rloo"] = "grpo"
    clip_eps: float = 0.2
    clip_eps_high: float | None = None
    kl_coef: float = 0.0
    kl_kind: Literal["k1", "k2", "k3"] = "k3"
    reference: str | None = None
    reward: RewardWeights = RewardWeights()
    point: Literal["gaussian", "box"] = "gaussian"
    reward_from: Literal["reference", "verification"] = "reference"  # see REWARD_SOURCES

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.sources:
            raise ConfigError("sources must name at least one source of samples with reference actions "
                              "(kind: grounding, captcha, trajectories, ...)")
        if self.sampling.k < 2:
            raise ConfigError(f"sampling.k must be >= 2: advantages compare the k replies to one prompt, "
                              f"got {self.sampling.k}")
        if self.method not in ADVANTAGE_METHODS or self.kl_kind not in KL_ESTIMATORS or self.point not in POINT_SCORERS:
            raise ConfigError(f"method, kl_kind, point must be one of {list(ADVANTAGE_METHODS)}, "
                              f"{list(KL_ESTIMATORS)}, {list(POINT_SCORERS)}")
        if self.clip_eps <= 0 or (self.clip_eps_high is not None and self.clip_eps_high <= 0):
            raise ConfigError(f"clip_eps (and clip_eps_high) must be positive, got {self.clip_eps}, "
                              f"{self.clip_eps_high}")
        if self.kl_coef < 0 or self.generation_batch < 1:
            raise ConfigError(f"kl_coef must be >= 0 and generation_batch >= 1, got {self.kl_coef}, "
                              f"{self.generation_batch}")


def _verified(breakdown: RewardBreakdown, sample: ChatSample) -> RewardBreakdown:
    """The action reward scaled by what verification said of the recorded step (`verification_value`, in
    [-1, 1]): agreeing with a correct step of a successful trajectory earns, agreeing with a wrong step of a failed
    one costs; a sample without verification keeps its action reward."""
    verdict = sample.meta.get(VERIFICATION_META) or {}
    value = verification_value(verdict.get("step_label"), verdict.get("outcome"))
    if value is None:
        return breakdown
    return replace(breakdown, total=breakdown.total * value, detail={**breakdown.detail, "verification": value})


#: Where a reply's reward comes from (`RLConfig.reward_from`): agreement with the recorded action alone, or that
#: agreement signed and scaled by the recorded step's verification (step label and trace outcome).
REWARD_SOURCES: Mapping[str, Callable[[RewardBreakdown, ChatSample], RewardBreakdown]] = MappingProxyType({
    "reference": lambda breakdown, sample: breakdown, "verification": _verified,
})


@dataclass(frozen=True)
class RewardedRollouts:
    """One batch's rollouts (k per usable sample, grouped) with their reward breakdowns."""

    rollouts: tuple[Rollout, ...]
    rewards: tuple[RewardBreakdown, ...]
    skipped: int = 0


def unwrap(model: Any) -> Any:
    """The model inside accelerate's wrappers (DDP, FSDP, compiled): what `generate` must be called on."""
    from accelerate.utils import extract_model_from_parallel

    return extract_model_from_parallel(model)


def is_sharded(model: Any) -> bool:
    """Whether a model in training is sharded with FSDP2 (`fully_shard`, as accelerate's FSDP plugin does)."""
    from torch.distributed.fsdp import FSDPModule

    return isinstance(model, FSDPModule)


def frozen_model(path: str | Path, dtype: str, device: Any, *, shard_like: Any = None) -> Any:
    """A checkpoint loaded for scoring only (reference, teacher): eval mode, no gradients, on `device`.

    When the model in training (`shard_like`) is sharded with FSDP2, so is this one (each of its `_no_split_modules`
    blocks, then the root, over all processes): a rank keeps 1/N of it on the device, not a whole copy. It is read
    on the CPU first (each rank reads the checkpoint), and every rank must then call it equally often, since each
    forward gathers every block's shards from all ranks.
    """
    model = load_model(path, dtype).eval()
    model.requires_grad_(False)
    if shard_like is None or not is_sharded(shard_like):
        return model.to(device)
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh(torch.device(device).type, (dist.get_world_size(),))
    blocks = set(getattr(model, "_no_split_modules", None) or ())
    for module in model.modules():
        if type(module).__name__ in blocks:
            fully_shard(module, mesh=mesh)
    return fully_shard(model, mesh=mesh, reshard_after_forward=True)  # the root too: nothing stays gathered


class RLLoss:
    """The Stage II loss as a `Trainer` plug: sample and reward (`rollout`), then advantages and the clipped policy
    gradient (+ KL) under the current weights (`loss`), which may be taken again on the same rollouts."""

    def __init__(self, config: RLConfig, processor: Any) -> None:
        self.config, self.processor = config, processor
        self._sampler: Sampler | None = None
        self._reference: Any = None

    def usable(self, sample: ChatSample) -> bool:
        """A sample can be rewarded: it has a reference action and belongs to the configured domain."""
        return sample.reference is not None and self.config.domain in (None, sample.domain)

    def _reference_model(self, device: Any, shard_like: Any = None) -> Any:
        if self._reference is None:
            self._reference = frozen_model(self.config.reference or self.config.model, self.config.dtype, device,
                                           shard_like=shard_like)
        return self._reference

    def rollout(self, model: Any, batch: Batch) -> RewardedRollouts:
        """k sampled replies to every usable sample of `batch`, each with its action reward."""
        config = self.config
        rows = [i for i, s in enumerate(batch.samples) if self.usable(s)]
        samples = [batch.samples[i] for i in rows]
        if not samples:
            domain = f" of domain {config.domain}" if config.domain else ""
            raise TrainError(f"no sample of this batch has a reference action{domain}; Stage II needs sources "
                             "with references (grounding, captcha, trajectories)")
        if self._sampler is None:
            self._sampler = make_sampler(config.sampling, unwrap(model), self.processor,
                                         batch_size=config.generation_batch)
        prompts = batch_prompts(self.processor, batch)
        rollouts = tuple(self._sampler.sample(samples, [prompts[i] for i in rows]))
        return RewardedRollouts(rollouts, tuple(map(self.reward, rollouts)),
                                skipped=len(batch.samples) - len(samples))

    def reward(self, rollout: Rollout) -> RewardBreakdown:
        """The reply's reward: its action reward against the sample's reference, from `config.reward_from`."""
        config = self.config
        breakdown = action_reward(rollout.text, rollout.sample.reference, config.reward, point=config.point)
        return REWARD_SOURCES[config.reward_from](breakdown, rollout.sample)

    def loss(self, model: Any, rewarded: RewardedRollouts) -> tuple[torch.Tensor, dict[str, float]]:
        """The clipped policy-gradient loss (+ KL) of rewarded rollouts under the model's current weights."""
        import torch

        config = self.config
        temperature = config.sampling.temperature  # the sampler's log-probs, the ratio and the KL: all at one T
        scored = score_rollouts(model, self.processor, rewarded.rollouts, temperature=temperature)
        totals = torch.tensor([r.total for r in rewarded.rewards])
        advantages = group_advantages(totals, config.sampling.k, config.method).to(scored.logp.device)
        loss = clipped_pg_loss(scored.logp, scored.sampler_logp, advantages, scored.mask, config.clip_eps,
                               config.clip_eps_high)
        ratio = torch.exp(scored.logp.detach() - scored.sampler_logp)
        high = config.clip_eps if config.clip_eps_high is None else config.clip_eps_high
        clipped = ((ratio < 1 - config.clip_eps) | (ratio > 1 + high)) & scored.mask
        rewards = rewarded.rewards
        metrics = {
            "reward": float(totals.mean()), "reward_std": float(totals.std()),
            "reward_format": sum(r.format for r in rewards) / len(rewards),
            "reward_type": sum(r.type for r in rewards) / len(rewards),
            "reward_params": sum(r.params for r in rewards) / len(rewards),
            "clip_fraction": float(clipped.sum() / scored.mask.sum().clamp(min=1)),
            "completion_tokens": float(scored.mask.sum(dim=1).float().mean()),
            "skipped": float(rewarded.skipped),
        }
        if config.kl_coef:
            with torch.no_grad():
                reference = token_logprobs(self._reference_model(scored.logp.device, model), scored.batch,
                                           temperature=temperature)[:, -scored.width:]
            kl = kl_penalty(scored.logp, reference, scored.mask, config.kl_kind)
            loss = loss + config.kl_coef * kl
            metrics["kl"] = float(kl.detach())
        return loss, metrics

    def __call__(self, model: Any, batch: Batch) -> tuple[torch.Tensor, dict[str, float]]:
        return self.loss(model, self.rollout(model, batch))


def train_rl(config: RLConfig) -> Path:
    """Run Stage II as configured (resuming from `out_dir` when `resume` says so); returns the final model dir."""
    from uivenus.agent.policies.transformers_local import load_processor

    processor = load_processor(config.model)
    sync = weight_sync_for(config.sampling)
    trainer = Trainer(config, RLLoss(config, processor), stream_for(config, config.sources, processor),
                      processor=processor, step_hooks=[sync] if sync else [])
    return trainer.train()


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m uivenus.train.rl CONFIG.yaml [key=value ...]`: train and print the final model directory."""
    stage_main(argv, __doc__, RLConfig, train_rl)


if __name__ == "__main__":
    main()
