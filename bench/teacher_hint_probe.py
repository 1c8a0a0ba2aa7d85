"""Does Stage III's teacher hint change what the experts answer? For one seed of a finished recipe run, each domain
expert's greedy replies on its own held-out items, with and without the hint line MOPD appends to the teacher's
prompt (`uivenus.train.mopd.teacher_messages`), judged by Stage III's correctness rule. A hinted teacher that no
longer answers is a different teacher: distilling from it teaches the student what the expert never said.

    OMP_NUM_THREADS=1 python bench/teacher_hint_probe.py runs/recipe-grounded --seed 0
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import torch

from uivenus.agent.policies.base import Mode, PolicyRequest
from uivenus.agent.policies.transformers_local import HFOptions, TransformersPolicy
from uivenus.synth.sandbox_steps import STEPS_FILE
from uivenus.train.mopd import action_correctness, teacher_messages
from uivenus.train.sources.datasets import grounding_samples, step_samples


def _verdicts(policy: TransformersPolicy, samples: list, hint: bool, batch_size: int = 16) -> Counter:
    """How many of the greedy replies fall in each correctness class."""
    counts: Counter = Counter()
    for start in range(0, len(samples), batch_size):
        chunk = samples[start:start + batch_size]
        replies = policy.act_batch([PolicyRequest(messages=teacher_messages(s, hint), mode=Mode.GROUNDING)
                                    for s in chunk])
        counts.update(action_correctness(r.text, s.reference).value for s, r in zip(chunk, replies, strict=True))
    return counts


def main(run: Path, seed: int) -> None:
    torch.set_num_threads(1)
    items = {"grounding": list(grounding_samples(run / "data" / "grounding_eval" / "annotations.json",
                                                 frame_kind="rel")),
             "web": list(step_samples(run / "data" / "steps_eval" / STEPS_FILE))}
    for domain, samples in items.items():
        model = sorted((run / f"seed-{seed}" / f"expert_{domain}" / "checkpoints").glob("step-*"))[-1] / "model"
        policy = TransformersPolicy(HFOptions(str(model), device="cpu", dtype="float32", batch_size=16))
        try:
            for hint in (False, True):
                counts = _verdicts(policy, samples, hint)
                shares = ", ".join(f"{kind} {counts[kind] / len(samples):.3f}" for kind in sorted(counts))
                print(f"seed {seed} expert_{domain} hint={hint}: {shares} (n {len(samples)})", flush=True)
        finally:
            policy.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a finished recipe run's out_dir")
    parser.add_argument("--seed", type=int, default=0, help="whose experts")
    args = parser.parse_args()
    main(args.run, args.seed)
