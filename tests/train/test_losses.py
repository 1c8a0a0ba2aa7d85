"""The Stage II and III losses against answers worked out by hand or in closed form."""

from __future__ import annotations

import math

import pytest
import torch

from uivenus.train.losses import (
    ActionCorrectness, ActionWeights, LossError, action_aware_weights, clipped_pg_loss, full_reverse_kl,
    group_advantages, kl_penalty, mopd_loss, reverse_kl_advantages, sequence_mean, truncated_importance_weights,
)
from uivenus.train.spans import TokenSpans


def test_grpo_normalises_each_group_by_its_mean_and_unbiased_std() -> None:
    adv = group_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0]), 4, "grpo", eps=0.0)
    std = math.sqrt(4 * 0.25 / 3)  # deviations of ±0.5, unbiased over 4 samples
    assert adv.tolist() == pytest.approx([0.5 / std, -0.5 / std, -0.5 / std, 0.5 / std])
    alike = group_advantages(torch.tensor([3.0, 0.0, 2.0, 2.0, 2.0, 2.0]), 3)
    assert alike[3:].tolist() == [0.0] * 3  # a group that all scored alike teaches nothing


def test_rloo_subtracts_the_mean_of_the_other_samples() -> None:
    adv = group_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0, 3.0, 1.0]), 3, "rloo")
    # group 1: [1,0,0] -> 1-0, 0-0.5, 0-0.5 ; group 2: [1,3,1] -> 1-2, 3-1, 1-2
    assert adv.tolist() == pytest.approx([1.0, -0.5, -0.5, -1.0, 2.0, -1.0])


def test_group_advantages_refuse_ragged_groups_and_unknown_methods() -> None:
    with pytest.raises(LossError, match="whole groups"):
        group_advantages(torch.zeros(5), 2)
    with pytest.raises(LossError, match="grpo, rloo"):
        group_advantages(torch.zeros(4), 2, "ppo")


def test_clipped_pg_loss_by_hand() -> None:
    old = torch.zeros(2, 3)
    # ratios 1.5 and 0.5 with A=+1 (row 0) and A=-1 (row 1); the last token of row 1 is padding
    logp = torch.log(torch.tensor([[1.5, 0.5, 1.0], [1.5, 0.5, 9.0]])).requires_grad_()
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    loss = clipped_pg_loss(logp, old, torch.tensor([1.0, -1.0]), mask, clip_eps=0.2)
    # row 0: min(1.5, 1.2)=1.2, min(0.5, 0.8)=0.5, 1.0 -> mean 2.7/3 ; row 1: min(-1.5,-1.2)=-1.5, min(-0.5,-0.8)=-0.8
    expected = -((1.2 + 0.5 + 1.0) / 3 + (-1.5 - 0.8) / 2) / 2
    assert loss.item() == pytest.approx(expected)
    loss.backward()
    grad = logp.grad
    assert grad[0, 0] == 0 and grad[1, 1] == 0 and grad[1, 2] == 0  # clipped tokens and padding get no gradient
    assert grad[0, 1] == pytest.approx(-0.5 / 3 / 2) and grad[1, 0] == pytest.approx(1.5 / 2 / 2)


def test_clip_higher_widens_only_the_upper_bound() -> None:
    logp = torch.log(torch.tensor([[1.5]]))
    loss = clipped_pg_loss(logp, torch.zeros(1, 1), torch.tensor([1.0]), torch.ones(1, 1), 0.2, clip_eps_high=0.28)
    assert loss.item() == pytest.approx(-1.28)


def test_kl_penalty_estimators_by_hand() -> None:
    logp, ref = torch.tensor([[math.log(0.5), math.log(0.2)]]), torch.tensor([[math.log(0.25), math.log(0.2)]])
    mask = torch.ones(1, 2)
    d = math.log(0.25) - math.log(0.5)
    assert kl_penalty(logp, ref, mask, "k3").item() == pytest.approx((math.exp(d) - d - 1) / 2)
    assert kl_penalty(logp, ref, mask, "k1").item() == pytest.approx(-d / 2)
    assert kl_penalty(logp, ref, mask, "k2").item() == pytest.approx(0.5 * d * d / 2)
    with pytest.raises(LossError, match="k1, k2, k3"):
        kl_penalty(logp, ref, mask, "k4")


def test_sequence_mean_weighs_each_response_alike_whatever_its_length() -> None:
    values = torch.tensor([[1.0, 1.0, 1.0, 1.0], [4.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 0, 0, 0]])
    assert sequence_mean(values, mask).item() == pytest.approx((1.0 + 4.0) / 2)


def test_truncated_importance_weights_drop_tokens_outside_the_range() -> None:
    ratios = torch.tensor([[0.3, 0.5, 1.0, 2.0, 2.5]])
    trainer = torch.log(ratios).requires_grad_()
    w = truncated_importance_weights(trainer, torch.zeros_like(ratios), eps_low=0.5, eps_high=2.0)
    assert w.tolist()[0] == pytest.approx([0.0, 0.5, 1.0, 2.0, 0.0])  # zero outside, not clipped to the bound
    assert not w.requires_grad  # a stop-gradient weight
    with pytest.raises(LossError, match="eps_low"):
        truncated_importance_weights(trainer, trainer, eps_low=1.5, eps_high=2.0)


# --- action-aware weights on hand-built spans --------------------------------------------------------

# completion tokens: <think> a b </think> <action> Cl ick ( point = ( 1 , 2 ) ) </action> <|im_end|> <pad>
THINK = [0, 1, 1, 0] + [0] * 13
ACTION = [0] * 5 + [1] * 10 + [0] * 2
TYPE = [0] * 5 + [1, 1] + [0] * 10
PARAMS = [0] * 10 + [1] * 5 + [0] * 2
REAL = [1] * 16 + [0]


def _spans(rows: int, *, named: bool = True) -> TokenSpans:
    def mask(values: list[int]) -> torch.Tensor:
        return torch.tensor([values] * rows, dtype=torch.bool)

    return TokenSpans(assistant=mask(REAL), think=mask(THINK), action=mask(ACTION),
                      action_type=mask(TYPE if named else [0] * 17), params={"point": mask(PARAMS)})


def test_action_aware_weights_follow_the_action_structure() -> None:
    kinds = [ActionCorrectness.CORRECT, ActionCorrectness.PARAM_WRONG, ActionCorrectness.TYPE_WRONG,
             ActionCorrectness.UNPARSEABLE]
    w = action_aware_weights(_spans(4), kinds, ActionWeights(param=2.0, type=3.0, think=0.1))
    correct, param_wrong, type_wrong, unparseable = w.tolist()
    length = sum(REAL)
    assert correct == [0.0] * 17
    # the parameter span's total push is 2 (plain distillation's whole reply: 1), spread over its 5 tokens
    assert param_wrong == pytest.approx([0.1 * t + 2.0 * length / 5 * p for t, p in zip(THINK, PARAMS)])
    assert type_wrong == pytest.approx([0.1 * t + 3.0 * length / 2 * y for t, y in zip(THINK, TYPE)])  # not params
    assert unparseable == [float(r) for r in REAL]  # everything the model produced, never the padding
    zero_think = action_aware_weights(_spans(1), ["param_wrong"], ActionWeights(think=0.0))
    assert zero_think[0].tolist() == pytest.approx([2.0 * length / 5 * p for p in PARAMS])


def test_a_bare_grounding_answer_with_the_wrong_type_is_weighted_on_its_answer() -> None:
    w = action_aware_weights(_spans(1, named=False), [ActionCorrectness.TYPE_WRONG], ActionWeights(type=1.0, think=0))
    # `[x,y]` where `[-1,-1]` was due: no name tokens to push
    assert w[0].tolist() == pytest.approx([sum(REAL) / sum(ACTION) * a for a in ACTION])


def test_action_aware_weights_check_their_inputs() -> None:
    with pytest.raises(LossError, match="one correctness per response"):
        action_aware_weights(_spans(2), ["correct"])
    with pytest.raises(LossError, match="think=-1"):
        ActionWeights(think=-1)


# --- MOPD -----------------------------------------------------------------------------------------

def _exact_kl_grad(logits: torch.Tensor, teacher_logp: torch.Tensor) -> torch.Tensor:
    theta = logits.detach().clone().requires_grad_()
    logp = theta.log_softmax(-1)
    kl = (logp.exp() * (logp - teacher_logp)).sum()  # Σ_positions KL(π_θ‖π_T), exact
    (grad,) = torch.autograd.grad(kl, theta)
    return grad


def _mopd_grad_by_enumeration(logits: torch.Tensor, teacher_logp: torch.Tensor, sampler_logp: torch.Tensor,
                              eps_low: float = 0.0, eps_high: float = 1e9) -> torch.Tensor:
    """∇ of the expected MOPD loss under the sampler μ, taken exactly: every token of every position is one
    one-token "response" of the batch, weighted by μ(y) times the batch size (undoing the batch mean)."""
    positions, vocab = logits.shape
    theta = logits.detach().clone().requires_grad_()
    student = theta.log_softmax(-1).reshape(-1, 1)  # (positions·vocab, 1): response (p, y) is token y at p
    mu = sampler_logp.reshape(-1, 1)
    batch = positions * vocab
    weights = mu.exp() * batch
    loss = mopd_loss(student, teacher_logp.reshape(-1, 1), mu, torch.ones(batch, 1), weights,
                     eps_low=eps_low, eps_high=eps_high)
    (grad,) = torch.autograd.grad(loss, theta)
    return grad


def test_mopd_gradient_on_policy_equals_the_reverse_kl_gradient() -> None:
    torch.manual_seed(0)
    logits, teacher_logp = torch.randn(3, 7), torch.randn(3, 7).log_softmax(-1)
    on_policy = logits.log_softmax(-1)
    assert torch.allclose(_mopd_grad_by_enumeration(logits, teacher_logp, on_policy),
                          _exact_kl_grad(logits, teacher_logp), atol=1e-6)
    # and in closed form: ∂KL/∂z_i = π_i (log π_i/π_T,i − KL) per position
    kl = (on_policy.exp() * (on_policy - teacher_logp)).sum(-1, keepdim=True)
    closed = on_policy.exp() * (on_policy - teacher_logp - kl)
    assert torch.allclose(_exact_kl_grad(logits, teacher_logp), closed, atol=1e-6)


def test_mopd_importance_weights_correct_an_off_policy_sampler() -> None:
    torch.manual_seed(1)
    logits, teacher_logp = torch.randn(2, 5), torch.randn(2, 5).log_softmax(-1)
    sampler = (logits + 0.3 * torch.randn(2, 5)).log_softmax(-1)  # a sampler that drifted from the trainer
    corrected = _mopd_grad_by_enumeration(logits, teacher_logp, sampler)
    assert torch.allclose(corrected, _exact_kl_grad(logits, teacher_logp), atol=1e-6)
    truncated = _mopd_grad_by_enumeration(logits, teacher_logp, sampler, eps_low=0.9, eps_high=1.1)
    assert not torch.allclose(truncated, corrected, atol=1e-4)  # tokens outside the range were dropped


def test_mopd_loss_is_zero_where_the_action_aware_weight_is_zero() -> None:
    student = torch.randn(2, 4).log_softmax(-1).requires_grad_()
    teacher = torch.randn(2, 4).log_softmax(-1)
    loss = mopd_loss(student, teacher, student.detach(), torch.ones(2, 4), torch.zeros(2, 4))
    loss.backward()
    assert loss.item() == 0 and torch.count_nonzero(student.grad) == 0


def test_mopd_outcome_advantage_adds_alpha_times_a_sequence_term() -> None:
    student = torch.log(torch.tensor([[0.5, 0.25]])).requires_grad_()
    teacher = student.detach().clone()  # no reverse-KL signal: only the outcome term remains
    mask = torch.ones(1, 2)
    loss = mopd_loss(student, teacher, student.detach(), mask, outcome_adv=torch.tensor([2.0]), alpha=0.5)
    assert loss.item() == pytest.approx(-(1.0 * (math.log(0.5) + math.log(0.25))) / 2)
    assert reverse_kl_advantages(teacher, student).abs().max() == 0


# --- Eq. (1): the three cases against plain on-policy distillation on the same sample --------------

def _grad_per_position(logits: torch.Tensor, tokens: torch.Tensor, teacher_logp: torch.Tensor,
                       weights: torch.Tensor | None) -> torch.Tensor:
    """∇ of the MOPD loss w.r.t. each position's logits (L, V) for one on-policy sampled reply."""
    theta = logits.detach().clone().requires_grad_()
    logp = theta.log_softmax(-1).gather(-1, tokens[:, None]).T  # (1, L): log π_θ of the sampled tokens
    mask = torch.tensor([REAL], dtype=torch.bool)
    loss = mopd_loss(logp, teacher_logp, logp.detach(), mask, weights)
    (grad,) = torch.autograd.grad(loss, theta)
    return grad


def _eq1_gradient_figures(strengths: ActionWeights = ActionWeights()) -> dict[str, dict[str, float]]:
    """Per case, the gradient norm on each span, as a multiple of plain on-policy distillation's on that span."""
    torch.manual_seed(0)
    logits = torch.randn(17, 11)
    tokens = torch.distributions.Categorical(logits=logits).sample()
    teacher_logp = torch.randn(17, 11).log_softmax(-1).gather(-1, tokens[:, None]).T
    plain = _grad_per_position(logits, tokens, teacher_logp, None)
    spans = _spans(1)
    masks = {"reply": spans.assistant[0], "param": spans.param[0], "type": spans.action_type[0],
             "think": spans.think[0],
             "rest": spans.assistant[0] & ~(spans.param[0] | spans.action_type[0] | spans.think[0])}
    figures = {}
    for kind in ActionCorrectness:
        weights = action_aware_weights(spans, [kind], strengths)
        grad = _grad_per_position(logits, tokens, teacher_logp, weights)
        figures[kind.value] = {name: float(grad[m].norm() / plain[m].norm()) for name, m in masks.items()}
    return figures


def test_eq1_pushes_harder_than_plain_distillation_where_the_action_is_wrong() -> None:
    strengths = ActionWeights(param=2.0, type=2.0, think=0.1)
    figures = _eq1_gradient_figures(strengths)
    length, n_param, n_type = sum(REAL), sum(PARAMS), sum(TYPE)
    reply = {kind: spans.pop("reply") for kind, spans in figures.items()}
    assert figures["correct"] == {"param": 0.0, "type": 0.0, "think": 0.0, "rest": 0.0} and reply["correct"] == 0
    # right type, wrong parameters: each parameter token strength·|y|/|span| times plain's, the type untouched
    assert figures["param_wrong"] == pytest.approx({"param": 2.0 * length / n_param, "type": 0.0, "think": 0.1,
                                                    "rest": 0.0})
    assert reply["param_wrong"] > 1 and reply["type_wrong"] > 1  # harder pushes than plain distillation's
    # wrong type: the type tokens, and nothing on the parameters hanging off it
    assert figures["type_wrong"] == pytest.approx({"param": 0.0, "type": 2.0 * length / n_type, "think": 0.1,
                                                   "rest": 0.0})
    assert figures["unparseable"] == pytest.approx({"param": 1.0, "type": 1.0, "think": 1.0, "rest": 1.0})
    assert reply["unparseable"] == pytest.approx(1.0)


# --- the full-vocabulary divergence ---------------------------------------------------------------

def _full_loss(logits: torch.Tensor, teacher_log_dist: torch.Tensor, tokens: torch.Tensor, mask: torch.Tensor,
               weights: torch.Tensor | None = None, sampler_logp: torch.Tensor | None = None,
               ) -> tuple[torch.Tensor, torch.Tensor]:
    """(loss, ∇ w.r.t. the student's logits (B, L, V)) of MOPD with divergence "full" on sampled `tokens`."""
    theta = logits.detach().clone().requires_grad_()
    log_dist = theta.log_softmax(-1)
    logp = log_dist.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    teacher_logp = teacher_log_dist.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    sampler = logp.detach() if sampler_logp is None else sampler_logp
    loss = mopd_loss(logp, teacher_logp, sampler, mask, weights, divergence="full", student_log_dist=log_dist,
                     teacher_log_dist=teacher_log_dist)
    (grad,) = torch.autograd.grad(loss, theta)
    return loss.detach(), grad


def test_full_reverse_kl_equals_the_hand_computed_sum_over_the_vocabulary() -> None:
    student = [[[0.2] * 5, [0.5, 0.2, 0.1, 0.1, 0.1], [0.05, 0.05, 0.1, 0.3, 0.5]],
               [[0.1, 0.2, 0.3, 0.2, 0.2], [0.6, 0.1, 0.1, 0.1, 0.1], [0.2] * 5]]
    teacher = [[[0.5, 0.125, 0.125, 0.125, 0.125], [0.5, 0.2, 0.1, 0.1, 0.1], [0.5, 0.3, 0.1, 0.05, 0.05]],
               [[0.2] * 5, [0.1, 0.1, 0.1, 0.1, 0.6], [0.9, 0.025, 0.025, 0.025, 0.025]]]
    p, q = torch.tensor(student).log(), torch.tensor(teacher).log()
    kl = full_reverse_kl(p, q)
    # position (0, 0): Σ 0.2·(log 0.2 − log q_v) = log 0.2 − 0.2·(log 0.5 + 4·log 0.125) = log 0.2 + 2.6·log 2
    assert kl[0, 0].item() == pytest.approx(math.log(0.2) + 2.6 * math.log(2), rel=1e-5)
    assert kl[0, 1].item() == pytest.approx(0.0, abs=1e-6)  # the same distribution
    # position (1, 1): 0.6·log(0.6/0.1) + 4·0.1·log(0.1/0.1) + ... and 0.1·log(0.1/0.6) on the last token
    assert kl[1, 1].item() == pytest.approx(0.6 * math.log(6) + 0.1 * math.log(1 / 6), rel=1e-5)
    by_hand = [[sum(a * math.log(a / b) for a, b in zip(ps, qs)) for ps, qs in zip(row_p, row_q)]
               for row_p, row_q in zip(student, teacher)]
    assert kl.tolist() == [pytest.approx(row, rel=1e-5) for row in by_hand]
    # the loss: each reply's token mean (the second's last position is padding), then the mean over replies
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    tokens = torch.zeros(2, 3, dtype=torch.long)
    loss = mopd_loss(p[..., 0], q[..., 0], p[..., 0], mask, divergence="full", student_log_dist=p,
                     teacher_log_dist=q)
    assert loss.item() == pytest.approx((sum(by_hand[0]) / 3 + sum(by_hand[1][:2]) / 2) / 2, rel=1e-5)
    loss_again, _ = _full_loss(p, q, tokens, mask)
    assert loss_again.item() == pytest.approx(loss.item(), rel=1e-6)


def test_full_kl_gradient_is_zero_at_the_teacher_and_points_toward_it_elsewhere() -> None:
    torch.manual_seed(2)
    logits, tokens, mask = torch.randn(2, 3, 5), torch.randint(0, 5, (2, 3)), torch.ones(2, 3)
    _, at_teacher = _full_loss(logits, logits.log_softmax(-1), tokens, mask)
    assert at_teacher.abs().max().item() < 1e-7
    teacher = torch.randn(2, 3, 5).log_softmax(-1)
    loss, grad = _full_loss(logits, teacher, tokens, mask)
    student = logits.log_softmax(-1)
    # −∇ has a positive component along log π_T − log π_θ at each position: Var_π_θ(log π_θ/π_T) > 0
    toward = (-grad * (teacher - student)).sum(-1)
    assert bool((toward > 0).all()), toward
    # the closed form ∂KL/∂z = π_θ(log π_θ/π_T − KL), over the 6 positions of the sequence mean
    kl = full_reverse_kl(student, teacher).unsqueeze(-1)
    assert torch.allclose(grad, student.exp() * (student - teacher - kl) / 6, atol=1e-6)
    stepped, _ = _full_loss(logits - 0.5 * grad, teacher, tokens, mask)
    assert stepped < loss  # a small step down the gradient brings the student nearer the teacher


def test_action_aware_and_importance_weights_scale_the_full_kl_per_token_as_in_the_sampled_form() -> None:
    torch.manual_seed(0)
    logits, teacher = torch.randn(1, 17, 11), torch.randn(1, 17, 11).log_softmax(-1)
    tokens = torch.distributions.Categorical(logits=logits).sample()
    mask = torch.tensor([REAL], dtype=torch.bool)
    _, plain = _full_loss(logits, teacher, tokens, mask)
    assert plain[0, :16].norm(dim=-1).min() > 0 and plain[0, 16].abs().max() == 0  # padding carries nothing
    spans = _spans(1)
    for kind in ActionCorrectness:
        weights = action_aware_weights(spans, [kind], ActionWeights())
        _, grad = _full_loss(logits, teacher, tokens, mask, weights)
        assert torch.allclose(grad, weights[0, :, None] * plain, atol=1e-7), kind
    # the truncated importance weight sg[π_θ/μ] multiplies each position, and drops it outside [0.5, 2]
    logp = logits.log_softmax(-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    shift = torch.tensor([[0.0, 0.3, -0.3, 1.0, -1.0] + [0.0] * 12])
    _, grad = _full_loss(logits, teacher, tokens, mask, sampler_logp=logp - shift)
    ratio = truncated_importance_weights(logp, logp - shift)
    assert ratio[0, 3] == 0 and ratio[0, 4] == 0 and ratio[0, 1] == pytest.approx(math.exp(0.3))
    assert torch.allclose(grad, ratio[0, :, None] * plain, atol=1e-7)


def test_mopd_loss_names_an_unknown_divergence_and_the_distributions_the_full_one_needs() -> None:
    logp = torch.randn(1, 3).log_softmax(-1)
    with pytest.raises(LossError, match="sampled, full"):
        mopd_loss(logp, logp, logp, torch.ones(1, 3), divergence="forward")
    with pytest.raises(LossError, match="needs the student's and the teacher's log-distributions"):
        mopd_loss(logp, logp, logp, torch.ones(1, 3), divergence="full")
