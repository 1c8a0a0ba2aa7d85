"""Collection throughput: episodes per minute of `Collector` with 1 and 2 process-pool workers and 2 Ray actors.

Run: `.venv/bin/python bench/collect.py [--episodes 8] [--rounds 1] [--executors process:1,process:2,ray:2]`.
Oracle episodes of synthesised sandbox tasks (settings, notes, contacts) are collected, stored and verified as
`uivenus tasks loop` does, each configuration into a fresh store, one after the other. Besides episodes per minute
(wall time of `Collector.collect`, starting the workers included) each line splits the wall time into the
episodes' own work (the seconds the workers report, divided by the workers) and the rest: starting the workers
(processes or Ray, a browser each) and dispatch. Targets (issue 17): 2 workers >= 1.7x one worker; Ray within 15%
of the process pool.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Any

from uivenus.tasks.catalog import Catalog, FunctionCall
from uivenus.tasks.catalog_docs import bundled_docs, catalog_from_docs
from uivenus.tasks.collect import Collector
from uivenus.tasks.executors import make_executor
from uivenus.tasks.functions import app_model
from uivenus.tasks.phrasing import compose, phrase_call
from uivenus.tasks.spec import SynthTask, TaskKind
from uivenus.tasks.synthesis import build_task

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


def collect(name: str, workers: int, todo: list[SynthTask]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as root, make_executor(name, workers) as executor:
        started = time.perf_counter()
        collection = Collector(executor, "oracle", root, "bench", progress=False).collect(todo)
        wall = time.perf_counter() - started
    assert not collection.errors, collection.errors
    work = sum(r.seconds for r in collection.ran) / workers
    return {"per_min": 60 * collection.episodes / wall, "wall": wall, "work": work,
            "per_episode": statistics.mean(r.seconds for r in collection.ran)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=1, help="repeat the configurations, interleaved")
    parser.add_argument("--executors", default="process:1,process:2,ray:2")
    args = parser.parse_args()
    configs = [(name, int(workers)) for name, workers in (c.split(":") for c in args.executors.split(","))]
    todo = tasks(args.episodes)
    rates: dict[tuple[str, int], list[float]] = {c: [] for c in configs}
    for _ in range(args.rounds):
        for name, workers in configs:
            r = collect(name, workers, todo)
            rates[(name, workers)].append(r["per_min"])
            print(f"{name} x{workers}: {r['per_min']:5.1f} episodes/min ({args.episodes} in {r['wall']:.1f} s: "
                  f"episodes {r['work']:.1f} s per worker, {r['per_episode']:.2f} s each; "
                  f"start-up and dispatch {r['wall'] - r['work']:.1f} s)")
    median = {c: statistics.median(v) for c, v in rates.items()}
    if ("process", 1) in median and ("process", 2) in median:
        print(f"2 workers / 1 worker: {median[('process', 2)] / median[('process', 1)]:.2f} (target >= {TARGET_SCALING})")
    if ("process", 2) in median and ("ray", 2) in median:
        print(f"Ray / process pool (2 workers): {median[('ray', 2)] / median[('process', 2)]:.2f} "
              f"(target >= {TARGET_RAY})")


if __name__ == "__main__":
    main()
