"""LLM synthesis: tasks proposed by a model that reads the capability catalog and the apps' documentation.

One job: ask any `Policy` backend for task proposals (`catalog_prompt`, `LLM_SYSTEM_PROMPT`), read the JSON list
in its reply (`parse_proposals`) and keep each proposal only when it is grounded in the catalog — a known function,
values inside their domains, no broken constraint, an instruction that says every value (`call_problem`). It
builds tasks the same way as the offline `TemplateSynthesizer` (`tasks.synthesis.build_task`) and implements the
same `Synthesizer` protocol; it is kept apart because it is the one synthesizer that talks to a model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from uivenus.agent.policies.base import Message, Mode, Policy, PolicyRequest, Sampling, policy_from_spec
from uivenus.tasks.catalog import ENUM, INT, Catalog, CatalogError, Function, FunctionCall, Param
from uivenus.tasks.catalog_docs import bundled_docs
from uivenus.tasks.functions import (
    IMPLEMENTATIONS, Infeasible, NotImplementedFunctionError, app_model, apply_call, record_labels,
)
from uivenus.tasks.phrasing import compose, phrase_call, sentence
from uivenus.tasks.spec import SynthTask, TaskKind
from uivenus.tasks.synthesis import Dropped, Synthesis, build_task, call_problem
from uivenus.tasks.vocabularies import VOCABULARIES

__all__ = ["LLM_SYSTEM_PROMPT", "LLMSynthesizer", "ProposalSynthesizer", "catalog_prompt", "malformed",
           "parse_proposals"]


LLM_SYSTEM_PROMPT = """You write practice tasks for an agent that operates apps through their screens.
Every task must use exactly one function of the capability catalog you are given, with parameter values from
that function's domains, and must respect every constraint listed. Write the instruction the way a user would
ask, mentioning every parameter value. Answer with a JSON list and nothing else; each item is
{"function": "APP.FUNCTION", "params": {"NAME": VALUE, ...}, "instruction": "..."}."""


def _domain_text(fn: Function, param: Param) -> str:
    if param.domain == ENUM:
        return "one of " + ", ".join(f"{v} ({param.label(v)})" if param.label(v) != v else v for v in param.values)
    if param.domain == INT:
        return f"an integer from {param.low} to {param.high}"
    if param.record_key is not None:
        return f"one of the {param.record_key} in the app: " + ", ".join(
            json.dumps(v, ensure_ascii=False) for v in record_labels(fn.app, app_model(fn.app).setup, param.record_key))
    examples = ", ".join(json.dumps(v, ensure_ascii=False) for v in VOCABULARIES.get(param.domain, ())[:2])
    return f"text ({param.domain})" + (f", e.g. {examples}" if examples else "")


def catalog_prompt(catalog: Catalog, docs: Mapping[str, str], n: int) -> str:
    """The user message of the LLM synthesizer: the runnable functions, their domains, constraints and docs."""
    lines = ["Capability catalog (the only functions you may use):"]
    for fn in catalog.functions():
        if fn.key not in IMPLEMENTATIONS:
            continue
        lines.append(f"- {fn.key}: {fn.description or 'changes ' + ', '.join(fn.effects)}")
        for p in fn.params:
            lines.append(f"    {p.name}{' (optional)' if p.optional else ''}: {_domain_text(fn, p)}")
    constraints = catalog.constraints()
    if constraints:
        lines.append("\nConstraints learned from failed tasks (never break them):")
        lines += [f"- {c.key}{'.' + c.param if c.param else ''}: {c.reason}" for c in constraints]
    for app, text in docs.items():
        lines.append(f"\nDocumentation of {app}:\n{text.strip()}")
    lines.append(f"\nPropose {n} different tasks as a JSON list.")
    return "\n".join(lines)


def parse_proposals(text: str) -> list[Any]:
    """The JSON list in a model's reply (reasoning and code fences around it are ignored); `ValueError` if none."""
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL)
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start:
        raise ValueError("the reply holds no JSON list")
    try:
        items = json.loads(text[start:end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply's list is not JSON: {exc}") from None
    if not isinstance(items, list):
        raise ValueError("the reply's JSON is not a list")
    return items


class ProposalSynthesizer:
    """Tasks a model proposes from a prompt about the catalog: one request, the reply's JSON list, each item turned
    into a task by `_task` (or dropped with the reason). Subclasses say what the prompt holds and how an item is
    grounded."""

    name = "proposals"

    def __init__(self, policy: Policy | str, *, temperature: float = 0.7, max_new_tokens: int = 2048) -> None:
        self.policy = policy_from_spec(policy) if isinstance(policy, str) else policy
        self.sampling = Sampling(temperature=temperature, max_new_tokens=max_new_tokens, thinking=False)

    def _prompt(self, catalog: Catalog, n: int) -> str:
        raise NotImplementedError

    def _task(self, catalog: Catalog, item: Any, provenance: Mapping[str, Any]) -> SynthTask | Dropped:
        raise NotImplementedError

    def synthesize(self, catalog: Catalog, n: int) -> Synthesis:
        request = PolicyRequest(messages=(Message("system", (LLM_SYSTEM_PROMPT,)),
                                          Message("user", (self._prompt(catalog, n),))),
                                mode=Mode.AGENTIC, sampling=self.sampling)
        reply = self.policy.act(request)
        try:
            items = parse_proposals(reply.text)
        except ValueError as exc:
            return Synthesis((), (Dropped(str(exc), {"reply": reply.text[:500]}),))
        provenance = {"synthesizer": f"{self.name}:{getattr(self.policy, 'name', 'policy')}",
                      "catalog_version": catalog.version}
        tasks: dict[str, SynthTask] = {}
        dropped = []
        for item in items[:n]:
            made = malformed(item) or self._task(catalog, item, provenance)
            if isinstance(made, Dropped):
                dropped.append(made)
            else:
                tasks.setdefault(made.id, made)
        return Synthesis(tuple(tasks.values()), tuple(dropped))


def malformed(item: Any) -> Dropped | None:
    """Why a proposal is not of the shape {function: 'APP.NAME', params: {...}, instruction: '...'}, or None."""
    if (isinstance(item, Mapping) and isinstance(item.get("function"), str) and item["function"].count(".") == 1
            and isinstance(item.get("params", {}), Mapping) and isinstance(item.get("instruction"), str)
            and item["instruction"].strip()):
        return None
    return Dropped("malformed proposal: needs function 'APP.NAME', params {...} and an instruction", {"item": item})


class LLMSynthesizer(ProposalSynthesizer):
    """Tasks proposed by a model that reads the catalog and the apps' documentation ("deep research"); each
    proposal is kept only when it is grounded in the catalog."""

    name = "llm"

    def __init__(self, policy: Policy | str, *, docs: Mapping[str, str] | None = None, layout: str = "web",
                 temperature: float = 0.7, max_new_tokens: int = 2048) -> None:
        super().__init__(policy, temperature=temperature, max_new_tokens=max_new_tokens)
        self.docs = docs
        self.layout = layout

    def _docs(self, catalog: Catalog) -> dict[str, str]:
        if self.docs is not None:
            return dict(self.docs)
        out = {}
        for app in catalog.apps:
            try:
                out[app] = bundled_docs(app)
            except CatalogError:
                continue
        return out

    def _prompt(self, catalog: Catalog, n: int) -> str:
        return catalog_prompt(catalog, self._docs(catalog), n)

    def _task(self, catalog: Catalog, item: Any, provenance: Mapping[str, Any]) -> SynthTask | Dropped:
        app, name = item["function"].split(".")
        call = FunctionCall(app, name, item.get("params") or {})
        instruction = " ".join(item["instruction"].split())
        if (problem := call_problem(catalog, call, instruction=instruction)) is not None:
            return Dropped(problem, {"item": item})
        setup = app_model(app).setup
        try:
            apply_call(setup, call)
        except (Infeasible, NotImplementedFunctionError) as exc:
            return Dropped(f"{call.key}: {exc}", {"item": item})
        templated = compose([phrase_call(catalog.function(call.key), call)])
        phrasings = tuple(dict.fromkeys([sentence(instruction), *templated]))
        return build_task([call], phrasings, TaskKind.SINGLE, setup, provenance, layout=self.layout)
