"""CAPTCHA Pass@1: a policy solves every generated instance through the browser, and the page grades it.

Each instance is one episode: screenshot → policy → parsed actions (several per reply allowed, in the relative
0–999 frame) → executed in a BrowserEnv → the page's own grader. The policy gets up to `max_steps` replies, and
the first graded attempt is final (Pass@1). A reply that does not parse, points off the screen or cannot be
executed fails the instance. Results: Pass@1 per family, per difficulty and micro-averaged, one record per
instance, a JSON file and a bar plot by family.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TypeVar

from uivenus.actions.coords import CoordinateError, Frame
from uivenus.actions.grammar import parse_response
from uivenus.actions.space import Action
from uivenus.actions.syntax import ParseError
from uivenus.agent.conversation import Turn, build_messages
from uivenus.agent.policies import (
    AnswerKey,
    Mode,
    Policy,
    PolicyError,
    PolicyRequest,
    policy_from_spec,
    with_answers,
)
from uivenus.agent.prompts import captcha_system_prompt
from uivenus.envs.base import Env, EnvError, Observation
from uivenus.synth.captcha import (
    CaptchaSite,
    Instance,
    browser_config,
    load_captchas,
    read_grade,
)

RESULTS_FILE = "captcha_results.json"
PLOT_FILE = "captcha_pass_at_1.png"
G = TypeVar("G")  # what a grader reads off the page

def _plan(text: str, frame: Frame) -> tuple[Action, ...]:
    """The reply's actions in screen pixels; ParseError or CoordinateError when it has none usable."""
    return tuple(frame.action_to_screen(action) for action in parse_response(text, lenient=True).actions)


def execute_actions(env: Env, actions: Iterable[Action], observation: Observation
                    ) -> tuple[Observation, str | None, bool]:
    """Run actions in order until one fails or ends the episode: (latest observation, error, ended)."""
    for action in actions:
        try:
            result = env.step(action)
        except EnvError as exc:  # wrong platform, off-screen
            return observation, f"{type(exc).__name__}: {exc}", False
        observation = result.observation
        if not result.executed:
            return observation, result.error or f"{action.type} was not executed", False
        if action.is_terminal:
            return observation, None, True
    return observation, None, False


def play_captcha(env: Env, policy: Policy, observation: Observation, instruction: str, context: Mapping[str, Any],
                 read: Callable[[Env], G], graded: Callable[[G], bool], max_steps: int
                 ) -> tuple[list[dict[str, Any]], str | None, G]:
    """The turns of one CAPTCHA episode: ask, act, read the grade, until it is graded, fails or ends.

    Returns (turns, error, the last grade read); both graders (our pages', a site's verdict) plug in as `read`."""
    width, height = observation.size
    frame = Frame.relative(width, height)
    system = captcha_system_prompt(env.platform, frame)
    history: list[Turn] = []
    turns: list[dict[str, Any]] = []
    error: str | None = None
    grade = read(env)
    for _ in range(max_steps):
        screenshot = observation.screenshot
        request = PolicyRequest(
            messages=build_messages(system, instruction, history, screenshot, frame=frame),
            mode=Mode.AGENTIC,
            context={"screenshot": screenshot, "instruction": instruction, "screen_size": (width, height),
                     "platform": env.platform, "frame": frame, **context},
        )
        try:
            reply = policy.act(request).text
        except PolicyError as exc:
            error = f"PolicyError: {exc}"
            break
        try:
            actions = _plan(reply, frame)
        except (ParseError, CoordinateError) as exc:
            turns.append({"response": reply, "actions": []})
            error = f"{type(exc).__name__}: {exc}"
            break
        turns.append({"response": reply, "actions": [a.to_dict() for a in actions]})
        observation, error, ended = execute_actions(env, actions, observation)
        grade = read(env)
        if error or ended or graded(grade):
            break
        history.append(Turn(screenshot, reply))
    return turns, error, grade


def solve_instance(env: Env, site: CaptchaSite, instance: Instance, policy: Policy,
                   max_steps: int = 3) -> dict[str, Any]:
    """One episode on `instance`; the record says whether the page's grader passed it, and what happened."""
    started = time.perf_counter()
    observation = env.reset(site.task(instance))
    answering = with_answers(policy, AnswerKey(actions=instance.solution))
    turns, error, grade = play_captcha(env, answering, observation, instance.instruction, {"family": instance.family},
                                       read_grade, lambda g: g.done, max_steps)
    return {
        "id": instance.id, "family": instance.family, "difficulty": instance.difficulty.value,
        "layout": instance.layout, "passed": grade.done and grade.passed, "graded": grade.done,
        "reason": grade.reason, "error": error, "turns": turns, "seconds": round(time.perf_counter() - started, 3),
    }


def rate(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Pass@1 of a group of episode records: n, passed and their share."""
    records = list(records)
    passed = sum(bool(r["passed"]) for r in records)
    return {"n": len(records), "passed": passed, "pass_at_1": passed / len(records) if records else 0.0}


def summarise(records: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Pass@1 micro-averaged over instances, and per family and per difficulty."""
    by: dict[str, dict[str, list[Mapping[str, Any]]]] = {"family": defaultdict(list), "difficulty": defaultdict(list)}
    for record in records:
        for key, groups in by.items():
            groups[record[key]].append(record)
    return {
        **rate(records),
        "per_family": {name: rate(group) for name, group in sorted(by["family"].items())},
        "per_difficulty": {name: rate(group) for name, group in sorted(by["difficulty"].items())},
    }


def plot_pass_at_1(summary: Mapping[str, Any], path: Path, title: str) -> Path:
    """A bar per family plus the micro-average, Pass@1 on a 0–1 axis."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    names = [*summary["per_family"], "all"]
    values = [summary["per_family"][n]["pass_at_1"] for n in names[:-1]] + [summary["pass_at_1"]]
    counts = [summary["per_family"][n]["n"] for n in names[:-1]] + [summary["n"]]
    fig, ax = plt.subplots(figsize=(1.1 * len(names) + 2, 3.6))
    bars = ax.bar(names, values, color=["#3b82e0"] * (len(names) - 1) + ["#1e3a5f"])
    for bar, value, count in zip(bars, values, counts):
        ax.annotate(f"{value:.2f}\n(n={count})", (bar.get_x() + bar.get_width() / 2, value), ha="center",
                    va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points")
    ax.set_ylim(0, 1.18)
    ax.set_ylabel("Pass@1")
    ax.set_title(title)
    ax.tick_params(axis="x", labelrotation=30)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def evaluate_captchas(data_dir: Path | str, policy: Policy | str, out_dir: Path | str, max_steps: int = 3,
                      progress: bool = True, envs: Mapping[str, Env] | None = None) -> dict[str, Any]:
    """Run `policy` on every instance in `data_dir`; write results JSON and a plot to `out_dir`; return the results.

    `envs` maps a layout ("desktop", "phone") to an environment to reuse; layouts without one get a BrowserEnv
    opened here and closed at the end.
    """
    if isinstance(policy, str):
        policy = policy_from_spec(policy)
    instances = load_captchas(data_dir)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = []
    with ExitStack() as stack:
        site = stack.enter_context(CaptchaSite(data_dir))
        live: dict[str, Env] = dict(envs or {})

        def env_for(instance: Instance) -> Env:
            if instance.layout not in live:
                from uivenus.envs.browser import BrowserEnv

                live[instance.layout] = stack.enter_context(BrowserEnv(browser_config(instance)))
            return live[instance.layout]

        for instance in _progress(instances, progress, f"CAPTCHA · {policy.name}"):
            records.append(solve_instance(env_for(instance), site, instance, policy, max_steps))
    results = {"policy": policy.name, "data_dir": str(data_dir), "max_steps": max_steps, **summarise(records),
               "instances": records}
    results_path = out / RESULTS_FILE
    results_path.write_text(json.dumps(results, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    plot = plot_pass_at_1(results, out / PLOT_FILE, f"CAPTCHA Pass@1 · {policy.name}")
    return {**results, "results_path": str(results_path), "plot_path": str(plot)}


def _progress(items: list[Instance], show: bool, label: str) -> Iterable[Instance]:
    if not show:
        yield from items
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task(label, total=len(items))
        for item in items:
            yield item
            bar.advance(task)
