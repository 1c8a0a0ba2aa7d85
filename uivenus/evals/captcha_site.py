"""CAPTCHA Pass@1 on sites that grade themselves (Open CaptchaWorld, NextGen-CAPTCHAs and sites shaped like them).

Such a site is a web app: its page at `/` fetches a puzzle (`GET /api/get_puzzle?type=<Type>` on Open
CaptchaWorld) and sends the answer to the server, whose reply carries the verdict (`POST /api/check_answer` →
`{"correct": true|false, ...}`). One episode per puzzle: the page opens in a fresh browser context (with
`?type=<Type>` when types are asked for), the policy acts on the screenshot for up to `max_steps` replies, and the
first verdict the site gives is final (Pass@1). Where the verdict is read is a `VerdictSource`, named by a spec:

- `response:<url-glob>#<json-field>`: the JSON body of the first response whose URL matches the glob (`*` allowed;
  a glob without `*` matches anywhere in the URL), its field (dotted for nested) read as true/false;
- `dom:<selector>`: the text of the element, for pages that only show the verdict: it passes when the text says
  so (`correct`, `success`, `passed`, `verified`), fails on `incorrect`, `wrong`, `fail`, `try again`.

A puzzle's type is what the site reports (`type_field` of the first puzzle response, e.g. Open CaptchaWorld's
`puzzle_type`), else the type asked for. A reply that does not parse, or an episode without a verdict, fails.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode, urlsplit, urlunsplit

from uivenus.agent.policies.base import Policy, policy_from_spec
from uivenus.evals.captcha import play_captcha, plot_pass_at_1, rate
from uivenus.files import write_json
from uivenus.records import TaskSpec

__all__ = [
    "DomVerdict", "ResponseVerdict", "SiteVerdict", "VERDICT_SOURCES", "CaptchaSiteError", "VerdictSource",
    "evaluate_captcha_site", "site_puzzle_urls", "verdict_source",
]

RESULTS_FILE = "captcha_site_results.json"
PLOT_FILE = "captcha_site_pass_at_1.png"
#: What the policy is told: the page itself says what the puzzle asks.
INSTRUCTION = "Solve the CAPTCHA puzzle on this page and submit your answer."
_POSITIVE = re.compile(r"\b(correct|success|successful|passed|verified)\b", re.IGNORECASE)
_NEGATIVE = re.compile(r"\b(incorrect|wrong|fail|failed|failure|try again|not correct)\b", re.IGNORECASE)


class CaptchaSiteError(ValueError):
    """A verdict spec or site URL is malformed; the message shows the expected shape."""


@dataclass(frozen=True)
class SiteVerdict:
    """What a self-grading page said: graded or not yet, and if graded whether it passed, with the evidence."""

    graded: bool
    passed: bool = False
    evidence: str = ""


class VerdictSource(Protocol):
    """Reads a site's verdict from the live browser env; also names the responses the env must keep."""

    capture: tuple[str, ...]  # URL globs the browser keeps responses of

    def read(self, env: Any) -> SiteVerdict: ...


def _glob(pattern: str) -> str:
    return pattern if "*" in pattern else f"*{pattern}*"


def _field(body: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(body, Mapping) or part not in body:
            return None
        body = body[part]
    return body


@dataclass(frozen=True)
class ResponseVerdict:
    """The verdict is a JSON field of the first matching response (`response:<url-glob>#<field>`)."""

    pattern: str
    field: str

    @property
    def capture(self) -> tuple[str, ...]:
        return (_glob(self.pattern),)

    def read(self, env: Any) -> SiteVerdict:
        for response in env.captured_responses():
            value = _field(response["json"], self.field)
            if isinstance(value, bool):
                return SiteVerdict(True, value, f"{response['url']} -> {self.field}={value}")
        return SiteVerdict(False)


@dataclass(frozen=True)
class DomVerdict:
    """The verdict is the text of an element (`dom:<selector>`): graded once it says pass or fail."""

    selector: str
    capture: tuple[str, ...] = ()

    def read(self, env: Any) -> SiteVerdict:
        text = env.text(self.selector) or ""
        if _NEGATIVE.search(text):
            return SiteVerdict(True, False, f"{self.selector}: {text[:120]!r}")
        if _POSITIVE.search(text):
            return SiteVerdict(True, True, f"{self.selector}: {text[:120]!r}")
        return SiteVerdict(False)


def _response(rest: str) -> ResponseVerdict:
    pattern, sep, field = rest.rpartition("#")
    if not sep or not pattern or not field:
        raise CaptchaSiteError(f"a response verdict is response:<url-pattern>#<json-field>, e.g. "
                               f"response:/api/check_answer#correct; got response:{rest}")
    return ResponseVerdict(pattern, field)


def _dom(rest: str) -> DomVerdict:
    if not rest.strip():
        raise CaptchaSiteError("a dom verdict is dom:<css selector>, e.g. dom:#result")
    return DomVerdict(rest.strip())


#: Verdict sources by the spec's prefix.
VERDICT_SOURCES: Mapping[str, Callable[[str], VerdictSource]] = {"response": _response, "dom": _dom}


def verdict_source(spec: str) -> VerdictSource:
    """The verdict source a spec names (`response:<url-pattern>#<json-field>` or `dom:<selector>`)."""
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in VERDICT_SOURCES:
        raise CaptchaSiteError(f"unknown verdict spec {spec!r}; use response:<url-pattern>#<json-field> or "
                               "dom:<selector>")
    return VERDICT_SOURCES[kind](rest)


def site_puzzle_urls(site: str, types: Sequence[str], n: int) -> list[tuple[str | None, str]]:
    """(type asked for, page URL) of every episode: `n` per type (the page with `?type=<Type>`), or `n` of the
    site's own choosing when no type is given."""
    parts = urlsplit(site)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CaptchaSiteError(f"--site must be an http(s) URL, got {site!r}")
    if not types:
        return [(None, site)] * n
    return [(kind, urlunsplit(parts._replace(query="&".join(filter(None, [parts.query, urlencode({"type": kind})])))))
            for kind in types for _ in range(n)]


def _reported_type(env: Any, type_field: str) -> str | None:
    for response in env.captured_responses():
        value = _field(response["json"], type_field)
        if isinstance(value, str) and value:
            return value
    return None


def solve_site_puzzle(env: Any, policy: Policy, source: VerdictSource, url: str, asked: str | None,
                      index: int, max_steps: int = 3, type_field: str = "puzzle_type") -> dict[str, Any]:
    """One episode on the puzzle page at `url`: the record says whether the site's first verdict was a pass."""
    started = time.perf_counter()
    task = TaskSpec(id=f"site-{index}", instruction=INSTRUCTION, platform=env.platform, url=url, max_steps=max_steps)
    observation = env.reset(task)
    turns, error, verdict = play_captcha(env, policy, observation, INSTRUCTION, {}, source.read, lambda v: v.graded,
                                         max_steps)
    kind = _reported_type(env, type_field) if type_field else None
    return {"index": index, "url": url, "type": kind or asked or "-", "asked_type": asked,
            "passed": verdict.graded and verdict.passed, "graded": verdict.graded, "evidence": verdict.evidence,
            "error": error, "turns": turns, "seconds": round(time.perf_counter() - started, 3)}


def evaluate_captcha_site(site: str, verdict: str, policy: Policy | str, out_dir: str | Path, *,
                          types: Sequence[str] = (), n: int = 1, max_steps: int = 3, viewport: str = "desktop",
                          type_field: str = "puzzle_type", env: Any = None) -> dict[str, Any]:
    """Pass@1 of `policy` on the puzzles of `site`, by type; writes results JSON and a plot to `out_dir`. `env`: a
    BrowserEnv to use (it must keep the verdict's responses); default: one opened and closed here."""
    source = verdict_source(verdict)
    episodes = site_puzzle_urls(site, types, n)
    owned = isinstance(policy, str)
    acting = policy_from_spec(policy) if isinstance(policy, str) else policy
    browser = env
    if browser is None:
        from uivenus.envs.browser import BrowserEnv
        from uivenus.envs.browser_config import BrowserConfig

        capture = tuple(dict.fromkeys((*source.capture, _glob("get_puzzle"))))
        browser = BrowserEnv(BrowserConfig(mode=viewport, capture_responses=capture))
    try:
        records = [solve_site_puzzle(browser, acting, source, url, asked, i, max_steps, type_field)
                   for i, (asked, url) in enumerate(episodes)]
    finally:
        if env is None:
            browser.close()
        if owned:
            acting.close()
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[record["type"]].append(record)
    results = {"policy": acting.name, "site": site, "verdict": verdict, "max_steps": max_steps, **rate(records),
               "per_type": {name: rate(group) for name, group in sorted(groups.items())}, "instances": records}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = write_json(out / RESULTS_FILE, results)
    plot = plot_pass_at_1({**results, "per_family": results["per_type"]}, out / PLOT_FILE,
                          f"CAPTCHA site Pass@1 · {acting.name}")
    return {**results, "results_path": str(path), "plot_path": str(plot)}
