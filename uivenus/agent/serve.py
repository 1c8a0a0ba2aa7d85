"""`uivenus serve`: any policy behind an OpenAI-compatible `/v1/chat/completions` endpoint.

One endpoint for a local checkpoint means every client — the `openai:` backend, judges, other tools — talks to
it exactly as it talks to vLLM or SGLang serving the released weights. Requests are validated with pydantic;
images must come inline as base64 data URLs (the server works offline, so remote URLs are refused).
`n` asks for that many independent samples; `stream=true` answers in OpenAI's server-sent chunks (the policy
answers whole, so each choice's text comes in one content chunk once the answers are in).
One worker thread owns the policy and batches requests that arrive together (`max_batch`, `batch_wait_s`), so a
model that is not thread-safe is never called twice at once and concurrent clients still share a forward pass.
Errors come back as OpenAI-style JSON bodies (`{"error": {"message", "type", "param", "code"}}`).
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import queue
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import Future
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self

import uvicorn
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from uivenus.agent.policies.base import (
    PRESETS, Message, Mode, Policy, PolicyError, PolicyReply, PolicyRequest, Sampling, policy_from_spec,
)

__all__ = [
    "DEFAULT_MODEL_NAME", "ApiError", "ChatCompletionRequest", "RequestBatcher", "ServeError", "ServerThread",
    "create_app", "decode_image_url", "policy_request", "run_server",
]

#: The name clients put in `model` unless the server is told otherwise (the same name docs/serving.md gives vLLM).
DEFAULT_MODEL_NAME = "ui-venus"


class ServeError(RuntimeError):
    """The server could not start or stop (port taken, startup failed); the message says what to change."""


class ApiError(Exception):
    """A request the server answers with an OpenAI-style error body and `status`."""

    def __init__(self, status: int, message: str, *, kind: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.kind, self.param, self.code = status, message, kind, param, code

    def response(self) -> JSONResponse:
        body = {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}
        return JSONResponse(body, status_code=self.status)


# --- the request format -------------------------------------------------------------------------

class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")  # OpenAI clients send optional fields we do not use


class TextPart(_Lenient):
    type: Literal["text"]
    text: str


class ImageURL(_Lenient):
    url: str


class ImagePart(_Lenient):
    type: Literal["image_url"]
    image_url: ImageURL


class ChatMessage(_Lenient):
    role: Literal["system", "user", "assistant"]
    content: str | list[Annotated[TextPart | ImagePart, Field(discriminator="type")]] | None = None


class StreamOptions(_Lenient):
    include_usage: bool = False


class ChatCompletionRequest(_Lenient):
    """The fields of an OpenAI chat completion request this server honours; others are ignored."""

    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    n: int = Field(default=1, ge=1, le=128)  # OpenAI's bounds
    stream: bool = False
    stream_options: StreamOptions | None = None
    chat_template_kwargs: dict[str, Any] = Field(default_factory=dict)


_DATA_URL = re.compile(r"data:(?P<type>[\w.+-]+/[\w.+-]+)?(?P<params>(;[^,;]*)*?);base64,(?P<data>.*)", re.DOTALL)


def decode_image_url(url: str) -> Image.Image:
    """A `data:image/...;base64,...` URL as an RGB image; anything else is an `ApiError` (400)."""
    if url.startswith(("http://", "https://")):
        raise ApiError(400, "remote image URLs are not fetched (the server works offline); send the image inline "
                            "as data:image/png;base64,...", param="messages", code="remote_image_url")
    match = _DATA_URL.fullmatch(url)
    if match is None:
        raise ApiError(400, f"image_url must be a base64 data URL (data:image/png;base64,...), got {url[:40]!r}",
                       param="messages", code="invalid_image_url")
    try:
        raw = base64.b64decode(match["data"], validate=True)
        with Image.open(io.BytesIO(raw)) as image:
            image.load()
            return image if image.mode == "RGB" else image.convert("RGB")
    except (ValueError, OSError, Image.DecompressionBombError) as exc:  # bad base64, unknown format, a bomb
        raise ApiError(400, f"image_url data is not a readable image ({type(exc).__name__}: {exc})",
                       param="messages", code="invalid_image") from None


def policy_request(body: ChatCompletionRequest) -> PolicyRequest:
    """The PolicyRequest for an OpenAI request: thinking (default on, as in Qwen3 templates) picks the mode,
    whose preset fills `max_tokens`; temperature and top_p default to OpenAI's 1.0."""
    if body.stream_options is not None and not body.stream:
        raise ApiError(400, "stream_options is only allowed with stream=true", param="stream_options")
    thinking = body.chat_template_kwargs.get("enable_thinking", True)
    if not isinstance(thinking, bool):
        raise ApiError(400, f"chat_template_kwargs.enable_thinking must be true or false, got {thinking!r}",
                       param="chat_template_kwargs")
    mode = Mode.AGENTIC if thinking else Mode.GROUNDING
    max_tokens = body.max_tokens or body.max_completion_tokens or PRESETS[mode].max_new_tokens
    sampling = Sampling(temperature=1.0 if body.temperature is None else body.temperature, max_new_tokens=max_tokens,
                        thinking=thinking, top_p=1.0 if body.top_p is None else body.top_p)
    messages = []
    for message in body.messages:
        if message.content is None or isinstance(message.content, str):
            content: tuple[str | Image.Image, ...] = (message.content or "",)
        else:
            content = tuple(part.text if isinstance(part, TextPart) else decode_image_url(part.image_url.url)
                            for part in message.content)
        messages.append(Message(message.role, content))
    return PolicyRequest(tuple(messages), mode=mode, sampling=sampling)


# --- batching -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Job:
    request: PolicyRequest
    future: Future[PolicyReply]


class RequestBatcher:
    """The one thread that calls the policy: it gathers requests that arrive within `wait_s` of the first
    (up to `max_batch`) into one `act_batch` call. When a batch fails, each request is retried alone, so one
    bad request cannot fail the others."""

    def __init__(self, policy: Policy, *, max_batch: int = 8, wait_s: float = 0.005) -> None:
        if max_batch < 1 or wait_s < 0:
            raise ValueError(f"max_batch must be >= 1 and wait_s >= 0, got {max_batch} and {wait_s}")
        self.policy, self.max_batch, self.wait_s = policy, max_batch, wait_s
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="uivenus-serve-batcher", daemon=True)
        self._closed = False

    def start(self) -> None:
        self._thread.start()

    def submit(self, request: PolicyRequest) -> Future[PolicyReply]:
        if self._closed:
            raise ApiError(503, "the server is shutting down; retry on a running server",
                           kind="server_error", code="shutting_down")
        future: Future[PolicyReply] = Future()
        self._queue.put(_Job(request, future))
        return future

    def close(self) -> None:
        """Finish the batch in progress, fail the requests still queued, and stop the thread."""
        self._closed = True
        self._queue.put(None)
        if self._thread.is_alive():
            self._thread.join()
        while True:  # jobs queued when the thread was never started, or behind the stop marker
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                return
            if job is not None:
                job.future.set_exception(PolicyError("the server shut down before answering this request"))

    def _next_batch(self) -> tuple[list[_Job], bool]:
        """The jobs of the next batch, and whether the stop marker was reached."""
        first = self._queue.get()
        if first is None:
            return [], True
        batch, deadline = [first], time.monotonic() + self.wait_s
        while len(batch) < self.max_batch:
            try:
                job = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if job is None:
                return batch, True
            batch.append(job)
        return batch, False

    def _run(self) -> None:
        stop = False
        while not stop:
            batch, stop = self._next_batch()
            batch = [job for job in batch if job.future.set_running_or_notify_cancel()]
            if not batch:
                continue
            try:
                replies = self.policy.act_batch([job.request for job in batch])
            except Exception as exc:  # noqa: BLE001 — the thread must outlive any failure; the caller gets it
                if len(batch) == 1:
                    batch[0].future.set_exception(exc)
                    continue
                for job in batch:
                    try:
                        job.future.set_result(self.policy.act_batch([job.request])[0])
                    except Exception as single:  # noqa: BLE001
                        job.future.set_exception(single)
                continue
            for job, reply in zip(batch, replies, strict=True):
                job.future.set_result(reply)


# --- the app ------------------------------------------------------------------------------------

def _finish_reason(reply: PolicyReply, max_tokens: int) -> str:
    return "length" if int(reply.usage.get("completion_tokens", 0)) >= max_tokens else "stop"


def _usage(replies: Sequence[PolicyReply]) -> dict[str, int]:
    """OpenAI's count for n choices: the prompt once, the completion tokens of every choice."""
    prompt = int(replies[0].usage.get("prompt_tokens", 0))
    completion = sum(int(reply.usage.get("completion_tokens", 0)) for reply in replies)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _completion(model_name: str, replies: Sequence[PolicyReply], max_tokens: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model_name,
        "choices": [{"index": index, "message": {"role": "assistant", "content": reply.text}, "logprobs": None,
                     "finish_reason": _finish_reason(reply, max_tokens)} for index, reply in enumerate(replies)],
        "usage": _usage(replies),
    }


def _completion_chunks(model_name: str, replies: Sequence[PolicyReply], max_tokens: int,
                       include_usage: bool) -> Iterator[str]:
    """The server-sent events OpenAI streams: per choice the role, the content and the finish reason; then the
    usage (`choices` empty) when asked for, with `usage: null` on every other chunk; then `[DONE]`."""
    head = {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model_name}

    def event(choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> str:
        return f"data: {json.dumps(head | {'choices': choices} | ({'usage': usage} if include_usage else {}))}\n\n"

    def choice(index: int, delta: dict[str, str], finish_reason: str | None = None) -> dict[str, Any]:
        return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}

    for index, reply in enumerate(replies):
        yield event([choice(index, {"role": "assistant", "content": ""})])
        if reply.text:
            yield event([choice(index, {"content": reply.text})])
        yield event([choice(index, {}, _finish_reason(reply, max_tokens))])
    if include_usage:
        yield event([], _usage(replies))
    yield "data: [DONE]\n\n"


def create_app(policy: Policy, model_name: str = DEFAULT_MODEL_NAME, *, max_batch: int = 8,
               batch_wait_s: float = 0.005) -> FastAPI:
    """The OpenAI-compatible app for `policy` (which the caller keeps and closes)."""
    batcher = RequestBatcher(policy, max_batch=max_batch, wait_s=batch_wait_s)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        batcher.start()
        try:
            yield
        finally:
            await run_in_threadpool(batcher.close)

    app = FastAPI(title="uivenus policy server", lifespan=lifespan)
    created = int(time.time())

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return ApiError(400, f"invalid request: {where or 'body'}: {first.get('msg', exc)}",
                        param=where or None).response()

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return ApiError(exc.status_code, str(exc.detail), code=str(exc.status_code)).response()

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok", "model": model_name}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list",
                "data": [{"id": model_name, "object": "model", "created": created, "owned_by": "uivenus"}]}

    @app.post("/v1/chat/completions", response_model=None)
    async def chat_completions(body: ChatCompletionRequest) -> dict[str, Any] | StreamingResponse:
        if body.model and body.model != model_name:
            raise ApiError(404, f"the model {body.model!r} does not exist; this server serves {model_name!r}",
                           param="model", code="model_not_found")
        request = await run_in_threadpool(policy_request, body)  # image decoding stays off the event loop
        # n independent samples: n jobs, which the batcher may answer in one forward pass
        outcomes = await asyncio.gather(*(asyncio.wrap_future(batcher.submit(request)) for _ in range(body.n)),
                                        return_exceptions=True)
        failure = next((outcome for outcome in outcomes if isinstance(outcome, BaseException)), None)
        if isinstance(failure, PolicyError):
            raise ApiError(500, f"the policy failed: {failure}", kind="server_error", code="policy_error") from failure
        if failure is not None:  # a broken policy must still answer in the OpenAI format
            raise ApiError(500, f"the policy crashed: {type(failure).__name__}: {failure}", kind="server_error",
                           code="internal_error") from failure
        replies: list[PolicyReply] = outcomes  # type: ignore[assignment]
        max_tokens = request.sampling.max_new_tokens  # type: ignore[union-attr]
        if body.stream:  # the answers are in, so a failure above still gets its HTTP status
            include_usage = body.stream_options is not None and body.stream_options.include_usage
            return StreamingResponse(_completion_chunks(model_name, replies, max_tokens, include_usage),
                                     media_type="text/event-stream")
        return _completion(model_name, replies, max_tokens)

    return app


# --- running ------------------------------------------------------------------------------------

class ServerThread:
    """`app` under uvicorn on a background thread: a real socket for tests and notebooks (port 0 = any free one)."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, *, graceful_s: float = 2.0) -> None:
        self.host = host
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on",
                                timeout_graceful_shutdown=graceful_s)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, name=f"uvicorn-{host}:{port}", daemon=True)
        self._exit_code: int | str | None = None
        self.port = port

    def _serve(self) -> None:
        try:
            self._server.run()
        except SystemExit as exc:  # uvicorn exits when it cannot bind or the app's startup fails
            self._exit_code = exc.code

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (`http://HOST:PORT/v1`)."""
        return f"http://{self.host}:{self.port}/v1"

    def start(self, timeout_s: float = 30.0) -> Self:
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive():
                raise ServeError(f"the server on {self.host}:{self.port} exited while starting (code "
                                 f"{self._exit_code}); is the port taken? (see the log above)")
            if time.monotonic() > deadline:
                self.close()
                raise ServeError(f"the server on {self.host}:{self.port} did not start within {timeout_s:g}s")
            time.sleep(0.01)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]
        return self

    def close(self) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_server(policy_spec: str, host: str = "127.0.0.1", port: int = 8000, model_name: str | None = None, *,
               max_batch: int = 8, batch_wait_s: float = 0.005) -> None:
    """Load the policy named by `policy_spec`, serve it until interrupted, then release it."""
    policy = policy_from_spec(policy_spec)
    try:
        app = create_app(policy, model_name or DEFAULT_MODEL_NAME, max_batch=max_batch, batch_wait_s=batch_wait_s)
        uvicorn.run(app, host=host, port=port, log_level="info")
    finally:
        policy.close()
