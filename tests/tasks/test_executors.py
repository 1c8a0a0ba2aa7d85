"""Executors: one contract for the serial, process-pool and Ray executors (workers keep what they build across
jobs, errors surface, closing closes every worker's context), and the Ray executor and the process pool collect
the same episodes from the same tasks in real Chromium."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from uivenus.store import read_run
from uivenus.tasks.catalog import Catalog, FunctionCall
from uivenus.tasks.catalog_docs import bundled_docs, catalog_from_docs
from uivenus.tasks.collect import Collector
from uivenus.tasks.executors import (
    EXECUTORS, Executor, ExecutorError, ProcessPoolExecutorBackend, RayExecutor, make_executor,
)
from uivenus.tasks.functions import app_model
from uivenus.tasks.phrasing import compose, phrase_call
from uivenus.tasks.spec import SynthTask, TaskKind
from uivenus.tasks.synthesis import build_task

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[None]:
    """One local Ray for the module (starting one takes seconds): the Ray executors here join it and leave it up.
    Its workers find the test job functions through PYTHONPATH."""
    import ray

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
        yield
        ray.shutdown()


@pytest.fixture
def jobs(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The job functions, importable by name here and in spawned processes (which inherit sys.path)."""
    monkeypatch.syspath_prepend(str(ROOT))
    return importlib.import_module("tests.tasks.executor_jobs")


@pytest.mark.parametrize("name", sorted(EXECUTORS))
def test_executor_contract(name: str, jobs: ModuleType, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if name == "ray":
        request.getfixturevalue("ray_instance")
    workers = 1 if name == "serial" else 2
    executor = make_executor(name, workers)
    assert isinstance(executor, Executor) and executor.workers == workers
    try:
        results = list(executor.map(jobs.use_held, [(str(tmp_path), n) for n in range(8)]))
        assert sorted(r["job"] for r in results) == list(range(8))  # every job, once
        by_worker: dict[str, list[dict]] = {}
        for r in results:
            by_worker.setdefault(r["worker"], []).append(r)
        assert 1 <= len(by_worker) <= workers
        for runs in by_worker.values():  # a worker builds its item once and keeps it for every later job
            assert sorted(r["uses"] for r in runs) == list(range(1, len(runs) + 1))
            assert len({(r["pid"], r["held"]) for r in runs}) == 1
        pids = {r["pid"] for r in results}
        assert (pids == {os.getpid()}) if name == "serial" else (os.getpid() not in pids)
        assert set(executor.map(jobs.niceness, range(4))) == {os.nice(0)}  # no lower priority than the caller's
        with pytest.raises(ValueError, match="job 3 cannot be done"):
            list(executor.map(jobs.fail, [3]))
        again = list(executor.map(jobs.use_held, [(str(tmp_path), 99)]))  # still usable after a failed job
        earlier = by_worker.get(again[0]["worker"], [])  # the pool may hand it to a worker idle until now
        assert again[0]["uses"] == len(earlier) + 1
        if earlier:
            assert again[0]["pid"] == earlier[0]["pid"]
        pids.add(again[0]["pid"])  # a worker idle until now holds an item from here on too
    finally:
        executor.close()
    closed = {p.name.removeprefix("closed-") for p in tmp_path.glob("closed-*")}
    assert closed == {str(pid) for pid in pids}  # every worker closed what it held when the executor closed
    if name == "ray":
        import ray

        assert ray.is_initialized()  # a Ray the executor did not start is left running for its owner


def test_executor_names_and_arguments_are_checked() -> None:
    with pytest.raises(ExecutorError, match="unknown executor 'dask'"):
        make_executor("dask")
    with pytest.raises(ExecutorError, match="only the ray executor joins"):
        make_executor("process", 2, "127.0.0.1:6379")
    with pytest.raises(ExecutorError, match="exactly one worker"):
        make_executor("serial", 2)
    with pytest.raises(ExecutorError, match="at least 1"):
        ProcessPoolExecutorBackend(0)


def _task(catalog: Catalog, key: str, **params: object) -> SynthTask:
    app, name = key.split(".")
    call = FunctionCall(app, name, params)
    return build_task([call], compose([phrase_call(catalog.function(key), call)]), TaskKind.SINGLE,
                      app_model(app).setup, {"synthesizer": "test"})


def test_ray_and_the_process_pool_collect_the_same_episodes(ray_instance: None, tmp_path: Path) -> None:
    catalog = Catalog()
    for app in ("settings", "notes", "contacts"):
        catalog.merge(catalog_from_docs(bundled_docs(app)))
    tasks = [
        _task(catalog, "settings.set_toggle", which="wifi", value="off"),
        _task(catalog, "notes.create_note", title="Packing list", body="passport, charger, sunscreen"),
        _task(catalog, "contacts.add_contact", name="Sam Lee", phone="12-34"),  # the app refuses this number
    ]
    runs = {}
    for executor in (ProcessPoolExecutorBackend(2), RayExecutor(workers=2)):
        with executor:
            collection = Collector(executor, "oracle", tmp_path, executor.name, progress=False).collect(tasks)
        assert collection.episodes == 3 and not collection.errors and collection.passed == 2
        runs[executor.name] = {t.metadata["episode_id"]: t for t in read_run(tmp_path / executor.name)}
    assert len({t.metadata["worker"] for t in runs["ray"].values()}) == 2  # one environment per actor, both used
    assert runs["process"].keys() == runs["ray"].keys() and len(runs["ray"]) == 3
    for episode, by_pool in runs["process"].items():
        by_ray = runs["ray"][episode]
        assert [a.to_dict() for a in by_pool.actions] == [a.to_dict() for a in by_ray.actions], episode
        assert by_pool.outcome == by_ray.outcome
        assert by_pool.verdicts["sandbox"] == by_ray.verdicts["sandbox"]
        assert by_pool.verdicts["trace"]["outcome"] == by_ray.verdicts["trace"]["outcome"]
        assert by_pool.verdicts["trace"]["step_labels"] == by_ray.verdicts["trace"]["step_labels"]
    outcomes = sorted(t.verdicts["trace"]["outcome"] for t in runs["ray"].values())
    assert outcomes.count("success") == 2
