"""Collection throughput: episodes per minute of `Collector` with 1, 2 and 4 process-pool workers and 2 Ray actors.

Run: `.venv/bin/python bench/collect.py [--episodes 24] [--rounds 2] [--executors process:1,process:2,process:4,ray:2]`.
Oracle episodes of synthesised sandbox tasks (settings, notes, contacts) are collected, stored and verified as
`uivenus tasks loop` does, each configuration into a fresh store, one after the other (`--rounds` repeats them,
interleaved, and every round is printed). Each line gives two rates, because a short run is mostly start-up:

- `steady`: episodes per minute once every worker has finished its first episode (its process or Ray actor is up
  and its browser launched; a worker keeps both for every later job), from the results that arrive after that
  moment; this is the rate of a long collection, and the one the targets compare;
- `wall`: episodes over the whole `Collector.collect`, start-up included; `start-up` is the time until the last
  worker's first episode was back.

`cores` is the CPU time of this process and everything it started (workers, browsers, Ray's daemons) divided by the
wall time (and by the episodes: CPU-s per episode, start-up included), `passed` the episodes verified successful
(a change that makes collection cheaper must not change it), and `load` the machine's 1-minute load average when
the configuration started: on a shared machine the rates move with the other users' load, so compare the ratios
of one round. Targets (issue 17): 2 workers >= 1.7x one worker; Ray within 15% of the process pool with as many
workers. Each round also measures, before and after its configurations, how this machine scales a CPU-bound job
from one core to two (`bench/machine.py`; 2.0 on an ideal machine, 1.4–2.1 on a shared VM) and prints the 2-worker
ratio beside it: the ratio cannot exceed what the cores themselves give.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from typing import Any

import psutil

from uivenus.tasks.catalog import Catalog, FunctionCall
from uivenus.tasks.catalog_docs import bundled_docs, catalog_from_docs
from uivenus.tasks.collect import Collector
from uivenus.tasks.executors import Executor, JobFn, make_executor
from uivenus.tasks.functions import app_model
from uivenus.tasks.phrasing import compose, phrase_call
from uivenus.tasks.spec import SynthTask, TaskKind
from uivenus.tasks.synthesis import build_task

from machine import compute_scaling  # bench/, the script's own folder
from targets import against

#: Issue 17: episodes per minute of 2 workers over 1, and of Ray over the process pool with as many workers.
TARGET_SCALING = 1.7
TARGET_RAY = 0.85

_CALLS = [
    ("settings.set_toggle", {"which": "wifi", "value": "off"}),
    ("notes.create_note", {"title": "Packing list", "body": "passport, charger"}),
    ("contacts.add_contact", {"name": "Sam Lee", "phone": "555-0101"}),
    ("settings.set_toggle", {"which": "bluetooth", "value": "off"}),
    ("notes.create_note", {"title": "Groceries", "body": "milk, eggs"}),
    ("contacts.add_contact", {"name": "Ana Ruiz", "phone": "555-0102"}),
]


def tasks(n: int) -> list[SynthTask]:
    catalog = Catalog()
    for app in ("settings", "notes", "contacts"):
        catalog.merge(catalog_from_docs(bundled_docs(app)))
    out = []
    for i in range(n):
        key, params = _CALLS[i % len(_CALLS)]
        params = {k: (f"{v} {i}" if k in ("title", "name") else v) for k, v in params.items()}
        app, name = key.split(".")
        call = FunctionCall(app, name, params)
        out.append(build_task([call], compose([phrase_call(catalog.function(key), call)]), TaskKind.SINGLE,
                              app_model(app).setup, {"synthesizer": "bench", "n": i}))
    return out


class _Arrivals:
    """The executor as the Collector sees it, noting when each result comes back (and from which worker)."""

    def __init__(self, executor: Executor) -> None:
        self.executor, self.name, self.workers = executor, executor.name, executor.workers
        self.arrivals: list[tuple[float, str]] = []

    def map(self, fn: JobFn, jobs: Iterable[Any]) -> Iterator[Any]:
        for result in self.executor.map(fn, jobs):
            self.arrivals.append((time.perf_counter(), result.worker))
            yield result

    def close(self) -> None:
        self.executor.close()


def _cpu_seconds() -> float:
    """CPU time of this process and all its live descendants (Ray's daemons and actors, pool workers, browsers)."""
    total = 0.0
    for process in [psutil.Process(), *psutil.Process().children(recursive=True)]:
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def collect(name: str, workers: int, todo: list[SynthTask]) -> dict[str, Any]:
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as root, make_executor(name, workers) as executor:
        timed = _Arrivals(executor)
        cpu, started = _cpu_seconds(), time.perf_counter()
        collection = Collector(timed, "oracle", root, "bench", progress=False).collect(todo)
        wall = time.perf_counter() - started
        cpu = _cpu_seconds() - cpu  # before the workers and their browsers end
    assert not collection.errors, collection.errors
    first: dict[str, float] = {}
    for at, worker in timed.arrivals:
        first.setdefault(worker, at)
    warm = max(first.values())
    later = [at for at, _ in timed.arrivals if at > warm]
    steady = 60 * len(later) / (later[-1] - warm) if later else float("nan")
    return {"wall_rate": 60 * collection.episodes / wall, "steady": steady, "wall": wall, "startup": warm - started,
            "after": len(later), "workers_used": len(first), "cores": cpu / wall, "load": load,
            "cpu_per_episode": cpu / collection.episodes, "passed": collection.passed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=2, help="repeat the configurations, interleaved")
    parser.add_argument("--executors", default="process:1,process:2,process:4,ray:2")
    args = parser.parse_args()
    configs = [(name, int(workers)) for name, workers in (c.split(":") for c in args.executors.split(","))]
    todo = tasks(args.episodes)
    for number in range(1, args.rounds + 1):
        steady: dict[tuple[str, int], float] = {}
        machine = [compute_scaling()]
        for name, workers in configs:
            r = collect(name, workers, todo)
            steady[(name, workers)] = r["steady"]
            print(f"round {number} {name} x{workers}: steady {r['steady']:5.1f} episodes/min ({r['after']} "
                  f"episodes after start-up), wall {r['wall_rate']:5.1f} ({args.episodes} in {r['wall']:.1f} s, "
                  f"start-up {r['startup']:.1f} s, {r['workers_used']} workers ran); {r['passed']} passed; cores "
                  f"{r['cores']:.2f} ({r['cpu_per_episode']:.2f} CPU-s per episode), load {r['load']:.1f}", flush=True)
        machine.append(compute_scaling())
        _ratios(number, steady, sum(machine) / len(machine))


def _ratios(number: int, steady: dict[tuple[str, int], float], machine: float) -> None:
    print(f"round {number}: this machine, two CPU-bound jobs on two cores / one on one core: {machine:.3f}")
    one = steady.get(("process", 1))
    for workers in (2, 4):
        if one and ("process", workers) in steady:
            ratio = steady[("process", workers)] / one
            print(f"round {number}: {workers} workers / 1 worker (steady): "
                  + (against(ratio, TARGET_SCALING, at_least=True) if workers == 2 else f"{ratio:.3f}"))
            if workers == 2:
                print(f"round {number}: 2 workers / 1 worker over the machine's own 2 / 1: {ratio / machine:.3f}")
    for workers in sorted({w for name, w in steady if name == "ray"}):
        pool = steady.get(("process", workers))
        if pool:
            print(f"round {number}: Ray / process pool ({workers} workers, steady): "
                  f"{against(steady[('ray', workers)] / pool, TARGET_RAY, at_least=True)}")


if __name__ == "__main__":
    main()
