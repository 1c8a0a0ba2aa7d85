"""`uivenus serve` as a real HTTP server on 127.0.0.1: the OpenAI request format in, OpenAI replies and errors out.

The served policy here describes what reached it (roles, texts, image pixels, sampling), so every assertion
checks the conversion from the wire format to a PolicyRequest; the tiny real checkpoint behind the same server
is exercised in test_openai_compat.py. The batcher is tested on its own for batching, isolation and shutdown.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence

import httpx
import pytest
from PIL import Image
from typer.testing import CliRunner

from uivenus.agent.policies import Mode, PolicyBase, PolicyError, PolicyReply, PolicyRequest, Sampling
from uivenus.agent.policies.openai_compat import image_data_url
from uivenus.agent.serve import (
    ApiError, RequestBatcher, ServeError, ServerThread, create_app, decode_image_url,
)
from uivenus.cli import app as cli_app


def _pixels(image: Image.Image) -> str:
    return hashlib.sha256(image.tobytes()).hexdigest()[:16]


class Describer(PolicyBase):
    """Answers with a JSON description of the request it got; `fail_on` text makes it raise (a broken request)."""

    name = "describer"

    def __init__(self, fail_on: str = "FAIL", crash_on: str = "CRASH") -> None:
        self.fail_on, self.crash_on = fail_on, crash_on
        self.batches: list[int] = []
        self.lock = threading.Lock()

    def act(self, request: PolicyRequest) -> PolicyReply:
        texts = [m.text for m in request.messages]
        if any(self.fail_on in t for t in texts):
            raise PolicyError("asked to fail")
        if any(self.crash_on in t for t in texts):
            raise ZeroDivisionError("division by zero in the model")
        s = request.sampling
        description = {
            "roles": [m.role for m in request.messages], "texts": texts, "mode": request.mode.value,
            "images": [[list(i.size), i.mode, _pixels(i)] for m in request.messages for i in m.images],
            "sampling": {"temperature": s.temperature, "top_p": s.top_p, "max_new_tokens": s.max_new_tokens,
                         "thinking": s.thinking},
        }
        return PolicyReply(json.dumps(description), usage={"prompt_tokens": 11, "completion_tokens": 3})

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyReply]:
        with self.lock:
            self.batches.append(len(requests))
        return [self.act(r) for r in requests]


@pytest.fixture(scope="module")
def describer() -> Describer:
    return Describer()


@pytest.fixture(scope="module")
def server(describer: Describer) -> Iterator[ServerThread]:
    with ServerThread(create_app(describer, "tiny-venus", max_batch=4, batch_wait_s=0.05)) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: ServerThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=10) as http:
        yield http


def _chat(client: httpx.Client, **body: object) -> httpx.Response:
    return client.post("/chat/completions", json={"model": "tiny-venus", **body})


def _error(response: httpx.Response, status: int) -> dict[str, object]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def test_health_and_models(server: ServerThread, client: httpx.Client) -> None:
    health = httpx.get(f"http://127.0.0.1:{server.port}/health")
    assert health.status_code == 200 and health.json() == {"status": "ok", "model": "tiny-venus"}
    models = client.get("/models").json()
    assert models["object"] == "list"
    assert [m["id"] for m in models["data"]] == ["tiny-venus"]


def test_text_and_images_reach_the_policy_exactly(client: httpx.Client) -> None:
    screen = Image.new("RGB", (64, 48), (10, 200, 30))
    screen.putpixel((5, 7), (255, 0, 0))
    rgba = Image.new("RGBA", (8, 8), (0, 0, 255, 128))
    response = _chat(client, messages=[
        {"role": "system", "content": "You are a GUI agent."},
        {"role": "user", "content": [{"type": "text", "text": "Step 1:"},
                                     {"type": "image_url", "image_url": {"url": image_data_url(screen)}},
                                     {"type": "image_url",
                                      "image_url": {"url": image_data_url(rgba), "detail": "high"}},
                                     {"type": "text", "text": " click it"}]},
        {"role": "assistant", "content": "<think>ok</think>"},
        {"role": "user", "content": "again"},
    ], temperature=0, max_tokens=7, chat_template_kwargs={"enable_thinking": False}, seed=3)
    assert response.status_code == 200, response.text
    completion = response.json()
    assert completion["object"] == "chat.completion" and completion["model"] == "tiny-venus"
    assert completion["id"].startswith("chatcmpl-")
    assert completion["usage"] == {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
    choice = completion["choices"][0]
    assert choice["message"]["role"] == "assistant" and choice["finish_reason"] == "stop"
    seen = json.loads(choice["message"]["content"])
    assert seen["roles"] == ["system", "user", "assistant", "user"]
    assert seen["texts"] == ["You are a GUI agent.", "Step 1: click it", "<think>ok</think>", "again"]
    assert seen["images"] == [[[64, 48], "RGB", _pixels(screen)], [[8, 8], "RGB", _pixels(rgba.convert("RGB"))]]
    assert seen["mode"] == "grounding"
    assert seen["sampling"] == {"temperature": 0.0, "top_p": 1.0, "max_new_tokens": 7, "thinking": False}


def test_omitted_settings_follow_openai_and_the_thinking_preset(client: httpx.Client) -> None:
    seen = json.loads(_chat(client, messages=[{"role": "user", "content": "hi"}]).json()
                      ["choices"][0]["message"]["content"])
    assert seen["mode"] == "agentic"
    assert seen["sampling"] == {"temperature": 1.0, "top_p": 1.0, "max_new_tokens": 1024, "thinking": True}


def test_finish_reason_is_length_when_the_budget_is_spent(client: httpx.Client) -> None:
    reply = _chat(client, messages=[{"role": "user", "content": "hi"}], max_completion_tokens=3).json()
    assert reply["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize(("body", "status", "code", "says"), [
    ({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}]},
     400, "remote_image_url", "offline"),
    ({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,!!notbase64!!"}}]}]}, 400, "invalid_image",
     "not a readable image"),
    ({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(b"text").decode()}}]}]},
     400, "invalid_image", "not a readable image"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "file:///etc/passwd"}}]}]},
     400, "invalid_image_url", "base64 data URL"),
    ({"messages": [{"role": "user", "content": "hi"}], "n": 0}, 400, None, "n: Input should be greater"),
    ({"messages": [{"role": "user", "content": "hi"}], "n": 129}, 400, None, "n: Input should be less"),
    ({"messages": [{"role": "user", "content": "hi"}], "stream_options": {"include_usage": True}}, 400, None,
     "stream_options is only allowed with stream=true"),
    ({"messages": [{"role": "user", "content": "hi"}], "chat_template_kwargs": {"enable_thinking": "yes"}}, 400, None,
     "enable_thinking"),
    ({"messages": []}, 400, None, "messages"),
    ({"messages": [{"role": "user", "content": "hi"}], "temperature": -1}, 400, None, "temperature"),
    ({"messages": [{"role": "user", "content": [{"type": "video_url", "video_url": {"url": "x"}}]}]}, 400, None,
     "messages"),
    ({"messages": [{"role": "user", "content": "hi"}], "model": "gpt-4o"}, 404, "model_not_found", "tiny-venus"),
])
def test_bad_requests_get_openai_style_errors(client: httpx.Client, body: dict, status: int, code: str | None,
                                              says: str) -> None:
    error = _error(client.post("/chat/completions", json={"model": "tiny-venus", **body}), status)
    assert error["type"] == "invalid_request_error"
    assert code is None or error["code"] == code
    assert says in str(error["message"])


def test_non_json_body_and_unknown_route_are_openai_errors(client: httpx.Client) -> None:
    bad = client.post("/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert "invalid request" in str(_error(bad, 400)["message"])
    assert _error(client.get("/completions"), 404)["code"] == "404"


def test_policy_failures_are_500_with_the_reason(client: httpx.Client) -> None:
    failed = _error(_chat(client, messages=[{"role": "user", "content": "please FAIL"}]), 500)
    assert failed["type"] == "server_error" and failed["code"] == "policy_error"
    assert "asked to fail" in str(failed["message"])
    crashed = _error(_chat(client, messages=[{"role": "user", "content": "CRASH now"}]), 500)
    assert crashed["code"] == "internal_error" and "ZeroDivisionError" in str(crashed["message"])
    assert _chat(client, messages=[{"role": "user", "content": "still alive?"}]).status_code == 200


def test_concurrent_requests_are_batched_and_answered_in_place(client: httpx.Client, describer: Describer) -> None:
    describer.batches.clear()
    texts = [f"request {i}" for i in range(4)]
    results: dict[str, str] = {}

    def send(text: str) -> None:
        reply = _chat(client, messages=[{"role": "user", "content": text}], max_tokens=5)
        results[text] = json.loads(reply.json()["choices"][0]["message"]["content"])["texts"][0]

    threads = [threading.Thread(target=send, args=(t,)) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {t: t for t in texts}  # each client got the answer to its own request
    assert sum(describer.batches) == 4


def test_n_samples_are_n_jobs_answered_in_one_batch(client: httpx.Client, describer: Describer) -> None:
    describer.batches.clear()
    reply = _chat(client, messages=[{"role": "user", "content": "three please"}], n=3, max_tokens=3).json()
    assert [c["index"] for c in reply["choices"]] == [0, 1, 2]
    assert all(json.loads(c["message"]["content"])["texts"] == ["three please"] for c in reply["choices"])
    assert [c["finish_reason"] for c in reply["choices"]] == ["length"] * 3
    assert reply["usage"] == {"prompt_tokens": 11, "completion_tokens": 9, "total_tokens": 20}  # the prompt once
    assert describer.batches == [3]


def _events(response: httpx.Response) -> list[str]:
    """The `data:` payloads of a server-sent event stream, checking the framing (each event a line, then a blank)."""
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.text.endswith("\n\n")
    events = response.text[:-2].split("\n\n")
    assert all(event.startswith("data: ") and "\n" not in event for event in events), response.text
    return [event.removeprefix("data: ") for event in events]


def test_a_stream_sends_role_content_and_finish_chunks_then_done(client: httpx.Client) -> None:
    body = {"model": "tiny-venus", "messages": [{"role": "user", "content": "stream it"}], "max_tokens": 5}
    whole = client.post("/chat/completions", json=body).json()
    *events, done = _events(client.post("/chat/completions", json=body | {"stream": True}))
    assert done == "[DONE]"
    chunks = [json.loads(event) for event in events]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"} and len({c["id"] for c in chunks}) == 1
    assert all(c["model"] == "tiny-venus" and "usage" not in c for c in chunks)
    assert [c["choices"] for c in chunks] == [
        [{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}],
        [{"index": 0, "delta": {"content": whole["choices"][0]["message"]["content"]}, "logprobs": None,
          "finish_reason": None}],
        [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}],
    ]


def test_a_stream_with_n_and_usage_ends_with_a_usage_chunk(client: httpx.Client) -> None:
    *events, done = _events(_chat(client, messages=[{"role": "user", "content": "two"}], max_tokens=3, n=2,
                                  stream=True, stream_options={"include_usage": True}))
    chunks = [json.loads(event) for event in events]
    assert done == "[DONE]"
    assert [c["usage"] for c in chunks[:-1]] == [None] * (len(chunks) - 1)
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 11, "completion_tokens": 6, "total_tokens": 17}
    finished = {choice["index"]: choice["finish_reason"] for c in chunks for choice in c["choices"]
                if choice["finish_reason"]}
    assert finished == {0: "length", 1: "length"}


def test_a_failing_stream_is_an_error_status_not_a_stream(client: httpx.Client) -> None:
    failed = _chat(client, messages=[{"role": "user", "content": "FAIL"}], stream=True, n=2)
    assert _error(failed, 500)["code"] == "policy_error"


def test_decode_image_url_accepts_other_formats() -> None:
    buffer = io.BytesIO()
    Image.new("L", (3, 2), 77).save(buffer, "JPEG")
    image = decode_image_url("data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode())
    assert image.size == (3, 2) and image.mode == "RGB"
    with pytest.raises(ApiError) as caught:
        decode_image_url("http://127.0.0.1/a.png")
    assert caught.value.status == 400


# --- the batcher ----------------------------------------------------------------------------------

def _request(text: str) -> PolicyRequest:
    from uivenus.agent.policies import Message

    return PolicyRequest((Message("user", (text,)),), mode=Mode.GROUNDING,
                         sampling=Sampling(temperature=0.0, max_new_tokens=4, thinking=False))


def _text_of(reply: PolicyReply) -> str:
    return json.loads(reply.text)["texts"][0]


def test_batcher_gathers_queued_requests_into_one_call() -> None:
    policy = Describer()
    batcher = RequestBatcher(policy, max_batch=3, wait_s=0.0)
    futures = [batcher.submit(_request(f"r{i}")) for i in range(5)]
    batcher.start()
    assert [_text_of(f.result(timeout=5)) for f in futures] == [f"r{i}" for i in range(5)]
    batcher.close()
    assert policy.batches == [3, 2]


def test_batcher_isolates_a_failing_request() -> None:
    policy = Describer()
    batcher = RequestBatcher(policy, max_batch=4, wait_s=0.0)
    futures = [batcher.submit(_request(t)) for t in ("a", "FAIL", "b")]
    batcher.start()
    assert _text_of(futures[0].result(timeout=5)) == "a"
    with pytest.raises(PolicyError, match="asked to fail"):
        futures[1].result(timeout=5)
    assert _text_of(futures[2].result(timeout=5)) == "b"
    batcher.close()
    assert policy.batches == [3, 1, 1, 1]  # the failed batch, then each request alone


def test_batcher_close_fails_what_is_still_queued_and_refuses_more() -> None:
    batcher = RequestBatcher(Describer(), max_batch=2, wait_s=0.0)
    pending = batcher.submit(_request("never answered"))
    batcher.close()  # never started: nothing ran
    with pytest.raises(PolicyError, match="shut down"):
        pending.result(timeout=1)
    with pytest.raises(ApiError) as refused:
        batcher.submit(_request("late"))
    assert refused.value.status == 503


# --- running it -----------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_server_thread_reports_a_taken_port() -> None:
    with ServerThread(create_app(Describer())) as first, pytest.raises(ServeError, match="port"):
        ServerThread(create_app(Describer()), port=first.port).start(timeout_s=10)


def test_cli_rejects_an_unknown_policy_spec() -> None:
    result = CliRunner().invoke(cli_app, ["serve", "--policy", "nonsense:thing"])
    assert result.exit_code == 1
    assert "error: unknown policy spec 'nonsense:thing'" in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_uivenus_serve_runs_any_policy_spec_in_its_own_process(server: ServerThread) -> None:
    """The command as users run it, in a separate process on a real port. It serves an `openai:` spec here (a
    proxy to the describer), so the request crosses two servers and must arrive unchanged; the tiny checkpoint
    behind `create_app` is exercised in test_openai_compat.py without paying for a second torch import."""
    port = _free_port()
    script = "import typer; from uivenus.cli.serve import serve; app = typer.Typer(); app.command()(serve); app()"
    args = [sys.executable, "-c", script, "--policy", f"openai:{server.base_url}#tiny-venus", "--port", str(port),
            "--model-name", "proxy"]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, process.stdout.read().decode() if process.stdout else ""
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).json().get("model") == "proxy":
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "uivenus serve did not come up within 60 s"
            time.sleep(0.1)
        image = Image.new("RGB", (40, 30), "red")
        content = [{"type": "text", "text": "Click the red square"},
                   {"type": "image_url", "image_url": {"url": image_data_url(image)}}]
        reply = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", timeout=30, json={
            "model": "proxy", "max_tokens": 9, "temperature": 0, "chat_template_kwargs": {"enable_thinking": False},
            "messages": [{"role": "user", "content": content}]})
        assert reply.status_code == 200, reply.text
        seen = json.loads(reply.json()["choices"][0]["message"]["content"])
        assert seen["texts"] == ["Click the red square"]
        assert seen["images"] == [[[40, 30], "RGB", _pixels(image)]]
        assert seen["sampling"] == {"temperature": 0.0, "top_p": 1.0, "max_new_tokens": 9, "thinking": False}
    finally:
        process.terminate()
        process.wait(timeout=30)
