"""Rollouts for Stages II and III: k sampled replies per prompt, the log-probability the sampler gave each token,
and the layout that lets any model score those exact tokens.

Two samplers. `ModelSampler` generates with the model being trained (transformers `generate`, temperature 1.0 by
default) and records, token by token, the log-probability of the distribution it actually drew from — after every
logits processor, temperature and top-p included — so the importance weights of MOPD compare the trainer with the
real sampler; the trainer scores the same tokens at the sampling temperature (`score_rollouts`), as verl's actor
does, so only top-p's renormalisation and numerics remain between them. `ServerSampler` asks an OpenAI-compatible server
(vLLM, SGLang; a `policy_from_spec("openai:...")` policy), which answers text only: its replies are tokenised here and
carry no sampler log-probabilities (the trainer's own then stand in, an importance weight of 1), and the server must be
serving the current weights. `VLLMSampler` asks vLLM for its sampled token ids and their log-probabilities, and the
trainer keeps the server's weights current (`train.weight_sync`).

Scoring aligns on the completion, never on absolute positions: each model encodes its own prompt (a teacher may
see a hint, or count image tokens differently), the batch is padded on the left, so every row's reply fills the
last columns for every model, and `completion_view` names those columns (`trainer.token_logprobs` scores them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from uivenus.agent.policies.base import Message, Policy, PolicyRequest, Sampling, policy_from_spec
from uivenus.agent.policies.openai_compat import OpenAIOptions, OpenAIPolicy, chat_body
from uivenus.agent.policies.transformers_local import completion_length, stop_ids_of, to_chat
from uivenus.train.collate import Batch, collate, join_rows
from uivenus.train.encode import IGNORE_INDEX, PromptInputs, chat_template_kwargs, encode_completion, encode_prompt
from uivenus.train.samples import ChatSample
from uivenus.train.trainer import token_log_distributions, token_logprobs

if TYPE_CHECKING:
    import torch

__all__ = ["SERVER_SAMPLERS", "ModelSampler", "Rollout", "Sampler", "SamplingConfig", "SamplingError", "ScoredRollouts",
           "ServerSampler", "VLLMSampler", "batch_prompts", "completion_view", "encode_rollouts", "make_sampler",
           "right_aligned", "score_rollouts"]


class SamplingError(ValueError):
    """Replies cannot be sampled or scored as configured; the message says what to change."""


@dataclass(frozen=True)
class SamplingConfig:
    """How rollouts are drawn: k replies per prompt, at most `max_new_tokens` each; `server` names a served copy of
    the policy to sample from instead of the model in training: `openai:URL#MODEL` (any OpenAI-compatible server,
    text only) or `vllm:URL#MODEL` (vLLM: the sampled token ids and their log-probabilities, and the trainer pushes
    its weights to the server every `sync_every` optimizer steps through `pusher`, `train.weight_sync`)."""

    k: int = 4
    max_new_tokens: int = 128
    temperature: float = 1.0
    top_p: float = 1.0
    min_new_tokens: int = 0
    server: str | None = None
    sync_every: int = 1
    pusher: str = "trl"

    def __post_init__(self) -> None:
        if self.k < 1 or self.max_new_tokens < 1 or not 0 <= self.min_new_tokens <= self.max_new_tokens:
            raise SamplingError(f"need k >= 1 and 0 <= min_new_tokens <= max_new_tokens (>= 1), got {self}")
        if self.temperature <= 0 or not 0 < self.top_p <= 1:
            raise SamplingError(f"sampling needs temperature > 0 and 0 < top_p <= 1, got temperature="
                                f"{self.temperature}, top_p={self.top_p} (greedy decoding gives k identical replies)")
        if self.server is not None and self.server.partition(":")[0] not in SERVER_SAMPLERS:
            raise SamplingError(f"server must be an openai: or vllm: spec (openai:http://HOST:PORT/v1#MODEL), "
                                f"got {self.server!r}")
        if self.sync_every < 0:
            raise SamplingError(f"sync_every must be >= 0 (0: never push weights), got {self.sync_every}")


@dataclass(frozen=True)
class Rollout:
    """One sampled reply to one sample's prompt: its tokens (up to and including the stop token), its text
    (special tokens dropped) and the sampler's log-probability of each token (None when the sampler gave none)."""

    sample: ChatSample
    prompt: PromptInputs
    completion_ids: tuple[int, ...]
    text: str
    sampler_logp: torch.Tensor | None = None


class Sampler(Protocol):
    """Draws `k` replies per sample, returned grouped: the k rollouts of samples[0] first. `prompts`, when given,
    are the samples' prompts already encoded with `encode_prompt` (see `batch_prompts`)."""

    k: int

    def sample(self, samples: Sequence[ChatSample],
               prompts: Sequence[PromptInputs] | None = None) -> list[Rollout]: ...


def _prompts(processor: Any, samples: Sequence[ChatSample],
             prompts: Sequence[PromptInputs] | None) -> Sequence[PromptInputs]:
    if prompts is None:
        return [encode_prompt(processor, s.messages, thinking=s.thinking) for s in samples]
    if len(prompts) != len(samples):
        raise SamplingError(f"one encoded prompt per sample: got {len(prompts)} for {len(samples)} samples")
    return prompts


def batch_prompts(processor: Any, batch: Batch) -> list[PromptInputs]:
    """Each row's prompt, cut from a teacher-forced stream batch (prompt, then labelled reply), so sampling does
    not template and preprocess the screenshots a second time. The same tensors `encode_prompt` gives (on the CPU)."""
    vision_start = processor.tokenizer.convert_tokens_to_ids("<|vision_start|>")
    grids = batch.image_grid_thw
    out, image, pixel = [], 0, 0
    for row, sample in enumerate(batch.samples):
        start = int(batch.attention_mask[row].nonzero()[0])
        end = int((batch.labels[row] != IGNORE_INDEX).nonzero()[0])
        ids = batch.input_ids[row, start:end].cpu()
        images = int((ids == vision_start).sum())
        pixel_values = image_grid_thw = None
        if images:
            image_grid_thw = grids[image:image + images].cpu()
            rows = int(image_grid_thw.prod(dim=-1).sum())
            pixel_values = batch.pixel_values[pixel:pixel + rows].cpu()
            image, pixel = image + images, pixel + rows
        chat, _ = to_chat(sample.messages)
        text = processor.apply_chat_template(chat, add_generation_prompt=True, tokenize=False,
                                             **chat_template_kwargs(processor, sample.thinking))
        mm = None if batch.mm_token_type_ids is None else batch.mm_token_type_ids[row, start:end].cpu()
        out.append(PromptInputs(text=text, input_ids=ids, mm_token_type_ids=mm, pixel_values=pixel_values,
                                image_grid_thw=image_grid_thw))
    return out


def _vision_ids(model: Any) -> list[int]:
    """Image/video placeholder ids: a reply holding one cannot be scored (no pixels back it), so none is sampled."""
    config = model.config
    names = ("image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id")
    return [value for name in names if isinstance(value := getattr(config, name, None), int)]


class _ChosenLogProbs:
    """The last logits processor of `generate`, which draws each token itself: it bars the `suppressed` ids, applies
    temperature and top-p (`warpers`), draws from the softmax exactly as `generate`'s sampling does (the same ops on
    the same random stream), records log μ(y_t) of the drawn token, and returns scores whose argmax is that token
    for `generate` run greedy. So a token costs one softmax over the vocabulary, not a softmax and a logsumexp."""

    def __init__(self, suppressed: torch.Tensor, warpers: Sequence[Callable[[Any, Any], Any]]) -> None:
        import torch

        self.suppressed = suppressed
        self.warpers = tuple(warpers)
        self.chosen: list[torch.Tensor] = []
        self._draw = torch.multinomial  # bound once: `__call__` runs on every generated token

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        scores = scores.index_fill_(1, self.suppressed, -float("inf"))
        for warp in self.warpers:
            scores = warp(input_ids, scores)
        probs = scores.softmax(dim=-1)
        drawn = self._draw(probs, num_samples=1)
        self.chosen.append(probs.gather(1, drawn).squeeze(1).log())
        return scores.scatter_(1, drawn, float("inf"))

    def per_token(self, new_tokens: torch.Tensor) -> torch.Tensor:
        """(N, G) log-probabilities of the G generated tokens (steps generate ran and then undid are dropped)."""
        import torch

        return torch.stack(self.chosen[:new_tokens.shape[1]], dim=1)


def _prompt_batch(prompts: Sequence[PromptInputs], pad_id: int) -> dict[str, torch.Tensor]:
    """Left-padded generation inputs for encoded prompts (images concatenated in order)."""
    import torch
    import torch.nn.functional as F

    width = max(len(p.input_ids) for p in prompts)

    def left(t: torch.Tensor, value: int) -> torch.Tensor:
        return F.pad(t, (width - len(t), 0), value=value)

    inputs = {
        "input_ids": torch.stack([left(p.input_ids, pad_id) for p in prompts]),
        "attention_mask": torch.stack([left(torch.ones_like(p.input_ids), 0) for p in prompts]),
    }
    if all(p.mm_token_type_ids is not None for p in prompts):
        inputs["mm_token_type_ids"] = torch.stack([left(p.mm_token_type_ids, 0) for p in prompts])
    with_images = [p for p in prompts if p.pixel_values is not None]
    if with_images:
        inputs["pixel_values"] = join_rows([p.pixel_values for p in with_images])
        inputs["image_grid_thw"] = torch.cat([p.image_grid_thw for p in with_images])
    return inputs


class ModelSampler:
    """Samples from a live model with transformers `generate`; `batch_size` prompts (times k replies) at a time."""

    def __init__(self, model: Any, processor: Any, config: SamplingConfig, *, batch_size: int = 8) -> None:
        self.model, self.processor, self.config, self.k = model, processor, config, config.k
        self.batch_size = batch_size
        tokenizer = processor.tokenizer
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.stop = stop_ids_of(model.generation_config, tokenizer)

    def sample(self, samples: Sequence[ChatSample],
               prompts: Sequence[PromptInputs] | None = None) -> list[Rollout]:
        prompts = _prompts(self.processor, samples, prompts)
        rollouts: list[Rollout] = []
        for start in range(0, len(samples), self.batch_size):
            end = start + self.batch_size
            rollouts += self._sample(samples[start:end], prompts[start:end])
        return rollouts

    def _sample(self, samples: Sequence[ChatSample], prompts: Sequence[PromptInputs]) -> list[Rollout]:
        import torch
        from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopPLogitsWarper

        device = next(self.model.parameters()).device
        # k copies of each prompt, consecutive (what `num_return_sequences` does, which greedy `generate` refuses)
        copies = [prompt for prompt in prompts for _ in range(self.k)]
        inputs = {name: t.to(device) for name, t in _prompt_batch(copies, self.pad_id).items()}
        warpers = []
        if self.config.temperature != 1.0:
            warpers.append(TemperatureLogitsWarper(self.config.temperature))
        if self.config.top_p < 1.0:
            warpers.append(TopPLogitsWarper(self.config.top_p))
        recorder = _ChosenLogProbs(torch.tensor(_vision_ids(self.model), dtype=torch.long, device=device), warpers)
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.no_grad():
                sequences = self.model.generate(
                    **inputs, do_sample=False, use_cache=True, max_new_tokens=self.config.max_new_tokens,
                    min_new_tokens=self.config.min_new_tokens, logits_processor=LogitsProcessorList([recorder]),
                    pad_token_id=self.pad_id,
                )
        finally:
            self.model.train(was_training)
        new = sequences[:, inputs["input_ids"].shape[1]:]
        logps = recorder.per_token(new).cpu()
        rows = new.cpu().tolist()
        out = []
        for row, (tokens, logp) in enumerate(zip(rows, logps)):
            n = completion_length(tokens, self.stop)
            ids = tuple(tokens[:n])
            text = self.processor.tokenizer.decode(ids, skip_special_tokens=True)
            out.append(Rollout(samples[row // self.k], prompts[row // self.k], ids, text, logp[:n].clone()))
        return out


class ServerSampler:
    """Samples from an OpenAI-compatible server: k requests per prompt, replies tokenised with our tokenizer."""

    def __init__(self, policy: Policy, processor: Any, config: SamplingConfig, *, end_of_turn: str = "<|im_end|>"):
        self.policy, self.processor, self.config, self.k = policy, processor, config, config.k
        tokenizer = processor.tokenizer
        end = tokenizer.convert_tokens_to_ids(end_of_turn)
        if end is None or end == tokenizer.unk_token_id:
            raise SamplingError(f"the tokenizer has no {end_of_turn!r} token to end server replies with; pass "
                                "end_of_turn= the chat template's end-of-turn token")
        self.end_id = end

    def sample(self, samples: Sequence[ChatSample],
               prompts: Sequence[PromptInputs] | None = None) -> list[Rollout]:
        prompts = _prompts(self.processor, samples, prompts)
        requests = [PolicyRequest(s.messages, sampling=Sampling(self.config.temperature, self.config.max_new_tokens,
                                                                s.thinking, self.config.top_p))
                    for s in samples for _ in range(self.k)]
        replies = self.policy.act_batch(requests)
        tokenizer = self.processor.tokenizer
        out = []
        for index, reply in enumerate(replies):
            # the reply is plain text: a literal "<|im_end|>" in it is text, not our end of turn
            ids = tokenizer(reply.text, add_special_tokens=False, split_special_tokens=True)["input_ids"]
            out.append(Rollout(samples[index // self.k], prompts[index // self.k], (*ids, self.end_id), reply.text))
        return out


class VLLMSampler:
    """Samples from a vLLM server's chat endpoint, asking for the sampled token ids and each one's log-probability
    (vLLM's `return_token_ids`, `logprobs`): the rollouts are the server's exact tokens, and MOPD's and GRPO's
    importance weights compare the trainer with the sampler that drew them. The server must return the log-probs
    after temperature (`vllm serve --logprobs-mode processed_logprobs`; vLLM's default is the raw ones) when the
    temperature is not 1, because the trainer scores at the sampling temperature."""

    def __init__(self, policy: OpenAIPolicy, processor: Any, config: SamplingConfig) -> None:
        self.policy, self.processor, self.config, self.k = policy, processor, config, config.k

    def body(self, sample: ChatSample) -> dict[str, Any]:
        request = PolicyRequest(sample.messages, sampling=Sampling(self.config.temperature, self.config.max_new_tokens,
                                                                   sample.thinking, self.config.top_p))
        return {**chat_body(self.policy.options.model, request), "n": self.k, "logprobs": True, "top_logprobs": 0,
                "return_token_ids": True, "return_tokens_as_token_ids": True}

    def sample(self, samples: Sequence[ChatSample],
               prompts: Sequence[PromptInputs] | None = None) -> list[Rollout]:
        import torch

        prompts = _prompts(self.processor, samples, prompts)
        replies = self.policy.completions([self.body(s) for s in samples])
        out = []
        for sample, prompt, reply in zip(samples, prompts, replies):
            choices = reply["choices"]
            if len(choices) != self.k:
                raise SamplingError(f"asked {self.policy.name} for n={self.k} replies, got {len(choices)}")
            for choice in choices:
                ids = choice.get("token_ids")
                entries = (choice.get("logprobs") or {}).get("content")
                if not isinstance(ids, list) or not isinstance(entries, list) or len(entries) != len(ids):
                    raise SamplingError(f"{self.policy.name} returned no token ids with one log-probability each; "
                                        "a vllm: sampler needs vLLM >= 0.10.2 (return_token_ids); use openai: for "
                                        "other servers")
                logp = torch.tensor([float(entry["logprob"]) for entry in entries])
                text = self.processor.tokenizer.decode(ids, skip_special_tokens=True)
                out.append(Rollout(sample, prompt, tuple(ids), text, logp))
        return out


#: How each kind of `SamplingConfig.server` spec samples: from its scheme to a sampler of that server.
SERVER_SAMPLERS: Mapping[str, Callable[[str, Any, SamplingConfig], Sampler]] = MappingProxyType({
    "openai": lambda spec, processor, config: ServerSampler(policy_from_spec(spec), processor, config),
    "vllm": lambda spec, processor, config: VLLMSampler(OpenAIPolicy(OpenAIOptions.parse(spec.partition(":")[2])),
                                                        processor, config),
})


def make_sampler(config: SamplingConfig, model: Any, processor: Any, *, batch_size: int = 8) -> Sampler:
    """The server sampler when `config.server` names one, else sampling from `model` itself."""
    if config.server is not None:
        return SERVER_SAMPLERS[config.server.partition(":")[0]](config.server, processor, config)
    return ModelSampler(model, processor, config, batch_size=batch_size)


# --- scoring layout -----------------------------------------------------------------------------

def encode_rollouts(processor: Any, rollouts: Sequence[Rollout], *,
                    messages: Callable[[ChatSample], Sequence[Message]] | None = None) -> Batch:
    """The rollouts as one left-padded batch for `processor`'s model: the sampled tokens after each prompt.

    Without `messages` the prompts the sampler encoded are reused (same processor); with it each prompt is
    `messages(sample)` encoded by `processor` (a teacher's own processor, a hinted prompt).
    """
    tokenizer = processor.tokenizer
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    prompts: dict[int, PromptInputs] = {}
    items = []
    for rollout in rollouts:
        prompt = rollout.prompt
        if messages is not None:
            key = id(rollout.sample)
            if key not in prompts:
                prompts[key] = encode_prompt(processor, messages(rollout.sample), thinking=rollout.sample.thinking)
            prompt = prompts[key]
        items.append(encode_completion(processor, prompt, rollout.completion_ids, rollout.sample))
    return collate(items, pad_id, padding_side="left")


def completion_view(batch: Batch) -> tuple[int, torch.Tensor, torch.Tensor]:
    """(width, completion ids, completion mask) of a left-padded rollout batch: its last `width` positions hold
    every reply, right-aligned, whatever the prompt lengths."""
    completion = batch.labels != IGNORE_INDEX
    if not bool(completion[:, -1].all()):
        raise SamplingError("a rollout batch must be padded on the left (encode_rollouts does so)")
    width = int(completion.sum(dim=1).max())
    return width, batch.input_ids[:, -width:], completion[:, -width:]


def right_aligned(rows: Sequence[torch.Tensor | None], fallback: torch.Tensor) -> torch.Tensor:
    """Per-rollout 1-D values placed at the end of the columns of `fallback` (a completion view); a row without
    values (a server reply) keeps its row of `fallback`, detached."""
    out = fallback.detach().clone()
    width = out.shape[1]
    for index, row in enumerate(rows):
        if row is not None:
            out[index, width - len(row):] = row.to(out.device, out.dtype)
            out[index, :width - len(row)] = 0.0
    return out


@dataclass(frozen=True)
class ScoredRollouts:
    """Rollouts laid out for a loss: the left-padded batch, its completion view (B, width), the trainer's
    log-probabilities of the sampled tokens (with gradients) and the sampler's (the trainer's, detached, where the
    sampler gave none); `log_dist`, the trainer's whole next-token distributions (B, width, V), when asked for."""

    rollouts: tuple[Rollout, ...]
    batch: Batch
    width: int
    mask: torch.Tensor
    logp: torch.Tensor
    sampler_logp: torch.Tensor
    log_dist: torch.Tensor | None = None

    def completion_spans(self) -> Any:
        """The span masks (think, action, type, parameters) over the completion view."""
        return self.batch.spans.map(lambda mask: mask[:, -self.width:])


def score_rollouts(model: Any, processor: Any, rollouts: Sequence[Rollout], *, temperature: float = 1.0,
                   distributions: bool = False) -> ScoredRollouts:
    """Encode `rollouts` for `model` (on its device) and take its log-probabilities of the sampled tokens at the
    sampling `temperature`: the sampler's are those of the tempered distribution, and an importance ratio or clip
    compares like with like only when the trainer's are too (as verl's actor does with the rollout temperature).
    `distributions` keeps the whole tempered next-token distributions too, from the same forward pass."""
    device = next(model.parameters()).device
    batch = encode_rollouts(processor, rollouts).to(device)
    width, ids, mask = completion_view(batch)
    log_dist = token_log_distributions(model, batch, width, temperature=temperature) if distributions else None
    logp = (log_dist.gather(-1, ids.unsqueeze(-1)).squeeze(-1) if log_dist is not None
            else token_logprobs(model, batch, temperature=temperature)[:, -width:])
    sampler = right_aligned([r.sampler_logp for r in rollouts], logp)
    return ScoredRollouts(tuple(rollouts), batch, width, mask, logp, sampler, log_dist)
