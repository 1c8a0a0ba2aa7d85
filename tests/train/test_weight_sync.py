"""Sampling through vLLM, client side, against a local stand-in of vLLM's API: the rollouts keep the server's token
ids and log-probabilities (so IS truncation compares trainer and sampler), and a run that pushes its weights every
other step records a staleness of 0, 1, 0, 1 — with the sampler's log-probabilities equal to the trainer's exactly
on the steps right after a push, and apart on the stale ones.

The stand-in serves a real tiny model through vLLM's chat-completion fields (`return_token_ids`, `logprobs`); the
weights reach it in-process, where a GPU run uses TRL's NCCL client (`bench/vllm_sync.py` runs that one).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import torch
from fastapi import FastAPI, Request

from uivenus.agent.policies.transformers_local import load_processor
from uivenus.agent.serve import ChatCompletionRequest, ServerThread, policy_request
from uivenus.train.mopd import MOPDConfig, MOPDLoss
from uivenus.train.samples import ChatSample
from uivenus.train.sampling import ModelSampler, SamplingConfig, SamplingError, VLLMSampler, make_sampler, \
    score_rollouts
from uivenus.train.sources import SourceSpec, samples_from_spec
from uivenus.train.trainer import METRICS, Trainer, TrainError, load_model, stream_for
from uivenus.train.weight_sync import WeightSync, weight_sync_for

pytestmark = pytest.mark.usefixtures("torch_single_thread")


class StandInVLLM:
    """A tiny model behind vLLM's chat endpoint: each choice carries its token ids and one log-probability per
    token; `push` loads new weights, as vLLM's weight-transfer engine would."""

    def __init__(self, checkpoint: Path) -> None:
        self.model = load_model(checkpoint, "float32")
        self.processor = load_processor(str(checkpoint))
        self.lock = threading.Lock()
        self.pushes = 0
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self.chat)
        self.app.get("/v1/models")(lambda: {"object": "list", "data": [{"id": "standin", "object": "model"}]})

    def push(self, weights: Mapping[str, torch.Tensor]) -> None:
        with self.lock:
            self.model.load_state_dict(dict(weights))
            self.pushes += 1

    async def chat(self, request: Request) -> dict:
        body = await request.json()
        asked = policy_request(ChatCompletionRequest.model_validate(body))
        sample = ChatSample(messages=asked.messages, target="-", domain="grounding", thinking=False)
        config = SamplingConfig(k=body["n"], max_new_tokens=asked.sampling.max_new_tokens,
                                temperature=asked.sampling.temperature, top_p=asked.sampling.top_p)
        with self.lock:
            rollouts = ModelSampler(self.model, self.processor, config).sample([sample])
        choices = [{"index": i, "finish_reason": "stop", "token_ids": list(r.completion_ids),
                    "message": {"role": "assistant", "content": r.text},
                    "logprobs": {"content": [{"token": f"token_id:{t}", "logprob": float(lp), "top_logprobs": []}
                                             for t, lp in zip(r.completion_ids, r.sampler_logp)]}}
                   for i, r in enumerate(rollouts)]
        return {"id": "cmpl-1", "object": "chat.completion", "model": "standin", "choices": choices,
                "prompt_token_ids": rollouts[0].prompt.input_ids.tolist()}


@pytest.fixture(scope="module")
def standin(tiny_qwen3_vl: Path) -> Iterator[tuple[StandInVLLM, ServerThread]]:
    server = StandInVLLM(tiny_qwen3_vl)
    with ServerThread(server.app) as running:
        yield server, running


def test_vllm_rollouts_keep_the_servers_tokens_and_log_probabilities(standin, grounding_squares,
                                                                     tmp_path: Path) -> None:
    server, running = standin
    config = SamplingConfig(k=2, max_new_tokens=6, server=f"vllm:{running.base_url}#standin")
    sampler = make_sampler(config, None, server.processor)
    assert isinstance(sampler, VLLMSampler)
    annotations = grounding_squares(tmp_path / "g")
    samples = list(samples_from_spec(SourceSpec("grounding", {"annotations": str(annotations)})))[:2]
    torch.manual_seed(0)
    rollouts = sampler.sample(samples)
    assert len(rollouts) == 4 and all(r.sampler_logp is not None and len(r.sampler_logp) == len(r.completion_ids)
                                      for r in rollouts)
    with torch.no_grad():
        scored = score_rollouts(server.model, server.processor, rollouts)
    # the same weights score the server's own tokens as the server drew them: importance weights of 1, up to the
    # few image-placeholder ids the sampler bars (their mass, ~0.003 here, is renormalised onto the rest)
    assert torch.allclose(scored.logp * scored.mask, scored.sampler_logp * scored.mask, atol=5e-3)
    assert (scored.sampler_logp[scored.mask] < 0).all()


def test_a_server_without_token_ids_is_refused(tiny_qwen3_vl: Path, tmp_path: Path, grounding_squares) -> None:
    app = FastAPI()
    app.post("/v1/chat/completions")(lambda: {"choices": [{"message": {"role": "assistant", "content": "[1,2]"}}]})
    with ServerThread(app) as running:
        config = SamplingConfig(k=1, max_new_tokens=4, server=f"vllm:{running.base_url}?retries=0#m")
        sampler = make_sampler(config, None, load_processor(str(tiny_qwen3_vl)))
        annotations = grounding_squares(tmp_path / "g")
        sample = list(samples_from_spec(SourceSpec("grounding", {"annotations": str(annotations)})))[0]
        with pytest.raises(SamplingError, match="no token ids"):
            sampler.sample([sample])


def test_pushing_every_other_step_records_staleness_and_keeps_the_sampler_on_policy(standin, grounding_squares,
                                                                                    tiny_qwen3_vl: Path,
                                                                                    tmp_path: Path) -> None:
    server, running = standin
    server.push(load_model(tiny_qwen3_vl, "float32").state_dict())  # a fresh start, whatever ran before
    teacher = tmp_path / "teacher"
    sharp = load_model(tiny_qwen3_vl, "float32")
    with torch.no_grad():
        sharp.model.language_model.norm.weight.mul_(4.0)
    sharp.save_pretrained(teacher)
    server.processor.save_pretrained(teacher)
    config = MOPDConfig(model=str(tiny_qwen3_vl), out_dir=tmp_path / "run", dtype="float32", lr=3e-3,
                        schedule="constant", max_steps=4, batch_size=2, resume=None, tensorboard=False,
                        progress=False, teachers={"grounding": str(teacher)},
                        sources=(SourceSpec("grounding", {"annotations": str(grounding_squares(tmp_path / "g"))}),),
                        action_aware=False, sampling=SamplingConfig(k=2, max_new_tokens=6,
                                                                     server=f"vllm:{running.base_url}#standin"))
    with pytest.raises(TrainError, match="CUDA|vllm"):  # the shipped pusher is TRL's NCCL client: GPU only
        weight_sync_for(config.sampling).pusher.push({})
    processor = load_processor(str(tiny_qwen3_vl))
    before = server.pushes
    trainer = Trainer(config, MOPDLoss(config, processor), stream_for(config, config.sources, processor),
                      processor=processor, step_hooks=[WeightSync(server, every=2)])
    final = trainer.train()
    rows = [json.loads(line) for line in (tmp_path / "run" / METRICS).read_text().splitlines()]
    assert [r["staleness"] for r in rows] == [0.0, 1.0, 0.0, 1.0] and server.pushes - before == 2
    fresh, stale = [r["sampler_mismatch"] for r in rows[::2]], [r["sampler_mismatch"] for r in rows[1::2]]
    assert max(fresh) < 5e-3 < min(stale), rows  # on-policy right after a push, off-policy a step later
    trained = load_model(final, "float32").state_dict()
    assert any(not torch.equal(trained[k], v) for k, v in server.model.state_dict().items())  # 2 steps behind
    assert weight_sync_for(SamplingConfig(server=f"vllm:{running.base_url}#standin", sync_every=0)) is None
