"""How far this machine's own cores scale from one busy process to two, measured beside a bench in the same minutes.

On a shared VM two busy vCPUs slow each other (the host's sibling threads, caches, memory bandwidth), and the
guest sees no steal time for it: a CPU-bound job pinned to one core, then to both at once, scaled 1.39–2.12x on
this 2-core box in minutes where nothing else ran. A workers-over-one-worker ratio is bounded by that figure, so
`bench/collect.py` prints it beside its own ratio. Run alone: `.venv/bin/python bench/machine.py [--repeats 3]`.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time
import zlib

#: One job: compression (memory and branches, as a browser's encoders and layout) and an interpreter loop.
_BLOCK = bytes((i * 7919 >> 3) & 0x3F for i in range(1 << 20))


def _job(core: int, rounds: int, results: mp.Queue) -> None:
    os.sched_setaffinity(0, {core})
    started = time.perf_counter()
    total = 0
    for _ in range(rounds):
        total += len(zlib.compress(_BLOCK, 6))
        for i in range(200_000):
            total ^= i * i
    results.put(time.perf_counter() - started)


def _run(cores: list[int], rounds: int) -> float:
    """Seconds until the slowest of one job per core (all started together) is done."""
    context = mp.get_context("fork")
    results: mp.Queue = context.Queue()
    jobs = [context.Process(target=_job, args=(core, rounds, results)) for core in cores]
    for job in jobs:
        job.start()
    times = [results.get() for _ in jobs]
    for job in jobs:
        job.join()
    return max(times)


def compute_scaling(rounds: int = 100, repeats: int = 2) -> float:
    """Throughput of two CPU-bound jobs on two cores over one job on one core (2.0 on an ideal machine).

    Alternates one job and two jobs `repeats` times (each about 1–2 s) and compares the medians, so a drift of the
    host's load during the measurement touches both sides.
    """
    cores = sorted(os.sched_getaffinity(0))[:2]
    if len(cores) < 2:
        raise RuntimeError("compute_scaling needs two cores this process may run on")
    one, two = [], []
    for _ in range(repeats):
        one.append(_run(cores[:1], rounds))
        two.append(_run(cores, rounds))
    return 2 * statistics.median(one) / statistics.median(two)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"two CPU-bound jobs on two cores / one on one core: {compute_scaling(repeats=args.repeats):.3f}")


if __name__ == "__main__":
    main()
