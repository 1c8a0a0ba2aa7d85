"""The vLLM weight-sync path end to end, on a GPU machine with `vllm` and `trl[vllm]` installed: one command.

Run: `python bench/vllm_sync.py --model CHECKPOINT [--steps 4] [--port 8011] [--group-port 51216]`

It starts `vllm serve CHECKPOINT` with vLLM's NCCL weight-transfer engine (`VLLM_SERVER_DEV_MODE=1`,
`--weight-transfer-config '{"backend": "nccl"}'`), then trains Stage III (MOPD; the teacher is the checkpoint with
sharper logits) for `--steps` steps on synthetic grounding screens twice, sampling from the server
(`sampling.server=vllm:...`): once pushing the weights before every step (`sampling.sync_every=1`, TRL's
`VLLMClient`), once never (`sync_every=0`), restarting the server in between. It prints each run's per-step
`staleness` and `sampler_mismatch` (mean |log π_trainer − log μ_sampler| per sampled token) as JSON and exits 1
unless the synced run stays at staleness 0 with a mismatch below `--tolerance` on every step and the unsynced
run's last step drifts above every synced step. `--model` must be a Qwen-VL family checkpoint vLLM can serve (e.g.
Qwen3-VL-2B-Instruct); the vLLM server gets `--gpu-memory-utilization 0.35` of the GPU the trainer shares.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from train import _data  # bench/train.py: n screens with one coloured square each, as grounding records

MODEL_NAME = "ui-venus"


def _teacher(model: str, out: Path) -> Path:
    """The checkpoint with sharper logits (same tokenizer): a teacher whose reverse KL moves the student."""
    import torch

    from uivenus.agent.policies.transformers_local import load_processor
    from uivenus.train.trainer import load_model

    sharp = load_model(model, "bfloat16")
    with torch.no_grad():
        sharp.model.language_model.norm.weight.mul_(1.5)
    sharp.save_pretrained(out)
    load_processor(model).save_pretrained(out)
    return out


def _serve(model: str, port: int, log: Path) -> subprocess.Popen:
    env = {**os.environ, "VLLM_SERVER_DEV_MODE": "1"}
    command = ["vllm", "serve", model, "--served-model-name", MODEL_NAME, "--host", "127.0.0.1", "--port", str(port),
               "--dtype", "bfloat16", "--enforce-eager", "--gpu-memory-utilization", "0.35", "--max-model-len", "4096",
               "--weight-transfer-config", '{"backend": "nccl"}']
    server = subprocess.Popen(command, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"vllm serve exited with {server.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5):
                return server
        except OSError:
            time.sleep(3)
    server.terminate()
    raise SystemExit(f"vllm serve did not come up in 10 minutes; see {log}")


def _train(args: argparse.Namespace, root: Path, teacher: Path, sync_every: int) -> list[dict[str, Any]]:
    from uivenus.train.config import from_dict
    from uivenus.train.mopd import MOPDConfig, train_mopd

    out = root / f"sync{sync_every}"
    config = from_dict(MOPDConfig, {
        "model": args.model, "out_dir": str(out), "dtype": "bfloat16", "lr": 1e-4, "schedule": "constant",
        "max_steps": args.steps, "batch_size": 4, "resume": None, "tensorboard": False, "progress": False,
        "teachers": {"grounding": str(teacher)}, "action_aware": False,
        "sources": [{"kind": "grounding", "annotations": str(_data(root / "data", 32, 448))}],
        "sampling": {"k": 2, "max_new_tokens": 24, "server": f"vllm:http://127.0.0.1:{args.port}/v1#{MODEL_NAME}",
                     "sync_every": sync_every},
    })
    server = _serve(args.model, args.port, root / f"vllm-sync{sync_every}.log")
    try:
        train_mopd(config)
    finally:
        server.terminate()
        server.wait(timeout=120)
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    return [{"step": r["step"], "staleness": r.get("staleness"), "sampler_mismatch": r["sampler_mismatch"],
             "sync_seconds": r.get("sync_seconds")} for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="a Qwen-VL family checkpoint directory vLLM can serve")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--tolerance", type=float, default=0.05)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        teacher = _teacher(args.model, root / "teacher")
        synced, unsynced = _train(args, root, teacher, 1), _train(args, root, teacher, 0)
    ok = (all(r["staleness"] == 0 and r["sampler_mismatch"] < args.tolerance for r in synced)
          and unsynced[-1]["sampler_mismatch"] > max(r["sampler_mismatch"] for r in synced))
    print(json.dumps({"synced": synced, "unsynced": unsynced, "ok": ok}, indent=2))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
