"""The `openai:` backend: any OpenAI-compatible chat server (vLLM, SGLang, `uivenus serve`) answers the policy.

This is how released UI-Venus-2 weights are run: a server holds the model on GPUs and many episodes talk to
it at once. The spec names the server's base URL and the served model; options go in a query string:

    openai:http://127.0.0.1:8000/v1#ui-venus
    openai:http://gpu-box:8000/v1?timeout=120&retries=5&concurrency=16#ui-venus
    openai:http://gpu-box:8000/v1#ui-venus?timeout=120          (options after the model work too)

Screenshots travel as PNG data URLs; the sampling preset becomes temperature/top_p/max_tokens, and thinking
on/off becomes `chat_template_kwargs.enable_thinking`, which vLLM and SGLang pass to the chat template.
Connection errors, timeouts, HTTP 429/5xx and malformed replies are retried with exponential backoff and
jitter; other 4xx replies are the caller's mistake and fail at once. Every failure is a `PolicyError` that
names the URL and what came back.
"""

from __future__ import annotations

import base64
import io
import json
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
from PIL import Image

from uivenus.agent.policies.base import (
    Message, PolicyBase, PolicyError, PolicyReply, PolicyRequest, PolicySpecError, Sampling, register_policy,
    spec_options,
)
from uivenus.images import PerImage, known_png

__all__ = ["OpenAIOptions", "OpenAIPolicy", "chat_body", "image_data_url", "to_openai_messages"]

T = TypeVar("T")

#: How much of a bad reply an error message quotes.
_QUOTE_CHARS = 300


# --- options ------------------------------------------------------------------------------------

def _seconds(minimum: float, *, inclusive: bool) -> Callable[[str, str], float]:
    def parse(name: str, text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise PolicySpecError(f"openai option {name} must be a number of seconds, got {text!r}") from None
        if not (value >= minimum if inclusive else value > minimum) or value == float("inf"):
            bound = "at least" if inclusive else "more than"
            raise PolicySpecError(f"openai option {name} must be a finite number {bound} {minimum:g}, got {text!r}")
        return value

    return parse


def _int_at_least(minimum: int) -> Callable[[str, str], int]:
    def parse(name: str, text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise PolicySpecError(f"openai option {name} must be an integer, got {text!r}") from None
        if value < minimum:
            raise PolicySpecError(f"openai option {name} must be at least {minimum}, got {value}")
        return value

    return parse


def _env_name(name: str, text: str) -> str:
    if not text.replace("_", "").isalnum():
        raise PolicySpecError(f"openai option {name} must name an environment variable, got {text!r}")
    return text


#: Each spec option and the converter that checks it.
_OPTION_PARSERS: Mapping[str, Callable[[str, str], Any]] = {
    "timeout": _seconds(0, inclusive=False),          # seconds to wait for a reply (read/write)
    "connect_timeout": _seconds(0, inclusive=False),  # seconds to wait for a connection
    "retries": _int_at_least(0),                      # extra attempts after the first
    "backoff": _seconds(0, inclusive=True),           # first retry delay; doubles each retry
    "max_backoff": _seconds(0, inclusive=True),       # cap on one retry delay (and on a server's Retry-After)
    "concurrency": _int_at_least(1),                  # requests in flight at once from this policy
    "api_key_env": _env_name,                         # environment variable holding the API key
}


@dataclass(frozen=True)
class OpenAIOptions:
    """Where the server is and how patiently to talk to it."""

    base_url: str
    model: str
    timeout: float = 300.0
    connect_timeout: float = 10.0
    retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 30.0
    concurrency: int = 8
    api_key_env: str = "OPENAI_API_KEY"

    @classmethod
    def parse(cls, spec: str) -> OpenAIOptions:
        """`http://HOST:PORT/v1[?key=value&...]#MODEL[?key=value&...]` (the part after `openai:`)."""
        address, _, fragment = spec.partition("#")
        model, _, model_query = fragment.partition("?")
        base_url, _, query = address.partition("?")
        usage = "openai spec is openai:http://HOST:PORT/v1#MODEL[?timeout=300&retries=3&concurrency=8]"
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise PolicySpecError(f"{usage}; {base_url!r} is not an http(s) URL")
        if not model:
            raise PolicySpecError(f"{usage}; the model name after '#' is missing (the server's served model name, "
                                  "see GET /v1/models)")
        options = spec_options("&".join(q for q in (query, model_query) if q), _OPTION_PARSERS, "openai")
        return cls(base_url=base_url.rstrip("/"), model=model, **options)

    @property
    def api_key(self) -> str:
        """The key from `api_key_env`; local servers (vLLM, SGLang, `uivenus serve`) accept any, so "EMPTY"."""
        return os.environ.get(self.api_key_env) or "EMPTY"


# --- messages -----------------------------------------------------------------------------------

def _png(image: Image.Image) -> bytes:
    """The env's own PNG bytes when this is its screenshot unchanged, else a new encoding."""
    png = known_png(image)
    if png is None:
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        png = buffer.getvalue()
    return png


#: Each image's data URL, encoded once: an episode sends its history images again on every step.
_DATA_URLS: PerImage[str] = PerImage()


def image_data_url(image: Image.Image) -> str:
    """A PNG data URL: lossless, so the server sees exactly the pixels the coordinate frame was built for."""
    return _DATA_URLS.get_or_make(image, lambda: "data:image/png;base64," + base64.b64encode(_png(image)).decode())


def to_openai_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our messages in the OpenAI chat format; text-only messages stay plain strings (every server takes them)."""
    out = []
    for message in messages:
        if not message.images:
            out.append({"role": message.role, "content": message.text})
            continue
        parts = [{"type": "text", "text": part} if isinstance(part, str)
                 else {"type": "image_url", "image_url": {"url": image_data_url(part)}}
                 for part in message.content]
        out.append({"role": message.role, "content": parts})
    return out


def chat_body(model: str, request: PolicyRequest) -> dict[str, Any]:
    """The `/chat/completions` request body for `request`, its sampling preset included."""
    sampling: Sampling = request.sampling  # type: ignore[assignment]  # PolicyRequest fills it from the preset
    return {
        "model": model,
        "messages": to_openai_messages(request.messages),
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "max_tokens": sampling.max_new_tokens,
        "n": 1,
        "stream": False,
        "chat_template_kwargs": {"enable_thinking": sampling.thinking},
    }


# --- replies ------------------------------------------------------------------------------------

class _Retryable(Exception):
    """One attempt failed in a way another attempt may fix; the message says how."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _quote(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS] + "…")


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return max(0.0, float(response.headers["retry-after"]))
    except (KeyError, ValueError):
        return None  # absent, or an HTTP date (rare for API servers): use our own backoff


def _reply_text(data: Any) -> str:
    """The assistant text of a chat completion; raises ValueError saying what is missing."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ValueError("no 'choices' list")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        raise ValueError("choices[0] has no 'message' object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise ValueError(f"choices[0].message.content is a {type(content).__name__}, not a string")
    # a server started with a reasoning parser moves the thinking out of `content`; our history needs it back
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if content is None and not reasoning:
        raise ValueError("choices[0].message has no content")
    if isinstance(reasoning, str) and reasoning:
        return f"<think>{reasoning}</think>\n{content or ''}"
    return content  # type: ignore[return-value]


def _usage(data: Mapping[str, Any]) -> dict[str, int]:
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return {}
    return {key: value for key in ("prompt_tokens", "completion_tokens")
            if isinstance(value := usage.get(key), int)}


# --- the policy ---------------------------------------------------------------------------------

class OpenAIPolicy(PolicyBase):
    """Talks to one served model; at most `concurrency` requests are in flight, from any number of threads."""

    def __init__(self, options: OpenAIOptions) -> None:
        self.options = options
        self.name = f"openai:{options.base_url}#{options.model}"
        self.url = f"{options.base_url}/chat/completions"
        self._client = httpx.Client(
            timeout=httpx.Timeout(options.timeout, connect=options.connect_timeout),
            limits=httpx.Limits(max_connections=options.concurrency, max_keepalive_connections=options.concurrency),
            headers={"Authorization": f"Bearer {options.api_key}"},
        )
        self._slots = threading.Semaphore(options.concurrency)
        self._pool = ThreadPoolExecutor(max_workers=options.concurrency, thread_name_prefix="openai-policy")
        self._random = random.Random()

    def act(self, request: PolicyRequest) -> PolicyReply:
        started = time.perf_counter()
        data = self.completion(chat_body(self.options.model, request))
        return PolicyReply(text=_reply_text(data), latency_s=time.perf_counter() - started, usage=_usage(data))

    def completion(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The server's whole chat completion for `body`, retried like every request: for callers that need more
        than the text (vLLM's token ids and log-probabilities, `train.sampling.VLLMSampler`)."""
        return self._post(body)

    def completions(self, bodies: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """`completion` of each body, sent concurrently; the replies in request order."""
        return self._concurrently(self.completion, bodies)

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyReply]:
        """Sends the requests concurrently (the server batches them); replies come back in request order."""
        return self._concurrently(self.act, requests)

    def _concurrently(self, fn: Callable[[Any], T], items: Sequence[Any]) -> list[T]:
        futures: list[Future[T]] = [self._pool.submit(fn, item) for item in items]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()  # requests not yet sent are dropped; those in flight finish on their own
            raise

    def _post(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST with retries; the chat completion (its text checked), or PolicyError saying what went wrong."""
        attempts = self.options.retries + 1
        failures: list[str] = []
        for attempt in range(attempts):
            try:
                with self._slots:
                    return self._attempt(body)
            except _Retryable as exc:
                failures.append(str(exc))
                if attempt + 1 < attempts:
                    time.sleep(self._delay(attempt, exc.retry_after))
        raise PolicyError(
            f"{self.url} failed {attempts} time(s); last: {failures[-1]}"
            + (f" (earlier: {'; '.join(dict.fromkeys(failures[:-1]))})" if len(failures) > 1 else "")
            + ". Check that an OpenAI-compatible server serves this URL (GET /v1/models lists its models); "
              "raise ?timeout=/&retries= in the spec for a slow or busy server.")

    def _attempt(self, body: Mapping[str, Any]) -> dict[str, Any]:
        try:
            response = self._client.post(self.url, json=body)
        except httpx.TimeoutException as exc:
            raise _Retryable(f"timed out ({type(exc).__name__}; connect {self.options.connect_timeout:g}s, "
                             f"read {self.options.timeout:g}s)") from None
        except httpx.TransportError as exc:
            raise _Retryable(f"could not connect or the connection broke ({type(exc).__name__}: {exc})") from None
        status = response.status_code
        if status == 429 or status >= 500:
            raise _Retryable(f"HTTP {status}: {_quote(response.text)}", _retry_after(response))
        if status >= 400:
            raise PolicyError(f"{self.url} rejected the request with HTTP {status}: {_quote(response.text)}; "
                              f"check the base URL (it usually ends in /v1), the model name {self.options.model!r} "
                              "against GET /v1/models, and the server's limits (images per prompt, context length)")
        try:
            data = json.loads(response.text)
            _reply_text(data)
            return data
        except ValueError as exc:  # JSONDecodeError is a ValueError
            raise _Retryable(f"HTTP {status} but the reply is not a chat completion ({exc}): "
                             f"{_quote(response.text)}") from None

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with jitter (so parallel episodes do not retry in lockstep); a server's
        Retry-After wins when it is longer. Both are capped by `max_backoff`."""
        base = self.options.backoff * 2 ** attempt
        delay = base * self._random.uniform(0.5, 1.0)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, self.options.max_backoff)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._client.close()


@register_policy("openai")
def _openai_policy(spec: str) -> OpenAIPolicy:
    return OpenAIPolicy(OpenAIOptions.parse(spec))
