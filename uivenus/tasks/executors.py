"""Executors: run picklable jobs on workers that each keep their own environments, behind one small interface.

A job function is a module-level `fn(context, job) -> result`; the job and the result are plain picklable data.
Each worker owns one `WorkerContext` for its whole life, holding what is slow to build — a browser with its
sandbox server, a desktop with its own Xvfb display, a loaded policy — so a worker builds each once and reuses it
for every job it runs; the context (and all it holds) is closed when the worker ends.

Three executors, one per need, named in `EXECUTORS`:

- `serial`: everything in this process, one job after another (debugging, tracebacks where they happen);
- `process` (the default): a pool of `workers` processes started with *spawn* (a clean interpreter each: no
  forked Playwright or X connections); with several workers and a core for each, each worker and everything it
  starts (its browser's processes) keeps to its own core (`pin`);
- `ray`: `workers` Ray actors, on a local Ray instance started for the run (pinned as the pool's workers are) or on
  a cluster (`address`); every node needs `uivenus` installed.

`map(fn, jobs)` yields results as jobs complete, not in job order: a caller that needs an order sorts by a key
the results carry.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = [
    "EXECUTORS", "Executor", "ExecutorError", "JobFn", "ProcessPoolExecutorBackend", "RayExecutor", "SerialExecutor",
    "WorkerContext", "make_executor",
]

T = TypeVar("T")


class ExecutorError(RuntimeError):
    """Jobs could not be run (a worker died, Ray could not start, a bad executor name); the message says what to do."""


class WorkerContext:
    """What one worker keeps between jobs, built on first use under a key and closed when the worker ends."""

    def __init__(self, worker: str) -> None:
        self.worker = worker
        self._items: dict[str, Any] = {}

    def get(self, key: str, build: Callable[[], T]) -> T:
        """The item under `key`, built by `build()` the first time it is asked for."""
        if key not in self._items:
            self._items[key] = build()
        return self._items[key]

    def discard(self, key: str) -> None:
        """Close and forget the item under `key` (e.g. a browser that crashed), so the next `get` builds it anew."""
        item = self._items.pop(key, None)
        if item is not None and callable(getattr(item, "close", None)):
            item.close()

    def close(self) -> None:
        """Close every item, the newest first; an item that fails to close does not keep the others open."""
        errors = []
        for key in reversed(list(self._items)):
            try:
                self.discard(key)
            except Exception as exc:  # noqa: BLE001 - closing the rest matters more than the first failure
                errors.append(f"{key}: {type(exc).__name__}: {exc}")
        if errors:
            raise ExecutorError(f"worker {self.worker} could not close {'; '.join(errors)}")


JobFn = Callable[[WorkerContext, Any], Any]


@runtime_checkable
class Executor(Protocol):
    """Runs `fn(context, job)` for every job on its workers and yields the results as they complete."""

    name: str
    workers: int

    def map(self, fn: JobFn, jobs: Iterable[Any]) -> Iterator[Any]: ...

    def close(self) -> None: ...


class _Worker:
    """One worker's side of every executor: a context kept across jobs (a Ray actor class, or a pool process's
    global)."""

    def __init__(self, name: str, core: int | None = None) -> None:
        if core is not None:  # before anything is launched: the threads and processes started later inherit it
            os.sched_setaffinity(0, {core})
        self.context = WorkerContext(name)

    def run(self, fn: JobFn, job: Any) -> Any:
        return fn(self.context, job)

    def close(self) -> None:
        self.context.close()


class _Closing:
    """Context-manager support shared by the executors."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SerialExecutor(_Closing):
    """Every job in this process, in order: one worker, exceptions raised where they happen."""

    name = "serial"

    def __init__(self, workers: int = 1) -> None:
        if workers != 1:
            raise ExecutorError(f"the serial executor has exactly one worker, got workers={workers}")
        self.workers = 1
        self._worker: _Worker | None = None

    def map(self, fn: JobFn, jobs: Iterable[Any]) -> Iterator[Any]:
        if self._worker is None:
            self._worker = _Worker("serial-0")
        for job in jobs:
            yield self._worker.run(fn, job)

    def close(self) -> None:
        if self._worker is not None:
            worker, self._worker = self._worker, None
            worker.close()


# --- process pool --------------------------------------------------------------------------------------

_POOL_WORKER: _Worker | None = None


def pool_cores(workers: int, pin: bool | None = None) -> tuple[int, ...]:
    """The cores the pool's workers are pinned to, one per worker in start order (empty: no pinning).

    `pin=None` (auto) pins only when 1 < `workers` <= the cores this process may use: each worker's browser then
    keeps its threads on one core's caches instead of migrating between cores (issue 17); one worker may use every
    core, and more workers than cores would share them anyway. `pin=True` pins round-robin whatever the count.
    """
    if not hasattr(os, "sched_setaffinity"):  # Linux only: elsewhere the workers share the cores as before
        return ()
    cores = tuple(sorted(os.sched_getaffinity(0)))
    wanted = 1 < workers <= len(cores) if pin is None else pin
    return tuple(cores[i % len(cores)] for i in range(workers)) if wanted else ()


def _start_pool_worker(cores: tuple[int, ...] = (), started: Any = None) -> None:
    """Pool initializer: this process's worker, closed by multiprocessing's exit hook when the pool shuts down;
    pinned, before it launches anything, to the next of `cores` (`started` counts the workers begun so far)."""
    from multiprocessing import util

    global _POOL_WORKER
    core = None
    if cores:
        with started.get_lock():
            index, started.value = started.value, started.value + 1
        core = cores[index % len(cores)]
    _POOL_WORKER = _Worker(f"process-{os.getpid()}", core)
    util.Finalize(_POOL_WORKER, _POOL_WORKER.close, exitpriority=10)


def _run_in_pool(fn: JobFn, job: Any) -> Any:
    if _POOL_WORKER is None:
        raise ExecutorError("this process was not started by ProcessPoolExecutorBackend (no worker context)")
    return _POOL_WORKER.run(fn, job)


class ProcessPoolExecutorBackend(_Closing):
    """`workers` spawned processes, started on the first `map` and kept (with their environments) until `close`;
    `pin` says whether each keeps to a core of its own (`pool_cores`; None: when there is one for each)."""

    name = "process"

    def __init__(self, workers: int = 1, pin: bool | None = None) -> None:
        if workers < 1:
            raise ExecutorError(f"workers must be at least 1, got {workers}")
        self.workers, self.pin = workers, pin
        self._pool: Any = None

    def _started(self) -> Any:
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            spawn = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(self.workers, mp_context=spawn, initializer=_start_pool_worker,
                                             initargs=(pool_cores(self.workers, self.pin), spawn.Value("i", 0)))
        return self._pool

    def map(self, fn: JobFn, jobs: Iterable[Any]) -> Iterator[Any]:
        from concurrent.futures import as_completed
        from concurrent.futures.process import BrokenProcessPool

        pool = self._started()
        futures = [pool.submit(_run_in_pool, fn, job) for job in jobs]
        try:
            for future in as_completed(futures):
                yield future.result()
        except BrokenProcessPool as exc:
            self._pool = None
            raise ExecutorError(f"a worker process died ({exc}); run again: finished work is kept") from exc
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.shutdown(wait=True, cancel_futures=True)


# --- Ray ----------------------------------------------------------------------------------------------------

#: Ray lowers each worker's priority by 15 (`worker_niceness`) to keep its own daemons responsive; our actors are
#: the work (an episode and its browser), and at nice 15 on a shared machine an actor got a third of what a pool
#: process got. They run at the priority of the Ray that started them, as pool processes run at the driver's.
_AT_DRIVER_PRIORITY = {"env_vars": {"RAY_worker_niceness": "0"}}


class RayExecutor(_Closing):
    """`workers` Ray actors (one CPU each), each with its own context.

    `address=None` starts a local Ray instance for this executor (no dashboard, worker logs kept out of the
    terminal) and stops it on `close`; an address (`auto`, `HOST:PORT`, `ray://HOST:10001`) joins a running
    cluster and only disconnects on `close`. A Ray already initialised in this process is used as it is. On the
    local instance it starts, the actors are pinned to cores as the process pool's workers are (`pin`, `pool_cores`).
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int = 1, pin: bool | None = None) -> None:
        if workers < 1:
            raise ExecutorError(f"workers must be at least 1, got {workers}")
        self.address, self.workers, self.pin = address, workers, pin
        self._actors: list[Any] = []
        self._owns_ray = False

    def _started(self) -> list[Any]:
        if self._actors:
            return self._actors
        import logging

        import ray

        if not ray.is_initialized():
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                       "logging_level": logging.WARNING, "configure_logging": False}
            if self.address is None:
                options["num_cpus"] = self.workers
            try:
                ray.init(address=self.address or "local", **options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ExecutorError(f"could not start or join Ray at {self.address or 'a local instance'}: {exc}"
                                    ) from exc
            self._owns_ray = True
        actor = ray.remote(num_cpus=1, max_restarts=0, runtime_env=_AT_DRIVER_PRIORITY)(_Worker)
        local = self._owns_ray and self.address is None  # a cluster's nodes and their cores are Ray's to place
        cores = pool_cores(self.workers, self.pin) if local else ()
        self._actors = [actor.remote(f"ray-{i}", cores[i] if cores else None) for i in range(self.workers)]
        return self._actors

    def map(self, fn: JobFn, jobs: Iterable[Any]) -> Iterator[Any]:
        import ray
        from ray.exceptions import ActorDiedError, RayTaskError

        actors = self._started()
        todo = iter(jobs)
        running: dict[Any, Any] = {}  # result ref -> the actor computing it
        fn_ref = ray.put(fn)
        try:
            for actor in actors:
                job = next(todo, _DONE)
                if job is _DONE:
                    break
                running[actor.run.remote(fn_ref, job)] = actor
            while running:
                [ref], _ = ray.wait(list(running), num_returns=1)
                actor = running.pop(ref)
                try:
                    result = ray.get(ref)
                except RayTaskError as exc:
                    raise exc.as_instanceof_cause() from None
                except ActorDiedError as exc:
                    raise ExecutorError(f"a Ray worker died ({exc}); run again: finished work is kept") from exc
                job = next(todo, _DONE)
                if job is not _DONE:
                    running[actor.run.remote(fn_ref, job)] = actor
                yield result
        finally:
            for ref in running:
                ray.cancel(ref)

    def close(self) -> None:
        import ray

        actors, self._actors = self._actors, []
        if actors:
            try:
                ray.get([actor.close.remote() for actor in actors], timeout=60)
            finally:
                for actor in actors:
                    ray.kill(actor)
        if self._owns_ray:
            self._owns_ray = False
            ray.shutdown()


_DONE = object()

#: Executors by name: `factory(workers, address)`; only Ray takes an address.
EXECUTORS: dict[str, Callable[[int, str | None], Executor]] = {
    "serial": lambda workers, address: SerialExecutor(workers),
    "process": lambda workers, address: ProcessPoolExecutorBackend(workers),
    "ray": lambda workers, address: RayExecutor(address, workers),
}


def make_executor(name: str = "process", workers: int = 1, address: str | None = None) -> Executor:
    """The executor `name` with `workers` workers (`address`: the Ray cluster to join; None starts a local one)."""
    try:
        factory = EXECUTORS[name]
    except KeyError:
        raise ExecutorError(f"unknown executor {name!r}; use one of {', '.join(EXECUTORS)}") from None
    if address is not None and name != "ray":
        raise ExecutorError(f"only the ray executor joins a cluster address; got address={address!r} for {name!r}")
    return factory(workers, address)
