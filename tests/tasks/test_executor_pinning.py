"""Pinning: with a core for each, every process-pool worker and every actor of a Ray the executor starts keeps to
a core of its own, and so does everything it starts (a worker's browser); one worker, or more workers than cores,
are not pinned."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from uivenus.tasks.executors import Executor, ProcessPoolExecutorBackend, RayExecutor, pool_cores

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def jobs(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The job functions, importable by name here, in spawned processes (sys.path) and Ray workers (PYTHONPATH)."""
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    return importlib.import_module("tests.tasks.executor_jobs")


def _cores_seen(executor: Executor, jobs: ModuleType, count: int) -> list[dict[str, Any]]:
    with executor:
        return list(executor.map(jobs.cores, range(count)))


def test_pinning_gives_each_worker_a_core_only_when_there_is_one_for_each() -> None:
    cores = sorted(os.sched_getaffinity(0))
    assert pool_cores(1) == ()  # one worker may use every core
    assert pool_cores(len(cores) + 1) == ()  # more workers than cores share them anyway
    assert pool_cores(1, pin=True) == (cores[0],)
    assert pool_cores(2, pin=False) == ()
    if len(cores) >= 2:
        assert pool_cores(2) == tuple(cores[:2])


@pytest.mark.parametrize("make", [lambda pin: ProcessPoolExecutorBackend(2, pin=pin),
                                  lambda pin: RayExecutor(workers=2, pin=pin)], ids=["process", "ray"])
def test_pinned_workers_and_what_they_start_keep_to_their_own_core(jobs: ModuleType, make: Any) -> None:
    results = _cores_seen(make(True), jobs, 6)
    by_worker = {r["pid"]: r for r in results}
    assert len(by_worker) == 2, "both workers should have taken jobs"
    assert sorted(r["cores"][0] for r in by_worker.values()) == sorted(pool_cores(2, pin=True))
    for result in results:
        assert len(result["cores"]) == 1
        assert result["child"] == str(result["cores"])  # the processes a worker starts inherit its core


def test_unpinned_pool_workers_may_use_every_core(jobs: ModuleType) -> None:
    unpinned = _cores_seen(ProcessPoolExecutorBackend(2, pin=False), jobs, 2)
    assert all(r["cores"] == sorted(os.sched_getaffinity(0)) for r in unpinned)
