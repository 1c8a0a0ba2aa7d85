"""The `openai:` backend over real sockets on 127.0.0.1: against `uivenus serve` running the tiny checkpoint, and
against small servers that hang, fail, throttle or talk nonsense.

What must hold: answers through the server equal the checkpoint's own answers (images arrive pixel-exact); the
presets reach the server (grounding greedy without thinking, agentic at 1.0 with thinking); failures are retried
with backoff where a retry can help and never where it cannot; every final failure is a PolicyError naming the
URL and what came back; and an episode whose server dies keeps every step it had written.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import socket
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from PIL import Image

from uivenus.actions.coords import Frame
from uivenus.actions.space import Platform
from uivenus.agent.conversation import Turn, build_messages, grounding_messages
from uivenus.agent.policies import (
    Message, Mode, Policy, PolicyBase, PolicyError, PolicyReply, PolicyRequest, PolicySpecError, Sampling,
    policy_from_spec,
)
from uivenus.agent.policies.openai_compat import OpenAIOptions, OpenAIPolicy, chat_body, to_openai_messages
from uivenus.agent.policies.transformers_local import TransformersPolicy
from uivenus.agent.serve import ServerThread, create_app
from uivenus.envs.base import Observation

GREEDY = Sampling(temperature=0.0, max_new_tokens=8, thinking=False)
FAST = "timeout=5&connect_timeout=2&backoff=0.01&max_backoff=0.05"  # small waits keep failure tests quick


def _pixels(image: Image.Image) -> str:
    return hashlib.sha256(image.tobytes()).hexdigest()


def _grounding(colour: str, size: tuple[int, int] = (320, 640), sampling: Sampling | None = GREEDY,
               mode: Mode = Mode.GROUNDING) -> PolicyRequest:
    image = Image.new("RGB", size, colour)
    image.putpixel((3, 5), (1, 2, 3))
    return PolicyRequest(grounding_messages(image, f"the {colour} area", Frame.relative(*size)), mode=mode,
                         sampling=sampling)


# --- spec and wire format -------------------------------------------------------------------------

def test_spec_parses_url_model_and_options() -> None:
    plain = OpenAIOptions.parse("http://127.0.0.1:8000/v1/#ui-venus")
    assert (plain.base_url, plain.model, plain.retries, plain.concurrency) == ("http://127.0.0.1:8000/v1", "ui-venus",
                                                                              3, 8)
    before = OpenAIOptions.parse("https://gpu:9000/v1?timeout=12.5&retries=0&concurrency=2#org/UI-Venus-2-9B")
    after = OpenAIOptions.parse("https://gpu:9000/v1#org/UI-Venus-2-9B?timeout=12.5&retries=0&concurrency=2")
    assert before == after
    assert (before.model, before.timeout, before.retries, before.concurrency) == ("org/UI-Venus-2-9B", 12.5, 0, 2)


@pytest.mark.parametrize(("spec", "says"), [
    ("http://127.0.0.1:8000/v1", "model name after '#' is missing"),
    ("127.0.0.1:8000/v1#m", "not an http(s) URL"),
    ("http://h/v1?temperature=0#m", "unknown openai option 'temperature'"),
    ("http://h/v1?timeout=0#m", "timeout must be a finite number more than 0"),
    ("http://h/v1?retries=-1#m", "retries must be at least 0"),
    ("http://h/v1?concurrency=two#m", "concurrency must be an integer"),
    ("http://h/v1?api_key_env=$(rm)#m", "must name an environment variable"),
    ("http://h/v1?timeout#m", "not key=value pairs"),
])
def test_bad_specs_say_what_is_wrong(spec: str, says: str) -> None:
    with pytest.raises(PolicySpecError) as caught:
        OpenAIOptions.parse(spec)
    assert says in str(caught.value)


def test_api_key_comes_from_the_named_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert OpenAIOptions.parse("http://h/v1#m").api_key == "EMPTY"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-default")
    monkeypatch.setenv("VENUS_KEY", "sk-venus")
    assert OpenAIOptions.parse("http://h/v1#m").api_key == "sk-default"
    assert OpenAIOptions.parse("http://h/v1?api_key_env=VENUS_KEY#m").api_key == "sk-venus"


def test_messages_and_presets_become_an_openai_body() -> None:
    image = Image.new("RGB", (4, 2), "red")
    messages = (Message("system", ("S",)), Message("user", ("look", image, "here")), Message("assistant", ("A",)))
    assert to_openai_messages(messages)[0] == {"role": "system", "content": "S"}
    user = to_openai_messages(messages)[1]["content"]
    assert [p["type"] for p in user] == ["text", "image_url", "text"]
    assert user[1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")  # PNG magic, base64-encoded
    grounding = chat_body("m", PolicyRequest(messages, mode=Mode.GROUNDING))
    agentic = chat_body("m", PolicyRequest(messages, mode=Mode.AGENTIC))
    assert (grounding["temperature"], grounding["chat_template_kwargs"], grounding["max_tokens"]) == (
        0.0, {"enable_thinking": False}, 64)
    assert (agentic["temperature"], agentic["chat_template_kwargs"], agentic["max_tokens"]) == (
        1.0, {"enable_thinking": True}, 1024)
    assert grounding["model"] == "m" and grounding["n"] == 1 and grounding["stream"] is False


def _sent_png(message: Message) -> bytes:
    url = next(p for p in to_openai_messages([message])[0]["content"] if p["type"] == "image_url")["image_url"]["url"]
    return base64.b64decode(url.removeprefix("data:image/png;base64,"))


def test_a_screenshot_the_model_sees_unchanged_is_sent_as_the_envs_own_png() -> None:
    screen = Image.new("RGB", (64, 48), "white")
    buffer = io.BytesIO()
    screen.save(buffer, format="PNG", compress_level=0)  # not what a fresh encoding would give
    observation = Observation(screenshot=screen, platform=Platform.WEB, size=(64, 48), png=buffer.getvalue())
    unchanged = build_messages("S", "task", [], observation.screenshot, frame=Frame.absolute(64, 48))
    assert _sent_png(unchanged[-1]) == buffer.getvalue()
    resized = build_messages("S", "task", [], observation.screenshot, frame=Frame.absolute(32, 24))
    sent = _sent_png(resized[-1])
    assert sent != buffer.getvalue() and Image.open(io.BytesIO(sent)).size == (32, 24)  # the pixels it shows


def test_a_history_image_is_encoded_once_per_episode_not_once_per_request() -> None:
    frame = Frame.smart(640, 480, factor=28)
    first = Image.new("RGB", (640, 480), "navy")
    history = [Turn(first, "r1")]
    urls = []
    for step in range(3):
        messages = build_messages("S", "task", history, Image.new("RGB", (640, 480), (step, 0, 0)), frame=frame,
                                  images_in_history=3)
        urls.append(to_openai_messages(messages)[1]["content"][1]["image_url"]["url"])  # step 1's screenshot
        history.append(Turn(Image.new("RGB", (640, 480), (step, 1, 0)), f"r{step + 2}"))
    assert urls[0] is urls[1] is urls[2]  # the same encoding, not three equal ones


# --- against `uivenus serve` with the tiny checkpoint ---------------------------------------------

class Recorder(PolicyBase):
    """Keeps every request as the server decoded it, then lets the checkpoint answer with at most 8 new tokens
    (the agentic preset's 1024 would only make the random model ramble)."""

    name = "recorder"

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.seen: list[PolicyRequest] = []

    def act(self, request: PolicyRequest) -> PolicyReply:
        return self.act_batch([request])[0]

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyReply]:
        self.seen += requests
        capped = [replace(r, sampling=replace(r.sampling, max_new_tokens=min(8, r.sampling.max_new_tokens)))
                  for r in requests]
        return self.inner.act_batch(capped)


@pytest.fixture(scope="module")
def tiny(tiny_qwen3_vl: Path, torch_single_thread: None) -> Iterator[TransformersPolicy]:
    with policy_from_spec(f"hf:{tiny_qwen3_vl}?device=cpu&dtype=float32") as built:
        yield built


@pytest.fixture(scope="module")
def recorder(tiny: TransformersPolicy) -> Recorder:
    return Recorder(tiny)


@pytest.fixture(scope="module")
def venus_server(recorder: Recorder) -> Iterator[ServerThread]:
    with ServerThread(create_app(recorder, "tiny-venus")) as running:
        yield running


@pytest.fixture(scope="module")
def remote(venus_server: ServerThread) -> Iterator[OpenAIPolicy]:
    with policy_from_spec(f"openai:{venus_server.base_url}?timeout=60#tiny-venus") as built:
        yield built


def test_spec_builds_an_openai_policy(remote: OpenAIPolicy, venus_server: ServerThread) -> None:
    assert isinstance(remote, Policy) and isinstance(remote, OpenAIPolicy)
    assert remote.name == f"openai:{venus_server.base_url}#tiny-venus"
    models = httpx.get(f"{venus_server.base_url}/models").json()
    assert [m["id"] for m in models["data"]] == ["tiny-venus"]


def test_a_served_answer_equals_the_checkpoint_answer(remote: OpenAIPolicy, tiny: TransformersPolicy,
                                                      recorder: Recorder) -> None:
    request = _grounding("green")
    recorder.seen.clear()
    served = remote.act(request)
    direct = tiny.act(request)
    assert served.text == direct.text
    assert served.usage == dict(direct.usage)
    assert served.latency_s > 0
    [seen] = recorder.seen
    sent, arrived = request.messages[0].images[0], seen.messages[0].images[0]
    assert (arrived.size, _pixels(arrived)) == (sent.size, _pixels(sent))
    assert seen.messages[0].text == request.messages[0].text


def test_a_batch_comes_back_in_order_with_the_checkpoint_answers(remote: OpenAIPolicy,
                                                                 tiny: TransformersPolicy) -> None:
    requests = [_grounding("red", (320, 640)), _grounding("blue", (640, 320)), _grounding("navy", (480, 480))]
    served, direct = remote.act_batch(requests), tiny.act_batch(requests)
    assert [r.text for r in served] == [r.text for r in direct]
    assert [r.usage for r in served] == [dict(r.usage) for r in direct]
    assert served[0].usage["prompt_tokens"] != served[2].usage["prompt_tokens"]  # a square image has other tokens


def test_presets_reach_the_server(remote: OpenAIPolicy, recorder: Recorder) -> None:
    recorder.seen.clear()
    remote.act(_grounding("red", sampling=None, mode=Mode.GROUNDING))
    remote.act(_grounding("red", sampling=None, mode=Mode.AGENTIC))
    grounding, agentic = (seen.sampling for seen in recorder.seen)
    assert (grounding.temperature, grounding.thinking, grounding.max_new_tokens) == (0.0, False, 64)
    assert (agentic.temperature, agentic.thinking, agentic.max_new_tokens) == (1.0, True, 1024)
    assert [seen.mode for seen in recorder.seen] == [Mode.GROUNDING, Mode.AGENTIC]


def test_a_wrong_model_name_fails_at_once_naming_it(venus_server: ServerThread) -> None:
    with (policy_from_spec(f"openai:{venus_server.base_url}?retries=3&{FAST}#gpt-4o") as wrong,
          pytest.raises(PolicyError) as caught):
        wrong.act(_grounding("red"))
    message = str(caught.value)
    assert "HTTP 404" in message and "'gpt-4o'" in message and "/v1/models" in message


# --- misbehaving servers --------------------------------------------------------------------------

Behaviour = Callable[[dict], Awaitable[Response]]


def completion(text: str, **message: str) -> dict:
    return {"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": text, **message}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}


def echo() -> Behaviour:
    async def answer(body: dict) -> Response:
        return JSONResponse(completion(f"echo: {body['messages'][-1]['content']}"))
    return answer


def status(code: int, text: str = "boom", headers: dict[str, str] | None = None) -> Behaviour:
    async def answer(body: dict) -> Response:
        return PlainTextResponse(text, status_code=code, headers=headers)
    return answer


def raw(content: str, media_type: str = "application/json") -> Behaviour:
    async def answer(body: dict) -> Response:
        return Response(content, media_type=media_type)
    return answer


def slow(seconds: float, then: Behaviour) -> Behaviour:
    async def answer(body: dict) -> Response:
        await asyncio.sleep(seconds)
        return await then(body)
    return answer


@dataclass
class Script:
    """What a scripted server does: the n-th request gets `plan[n]` (the last entry repeats); it records calls.

    `in_flight` counts only requests of the current plan: a hung request of an earlier test may still be asleep.
    """

    plan: list[Behaviour] = field(default_factory=lambda: [echo()])
    bodies: list[dict] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0
    generation: int = 0

    def reset(self, *plan: Behaviour) -> Script:
        self.plan, self.bodies, self.headers = list(plan), [], []
        self.in_flight = self.most_in_flight = 0
        self.generation += 1
        return self


@pytest.fixture(scope="module")
def script() -> Script:
    return Script()


@pytest.fixture(scope="module")
def scripted(script: Script) -> Iterator[ServerThread]:
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        body = await request.json()
        script.bodies.append(body)
        script.headers.append(dict(request.headers))
        behaviour = script.plan[min(len(script.bodies), len(script.plan)) - 1]
        generation = script.generation
        script.in_flight += 1
        script.most_in_flight = max(script.most_in_flight, script.in_flight)
        try:
            return await behaviour(body)
        finally:
            if script.generation == generation:
                script.in_flight -= 1

    with ServerThread(app, graceful_s=0.5) as running:
        yield running


def _policy(server: ServerThread, options: str = "retries=2") -> OpenAIPolicy:
    chosen = {**dict(parse_qsl(FAST)), **dict(parse_qsl(options))}  # a test's own options win (a key goes once)
    return policy_from_spec(f"openai:{server.base_url}?{urlencode(chosen)}#scripted")  # type: ignore[return-value]


def _text(text: str) -> PolicyRequest:
    return PolicyRequest((Message("user", (text,)),), mode=Mode.GROUNDING)


def test_the_body_and_key_reach_the_server(scripted: ServerThread, script: Script,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VENUS_KEY", "sk-test")
    script.reset(echo())
    with _policy(scripted, "api_key_env=VENUS_KEY") as policy:
        reply = policy.act(_grounding("red"))
    assert reply.text == f"echo: {script.bodies[0]['messages'][-1]['content']}"
    assert reply.usage == {"prompt_tokens": 5, "completion_tokens": 2}
    assert script.headers[0]["authorization"] == "Bearer sk-test"
    body = script.bodies[0]
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("scripted", 0.0, 8)
    assert body["chat_template_kwargs"] == {"enable_thinking": False}


def test_a_hanging_server_times_out_and_is_retried(scripted: ServerThread, script: Script) -> None:
    script.reset(slow(3, echo()))
    started = time.monotonic()
    with _policy(scripted, "retries=1&timeout=0.3") as policy, pytest.raises(PolicyError) as caught:
        policy.act(_text("hello"))
    assert time.monotonic() - started < 2.5
    assert len(script.bodies) == 2
    assert "timed out" in str(caught.value) and "read 0.3s" in str(caught.value)
    assert scripted.base_url in str(caught.value)
    script.reset(slow(3, echo()), echo())
    with _policy(scripted, "retries=1&timeout=0.3") as policy:
        assert policy.act(_text("again")).text == "echo: again"


def test_transient_failures_are_retried_until_an_answer(scripted: ServerThread, script: Script) -> None:
    script.reset(status(500, "warming up"), raw("<html>proxy error</html>", "text/html"),
                 status(429, "slow down", {"Retry-After": "0"}), status(503), echo())
    with _policy(scripted, "retries=4") as policy:
        assert policy.act(_text("finally")).text == "echo: finally"
    assert len(script.bodies) == 5


def test_a_server_that_always_fails_gives_a_clear_error_after_the_retries(scripted: ServerThread,
                                                                          script: Script) -> None:
    script.reset(status(500, "CUDA out of memory"))
    with _policy(scripted, "retries=2") as policy, pytest.raises(PolicyError) as caught:
        policy.act(_text("hi"))
    assert len(script.bodies) == 3
    message = str(caught.value)
    assert f"{scripted.base_url}/chat/completions failed 3 time(s)" in message
    assert "HTTP 500: 'CUDA out of memory'" in message


@pytest.mark.parametrize(("reply", "says"), [
    ("<html><body>" + "Welcome to nginx! " * 100 + "</body></html>", "not a chat completion (Expecting value"),
    ('{"object": "error", "message": "nope"}', "no 'choices' list"),
    ('{"choices": []}', "no 'choices' list"),
    ('{"choices": [{"text": "completions API, not chat"}]}', "no 'message' object"),
    ('{"choices": [{"message": {"content": 42}}]}', "content is a int"),
    ('[1, 2, 3]', "expected a JSON object"),
])
def test_garbage_replies_are_retried_then_reported(scripted: ServerThread, script: Script, reply: str,
                                                   says: str) -> None:
    script.reset(raw(reply))
    with _policy(scripted, "retries=1") as policy, pytest.raises(PolicyError) as caught:
        policy.act(_text("hi"))
    assert len(script.bodies) == 2
    message = str(caught.value)
    assert says in message and scripted.base_url in message
    assert len(message) < 1200  # the body is quoted, truncated


def test_client_errors_are_not_retried(scripted: ServerThread, script: Script) -> None:
    script.reset(status(400, "At most 5 image(s) may be provided in one prompt"))
    with _policy(scripted, "retries=3") as policy, pytest.raises(PolicyError) as caught:
        policy.act(_text("hi"))
    assert len(script.bodies) == 1
    assert "rejected the request with HTTP 400" in str(caught.value) and "At most 5 image" in str(caught.value)


def test_a_closed_port_is_a_connection_error(script: Script) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed when the block ends: nothing listens there
    started = time.monotonic()
    with (policy_from_spec(f"openai:http://127.0.0.1:{port}/v1?retries=2&{FAST}#m") as policy,
          pytest.raises(PolicyError) as caught):
        policy.act(_text("hi"))
    assert time.monotonic() - started < 2
    message = str(caught.value)
    assert f"http://127.0.0.1:{port}/v1/chat/completions failed 3 time(s)" in message
    assert "could not connect" in message and "ConnectError" in message


def test_reasoning_split_out_by_the_server_is_put_back(scripted: ServerThread, script: Script) -> None:
    """vLLM/SGLang with a reasoning parser return the thinking apart; the history needs the whole response."""
    answer = completion("<action>Click(point=(1,2))</action>", reasoning_content="the button is top left")

    async def reasoned(body: dict) -> Response:
        return JSONResponse(answer)

    script.reset(reasoned)
    with _policy(scripted) as policy:
        text = policy.act(_text("hi")).text
    assert text == "<think>the button is top left</think>\n<action>Click(point=(1,2))</action>"


def test_concurrency_caps_requests_in_flight(scripted: ServerThread, script: Script) -> None:
    script.reset(slow(0.2, echo()))
    started = time.monotonic()
    with _policy(scripted, "concurrency=2") as policy:
        replies = policy.act_batch([_text(f"n{i}") for i in range(6)])
    assert [r.text for r in replies] == [f"echo: n{i}" for i in range(6)]
    assert script.most_in_flight == 2
    assert time.monotonic() - started >= 0.55  # three waves of two


def test_one_failure_fails_the_batch_with_a_policy_error(scripted: ServerThread, script: Script) -> None:
    script.reset(echo(), status(400, "bad image"), echo())
    with _policy(scripted, "concurrency=1&retries=0") as policy, pytest.raises(PolicyError, match="bad image"):
        policy.act_batch([_text("a"), _text("b"), _text("c")])


# --- nothing lost from the store ------------------------------------------------------------------

def test_an_episode_whose_server_dies_keeps_its_steps(scripted: ServerThread, script: Script, tmp_path: Path) -> None:
    """Two good answers, then a server that only fails: the two steps stay on disk, the episode ends as ERROR."""
    from uivenus.actions.space import Click, Platform
    from uivenus.agent.loop import run_episode
    from uivenus.envs.browser import BrowserEnv
    from uivenus.envs.browser_config import BrowserConfig
    from uivenus.records import Outcome, TaskSpec
    from uivenus.store import TrajectoryStore, read_episode

    replies = ["<think>the middle</think>\n<action>Click(point=(500, 500))</action>",
               "<think>once more</think>\n<action>Click(point=(250, 250))</action>"]

    def answer(text: str) -> Behaviour:
        async def reply(body: dict) -> Response:
            return JSONResponse(completion(text))
        return reply

    script.reset(*(answer(r) for r in replies), status(500, "engine dead"))
    task = TaskSpec(id="t-openai", instruction="click twice", platform=Platform.WEB, max_steps=5)
    store = TrajectoryStore(tmp_path)
    with (_policy(scripted, "retries=2") as policy, BrowserEnv(BrowserConfig(mode="desktop")) as env,
          store.episode("run", "ep", task) as writer):
        trajectory = run_episode(env, policy, task, writer=writer)
    assert trajectory.outcome is Outcome.ERROR
    assert len(script.bodies) == 2 + 3  # two answers, then the first try and two retries of step 3
    assert all(b["temperature"] == 1.0 and b["chat_template_kwargs"] == {"enable_thinking": True}
               for b in script.bodies)  # the loop asks with the agentic preset

    stored = read_episode(tmp_path / "run" / "ep")
    assert stored.outcome is Outcome.ERROR
    assert "HTTP 500: 'engine dead'" in stored.metadata["error"]
    done, failed = stored.steps[:2], stored.steps[2]
    assert [s.response for s in done] == replies
    assert all(s.executed and isinstance(s.action, Click) for s in done)
    assert failed.error.startswith("PolicyError: ") and scripted.base_url in failed.error
    assert not failed.executed
    assert sorted(p.name for p in (tmp_path / "run" / "ep" / "screens").iterdir()) == ["0.png", "1.png", "2.png"]
