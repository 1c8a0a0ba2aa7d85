"""The explored apps' catalog as a Markdown summary: per app its states, functions and failures, then each
function with its parameters and the effect seen, so a reader sees what the explorer found without the JSON."""

from __future__ import annotations

from collections import Counter

from uivenus.tasks.app_catalog import AppExploration, AppFunction, RealCatalog

__all__ = ["catalog_markdown"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _effect(fn: AppFunction) -> str:
    if fn.effect is None:
        return "not tried"
    if fn.effect.target is None:
        return "the app was gone afterwards"
    parts = [f"+{len(fn.effect.tree.added)} −{len(fn.effect.tree.removed)} ~{len(fn.effect.tree.changed)} elements"]
    parts += [f"{c.change} `{c.path}`" for c in fn.effect.files[:3]]
    if fn.effect.target == fn.state:
        parts.append("same state")
    return "; ".join(parts)


def _app(e: AppExploration) -> list[str]:
    lines = [f"## {e.app} ({e.platform}: `{' '.join(e.launch)}`)", "",
             f"{len(e.states)} states, {len(e.functions)} functions, {len(e.failures)} failures in "
             f"{e.elapsed_s:.0f} s (depth ≤ {e.max_depth}, {e.time_limit_s:.0f} s budget; "
             f"{'every reachable state expanded' if e.complete else 'stopped by the time limit or a failure'}).", ""]
    if e.functions:
        lines += ["| function | kind | parameters | effect |", "| --- | --- | --- | --- |"]
        for name, fn in e.functions.items():
            params = ", ".join(f"{p.name}: {p.domain}" + (f" {list(p.values)[:5]}" if p.values else "")
                               for p in fn.params)
            lines.append(f"| `{name}` | {fn.kind.value} | {_cell(params)} | {_cell(_effect(fn))} |")
        lines.append("")
    if e.failures:
        lines += ["| failure | state | detail |", "| --- | --- | --- |"]
        lines += [f"| {f.kind.value} | {f.state or ''} | {_cell(f.detail[:160])} |" for f in e.failures]
        lines.append("")
    return lines


def catalog_markdown(catalog: RealCatalog) -> str:
    """The summary: one table of counts over all apps, then one section per app."""
    lines = ["# Explored apps", "", "| app | platform | states | functions | failures | failure kinds |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, e in catalog.apps.items():
        kinds = ", ".join(f"{k}: {n}" for k, n in sorted(Counter(f.kind.value for f in e.failures).items()))
        lines.append(f"| {name} | {e.platform} | {len(e.states)} | {len(e.functions)} | {len(e.failures)} | {kinds} |")
    lines.append("")
    for e in catalog.apps.values():
        lines += _app(e)
    return "\n".join(lines) + "\n"
