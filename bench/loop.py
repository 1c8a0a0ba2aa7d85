"""What the agent loop adds to each step, against the environment step it wraps (measured in the same run).

Run: `.venv/bin/python bench/loop.py [--episodes 3] [--task contacts/add_contact] [--layout web]`, or
`--task desktop:replace_word` for a desktop task family on Xvfb (raw frames, which the store encodes in the background).
Oracle episodes of a bundled task go through the full loop into a trajectory store in a temporary
directory. Per step the loop's own work is parsing the reply (and converting its frame), the safety guard
(DOM read of the target, injection scan) and recording (screenshot PNG + JSON line); the model (here the
oracle's live DOM reads) and the env step are excluded. The rest of the loop (message building, bookkeeping)
is reported separately, as wall time minus every timed part.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

from uivenus.agent.loop import run_episode
from uivenus.agent.policies import policy_from_spec
from uivenus.agent.safety import Guard
from uivenus.envs.registry import make_env
from uivenus.envs.sandbox import get_task
from uivenus.records import TaskSpec
from uivenus.store import TrajectoryStore

from targets import against  # bench/, the script's own folder

#: Issue 17: the loop's own work (parse + guard + record) costs at most this fraction of the env step it wraps.
TARGET_RATIO = 0.10


class Timed:
    """The env with its resets and app-state reads timed (they are episode setup and checking, not steps)."""

    def __init__(self, env: Any) -> None:
        self.env, self.outside_steps_s = env, 0.0

    def reset(self, task: Any) -> Any:
        started = time.perf_counter()
        try:
            return self.env.reset(task)
        finally:
            self.outside_steps_s += time.perf_counter() - started

    def app_state(self) -> Any:
        started = time.perf_counter()
        try:
            return self.env.app_state()
        finally:
            self.outside_steps_s += time.perf_counter() - started

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)


@contextlib.contextmanager
def _sandbox(name: str, layout: str) -> Iterator[tuple[Any, TaskSpec, Callable[[], Guard]]]:
    task = get_task(name)
    with make_env(f"{'sandbox' if layout == 'web' else 'sandbox-phone'}:{task.app}") as env:
        yield env, task.spec(env.base_url, env.layout), Guard


@contextlib.contextmanager
def _desktop(family: str, layout: str) -> Iterator[tuple[Any, TaskSpec, Callable[[], Guard]]]:
    from uivenus.envs.desktop_tasks import desktop_task

    with make_env("desktop") as env:  # no DOM text: the guard's default OCR of every screen is left out (see below)
        yield env, desktop_task(family), lambda: Guard(ocr=False)


#: `--task` prefix -> the env, task and guard (a new one per episode) it stands for (no prefix: a sandbox task).
Bench = contextlib.AbstractContextManager[tuple[Any, TaskSpec, Callable[[], Guard]]]
BENCH_KINDS: dict[str, Callable[[str, str], Bench]] = {
    "": _sandbox, "desktop": _desktop,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--task", default="contacts/add_contact")
    parser.add_argument("--layout", choices=("web", "phone"), default="web")
    args = parser.parse_args()

    kind, _, name = args.task.rpartition(":")
    parts: dict[str, list[float]] = {"parse_s": [], "guard_s": [], "record_s": [], "env_s": [], "policy_s": []}
    other: list[float] = []
    with BENCH_KINDS[kind](name, args.layout) as (raw_env, spec, make_guard), tempfile.TemporaryDirectory() as root:
        store = TrajectoryStore(root)
        run_episode(raw_env, policy_from_spec("oracle"), spec, guard=make_guard())  # warm-up: browser, caches
        for episode in range(args.episodes):
            env = Timed(raw_env)
            writer = store.episode("bench", f"ep{episode}", spec)
            started = time.perf_counter()
            trajectory = run_episode(env, policy_from_spec("oracle"), spec, writer=writer, guard=make_guard())
            wall = time.perf_counter() - started
            assert all(v["passed"] for v in trajectory.verdicts.values()), trajectory.verdicts
            steps = trajectory.steps
            # record_s is stored one step late (a step cannot time its own write): shift it back
            records = [s.timings["record_s"] for s in steps[1:]] + [trajectory.metadata["last_record_s"]]
            for step, record_s in zip(steps, records, strict=True):
                for part in ("parse_s", "guard_s", "env_s", "policy_s"):
                    parts[part].append(step.timings[part])
                parts["record_s"].append(record_s)
            timed = sum(sum(s.timings[n] for n in ("parse_s", "guard_s", "env_s", "policy_s")) for s in steps)
            other.append((wall - env.outside_steps_s - timed - sum(records)) / len(steps))

    def ms(name: str) -> float:
        return statistics.mean(parts[name]) * 1e3

    overhead = ms("parse_s") + ms("guard_s") + ms("record_s")
    n = len(parts["env_s"])
    print(f"{args.task} ({'desktop' if kind else args.layout}), {args.episodes} oracle episodes, {n} steps")
    print(f"  env step (execute + settle + screenshot): {ms('env_s'):8.2f} ms/step   <- baseline")
    print(f"  loop overhead per step excluding model and env time: {overhead:.2f} ms/step "
          f"(parse {ms('parse_s'):.2f}, guard {ms('guard_s'):.2f}, record {ms('record_s'):.2f})")
    print(f"  ratio loop overhead / env step: {against(overhead / ms('env_s'), TARGET_RATIO)}")
    print(f"  rest of the loop (messages, prompt, bookkeeping): {statistics.mean(other) * 1e3:.2f} ms/step")
    print(f"  model time (oracle reading the live page or desktop): {ms('policy_s'):.2f} ms/step, not counted")
    if make_guard().ocr is None:
        print("  guard without OCR: with it, this screen without DOM text is read by OCR every step (seconds)")


if __name__ == "__main__":
    main()
