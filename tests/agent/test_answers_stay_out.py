"""No answer reaches the policy under test: what the agent loop, the grounding eval and the CAPTCHA eval put in a
request is what a model may see (messages, sampling, mode, plain facts about the screen), never the live env, a
reference solver, a target or a solution, nor the target's coordinates under another name.

A real policy records every request it is sent and answers something valid, so each harness runs as it would
for a model; its requests are then searched for the answers the harness holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import pytest
from PIL import Image

from uivenus.actions.coords import Frame
from uivenus.actions.points import iter_points
from uivenus.actions.space import Action, Platform
from uivenus.agent.loop import LoopConfig, run_episode
from uivenus.agent.policies import AnswerKey, Mode, PolicyBase, PolicyReply, PolicyRequest
from uivenus.agent.safety import Guard
from uivenus.envs.browser import BrowserEnv
from uivenus.envs.sandbox import get_task
from uivenus.evals.captcha import evaluate_captchas
from uivenus.evals.grounding import evaluate_grounding
from uivenus.evals.grounding_data import Box, Polygon, Refusal, load_grounding
from uivenus.synth.captcha import browser_config, generate_captchas, load_captchas

#: The observation facts a request's context may carry; anything else is something a model could not see.
SEEN = {"screenshot", "instruction", "screen_size", "platform", "frame", "family"}
#: The types those facts come as.
PLAIN = (str, int, float, tuple, Image.Image, Frame, Platform)


class Inspector(PolicyBase):
    """Keeps every request it is sent; answers a point on any screen (gives up after `finish_after` agentic turns)."""

    name = "inspector"

    def __init__(self, finish_after: int = 1_000) -> None:
        self.requests: list[PolicyRequest] = []
        self.finish_after = finish_after

    def act(self, request: PolicyRequest) -> PolicyReply:
        self.requests.append(request)
        if request.mode is Mode.GROUNDING:
            return PolicyReply("[100,100]")
        if len(self.requests) > self.finish_after:
            return PolicyReply("<action>Finished()</action>")
        return PolicyReply("<think>try the middle</think><action>Click(point=(500, 500))</action>")


class Told(Inspector):
    """An inspector that takes answers: keeps the key it is told for each item, and still answers the same point."""

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[AnswerKey] = []

    def with_answers(self, key: AnswerKey) -> Told:
        self.keys.append(key)
        return self


def _numbers(request: PolicyRequest) -> set[float]:
    """Every number written anywhere in the request's context and message texts (images aside)."""
    texts = [repr(v) for v in request.context.values() if not isinstance(v, Image.Image)]
    texts += [m.text for m in request.messages]
    return {float(n) for text in texts for n in re.findall(r"-?\d+(?:\.\d+)?", text)}


def _strings(request: PolicyRequest) -> str:
    return " ".join([*(repr(v) for v in request.context.values() if not isinstance(v, Image.Image)),
                     *(m.text for m in request.messages)])


def assert_no_answers(requests: Sequence[PolicyRequest], points: Iterable[Sequence[float]] = (),
                      texts: Iterable[str] = ()) -> None:
    """Only observation facts in the context, and none of the answers' coordinates or typed texts anywhere."""
    assert requests, "the harness never asked the policy"
    points, texts = [tuple(map(float, p)) for p in points], [t for t in texts if t]
    for request in requests:
        context = request.context
        assert set(context) <= SEEN, f"the context carries {sorted(set(context) - SEEN)}"
        for key, value in context.items():
            assert isinstance(value, PLAIN) and not isinstance(value, Iterator), f"{key} is a {type(value)}"
            if isinstance(value, tuple):
                assert all(isinstance(v, (int, float)) for v in value), f"{key}={value!r} is not a plain size"
        numbers, words = _numbers(request), _strings(request)
        for point in points:
            assert not set(point) <= numbers, f"the answer {point} is written in the request"
        for text in texts:
            assert text not in words, f"the answer {text!r} is written in the request"


def _answers(actions: Iterable[Action], frame: Frame) -> tuple[list[tuple[float, ...]], list[str]]:
    """The points of `actions` in screen pixels and in the model frame, and the texts they type."""
    points, texts = [], []
    for action in actions:
        for _, point in iter_points(action):
            points += [point, frame.to_model(point)]
        for inner in getattr(action, "actions", (action,)):
            texts.append(getattr(inner, "content", None) or "")
    return points, texts


# --- (a) the agent loop on a sandbox task --------------------------------------------------------------

def test_the_loop_sends_no_env_solver_or_reference_step(web_env: BrowserEnv, sandbox_server) -> None:
    task = get_task("contacts/add_contact")
    spec = task.spec(sandbox_server.base_url, "web")
    web_env.reset(spec)
    first = next(task.solve(web_env))  # the reference solution's first move on the page the policy sees first
    policy = Inspector(finish_after=2)
    trajectory = run_episode(web_env, policy, spec, config=LoopConfig(max_steps=4), guard=Guard("allow", ocr=False))
    assert len(trajectory.steps) == 3 and trajectory.verdicts["sandbox"]["passed"] is False
    assert_no_answers(policy.requests)
    # later turns quote the policy's own clicks at (500, 500); the first shows only what the harness wrote
    assert_no_answers(policy.requests[:1], *_answers([first], Frame.relative(*web_env.screen_size)))
    assert set(policy.requests[0].context) == {"instruction", "screen_size", "platform", "frame"}


# --- (b) the grounding eval --------------------------------------------------------------------------------

def _grounding_items(tmp_path: Path):
    (tmp_path / "images").mkdir()
    Image.new("RGB", (400, 200), "white").save(tmp_path / "images" / "desk.png")
    records = [
        {"id": "b", "image_path": "desk.png", "image_size": [400, 200], "instruction": "the bold button",
         "box_type": "bbox", "box_coordinates": [23, 31, 41, 17]},
        {"id": "p", "image_path": "desk.png", "image_size": [400, 200], "instruction": "the U-shaped frame",
         "box_type": "polygon", "box_coordinates": [107, 43, 303, 43, 303, 163, 263, 163, 263, 83, 147, 83,
                                                    147, 163, 107, 163]},
        {"id": "r", "image_path": "desk.png", "image_size": [400, 200], "instruction": "the purple unicorn",
         "box_type": "refusal", "box_coordinates": [-1, -1, -1, -1]},
    ]
    (tmp_path / "OSWorld-G.json").write_text(json.dumps(records))
    return load_grounding(tmp_path / "OSWorld-G.json", format="osworld-g")


@pytest.mark.parametrize("frame_kind", ["rel", "abs"])
def test_the_grounding_eval_sends_no_target(tmp_path: Path, frame_kind: str) -> None:
    items = _grounding_items(tmp_path)
    assert [type(i.target) for i in items] == [Box, Polygon, Refusal]
    policy = Inspector()
    results = evaluate_grounding(items, policy, tmp_path / "out", frame_kind=frame_kind, progress=False)
    assert results["n"] == 3 and results["errors"] == 0 and len(policy.requests) == 3
    box, polygon = items[0].target, items[1].target
    assert [r.context["instruction"] for r in policy.requests] == [i.instruction for i in items]
    centre = ((box.x1 + box.x2) / 2, (box.y1 + box.y2) / 2)
    assert_no_answers(policy.requests, [(box.x1, box.y1), (box.x2, box.y2), centre, polygon.interior_point(),
                                        *polygon.points])
    for request in policy.requests:
        assert True not in request.context.values(), "a refusal flag is in the request"


def test_the_grounding_eval_tells_each_item_its_own_answer_out_of_band(tmp_path: Path) -> None:
    items = _grounding_items(tmp_path)
    policy = Told()
    evaluate_grounding(items, policy, tmp_path / "out", progress=False)
    assert policy.keys == [AnswerKey(box=(23, 31, 64, 48)), AnswerKey(polygon=items[1].target.points),
                           AnswerKey(refusal=True)]
    assert_no_answers(policy.requests)


# --- (c) the CAPTCHA eval -----------------------------------------------------------------------------------

def test_the_captcha_eval_sends_no_solution(tmp_path: Path) -> None:
    instances = generate_captchas(3, tmp_path / "data", seed=5, families=["text", "drag_match", "click_order"],
                                  difficulty="easy")
    policy = Inspector()
    with BrowserEnv(browser_config(load_captchas(tmp_path / "data")[0])) as env:
        results = evaluate_captchas(tmp_path / "data", policy, tmp_path / "out", max_steps=1, progress=False,
                                    envs={"desktop": env})
    assert results["n"] == 3 and len(policy.requests) == 3
    for instance, request in zip(instances, policy.requests):
        assert request.context["family"] == instance.family
        frame = Frame.relative(*instance.viewport)
        assert_no_answers([request], *_answers(instance.solution, frame))
