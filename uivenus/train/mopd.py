"""Stage III, multi-teacher on-policy distillation (MOPD): the Stage II experts distilled into one policy.

The student samples its own replies; each sample's teacher is the expert of its domain; the teacher scores the
student's tokens, and the per-token advantage is log π_T − log π_θ (reverse KL), optionally plus α times a
group-normalised outcome advantage, under importance weights truncated to [ε_low, ε_high] for the
sampler/trainer mismatch (`losses.mopd_loss`). UI-Venus-2's action-aware weighting decides where the signal
lands: nowhere on a reply whose action is right, hard on its parameter tokens when only a parameter is wrong, hard
on its type tokens when the type is wrong, lightly on the reasoning (`losses.action_aware_weights`, with strengths
`losses.ActionWeights` normalised by the tokens that carry the push).

The teacher may be told the correct action type: "(hint: the correct action type is Click)" ends the teacher's
last user message, never the student's. Each model encodes its own prompt with its own processor (so image-token
counts may differ) and log-probabilities are aligned on the completion tokens (`sampling.completion_view`).

    python -m uivenus.train.mopd configs/mopd.yaml [key=value ...]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from uivenus.actions.space import ActionSequence
from uivenus.agent.policies.base import Message
from uivenus.train.collate import Batch
from uivenus.train.config import ConfigError
from uivenus.train.losses import (
    MOPD_DIVERGENCES, ActionCorrectness, ActionWeights, action_aware_weights, full_reverse_kl, group_advantages,
    mopd_loss, sequence_mean,
)
from uivenus.train.rl import frozen_model, is_sharded, unwrap
from uivenus.train.samples import ChatSample, Domain
from uivenus.train.sampling import (
    Rollout, Sampler, SamplingConfig, batch_prompts, completion_view, encode_rollouts, make_sampler, score_rollouts,
)
from uivenus.train.sources import SourceSpec
from uivenus.train.trainer import (
    TrainConfig, Trainer, TrainError, stage_main, stream_for, token_log_distributions, token_logprobs,
)
from uivenus.train.weight_sync import weight_sync_for
from uivenus.verify.rewards import POINT_SCORERS, ReferenceAction, RewardWeights, action_reward

if TYPE_CHECKING:
    import torch

__all__ = ["MOPDConfig", "MOPDLoss", "TeacherBatch", "action_correctness", "action_hint", "main",
           "teacher_messages", "train_mopd"]


@dataclass(frozen=True)
class MOPDConfig(TrainConfig):
    """Stage III: the shared settings, the mixed data, one teacher checkpoint per domain, and the weighting.

    Samples of a domain without a teacher are skipped. `action_aware` False gives plain on-policy distillation
    (every completion token weighted 1); `action_weights` sets how hard each wrong case is pushed. `alpha` > 0 adds the
    outcome advantage of the action reward (`reward`, `point`), normalised over the k replies of a prompt, so it needs
    `sampling.k` >= 2. `divergence` picks the per-token reverse KL (`losses.MOPD_DIVERGENCES`): "sampled", the
    one-token estimate, or "full", the exact KL over the whole vocabulary at each position of the student's reply
    (B × width × V floats per model).
    """

    sources: tuple[SourceSpec, ...] = ()
    teachers: Mapping[Domain, str] = field(default_factory=dict)
    hint: bool = True
    action_aware: bool = True
    action_weights: ActionWeights = ActionWeights()
    alpha: float = 0.0
    eps_low: float = 0.5
    eps_high: float = 2.0
    sampling: SamplingConfig = SamplingConfig(k=1)
    generation_batch: int = 8
    reward: RewardWeights = RewardWeights()
    point: Literal["gaussian", "box"] = "gaussian"
    divergence: str = "sampled"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "teachers", MappingProxyType({Domain(d): str(p) for d, p in self.teachers.items()}))
        if not self.sources:
            raise ConfigError("sources must name at least one source of samples (kind: trajectories, grounding, ...)")
        if not self.teachers:
            raise ConfigError("teachers must map at least one domain (grounding, captcha, mobile, web, desktop) to "
                              "its expert checkpoint")
        if self.alpha < 0 or (self.alpha > 0 and self.sampling.k < 2):
            raise ConfigError(f"alpha must be >= 0, and an outcome advantage (alpha > 0) needs sampling.k >= 2; "
                              f"got alpha={self.alpha}, k={self.sampling.k}")
        if not 0 <= self.eps_low <= 1 <= self.eps_high:
            raise ConfigError(f"need 0 <= eps_low <= 1 <= eps_high, got {self.eps_low}, {self.eps_high}")
        if self.generation_batch < 1 or self.point not in POINT_SCORERS:
            raise ConfigError(f"generation_batch must be >= 1 and point one of {list(POINT_SCORERS)}; got "
                              f"{self.generation_batch}, {self.point!r}")
        if self.divergence not in MOPD_DIVERGENCES:
            raise ConfigError(f"divergence must be one of {list(MOPD_DIVERGENCES)}, got {self.divergence!r}")


# --- hints and correctness ------------------------------------------------------------------------

def action_hint(reference: ReferenceAction) -> str:
    """The line a teacher is told: the correct action type (every member's for a sequence), or that it must refuse."""
    if reference.negative:
        return "(hint: the target is not on the screen; the correct answer is a refusal)"
    action = reference.action
    members = action.actions if isinstance(action, ActionSequence) else (action,)
    names = ", ".join(member.type.value for member in members)
    return f"(hint: the correct action type{'s are' if len(members) > 1 else ' is'} {names})"


def teacher_messages(sample: ChatSample, hint: bool) -> tuple[Message, ...]:
    """The teacher's prompt: the student's, with the hint appended to the last user message when asked for."""
    if not hint or sample.reference is None:
        return sample.messages
    *earlier, last = sample.messages
    return (*earlier, Message(last.role, (*last.content, "\n" + action_hint(sample.reference))))


def action_correctness(text: str, reference: ReferenceAction | None) -> ActionCorrectness:
    """How a reply's action compares with the reference: points must fall in their target boxes, text reach the
    token-F1 threshold. Without a reference nothing is known right, which weighs like an unparseable reply."""
    if reference is None:
        return ActionCorrectness.UNPARSEABLE
    scores = action_reward(text, reference, point="box")
    if not scores.format:
        return ActionCorrectness.UNPARSEABLE
    if not scores.type:
        return ActionCorrectness.TYPE_WRONG
    return ActionCorrectness.CORRECT if scores.params >= 1.0 else ActionCorrectness.PARAM_WRONG


# --- the loss -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TeacherBatch:
    """The rollouts one teacher scores: their rows in the student batch and the teacher's own encoding of them."""

    domain: Domain
    rows: tuple[int, ...]
    batch: Batch


class MOPDLoss:
    """The Stage III loss as a `Trainer` plug: the student samples (`rollout`); the domain's teacher scores the
    samples and the action-aware, importance-weighted reverse KL is taken under the current weights (`loss`)."""

    def __init__(self, config: MOPDConfig, processor: Any) -> None:
        self.config, self.processor = config, processor
        self._sampler: Sampler | None = None
        self._teachers: dict[Domain, tuple[Any, Any]] = {}
        self._same_inputs: dict[Domain, bool] = {}

    def teacher(self, domain: Domain, device: Any = "cpu", shard_like: Any = None) -> tuple[Any, Any]:
        """(model, processor) of the domain's teacher, loaded on first use (sharded like the student `shard_like`
        under FSDP, `rl.frozen_model`); its vocabulary must be the student's."""
        from uivenus.agent.policies.transformers_local import load_processor

        if domain not in self._teachers:
            path = self.config.teachers[domain]
            processor = load_processor(path)
            if processor.tokenizer.get_vocab() != self.processor.tokenizer.get_vocab():
                raise TrainError(f"the {domain} teacher {path} has another vocabulary than the student "
                                 f"{self.config.model}; token-level distillation needs one tokenizer")
            self._teachers[domain] = (frozen_model(path, self.config.dtype, device, shard_like=shard_like),
                                      processor)
            # the same image processing and template: an unhinted prompt encodes to the student's very inputs
            self._same_inputs[domain] = (processor.chat_template == self.processor.chat_template
                                         and processor.image_processor.to_dict()
                                         == self.processor.image_processor.to_dict())
        return self._teachers[domain]

    def rollout(self, model: Any, batch: Batch) -> tuple[Rollout, ...]:
        """k replies of the student to every sample whose domain has a teacher."""
        rows = [i for i, s in enumerate(batch.samples) if s.domain in self.config.teachers]
        if not rows:
            raise TrainError(f"no sample of this batch has a teacher (teachers for {sorted(self.config.teachers)}); "
                             "add a teacher for the data's domains or filter the sources")
        if self._sampler is None:
            self._sampler = make_sampler(self.config.sampling, unwrap(model), self.processor,
                                         batch_size=self.config.generation_batch)
        prompts = batch_prompts(self.processor, batch)
        return tuple(self._sampler.sample([batch.samples[i] for i in rows], [prompts[i] for i in rows]))

    def teacher_batches(self, rollouts: Sequence[Rollout], device: Any = "cpu",
                        student_batch: Batch | None = None, shard_like: Any = None) -> list[TeacherBatch]:
        """Per domain, its teacher's encoding of its rollouts: the teacher's processor, the (hinted) teacher prompt.

        A teacher that encodes like the student and gets no hint scores the student's own inputs: the student's
        batch when it covers every row, else the sampler's encoded prompts (nothing is encoded twice). Sharded
        teachers (`shard_like` under FSDP) need every rank to call each of them once: a teacher without rollouts on
        this rank gets a stand-in batch (the first rollout, `rows` empty), and the order is the teachers' order.
        """
        rows: dict[Domain, list[int]] = {}
        for index, rollout in enumerate(rollouts):
            rows.setdefault(rollout.sample.domain, []).append(index)
        if shard_like is not None and is_sharded(shard_like):
            rows = {domain: rows.get(domain, []) for domain in sorted(self.config.teachers)}
        out = []
        for domain, indices in rows.items():
            _, processor = self.teacher(domain, device, shard_like)
            part = [rollouts[i] for i in indices] or [rollouts[0]]
            hinted = self.config.hint and any(r.sample.reference is not None for r in part)
            if self._same_inputs[domain] and not hinted:
                whole = student_batch is not None and len(indices) == len(rollouts)
                batch = student_batch if whole else encode_rollouts(processor, part)
            else:
                batch = encode_rollouts(processor, part, messages=lambda s: teacher_messages(s, self.config.hint))
            out.append(TeacherBatch(domain, tuple(indices), batch.to(device)))
        return out

    def teacher_logps(self, rollouts: Sequence[Rollout], width: int, device: Any,
                      student_batch: Batch | None = None, shard_like: Any = None, *,
                      distributions: bool = False) -> torch.Tensor:
        """(B, width) teacher log-probabilities of the sampled tokens, right-aligned like the student's, at the
        sampling temperature like the student's: the tempered reverse KL is smallest when the student's logits are
        the teacher's, so the student learns the teacher's own distribution (a teacher at 1 against a student at
        T would train the student's logits to T times the teacher's). `distributions`: the teacher's whole
        next-token distributions instead, (B, width, V), at the same temperature."""
        import torch

        temperature = self.config.sampling.temperature
        parts = []
        with torch.inference_mode():  # a frozen teacher: no autograd bookkeeping at all, not even version counters
            for part in self.teacher_batches(rollouts, device, student_batch, shard_like):
                model, _ = self.teacher(part.domain, device, shard_like)
                part_width, _, _ = completion_view(part.batch)
                scores = (token_log_distributions(model, part.batch, part_width, temperature=temperature)
                          if distributions else
                          token_logprobs(model, part.batch, temperature=temperature)[:, -part_width:])
                parts.append((part.rows, part_width, scores))
        out = torch.zeros(len(rollouts), width, *parts[0][2].shape[2:], device=device)
        for rows, part_width, scores in parts:
            if rows:
                out[list(rows), width - part_width:] = scores.to(device)
        return out

    def loss(self, model: Any, rollouts: Sequence[Rollout]) -> tuple[torch.Tensor, dict[str, float]]:
        import torch

        config = self.config
        full = MOPD_DIVERGENCES[config.divergence].distributions
        scored = score_rollouts(model, self.processor, rollouts, temperature=config.sampling.temperature,
                                distributions=full)
        device = scored.logp.device
        teacher_scores = self.teacher_logps(rollouts, scored.width, device, scored.batch, model, distributions=full)
        teacher_dist = teacher_scores if full else None
        teacher = (teacher_scores.gather(-1, scored.batch.input_ids[:, -scored.width:].unsqueeze(-1)).squeeze(-1)
                   if full else teacher_scores)
        correctness = [action_correctness(r.text, r.sample.reference) for r in rollouts]
        weights = (action_aware_weights(scored.completion_spans(), correctness, config.action_weights).to(device)
                   if config.action_aware else None)
        outcome = None
        if config.alpha:
            totals = torch.tensor([action_reward(r.text, r.sample.reference, config.reward, point=config.point).total
                                   if r.sample.reference is not None else 0.0 for r in rollouts])
            outcome = group_advantages(totals, config.sampling.k).to(device)
        loss = mopd_loss(scored.logp, teacher, scored.sampler_logp, scored.mask, weights, outcome, config.alpha,
                         config.eps_low, config.eps_high, divergence=config.divergence,
                         student_log_dist=scored.log_dist, teacher_log_dist=teacher_dist)
        with torch.no_grad():
            ratio = torch.exp(scored.logp - scored.sampler_logp)
            dropped = ((ratio < config.eps_low) | (ratio > config.eps_high)) & scored.mask
            tokens = scored.mask.sum().clamp(min=1)
            metrics = {
                "reverse_kl": float(sequence_mean(scored.logp - teacher, scored.mask)),
                "is_dropped": float(dropped.sum() / tokens),
                # |log π_θ − log μ| per token: 0 while the sampler holds the trainer's weights, growing as it lags
                "sampler_mismatch": float(((scored.logp - scored.sampler_logp).abs() * scored.mask).sum() / tokens),
                "weighted_tokens": float(((weights > 0) & scored.mask).sum() / tokens) if weights is not None else 1.0,
                "completion_tokens": float(scored.mask.sum(dim=1).float().mean()),
            }
            if full:  # the exact KL the loss takes, beside the one-token estimate above
                metrics["full_kl"] = float(sequence_mean(full_reverse_kl(scored.log_dist, teacher_dist), scored.mask))
            metrics |= {kind.value: sum(c is kind for c in correctness) / len(correctness)
                        for kind in ActionCorrectness}
        return loss, metrics

    def __call__(self, model: Any, batch: Batch) -> tuple[torch.Tensor, dict[str, float]]:
        rollouts = self.rollout(model, batch)
        loss, metrics = self.loss(model, rollouts)
        return loss, {**metrics, "skipped": float(len(batch.samples) - len(rollouts) // self.config.sampling.k)}


def train_mopd(config: MOPDConfig) -> Path:
    """Run Stage III as configured (resuming from `out_dir` when `resume` says so); returns the final model dir."""
    from uivenus.agent.policies.transformers_local import load_processor

    processor = load_processor(config.model)
    sync = weight_sync_for(config.sampling)
    trainer = Trainer(config, MOPDLoss(config, processor), stream_for(config, config.sources, processor),
                      processor=processor, step_hooks=[sync] if sync else [])
    return trainer.train()


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m uivenus.train.mopd CONFIG.yaml [key=value ...]`: train and print the final model directory."""
    stage_main(argv, __doc__, MOPDConfig, train_mopd)


if __name__ == "__main__":
    main()
