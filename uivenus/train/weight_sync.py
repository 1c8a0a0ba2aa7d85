"""Keeping a served sampler on-policy: the trainer pushes its weights to the vLLM server every `sync_every` optimizer
steps, and records how stale the sampler was (optimizer steps since the weights it samples with).

The push goes through an existing engine, never a home-made one: `trl` is TRL's `VLLMClient`, which drives vLLM's
own weight-transfer API (`/init_weight_transfer_engine`, `/start_weight_update`, `/update_weights`,
`/finish_weight_update`; the tensors travel by NCCL broadcast from the trainer's GPU) and resets the server's prefix
cache. It needs a CUDA device and the `vllm` package beside TRL, and a server started with
`VLLM_SERVER_DEV_MODE=1 vllm serve MODEL --weight-transfer-config '{"backend": "nccl"}'`
(`bench/vllm_sync.py` checks the whole path on a GPU machine). `WeightSync` is the trainer side: a `Trainer` step
hook that gathers the full weights (a collective under FSDP), has the main process push them, and reports
`staleness` and `sync_seconds` with the step's metrics.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from uivenus.train.sampling import SamplingConfig
from uivenus.train.trainer import EvalContext, TrainError

if TYPE_CHECKING:
    import torch

__all__ = ["WEIGHT_PUSHERS", "TRLPusher", "WeightPusher", "WeightSync", "weight_sync_for"]


class WeightPusher(Protocol):
    """Loads a full set of weights (checkpoint parameter names) into the serving engine, which samples with them
    from then on."""

    def push(self, weights: Mapping[str, torch.Tensor]) -> None: ...


class TRLPusher:
    """TRL's `VLLMClient` against a vLLM server with a weight-transfer engine; connects on the first push, from
    the current CUDA device (the main training process's)."""

    def __init__(self, base_url: str, group_port: int = 51216) -> None:
        self.base_url, self.group_port = base_url, group_port
        self._client: Any = None

    def _connect(self) -> Any:
        import torch

        try:
            from trl.generation.vllm_client import VLLMClient
        except ImportError as exc:
            raise TrainError(f"pushing weights to vLLM needs TRL's vLLM client ({exc}); pip install 'trl[vllm]' on "
                             "the GPU machine, or set sampling.sync_every=0") from None
        if not torch.cuda.is_available():
            raise TrainError("pushing weights to vLLM uses NCCL and needs a CUDA device; on a CPU set "
                             "sampling.sync_every=0 (the server keeps the weights it loaded)")
        client = VLLMClient(base_url=self.base_url.removesuffix("/v1"), group_port=self.group_port,
                            connection_timeout=60.0)
        client.init_communicator(torch.cuda.current_device())
        return client

    def push(self, weights: Mapping[str, torch.Tensor]) -> None:
        import torch

        if self._client is None:
            self._client = self._connect()
        device = torch.device("cuda", torch.cuda.current_device())
        metadata = [(name, str(t.dtype).removeprefix("torch."), list(t.shape)) for name, t in weights.items()]
        with self._client.weight_update():
            self._client.update_named_params(metadata, ((n, t.to(device)) for n, t in weights.items()))
        self._client.reset_prefix_cache()


#: The engines a `SamplingConfig.pusher` can name: each built from the server's base URL (`http://HOST:PORT/v1`).
WEIGHT_PUSHERS: Mapping[str, Callable[[str], WeightPusher]] = MappingProxyType({
    "trl": TRLPusher,
})


class WeightSync:
    """A `Trainer` step hook: before step `step`'s rollouts, push the weights when `every` steps have passed since
    the last push (and always first, so a fresh or resumed run samples with its own weights); report the
    staleness of the weights the server samples with during the step, and the seconds the push took."""

    def __init__(self, pusher: WeightPusher, every: int = 1) -> None:
        if every < 1:
            raise TrainError(f"a weight sync pushes every >= 1 steps, got every={every}")
        self.pusher, self.every = pusher, every
        self.synced_step: int | None = None

    def __call__(self, context: EvalContext) -> dict[str, float]:
        accelerator, step = context.accelerator, context.step
        seconds = 0.0
        if self.synced_step is None or step - self.synced_step >= self.every:
            started = time.perf_counter()
            weights = accelerator.get_state_dict(context.model)  # every rank takes part under FSDP
            if accelerator.is_main_process:
                self.pusher.push(weights)
            accelerator.wait_for_everyone()
            self.synced_step, seconds = step, time.perf_counter() - started
        return {"staleness": float(step - self.synced_step), "sync_seconds": seconds}


def weight_sync_for(sampling: SamplingConfig) -> WeightSync | None:
    """The weight sync a stage's sampling asks for: a `vllm:` server with `sync_every` > 0, else none."""
    if sampling.server is None or not sampling.server.startswith("vllm:") or sampling.sync_every == 0:
        return None
    if sampling.pusher not in WEIGHT_PUSHERS:
        raise TrainError(f"unknown weight pusher {sampling.pusher!r}; use one of {', '.join(WEIGHT_PUSHERS)}")
    base_url = sampling.server.partition(":")[2].partition("#")[0].partition("?")[0]
    return WeightSync(WEIGHT_PUSHERS[sampling.pusher](base_url), sampling.sync_every)
