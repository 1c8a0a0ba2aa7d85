"""GUI grounding accuracy: any Policy points at the element an instruction names, scored against the item's target.

The items come from `evals.grounding_data` (the public benchmark formats read into one `GroundingItem` shape).
Every item is asked through the grounding prompt and messages the agent uses (`grounding_messages`), answered by
`policy.act_batch` (an answer-keyed policy, the oracle, is told each item's target out of band; requests never
carry it), parsed with `parse_grounding` and brought to screen pixels by the item's `Frame`. It scores when the
point lies inside the target box or polygon (boxes inclusive; polygons by the even-odd rule, as OSWorld-G scores
them); refusal items score only on `[-1,-1]`, and a reply that does not parse or points off the screen is a miss
with its error recorded. Results: accuracy overall and by platform, data type, instruction kind and element size;
a JSON file, and (drawn by `uivenus.reports`) a bar plot and an HTML page of the worst misses drawn on their
screenshots.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from PIL import Image

from uivenus.actions.coords import CoordinateError, Frame, frame_from_options
from uivenus.actions.grounding import parse_grounding
from uivenus.actions.syntax import ParseError
from uivenus.agent.conversation import grounding_messages
from uivenus.agent.policies import (
    AnswerKeyed, Mode, Policy, PolicyError, PolicyReply, PolicyRequest, policy_from_spec,
)
from uivenus.evals.grounding_data import GroundingDataError, GroundingItem, Refusal, Target
from uivenus.reports import plot_accuracy, write_misses_page

__all__ = [
    "BREAKDOWNS", "MISSES_FILE", "PLOT_FILE", "RESULTS_FILE", "Outcome", "breakdown", "evaluate_grounding",
    "score_reply",
]

RESULTS_FILE = "grounding_results.json"
PLOT_FILE = "grounding_accuracy.png"
MISSES_FILE = "misses.html"


# --- scoring ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    """How one reply scored: the point in screen pixels (None: refused or unusable), and why it is unusable."""

    hit: bool
    point: tuple[int, int] | None = None
    refused: bool = False
    error: str | None = None


def score_reply(target: Target, frame: Frame, text: str) -> Outcome:
    """Parse a grounding reply, bring it to screen pixels and test it against the target."""
    try:
        answer = parse_grounding(text)
    except ParseError as exc:
        return Outcome(hit=False, error=f"ParseError: {exc}")
    if answer.refused:
        return Outcome(hit=isinstance(target, Refusal), refused=True)
    try:
        point = frame.to_screen(answer.point)
    except CoordinateError as exc:
        return Outcome(hit=False, error=f"CoordinateError: {exc}")
    return Outcome(hit=target.contains(point), point=point)


def _miss_distance(item: GroundingItem, outcome: Outcome) -> float | None:
    """How far a point missed its target, as a fraction of the screen diagonal; None for an answer of the wrong
    kind (a refusal of a present target, a point for an absent one, an unusable reply)."""
    if outcome.hit or outcome.point is None or isinstance(item.target, Refusal):
        return None
    return round(item.target.distance(outcome.point) / math.hypot(*item.img_size), 4)


#: Breakdown tables: dimension name -> the category of an item.
BREAKDOWNS: Mapping[str, Callable[[GroundingItem], str]] = MappingProxyType({
    "platform": lambda item: item.platform,
    "data_type": lambda item: item.data_type,
    "instruction_kind": lambda item: item.instruction_kind,
    "element_size": lambda item: item.element_size,
})


def _rate(hits: int, n: int) -> dict[str, Any]:
    return {"n": n, "hits": hits, "accuracy": hits / n if n else 0.0}


def breakdown(items: Sequence[GroundingItem], hits: Sequence[bool]) -> dict[str, dict[str, dict[str, Any]]]:
    """Accuracy per category of every `BREAKDOWNS` dimension, categories sorted by name."""
    tables: dict[str, dict[str, dict[str, Any]]] = {}
    for dimension, category_of in BREAKDOWNS.items():
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for item, hit in zip(items, hits, strict=True):
            cell = counts[category_of(item)]
            cell[0] += bool(hit)
            cell[1] += 1
        tables[dimension] = {name: _rate(*counts[name]) for name in sorted(counts)}
    return tables


# --- running a policy ---------------------------------------------------------------------------

def _request(item: GroundingItem, image: Image.Image, frame: Frame) -> PolicyRequest:
    context = {"screen_size": item.img_size, "screenshot": image, "instruction": item.instruction, "frame": frame,
               "platform": item.platform}
    return PolicyRequest(messages=grounding_messages(image, item.instruction, frame), mode=Mode.GROUNDING,
                         context=context)


def _act(policy: Policy, items: Sequence[GroundingItem], requests: Sequence[PolicyRequest]) -> list[PolicyReply]:
    """The policy's replies: batched, or one by one for a policy told each item's answer (`AnswerKeyed`)."""
    if isinstance(policy, AnswerKeyed):
        return [policy.with_answers(item.target.answer_key()).act(r) for item, r in zip(items, requests)]
    return policy.act_batch(requests)


def _open(item: GroundingItem) -> Image.Image:
    with Image.open(item.image) as image:
        rgb = image.convert("RGB")
    if rgb.size != item.img_size:
        raise GroundingDataError(f"{item.image} is {rgb.size[0]}x{rgb.size[1]} but item {item.id} says "
                                 f"{item.img_size[0]}x{item.img_size[1]}")
    return rgb


def _run_batch(items: Sequence[GroundingItem], policy: Policy, frame_kind: str) -> list[tuple[str, Outcome]]:
    """Ask the policy about a batch of items; every item gets its reply text and outcome."""
    frames = [frame_from_options(frame_kind, *item.img_size) for item in items]
    requests = [_request(item, _open(item), frame) for item, frame in zip(items, frames)]
    try:
        replies = _act(policy, items, requests)
        if len(replies) != len(requests):
            raise PolicyError(f"act_batch answered {len(replies)} replies to {len(requests)} requests")
    except PolicyError as exc:
        return [("", Outcome(hit=False, error=f"PolicyError: {exc}")) for _ in items]
    return [(reply.text, score_reply(item.target, frame, reply.text))
            for item, frame, reply in zip(items, frames, replies)]


def _batches(items: Sequence[GroundingItem], size: int) -> list[tuple[int, Sequence[GroundingItem]]]:
    return [(start, items[start:start + size]) for start in range(0, len(items), size)]


def _run_all(items: Sequence[GroundingItem], policy: Policy, frame_kind: str, batch_size: int, workers: int,
             advance: Callable[[int], None]) -> list[tuple[str, Outcome]]:
    results: list[tuple[str, Outcome] | None] = [None] * len(items)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="uivenus-grounding") as pool:
        futures = {pool.submit(_run_batch, batch, policy, frame_kind): (start, len(batch))
                   for start, batch in _batches(items, batch_size)}
        try:
            for future in as_completed(futures):
                start, count = futures[future]
                results[start:start + count] = future.result()
                advance(count)
        except BaseException:  # a data error or Ctrl-C: drop the batches not yet started
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return [r for r in results if r is not None]


def _with_progress(total: int, label: str, show: bool,
                   work: Callable[[Callable[[int], None]], list[tuple[str, Outcome]]]) -> list[tuple[str, Outcome]]:
    from uivenus.progress import Tracker

    with Tracker(label, total, unit="items", show=show) as tracker:
        return work(tracker.advance)


def _item_record(item: GroundingItem, response: str, outcome: Outcome) -> dict[str, Any]:
    return {
        "id": item.id, "image": str(item.image), "instruction": item.instruction, "platform": item.platform,
        "data_type": item.data_type, "instruction_kind": item.instruction_kind, "element_size": item.element_size,
        "img_size": list(item.img_size), "target": item.target.to_dict(), "response": response,
        "point": list(outcome.point) if outcome.point is not None else None, "refused": outcome.refused,
        "hit": outcome.hit, "error": outcome.error,
        "miss_distance": _miss_distance(item, outcome),
    }


def evaluate_grounding(items: Sequence[GroundingItem], policy: Policy | str, out_dir: Path | str,
                       frame_kind: str = "rel", batch_size: int = 8, workers: int = 1, progress: bool = True,
                       worst: int = 30) -> dict[str, Any]:
    """Score `policy` on `items`; write results JSON, a plot and a page of the `worst` misses to `out_dir`.

    Items go to `policy.act_batch` in batches of `batch_size`, `workers` batches at a time (threads: for
    servers and backends that release the GIL). A policy given as a SPEC string is built here and closed after.
    """
    if batch_size < 1 or workers < 1:
        raise ValueError(f"batch_size and workers must be >= 1, got {batch_size} and {workers}")
    frame_from_options(frame_kind, 1, 1)  # an unknown frame fails before any work
    owned = isinstance(policy, str)
    policy_obj: Policy = policy_from_spec(policy) if isinstance(policy, str) else policy
    items = list(items)
    try:
        answers = _with_progress(
            len(items), f"grounding ({policy_obj.name})", progress,
            lambda advance: _run_all(items, policy_obj, frame_kind, batch_size, workers, advance))
    finally:
        if owned:
            policy_obj.close()
    records = [_item_record(item, response, outcome) for item, (response, outcome) in zip(items, answers)]
    hits = [record["hit"] for record in records]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results = {
        "policy": policy_obj.name, "frame": frame_kind, **_rate(sum(hits), len(hits)),
        "errors": sum(record["error"] is not None for record in records),
        "breakdown": breakdown(items, hits), "items": records,
    }
    results_path = out / RESULTS_FILE
    results_path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    plot = plot_accuracy(results, out / PLOT_FILE, f"grounding accuracy · {policy_obj.name}")
    misses = write_misses_page(results, out / MISSES_FILE, worst, plot=plot)
    return {**results, "results_path": str(results_path), "plot_path": str(plot), "misses_path": str(misses)}
