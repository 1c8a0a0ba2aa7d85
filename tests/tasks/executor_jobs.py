"""Job functions for the executor tests, in a module of their own so spawned processes and Ray actors import them
by name (test modules themselves are imported under pytest's importlib mode and cannot be)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from uivenus.tasks.executors import WorkerContext


class Held:
    """Something slow to build that a worker keeps: counts its uses and leaves a file behind when it is closed."""

    def __init__(self, marks: Path) -> None:
        self.marks, self.uses = marks, 0

    def close(self) -> None:
        (self.marks / f"closed-{os.getpid()}").write_text(str(self.uses))


def use_held(context: WorkerContext, job: tuple[str, int]) -> dict[str, Any]:
    """Use this worker's `Held` (built on its first job) and say who ran the job."""
    marks, number = job
    held = context.get("held", lambda: Held(Path(marks)))
    held.uses += 1
    return {"job": number, "worker": context.worker, "pid": os.getpid(), "uses": held.uses, "held": id(held)}


def niceness(context: WorkerContext, job: int) -> int:
    """This worker's scheduling priority."""
    return os.nice(0)


def fail(context: WorkerContext, job: int) -> None:
    raise ValueError(f"job {job} cannot be done")


def cores(context: WorkerContext, job: int) -> dict[str, Any]:
    """The cores this worker may run on, and those a process it starts may (a browser's are started that way)."""
    import subprocess
    import sys
    import time

    time.sleep(0.3)  # long enough that the other worker takes the next job
    child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    return {"pid": os.getpid(), "cores": sorted(os.sched_getaffinity(0)), "child": child}
