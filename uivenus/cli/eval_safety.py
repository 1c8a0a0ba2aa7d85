"""`uivenus eval safety`: attack success rate of a policy behind the guard, per guard mode, and the guard's false
alarms on the benign sandbox tasks (oracle, confirm mode, nobody to ask)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import typer

from uivenus.agent.safety import GuardMode
from uivenus.cli.console import cli_console
from uivenus.cli.errors import fail
from uivenus.files import write_json

console = cli_console()


def _items(text: str | None) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def _show(result: Any) -> None:
    said = "HARMED" if result.harmed else "error" if result.error else "safe"
    console.print(f"  {result.id}: {said}{', task done' if result.done else ''}")


def eval_safety(
    policy: str = typer.Option("obedient", "--policy",
                               help="Policy SPEC: obedient, oracle, hf:PATH, openai:URL#MODEL, …"),
    guard: list[GuardMode] = typer.Option([GuardMode.ALLOW, GuardMode.CONFIRM], "--guard",
                                          help="Guard mode(s) to measure; repeat for several."),
    categories: str = typer.Option(None, "--categories", help="Comma-separated: misuse, injection, misbehaviour."),
    layouts: str = typer.Option("web,phone,desktop", "--layouts",
                                help="Comma-separated: web, phone (sandbox apps), desktop (OSWorld-format tasks)."),
    case_ids: str = typer.Option(None, "--cases", help="Comma-separated case ids or id prefixes (default: all)."),
    false_alarms: bool = typer.Option(True, "--false-alarms/--no-false-alarms",
                                      help="Also run the oracle on every bundled benign task (confirm mode)."),
    max_steps: int = typer.Option(20, "--max-steps", min=1, help="Step budget of an episode."),
    workers: int = typer.Option(1, "--workers", min=1,
                                help="Episodes run at once, each worker with its own browsers / desktop."),
    desktop_tasks: Path = typer.Option(None, "--desktop-tasks", exists=True,
                                       help="OSWorld-format safety tasks (a file or a folder tree) to run instead "
                                            "of the bundled desktop cases."),
    judge: str = typer.Option(None, "--judge",
                              help="A judge SPEC that answers each desktop case's safety question, e.g. "
                                   "vlm:openai:http://127.0.0.1:8000/v1#MODEL (see docs/verification.md)."),
    out: Path = typer.Option(Path("runs/safety"), "--out",
                             help="Directory for summary.json, results.json and report.html."),
) -> None:
    """Run the safety suite: ASR by category, surface and guard mode, benign success, utility under attack."""
    from uivenus.agent.policies import PolicySpecError, policy_from_spec
    from uivenus.envs.base import EnvError
    from uivenus.envs.sandbox.tasks import APP_NAMES, tasks_of
    from uivenus.evals.safety import SafetyError, run_safety, select, summarise
    from uivenus.evals.safety_cases import LAYOUTS, desktop_cases, suite
    from uivenus.reports.pages import write_safety_report
    from uivenus.verify.base import VerifyError
    from uivenus.verify.judges import judge_from_spec

    try:
        cases = select((*suite(), *desktop_cases(desktop_tasks)), _items(categories), _items(layouts),
                       _items(case_ids))
        agent = policy_from_spec(policy)
        judging = judge_from_spec(judge) if judge else None
    except (SafetyError, PolicySpecError, VerifyError, ValueError) as exc:
        fail(str(exc))
    modes = list(dict.fromkeys(guard))
    benign = sorted(task.id for app in APP_NAMES for task in tasks_of(app)) if false_alarms else []
    console.print(f"{len(cases)} cases × guard {', '.join(m.value for m in modes)}"
                  + (f", and the oracle on {len(benign)} benign tasks" if benign else "") + f"; {workers} worker(s) …")
    load = os.getloadavg()
    try:
        run = run_safety(cases, agent, modes, benign_tasks=benign,
                         benign_layouts=[l for l in _items(layouts) or LAYOUTS if l in LAYOUTS], workers=workers,
                         max_steps=max_steps, judge=judging, on_result=_show)
    except EnvError as exc:
        fail(f"the sandbox browser could not run: {exc}")
    finally:
        agent.close()
        if judging is not None:
            getattr(judging, "close", lambda: None)()
    per_mode = {mode.value: summarise(run.of(mode)) for mode in modes}
    summary: dict[str, Any] = {"policy": policy, "guard": [m.value for m in modes], "judge": judge, "n": len(cases)}
    for key in ("asr", "asr_by_category", "asr_by_surface", "asr_by_layout", "benign_success", "utility_under_attack",
                "errors", "flagged", "judge_agreement"):
        summary[key] = {mode: figures[key] for mode, figures in per_mode.items()}
    alarm_rate = round(len(run.alarms) / run.benign, 4) if run.benign else None
    summary["guard_false_alarm"] = {"rate": alarm_rate, "n": run.benign, "alarms": [a.to_dict() for a in run.alarms]}
    summary["seconds"] = run.seconds
    summary["episode_seconds_by_layout"] = {
        layout: round(sum(r.seconds for r in run.results if r.layout == layout), 1)
        for layout in sorted({r.layout for r in run.results})}
    summary["workers"] = workers
    summary["load_average"] = {"start": [round(x, 2) for x in load], "end": [round(x, 2) for x in os.getloadavg()]}
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "summary.json", summary)
    write_json(out / "results.json", [r.to_dict() for r in run.results])
    report = write_safety_report(out / "report.html", summary, [r.to_dict() for r in run.results])
    for mode in summary["guard"]:
        console.print(f"[bold]{mode}[/bold]: ASR {summary['asr'][mode]} by category "
                      f"{summary['asr_by_category'][mode]}; "
                      f"benign success {summary['benign_success'][mode]}, utility under attack "
                      f"{summary['utility_under_attack'][mode]}, errors {summary['errors'][mode]}")
    console.print(f"guard false alarms: {alarm_rate} ({len(run.alarms)}/{run.benign})")
    console.print(f"{run.seconds} s wall time on {workers} worker(s) (load average {load[0]:.1f} at the start)")
    console.print(f"wrote {out / 'summary.json'}, {out / 'results.json'} and {report}")
