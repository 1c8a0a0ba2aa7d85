"""The policy plug point: chat messages (text and screenshots) in, the model's raw text out.

Every backend — an OpenAI-compatible server, a local transformers checkpoint, the bundled tiny model,
the oracle and random floors, OCR grounding — answers the same `PolicyRequest`, so the agent loop,
the grounding/CAPTCHA harnesses, judges and trainers never care which one they talk to. Backends are
named by SPEC strings (`openai:http://HOST:PORT/v1#MODEL`, `hf:PATH`, `oracle`, `random`, `ocr`, `nano`)
and built through `policy_from_spec`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Protocol, TypeVar, runtime_checkable
from urllib.parse import parse_qsl

from PIL import Image

from uivenus.actions.coords import Frame
from uivenus.actions.space import Action


class PolicyError(RuntimeError):
    """A backend failed to answer (server down, timeout, bad reply); the message says what to check."""


class PolicySpecError(ValueError):
    """A SPEC string names no known backend or is malformed."""


class Mode(StrEnum):
    """Inference presets: agentic steps sample with thinking; grounding is greedy without it."""

    AGENTIC = "agentic"
    GROUNDING = "grounding"


@dataclass(frozen=True)
class Sampling:
    temperature: float
    max_new_tokens: int
    thinking: bool
    top_p: float = 1.0


#: The presets of SYSTEM.md part 3: agentic = temperature 1.0 with thinking; grounding = greedy without.
PRESETS: Mapping[Mode, Sampling] = MappingProxyType({
    Mode.AGENTIC: Sampling(temperature=1.0, max_new_tokens=1024, thinking=True),
    Mode.GROUNDING: Sampling(temperature=0.0, max_new_tokens=64, thinking=False),
})


@dataclass(frozen=True)
class Message:
    """One chat message; `content` mixes text and PIL images in order."""

    role: str  # "system" | "user" | "assistant"
    content: tuple[str | Image.Image, ...]

    @property
    def text(self) -> str:
        return "".join(part for part in self.content if isinstance(part, str))

    @property
    def images(self) -> tuple[Image.Image, ...]:
        return tuple(part for part in self.content if isinstance(part, Image.Image))


@dataclass(frozen=True)
class PolicyRequest:
    """Everything a backend may use for one decision, and nothing a model could not see.

    Model backends read `messages` and `sampling`; non-model policies (the random floor, OCR) read `context`:
    plain facts of the observation — `screenshot`, `instruction`, `screen_size`, `platform`, `frame`, the CAPTCHA
    `family` shown — never an answer or a live env. Answers go out of band, per item, to `AnswerKeyed` policies.
    """

    messages: tuple[Message, ...]
    mode: Mode = Mode.AGENTIC
    sampling: Sampling | None = None
    context: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", tuple(self.messages))
        object.__setattr__(self, "context", MappingProxyType(dict(self.context)))
        if self.sampling is None:
            object.__setattr__(self, "sampling", PRESETS[self.mode])


@dataclass(frozen=True)
class PolicyReply:
    text: str
    latency_s: float = 0.0
    usage: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class AnswerKey:
    """The right answers to one item or episode, in screen pixels; a harness tells them only to `AnswerKeyed`
    policies (the oracle), so a policy under test can never read them from its requests."""

    actions: tuple[Action, ...] | None = None  # a reference action sequence (a CAPTCHA's solution)
    box: tuple[float, float, float, float] | None = None  # a grounding target (x1, y1, x2, y2)
    polygon: tuple[tuple[float, float], ...] | None = None  # a grounding target outline (OSWorld-G)
    refusal: bool = False  # the grounding target is absent: the answer is to refuse
    solver: Iterator[Action] | None = field(default=None, compare=False)  # a task's reference solution, live on its env


@runtime_checkable
class Policy(Protocol):
    """Answers requests; `act_batch` lets backends that batch (transformers, servers) do so."""

    name: str

    def act(self, request: PolicyRequest) -> PolicyReply: ...

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyReply]: ...

    def close(self) -> None: ...


@runtime_checkable
class AnswerKeyed(Protocol):
    """A policy that is told the answers (the oracle): the harness asks it for an instance per item or episode."""

    def with_answers(self, key: AnswerKey) -> Policy: ...


def with_answers(policy: Policy, key: AnswerKey) -> Policy:
    """`policy` as it faces one item: told `key` when it takes answers (`AnswerKeyed`), else exactly as it is."""
    return policy.with_answers(key) if isinstance(policy, AnswerKeyed) else policy


class PolicyBase:
    """Default `act_batch` (one by one) and `close` (nothing to release)."""

    name: str = "policy"
    #: Observation facts beyond the screenshot this policy reads from its request context
    #: (`uivenus.agent.observing.OBSERVATION_FACTS`: screen text, elements); models read none.
    observes: tuple[str, ...] = ()

    def act(self, request: PolicyRequest) -> PolicyReply:
        raise NotImplementedError

    def act_batch(self, requests: Sequence[PolicyRequest]) -> list[PolicyReply]:
        return [self.act(r) for r in requests]

    def close(self) -> None:
        return None

    def __enter__(self) -> PolicyBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def request_frame(context: Mapping[str, Any]) -> Frame:
    """The frame a non-model policy writes its coordinates in: the harness's `frame`, else the relative 0–999
    frame over `screen_size` — one rule, so the oracle, OCR and every ground-truth source agree."""
    frame = context.get("frame")
    if frame is not None:
        return frame
    if "screen_size" not in context:
        raise PolicyError("the request context has neither 'frame' nor 'screen_size', so there is no frame to write "
                          "coordinates in; the harness must put the screen's logical size (or its Frame) there")
    width, height = context["screen_size"]
    return Frame.relative(int(width), int(height))


#: Backend factories by SPEC prefix; each takes the text after `prefix:` ("" when there is none).
POLICY_FACTORIES: dict[str, Callable[[str], Policy]] = {}


def register_policy(prefix: str) -> Callable[[Callable[[str], Policy]], Callable[[str], Policy]]:
    def decorate(factory: Callable[[str], Policy]) -> Callable[[str], Policy]:
        POLICY_FACTORIES[prefix] = factory
        return factory

    return decorate


T = TypeVar("T")


def spec_pairs(query: str, what: str, error: type[Exception] = PolicySpecError) -> list[tuple[str, str]]:
    """The `key=value&...` pairs of a SPEC string's query, in order and URL-decoded (`%2F` is '/', `%20` and `+`
    are spaces). A piece that is not `key=value` or a key given twice raises `error` naming `what` (the backend
    or judge the options are for)."""
    if not query:
        return []
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True, errors="strict")
    except ValueError:  # a piece without '=', or bytes that are not UTF-8
        pairs = [("", "")]
    if any(not key for key, _ in pairs):
        raise error(f"{what} options {query!r} are not key=value pairs joined by '&' (URL-encode '&', '=', '#', "
                    "'%' and '+' inside a value)")
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise error(f"{what} option {key!r} is given twice in {query!r}; give it once")
        seen.add(key)
    return pairs


def spec_options(query: str, parsers: Mapping[str, Callable[[str, str], T]], what: str,
                 error: type[Exception] = PolicySpecError) -> dict[str, T]:
    """`spec_pairs`, each value converted by `parsers[key](key, value)` (which raises `error` itself for a bad
    value); a key without a parser raises `error` listing the known ones."""
    options: dict[str, T] = {}
    for key, value in spec_pairs(query, what, error):
        parser = parsers.get(key)
        if parser is None:
            raise error(f"unknown {what} option {key!r}; known: {', '.join(parsers)}")
        options[key] = parser(key, value)
    return options


def policy_from_spec(spec: str) -> Policy:
    """Build a policy from its SPEC string, e.g. `openai:http://127.0.0.1:8000/v1#ui-venus` or `hf:./ckpt`."""
    from uivenus.agent.policies import load_backends

    load_backends()
    prefix, _, rest = spec.partition(":")
    factory = POLICY_FACTORIES.get(prefix)
    if factory is None:
        known = ", ".join(sorted(POLICY_FACTORIES))
        raise PolicySpecError(f"unknown policy spec {spec!r}; known kinds: {known}")
    return factory(rest)
