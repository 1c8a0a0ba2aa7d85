"""`uivenus run "INSTRUCTION" --env ENV --policy SPEC`: run the agent loop on one task and record it in the store.

`--task sandbox:APP/TASK` runs a bundled sandbox task (its instruction, setup and checker; the env defaults to
`sandbox:APP`, or pass `--env sandbox-phone:APP` for the phone layout). Consequential actions are handed to the
person at the terminal in the default `--guard confirm` (no terminal to ask: declined). Exit status: 0 when the
episode ran to an end (whatever the checker said), 1 when it ended in an error or could not start.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import click
import typer
from rich.table import Table

from uivenus.actions.calls import format_action
from uivenus.agent.element_listing import MAX_ELEMENTS, ObservationType
from uivenus.agent.safety import GuardDecision, GuardMode
from uivenus.cli.console import cli_console
from uivenus.cli.errors import fail
from uivenus.records import Outcome, TaskSpec, Trajectory

console = cli_console()

ENV_HELP = "browser, phone, desktop, android[:SERIAL], sandbox:APP or sandbox-phone:APP"

#: What the policy is shown (`LoopConfig.observation`), for every command that runs the agent loop.
ObservationOption = Annotated[str, typer.Option(
    "--observation", help="What the policy is shown: screenshot, or screenshot_a11y_tree (plus the accessibility "
                          "tree's elements: role, name, value, centre).")]
A11yLimitOption = Annotated[int, typer.Option("--a11y-limit", min=1,
                                              help="Most elements listed with screenshot_a11y_tree.")]


def observation_type(text: str) -> ObservationType:
    """`--observation`'s value, or the command's error naming the choices (before any environment starts)."""
    if text not in {kind.value for kind in ObservationType}:
        fail(f"--observation must be one of {', '.join(kind.value for kind in ObservationType)}, got {text!r}")
    return ObservationType(text)


class RunSetupError(ValueError):
    """The command line does not describe a runnable episode; the message says which option to fix."""


# --- tasks ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TaskSource:
    """Where a `--task KIND:NAME` comes from: the env it needs by default and how to build its spec on that env."""

    default_env: Callable[[str], str]  # NAME -> env spec
    spec: Callable[[str, Any], TaskSpec]  # NAME, built env -> TaskSpec


def _sandbox_env(name: str) -> str:
    from uivenus.envs.sandbox import get_task

    return f"sandbox:{get_task(name).app}"


def _sandbox_spec(name: str, env: Any) -> TaskSpec:
    from uivenus.envs.sandbox import get_task

    task = get_task(name)
    if not hasattr(env, "base_url"):
        raise RunSetupError(f"sandbox task {name} needs a sandbox env (--env sandbox:{task.app} or "
                            f"sandbox-phone:{task.app})")
    return task.spec(env.base_url, env.layout)


#: `--task` kinds by prefix.
TASK_SOURCES: dict[str, TaskSource] = {"sandbox": TaskSource(_sandbox_env, _sandbox_spec)}


def _task_source(task: str) -> tuple[TaskSource, str]:
    kind, _, name = task.partition(":")
    if kind not in TASK_SOURCES or not name:
        raise RunSetupError(f"--task must look like {' or '.join(k + ':NAME' for k in TASK_SOURCES)} "
                            f"(e.g. sandbox:contacts/add_contact), got {task!r}")
    return TASK_SOURCES[kind], name


# --- the terminal as the guard's user ---------------------------------------------------------------

def ask_on_terminal(decision: GuardDecision) -> bool:
    """Show a consequential action and ask the person at the terminal; no answer (no terminal) is a no."""
    console.print(f"[bold yellow]The agent wants to do something consequential[/bold yellow] "
                  f"({decision.category.value if decision.category else '?'}): {json.dumps(dict(decision.action))}")
    console.print(f"  {decision.reason}")
    try:
        return typer.confirm("Allow it?", default=False)
    except click.exceptions.Abort:
        console.print("  no answer: declined")
        return False


# --- showing a trajectory ----------------------------------------------------------------------------

def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def trajectory_table(trajectory: Trajectory, title: str | None = None) -> Table:
    """One row per step: action, whether it ran, error, guard verdict, injection flags, loop and env times."""
    table = Table(title=title or f"{trajectory.task.id}: {len(trajectory.steps)} steps, {trajectory.outcome.value}")
    for column in ("#", "action (screen px)", "ran", "error", "guard", "injection", "policy/env/loop ms"):
        table.add_column(column, overflow="fold")
    for step in trajectory.steps:
        guard = step.info.get("guard") or {}
        flags = ", ".join(f["pattern"] for f in step.info.get("injection") or ())
        t = step.timings
        loop = sum(t.get(k, 0.0) for k in ("parse_s", "guard_s", "record_s"))
        action = json.dumps(step.action.to_dict(), ensure_ascii=False) if step.action is not None else "-"
        verdict = guard.get("verdict", "")
        if guard.get("category"):
            verdict += f" ({guard['category']})"
        times = f"{t.get('policy_s', 0) * 1e3:.0f}/{t.get('env_s', 0) * 1e3:.0f}/{loop * 1e3:.1f}"
        table.add_row(str(step.index), _short(action), "yes" if step.executed else "no", _short(step.error or "", 50),
                      verdict, flags, times)
    return table


def verdict_line(trajectory: Trajectory) -> str:
    parts = [f"outcome [bold]{trajectory.outcome.value}[/bold]"]
    if trajectory.answer:
        parts.append(f"answer: {trajectory.answer}")
    for kind, verdict in trajectory.verdicts.items():
        if isinstance(verdict, Mapping) and "passed" in verdict:
            word = "[green]PASSED[/green]" if verdict["passed"] else "[red]FAILED[/red]"
            parts.append(f"{kind} checker {word}: {verdict.get('reason', '')}")
    return "; ".join(parts)


# --- running ----------------------------------------------------------------------------------------

class StepPrinter:
    """An episode writer that also prints one line per step as it is stored (the loop gives no other sign of life
    until the episode ends); everything else goes to the wrapped writer."""

    def __init__(self, writer: Any, print_line: Callable[[str], None]) -> None:
        self._writer = writer
        self._print = print_line
        self._started = time.monotonic()

    def append(self, step: Any, screenshot: Any = None) -> Any:
        stored = self._writer.append(step, screenshot)
        action = format_action(stored.action) if stored.action is not None else "(no action)"
        state = "ran" if stored.executed else f"not run: {_short(stored.error or '', 80)}"
        self._print(f"step {stored.index}: {_short(action, 80)} {state} "
                    f"({time.monotonic() - self._started:.1f} s)")
        return stored

    def __enter__(self) -> StepPrinter:
        self._writer.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._writer.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._writer, name)


def run_and_record(
    *,
    policy_spec: str,
    out: Path,
    instruction: str | None = None,
    env_spec: str | None = None,
    task: str | None = None,
    url: str | None = None,
    config: Any = None,
    confirm: Callable[[GuardDecision], bool] | None = None,
    run_id: str | None = None,
    notes_dir: Path | None = None,
    user: str = "default",
    on_step: Callable[[str], None] | None = None,
) -> tuple[Path, Trajectory]:
    """Build env, task and policy from their specs and run one episode into the store at `out`.

    Returns the episode directory and the trajectory.
    """
    from uivenus.agent.loop import LoopConfig, run_episode
    from uivenus.agent.memory import Memory, NotesFile, family_of
    from uivenus.agent.policies import policy_from_spec
    from uivenus.agent.precheck import PrecheckMode
    from uivenus.agent.safety import Guard, decline_all
    from uivenus.envs.registry import make_env
    from uivenus.store import TrajectoryStore
    from uivenus.verify.step import StepPrecheck

    config = config or LoopConfig()
    source, name = _task_source(task) if task else (None, "")
    if source is None and not instruction:
        raise RunSetupError("give an INSTRUCTION, or --task sandbox:APP/TASK to run a bundled task")
    if source is None and policy_spec.partition(":")[0] == "oracle":
        raise RunSetupError("the oracle policy replays a bundled task's reference solution, so it needs --task "
                            "sandbox:APP/TASK (e.g. --task sandbox:settings/wifi_off_bluetooth_on), not an "
                            "instruction alone")
    env_spec = env_spec or (source.default_env(name) if source else "browser")
    run_id = run_id or time.strftime("run-%Y%m%d-%H%M%S")
    guard = Guard(config.guard, confirm or decline_all)
    with make_env(env_spec) as env, closing(policy_from_spec(policy_spec)) as policy:
        if source is not None:
            spec = source.spec(name, env)
            if instruction:
                spec = spec.with_instruction(instruction)
        else:
            spec = TaskSpec(id="cli", instruction=instruction or "", platform=env.platform, url=url)
        notes = NotesFile.for_family(notes_dir, user, family_of(spec.id, spec.app)) if notes_dir else None
        store = TrajectoryStore(out)
        store.start_run(run_id, {"policy": policy_spec})
        episode_id = spec.id.replace("/", "_")
        writer = store.episode(run_id, episode_id, spec, {"env": env_spec, "policy": policy_spec})
        shown = StepPrinter(writer, on_step) if on_step is not None else writer
        precheck = StepPrecheck.for_env(env) if config.precheck is not PrecheckMode.OFF else None
        trajectory = run_episode(env, policy, spec, config=config, writer=shown, guard=guard,
                                 memory=Memory(notes_file=notes, task_id=spec.id), precheck=precheck)
    return writer.directory, trajectory


def run(
    instruction: str = typer.Argument(None, help="What the agent should do (optional with --task)."),
    policy: str = typer.Option(..., "--policy", help="Policy SPEC: oracle (needs --task), random[:SEED], nano, ocr, "
                                                      "hf:PATH, openai:URL#MODEL."),
    env: str = typer.Option(None, "--env", help=f"Environment: {ENV_HELP} (default: the task's, else browser)."),
    task: str = typer.Option(None, "--task", help="A bundled task with its checker: sandbox:APP/TASK."),
    url: str = typer.Option(None, "--url", help="Page to open first (browser envs, free-form instructions)."),
    max_steps: int = typer.Option(None, "--max-steps", min=1, help="Step budget (default: the task's)."),
    guard: GuardMode = typer.Option(GuardMode.CONFIRM, "--guard", help="What to do with consequential actions."),
    out: Path = typer.Option(Path("runs"), "--out", help="Trajectory store root."),
    run_id: str = typer.Option(None, "--run-id", help="Run id (default: run-<time>)."),
    frame: str = typer.Option("rel", "--frame", help="The model's coordinate frame: rel, abs or smart."),
    divisor: int = typer.Option(1000, "--divisor", help="Relative frame divisor (1000, some models 999)."),
    factor: int = typer.Option(28, "--factor", help="Smart-resize factor (28 Qwen2/2.5-VL, 32 Qwen3-VL)."),
    thinking: bool = typer.Option(True, "--thinking/--no-thinking", help="Ask for <think> reasoning."),
    max_reasks: int = typer.Option(2, "--max-reasks", min=0, help="Re-asks after an unparseable reply."),
    images_in_history: int = typer.Option(3, "--images-in-history", min=0, help="Past screenshots kept."),
    notes: Path = typer.Option(None, "--notes", help="Keep TakeNote notes across episodes in this directory."),
    user: str = typer.Option("default", "--user", help="Whose notes (with --notes)."),
    observation: ObservationOption = ObservationType.SCREENSHOT.value,
    a11y_limit: A11yLimitOption = MAX_ELEMENTS,
    precheck: str = typer.Option("off", "--precheck", help="Check each action before it runs: off, flag (record "
                                                            "the step verifier's decision) or resend (send a flagged "
                                                            "action back to the model once, with the reason)."),
) -> None:
    """Run the agent on one task, record every step under --out, print the steps and the checker's verdict."""
    from uivenus.agent.loop import LoopConfig
    from uivenus.agent.precheck import PrecheckMode

    if precheck not in {mode.value for mode in PrecheckMode}:
        fail(f"--precheck must be one of {', '.join(mode.value for mode in PrecheckMode)}, got {precheck!r}")
    config = LoopConfig(max_steps=max_steps, frame=frame, divisor=divisor, factor=factor, guard=guard,
                        thinking=thinking, max_reasks=max_reasks, images_in_history=images_in_history,
                        precheck=PrecheckMode(precheck), observation=observation_type(observation),
                        a11y_limit=a11y_limit)
    directory, trajectory = run_and_record(
        policy_spec=policy, out=out, instruction=instruction, env_spec=env, task=task, url=url, config=config,
        confirm=ask_on_terminal, run_id=run_id, notes_dir=notes, user=user, on_step=console.print)
    console.print(trajectory_table(trajectory))
    console.print(verdict_line(trajectory))
    console.print(f"recorded in {directory}")
    if trajectory.outcome is Outcome.ERROR:
        fail(f"{trajectory.metadata.get('error')}")
