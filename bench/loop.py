"""What the agent loop adds to each step, against the environment step it wraps (measured in the same run).

Run: `.venv/bin/python bench/loop.py [--episodes 3] [--task contacts/add_contact] [--layout web]`.
Oracle episodes of a bundled sandbox task go through the full loop into a trajectory store in a temporary
directory. Per step the loop's own work is parsing the reply (and converting its frame), the safety guard
(DOM read of the target, injection scan) and recording (screenshot PNG + JSON line); the model (here the
oracle's live DOM reads) and the env step are excluded. The rest of the loop (message building, bookkeeping)
is reported separately, as wall time minus every timed part.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Any

from uivenus.agent.loop import run_episode
from uivenus.agent.policies import policy_from_spec
from uivenus.envs.registry import make_env
from uivenus.envs.sandbox import get_task
from uivenus.store import TrajectoryStore

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--task", default="contacts/add_contact")
    parser.add_argument("--layout", choices=("web", "phone"), default="web")
    args = parser.parse_args()

    task = get_task(args.task)
    kind = "sandbox" if args.layout == "web" else "sandbox-phone"
    parts: dict[str, list[float]] = {"parse_s": [], "guard_s": [], "record_s": [], "env_s": [], "policy_s": []}
    other: list[float] = []
    with make_env(f"{kind}:{task.app}") as raw_env, tempfile.TemporaryDirectory() as root:
        store = TrajectoryStore(root)
        spec = task.spec(raw_env.base_url, raw_env.layout)
        run_episode(raw_env, policy_from_spec("oracle"), spec)  # warm-up: browser, caches
        for episode in range(args.episodes):
            env = Timed(raw_env)
            writer = store.episode("bench", f"ep{episode}", spec)
            started = time.perf_counter()
            trajectory = run_episode(env, policy_from_spec("oracle"), spec, writer=writer)
            wall = time.perf_counter() - started
            assert trajectory.verdicts["sandbox"]["passed"], trajectory.verdicts
            steps = trajectory.steps
            # record_s is stored one step late (a step cannot time its own write): shift it back
            records = [s.timings["record_s"] for s in steps[1:]] + [trajectory.metadata["last_record_s"]]
            for step, record_s in zip(steps, records, strict=True):
                for name in ("parse_s", "guard_s", "env_s", "policy_s"):
                    parts[name].append(step.timings[name])
                parts["record_s"].append(record_s)
            timed = sum(sum(s.timings[n] for n in ("parse_s", "guard_s", "env_s", "policy_s")) for s in steps)
            other.append((wall - env.outside_steps_s - timed - sum(records)) / len(steps))

    def ms(name: str) -> float:
        return statistics.mean(parts[name]) * 1e3

    overhead = ms("parse_s") + ms("guard_s") + ms("record_s")
    n = len(parts["env_s"])
    print(f"{args.task} ({args.layout}), {args.episodes} oracle episodes, {n} steps")
    print(f"  env step (execute + settle + screenshot): {ms('env_s'):8.2f} ms/step   <- baseline")
    print(f"  loop overhead per step excluding model and env time: {overhead:.2f} ms/step "
          f"(parse {ms('parse_s'):.2f}, guard {ms('guard_s'):.2f}, record {ms('record_s'):.2f})")
    print(f"  ratio loop overhead / env step: {overhead / ms('env_s'):.3f} (target <= {TARGET_RATIO})")
    print(f"  rest of the loop (messages, prompt, bookkeeping): {statistics.mean(other) * 1e3:.2f} ms/step")
    print(f"  model time (oracle reading the live DOM): {ms('policy_s'):.2f} ms/step, not counted")


if __name__ == "__main__":
    main()
