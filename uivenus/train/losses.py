"""The losses of Stages II and III as pure tensor functions, so each can be checked against a hand or analytic answer.

Stage II (step-level RL) scores k samples per prompt and turns their rewards into group-normalised advantages
(GRPO) or leave-one-out baselines (RLOO) for a clipped policy-gradient loss, optionally with a KL penalty to a
frozen reference. Stage III (MOPD, docs/ANCHORS.md "Training") minimises

    L = −E[(1/|y|) Σ_t w_t · Â_t · log π_θ(y_t)],  Â_t = sg[log π_T(y_t) − log π_θ(y_t)] + α·Â_outcome,

where w_t multiplies the truncated importance weight sg[π_θ/μ] (zero outside [ε_low, ε_high]) by UI-Venus-2's
action-aware weight: no signal on a response whose action is right, a push stronger than plain distillation's on
the parameter tokens when only parameters are wrong, on the type tokens (not the now meaningless parameters) when
the type is wrong, and a small weight on the reasoning; the push is normalised by the tokens that carry it, not
diluted by the reply's length (`ActionWeights`). The reverse-KL term is one of `MOPD_DIVERGENCES`: "sampled" (the
above, one token's estimate) or "full" (the exact Σ_v π_θ(v)(log π_θ(v) − log π_T(v)) at each position of the
student's own reply, as TRL's GKD takes it), under the same weights. Token tensors are (batch, completion length);
`mask` is 1 on real completion tokens, 0 on padding.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

    from uivenus.train.spans import TokenSpans

__all__ = [
    "ADVANTAGE_METHODS", "KL_ESTIMATORS", "MOPD_DIVERGENCES", "ActionCorrectness", "ActionWeights", "Divergence",
    "LossError", "action_aware_weights", "clipped_pg_loss", "full_reverse_kl", "group_advantages", "kl_penalty",
    "mopd_loss", "reverse_kl_advantages", "sequence_mean", "truncated_importance_weights",
]


class LossError(ValueError):
    """Tensors of the wrong shape or arguments out of range were handed to a loss; the message says which."""


def _check_same_shape(**tensors: Tensor) -> None:
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    if len(set(shapes.values())) > 1:
        raise LossError(f"these tensors must share one (batch, tokens) shape, got {shapes}")


def sequence_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean over sequences of each sequence's masked token mean, (1/B) Σ_b (1/|y_b|) Σ_t; empty rows count 0."""
    mask = mask.to(values.dtype)
    lengths = mask.sum(dim=-1).clamp(min=1.0)
    return ((values * mask).sum(dim=-1) / lengths).mean()


# --- Stage II: group advantages, clipped policy gradient, KL to a reference -------------------------

def _grpo(rewards: Tensor, eps: float) -> Tensor:
    mean = rewards.mean(dim=1, keepdim=True)
    return (rewards - mean) / (rewards.std(dim=1, keepdim=True) + eps)


def _rloo(rewards: Tensor, eps: float) -> Tensor:
    k = rewards.shape[1]
    others = (rewards.sum(dim=1, keepdim=True) - rewards) / (k - 1)
    return rewards - others


#: How a group of k rewards becomes k advantages: GRPO normalises by the group's mean and (unbiased) standard
#: deviation; RLOO subtracts the mean of the other k−1 rewards.
ADVANTAGE_METHODS: Mapping[str, Callable[[Tensor, float], Tensor]] = MappingProxyType({
    "grpo": _grpo,
    "rloo": _rloo,
})


def group_advantages(rewards: Tensor, group_size: int, method: str = "grpo", eps: float = 1e-4) -> Tensor:
    """Advantages for `rewards` laid out as consecutive groups of `group_size` samples of the same prompt."""
    scorer = ADVANTAGE_METHODS.get(method)
    if scorer is None:
        raise LossError(f"unknown advantage method {method!r}; use one of {', '.join(ADVANTAGE_METHODS)}")
    if group_size < 2 or rewards.dim() != 1 or rewards.numel() % group_size:
        raise LossError(f"rewards must be a 1-D tensor of whole groups of >= 2 samples, got shape "
                        f"{tuple(rewards.shape)} with group_size {group_size}")
    return scorer(rewards.view(-1, group_size).float(), eps).view(-1)


def _per_token(advantages: Tensor, like: Tensor) -> Tensor:
    """A sequence-level (B,) advantage broadcast over tokens, or a token-level (B, T) one as it is."""
    return advantages.unsqueeze(-1).expand_as(like) if advantages.dim() == 1 else advantages


def clipped_pg_loss(logp: Tensor, old_logp: Tensor, advantages: Tensor, mask: Tensor, clip_eps: float = 0.2,
                    clip_eps_high: float | None = None) -> Tensor:
    """PPO/GRPO surrogate −min(r·A, clip(r, 1−ε, 1+ε_high)·A), r = π_θ/π_old, as a sequence mean.

    `clip_eps_high` (DAPO's clip-higher) defaults to `clip_eps`; `advantages` is (B,) or (B, T).
    """
    import torch

    _check_same_shape(logp=logp, old_logp=old_logp, mask=mask)
    high = clip_eps if clip_eps_high is None else clip_eps_high
    if clip_eps <= 0 or high <= 0:
        raise LossError(f"clip ranges must be positive, got clip_eps={clip_eps}, clip_eps_high={high}")
    ratio = torch.exp(logp - old_logp.detach())
    adv = _per_token(advantages, logp).detach()
    surrogate = torch.minimum(ratio * adv, ratio.clamp(1 - clip_eps, 1 + high) * adv)
    return -sequence_mean(surrogate, mask)


def _k1(logp: Tensor, ref_logp: Tensor) -> Tensor:
    return logp - ref_logp


def _k2(logp: Tensor, ref_logp: Tensor) -> Tensor:
    return 0.5 * (logp - ref_logp) ** 2


def _k3(logp: Tensor, ref_logp: Tensor) -> Tensor:
    delta = ref_logp - logp
    return delta.exp() - delta - 1


#: Per-token estimators of KL(π_θ‖π_ref) from samples of π_θ (Schulman's k1, k2, k3); k3 is unbiased and ≥ 0.
KL_ESTIMATORS: Mapping[str, Callable[[Tensor, Tensor], Tensor]] = MappingProxyType({
    "k1": _k1, "k2": _k2, "k3": _k3,
})


def kl_penalty(logp: Tensor, ref_logp: Tensor, mask: Tensor, kind: str = "k3") -> Tensor:
    """The sequence mean of a per-token KL estimate between the policy and a frozen reference."""
    estimator = KL_ESTIMATORS.get(kind)
    if estimator is None:
        raise LossError(f"unknown KL estimator {kind!r}; use one of {', '.join(KL_ESTIMATORS)}")
    _check_same_shape(logp=logp, ref_logp=ref_logp, mask=mask)
    return sequence_mean(estimator(logp, ref_logp.detach()), mask)


# --- Stage III: MOPD -------------------------------------------------------------------------------

def reverse_kl_advantages(teacher_logp: Tensor, student_logp: Tensor) -> Tensor:
    """Â_t = sg[log π_T(y_t) − log π_θ(y_t)]: the negative per-token reverse KL on the student's own tokens."""
    _check_same_shape(teacher_logp=teacher_logp, student_logp=student_logp)
    return (teacher_logp - student_logp).detach()


def truncated_importance_weights(trainer_logp: Tensor, sampler_logp: Tensor, eps_low: float = 0.5,
                                 eps_high: float = 2.0) -> Tensor:
    """sg[π_θ/μ] where it lies in [eps_low, eps_high], else 0 (MiMo: a token the sampler and trainer disagree on
    that much carries no trustworthy signal, so it is dropped rather than clipped)."""
    import torch

    if not 0 <= eps_low <= 1 <= eps_high:
        raise LossError(f"need 0 <= eps_low <= 1 <= eps_high, got eps_low={eps_low}, eps_high={eps_high}")
    _check_same_shape(trainer_logp=trainer_logp, sampler_logp=sampler_logp)
    ratio = torch.exp(trainer_logp.detach() - sampler_logp.detach())
    return torch.where((ratio >= eps_low) & (ratio <= eps_high), ratio, torch.zeros_like(ratio))


class ActionCorrectness(StrEnum):
    """How a sampled response's action compares with the reference, which decides where MOPD pushes."""

    CORRECT = "correct"          # type and parameters right: no signal at all
    PARAM_WRONG = "param_wrong"  # right type, a parameter wrong: the parameter tokens
    TYPE_WRONG = "type_wrong"    # wrong type: the type tokens; its parameters belong to the wrong action
    UNPARSEABLE = "unparseable"  # no action could be read: no span is known good, so the whole completion


@dataclass(frozen=True)
class ActionWeights:
    """How hard Eq. (1) pushes in each case, relative to plain on-policy distillation, which gives a reply a total
    weight of 1 (each of its |y| tokens 1/|y| under the loss's 1/|y|).

    `param` and `type` are the total weights of the pushed span, spread over its tokens (each gets
    strength·|y|/|span|, so a short span is pushed hard however long the reply); values > 1 push harder than plain
    distillation pushes the whole reply. `think` is the per-token weight of the reasoning, as a fraction of plain
    distillation's, so a long reasoning never outweighs the action.
    """

    param: float = 2.0
    type: float = 2.0
    think: float = 0.1

    def __post_init__(self) -> None:
        if min(self.param, self.type, self.think) < 0:
            raise LossError(f"action weights must be >= 0, got param={self.param}, type={self.type}, "
                            f"think={self.think}")


def _spread(span: Tensor, lengths: Tensor, strength: float) -> Tensor:
    """`strength` spread over each row's span tokens, scaled by |y| so the loss's 1/|y| leaves strength/|span|."""
    counts = span.sum(dim=-1, keepdim=True).clamp(min=1.0)
    return span * (strength * lengths / counts)


def action_aware_weights(spans: TokenSpans, correctness: Sequence[ActionCorrectness | str],
                         weights: ActionWeights = ActionWeights()) -> Tensor:
    """Per-token weights (B, L) over the positions `spans` covers, from each response's correctness.

    Correct → 0 everywhere; parameter wrong → `weights.param` spread over the parameter tokens; type wrong →
    `weights.type` over the type tokens only (a bare grounding answer has no type tokens: its numbers are the
    click-or-refuse decision, so its action span); both wrong cases put `weights.think` on each reasoning token.
    Unparseable → 1 on every token the model produced, as plain distillation (the response failed the format, so
    nothing in it is known to be right). Padding and prompt weigh 0.
    """
    import torch

    produced = spans.assistant
    if produced.dim() != 2 or len(correctness) != produced.shape[0]:
        raise LossError(f"one correctness per response: got {len(correctness)} for span masks of shape "
                        f"{tuple(produced.shape)}")
    real = produced.float()
    lengths = real.sum(dim=-1, keepdim=True)
    think = weights.think * spans.think.float()
    named = spans.action_type.any(dim=-1, keepdim=True)
    type_tokens = torch.where(named, spans.action_type, spans.action).float()
    param_tokens = spans.param.float()
    by_kind = {
        ActionCorrectness.CORRECT: torch.zeros_like(think),
        ActionCorrectness.PARAM_WRONG: _spread(param_tokens, lengths, weights.param) + think,
        ActionCorrectness.TYPE_WRONG: _spread(type_tokens, lengths, weights.type) + think,
        ActionCorrectness.UNPARSEABLE: real,
    }
    rows = [by_kind[ActionCorrectness(kind)][row] for row, kind in enumerate(correctness)]
    return torch.stack(rows) * real


def full_reverse_kl(student_log_dist: Tensor, teacher_log_dist: Tensor) -> Tensor:
    """KL(π_θ‖π_T) = Σ_v π_θ(v)(log π_θ(v) − log π_T(v)) per position, from (B, L, V) log-distributions; exact, so
    differentiable in the student's logits with no sampling variance (the teacher's side is a constant)."""
    if student_log_dist.dim() != 3:
        raise LossError(f"full_reverse_kl takes (batch, tokens, vocabulary) log-distributions, got shape "
                        f"{tuple(student_log_dist.shape)}")
    _check_same_shape(student_log_dist=student_log_dist, teacher_log_dist=teacher_log_dist)
    return (student_log_dist.exp() * (student_log_dist - teacher_log_dist.detach())).sum(dim=-1)


def _sampled_term(student_logp: Tensor, teacher_logp: Tensor) -> Tensor:
    return -reverse_kl_advantages(teacher_logp, student_logp) * student_logp


@dataclass(frozen=True)
class Divergence:
    """A per-token reverse-KL term of Stage III (B, L) whose gradient is (an estimate of) ∇ KL(π_θ‖π_T) there.

    `distributions` says what it takes: the whole (B, L, V) log-distributions, or the sampled tokens' (B, L) log-probs.
    """

    term: Callable[[Tensor, Tensor], Tensor]
    distributions: bool


#: "sampled": sg[log π_θ(y_t) − log π_T(y_t)]·log π_θ(y_t), the one-sample policy-gradient estimate (cheap; high
#: variance off the teacher's support). "full": the exact per-position KL over the vocabulary (B × L × V floats).
MOPD_DIVERGENCES: Mapping[str, Divergence] = MappingProxyType({
    "sampled": Divergence(_sampled_term, distributions=False),
    "full": Divergence(full_reverse_kl, distributions=True),
})


def mopd_loss(student_logp: Tensor, teacher_logp: Tensor, sampler_logp: Tensor, mask: Tensor,
              weights: Tensor | None = None, outcome_adv: Tensor | None = None, alpha: float = 0.0,
              eps_low: float = 0.5, eps_high: float = 2.0, *, divergence: str = "sampled",
              student_log_dist: Tensor | None = None, teacher_log_dist: Tensor | None = None) -> Tensor:
    """L = E[(1/|y|) Σ_t w_t·(D_t − α·Â_outcome·log π_θ(y_t))], w_t = sg[π_θ/μ]·(action-aware weight, 1 if None).

    D_t is the `divergence`'s term (`MOPD_DIVERGENCES`). For "sampled", D_t = −sg[log π_T(y_t) − log π_θ(y_t)]·
    log π_θ(y_t), whose gradient on on-policy samples is ∇ KL(π_θ‖π_T) (the score function's expectation is zero);
    "full" takes the exact KL from the log-distributions (B, L, V), which it then needs. `outcome_adv` (B,) adds α
    times a sequence-level outcome advantage as a policy-gradient term on the sampled tokens.
    """
    _check_same_shape(student_logp=student_logp, teacher_logp=teacher_logp, sampler_logp=sampler_logp, mask=mask)
    chosen = MOPD_DIVERGENCES.get(divergence)
    if chosen is None:
        raise LossError(f"unknown divergence {divergence!r}; use one of {', '.join(MOPD_DIVERGENCES)}")
    if chosen.distributions and (student_log_dist is None or teacher_log_dist is None):
        raise LossError(f"divergence {divergence!r} needs the student's and the teacher's log-distributions "
                        "(student_log_dist, teacher_log_dist)")
    term = (chosen.term(student_log_dist, teacher_log_dist) if chosen.distributions
            else chosen.term(student_logp, teacher_logp))
    _check_same_shape(term=term, mask=mask)
    if outcome_adv is not None and alpha:
        term = term - alpha * _per_token(outcome_adv, term).detach() * student_logp
    w = truncated_importance_weights(student_logp, sampler_logp, eps_low, eps_high)
    if weights is not None:
        _check_same_shape(weights=weights, mask=mask)
        w = w * weights.detach()
    return sequence_mean(w * term, mask)
