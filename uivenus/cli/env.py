"""`uivenus env shot|play|solve`: look at an environment, drive it with given actions, run a sandbox task."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer
from rich.table import Table

from uivenus.cli.console import cli_console

app = typer.Typer(help="Screenshots, scripted actions and sandbox reference solutions.", no_args_is_help=True)
console = cli_console()

ENV_HELP = "browser, phone, desktop, android[:SERIAL], sandbox:APP or sandbox-phone:APP"


def _task_for(env_spec: str, url: str | None, instruction: str):
    """A free-form task for `env_spec` (sandbox envs pick their app's page when no URL is given)."""
    from uivenus.actions.space import Platform
    from uivenus.records import TaskSpec

    platform = {"phone": Platform.MOBILE, "sandbox-phone": Platform.MOBILE, "android": Platform.MOBILE,
                "desktop": Platform.DESKTOP}.get(env_spec.partition(":")[0], Platform.WEB)
    return TaskSpec(id=f"cli/{env_spec}", instruction=instruction, platform=platform, url=url)


def read_actions(path: Path) -> list:
    """Actions from a file: a JSON list of action dicts, or one action call per line (`Click(point=(1, 2))`)."""
    from uivenus.actions.calls import parse_actions
    from uivenus.actions.space import action_from_dict
    from uivenus.actions.syntax import ParseError
    from uivenus.actions.values import ActionError

    text = path.read_text(encoding="utf-8")
    try:
        if text.lstrip().startswith("["):
            return [action_from_dict(item) for item in json.loads(text)]
        return [action for line in text.splitlines() if line.strip() for action in parse_actions(line)]
    except (ParseError, ActionError, json.JSONDecodeError) as exc:
        raise typer.BadParameter(f"{path}: {exc}") from None


@app.command("shot")
def shot(
    env: str = typer.Option("browser", help=ENV_HELP),
    out: Path = typer.Option(Path("shot.png"), help="Where to write the PNG."),
    url: str = typer.Option(None, help="Page to open (browser kinds)."),
) -> None:
    """Write a screenshot of an environment after resetting it."""
    from uivenus.envs.registry import make_env

    with make_env(env) as environment:
        observation = environment.reset(_task_for(env, url, "screenshot"))
        out.parent.mkdir(parents=True, exist_ok=True)
        observation.screenshot.save(out)
    console.print(f"wrote {out} ({observation.size[0]}x{observation.size[1]} logical pixels)")


@app.command("play")
def play(
    actions: Path = typer.Option(..., exists=True, dir_okay=False,
                                 help="JSON list of actions or one call per line, in screen pixels."),
    env: str = typer.Option("browser", help=ENV_HELP),
    url: str = typer.Option(None, help="Page to open first (browser kinds)."),
    out: Path = typer.Option(Path("runs"), help="Trajectory store root."),
    run_id: str = typer.Option(None, help="Run id (default: play-<time>)."),
) -> None:
    """Execute a list of actions and record the trajectory in the store."""
    from uivenus.envs.base import EnvError
    from uivenus.envs.registry import make_env
    from uivenus.records import Outcome, Step
    from uivenus.store import TrajectoryStore

    planned = read_actions(actions)
    task = _task_for(env, url, f"play {actions.name}")
    run_id = run_id or time.strftime("play-%Y%m%d-%H%M%S")
    store = TrajectoryStore(out)
    with make_env(env) as environment, store.episode(run_id, "episode-0", task, {"env": env}) as episode:
        observation = environment.reset(task)
        outcome = Outcome.FINISHED
        for action in planned:
            try:
                result = environment.step(action)
            except EnvError as exc:  # refused before executing: wrong platform, off-screen
                episode.append(Step(index=0, action=action, error=f"{type(exc).__name__}: {exc}"),
                               observation.screenshot)
                outcome = Outcome.ERROR
                break
            episode.append(Step(index=0, action=action, executed=result.executed, error=result.error,
                                timings=result.timings, info=dict(result.info)), observation.screenshot)
            observation = result.observation
        episode.finish(outcome)
    console.print(f"recorded {len(planned)} planned actions in {store.episode_dir(run_id, 'episode-0')} "
                  f"({outcome.value})")


@app.command("solve")
def solve(
    task_id: str = typer.Argument(..., help="sandbox:APP/TASK, e.g. sandbox:notes/create_note"),
    layout: str = typer.Option("web", help="web or phone"),
) -> None:
    """Run a bundled sandbox task's reference solution and report whether its checker passes."""
    from uivenus.actions.calls import format_action
    from uivenus.envs.browser import BrowserEnv
    from uivenus.envs.browser_config import BrowserConfig
    from uivenus.envs.sandbox import SandboxServer, get_task
    from uivenus.envs.sandbox.runner import run_reference

    kind, _, name = task_id.partition(":")
    if kind != "sandbox" or "/" not in name:
        raise typer.BadParameter(f"expected sandbox:APP/TASK, got {task_id!r}")
    task = get_task(name)
    mode = {"web": "desktop", "phone": "phone"}[layout]
    with SandboxServer() as server, BrowserEnv(BrowserConfig(mode=mode)) as env:
        run = run_reference(task, env, server.base_url, layout)
    table = Table(title=f"{task.id} ({layout})")
    table.add_column("#")
    table.add_column("action")
    table.add_column("executed")
    for index, action in enumerate(run.actions):
        executed = run.results[index].executed if index < len(run.results) else "-"
        table.add_row(str(index), format_action(action), str(executed))
    console.print(table)
    verdict = "[green]PASSED[/green]" if run.passed else "[red]FAILED[/red]"
    console.print(f"checker {verdict}: {run.check.reason}" + (f" ({run.error})" if run.error else ""))
    if not run.passed:
        raise typer.Exit(1)
