"""The built-in judges: programmatic state checks, OCR text evidence, what the actions acted on
(`verify.action_judge`, registered here as `acts`), and a VLM through any policy backend.

Each returns a `Verdict` (success or failure with a confidence and the evidence used) or abstains. Abstaining is
how a judge says "I cannot tell": no checker for the task, no readable state, no literal to look for, an answer
that does not parse. No judge ever turns "cannot tell" into success.

`judge_from_spec` builds one from its SPEC: `program`, `ocr`, `acts`, `vlm:<policy spec>` with judge options in the
policy spec's query string, e.g. `vlm:openai:http://127.0.0.1:8000/v1#judge?samples=3&temperature=0.7` (the options
are taken out before the policy spec is handed on; see `VLM_OPTIONS`).
"""

from __future__ import annotations

import hashlib
import re
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable
from urllib.parse import urlencode

from PIL import Image

from uivenus.agent.policies.base import (
    Message, Mode, Policy, PolicyError, PolicyRequest, PolicySpecError, Sampling, policy_from_spec, spec_pairs,
)
from uivenus.envs.checks import UnknownCheckKind, checker_for
from uivenus.verify.action_judge import ActionJudge, ended_on_operand, unasked_acts
from uivenus.verify.acts import unconfirmed_typing
from uivenus.verify.base import (
    JUDGE_FACTORIES, Evidence, Judge, StepEvidence, Verdict, VerifyError, Vote, register_judge,
)
from uivenus.verify.keypoints import Act, KeyPoint, extract_key_points, parse_key_point
from uivenus.verify.text_evidence import PointStatus, ocr_lines, point_status
from uivenus.verify.voting import aggregate, as_verdict

__all__ = [
    "JUDGE_SYSTEM_PROMPT", "STEP_SYSTEM_PROMPT", "VLM_OPTIONS", "OcrJudge", "ProgramJudge",
    "SampledJudge", "VlmJudge", "VlmOptions", "collect_verdicts", "parse_verdict_text",
]

#: Acts on an element that screen text cannot show done (a typed value can show; a click cannot).
_ELEMENT_ACTS = frozenset({Act.CLICK, Act.SELECT, Act.FOCUS})
#: How much of a model's raw answer an abstention keeps as evidence.
_RAW_CHARS = 2000


@runtime_checkable
class SampledJudge(Protocol):
    """A judge that can answer several times for one piece of evidence (a sampled VLM), each answer a vote."""

    name: str

    def judge_samples(self, evidence: Evidence) -> tuple[Verdict, ...]: ...


def collect_verdicts(judges: Sequence[Judge], evidence: Evidence) -> tuple[Verdict, ...]:
    """Every verdict of every judge on `evidence`: all samples of sampled judges, one verdict of the others."""
    out: list[Verdict] = []
    for judge in judges:
        out.extend(judge.judge_samples(evidence) if isinstance(judge, SampledJudge) else (judge.judge(evidence),))
    return tuple(out)


def _abstain(judge: str, reason: str, *evidence: str) -> Verdict:
    return Verdict(judge=judge, vote=Vote.ABSTAIN, confidence=0.0, reason=reason, evidence=evidence)


def _no_options(kind: str, rest: str) -> None:
    if rest:
        raise VerifyError(f"the {kind!r} judge takes no options, got {kind}:{rest}; write just {kind!r}")


# --- programmatic judge -------------------------------------------------------------------------

class ProgramJudge:
    """The task's own checker over the final environment state: exact where a task has one, silent elsewhere."""

    name = "program"

    def judge(self, evidence: Evidence) -> Verdict:
        check = evidence.task.check
        if not check:
            return _abstain(self.name, f"task {evidence.task.id} has no programmatic check")
        if evidence.final_state is None:
            return _abstain(self.name, "no final environment state was recorded")
        kind = check.get("kind")
        try:
            checker = checker_for(kind)
        except UnknownCheckKind as exc:
            return _abstain(self.name, str(exc))
        if checker.from_state is None:
            return _abstain(self.name, f"check kind {kind!r} cannot be judged from a recorded state")
        try:
            outcome = checker.from_state(evidence.task, evidence.final_state)
        except LookupError as exc:  # e.g. a sandbox check naming a task that does not exist
            raise VerifyError(f"task {evidence.task.id} names a {kind} check that does not exist: {exc}") from None
        if outcome.passed is None:
            return _abstain(self.name, outcome.reason)
        return Verdict(self.name, Vote.SUCCESS if outcome.passed else Vote.FAILURE, 1.0, outcome.reason,
                       (f"check {kind}: {outcome.reason}",), exact=True)


@register_judge("program")
def _program_judge(rest: str) -> ProgramJudge:
    _no_options("program", rest)
    return ProgramJudge()


# --- OCR evidence judge -------------------------------------------------------------------------

class OcrJudge:
    """Are the task's key points visibly satisfied on the kept screens? Text evidence only, so it is cautious:
    success only when every checkable key point shows on the final screen and no act the task asks for (a click,
    a selection: "press Submit") is left that text cannot show, no typed text was left unconfirmed (what the
    screen shows may be the unsent input), the run did not end on clicking the item it was to change, and some
    satisfied point was not already so on the first screen ("keep Bluetooth on" alone is no work done); failure
    only on a contradiction (a value that never
    appears, a switch in the opposite state), abstention otherwise. Confidence stays below 1."""

    name = "ocr"
    #: Confidence range: 0.5 with the least evidence, up to 0.9 when every key point was checked.
    BASE, SPAN = 0.5, 0.4

    #: Screens whose OCR rows a judge remembers (the same key screens are judged again and again).
    CACHE_SIZE = 16

    def __init__(self, min_checked: int = 1) -> None:
        self.min_checked = min_checked  # a success needs at least this many key points checked and satisfied
        self._rows: OrderedDict[str, list[str]] = OrderedDict()

    def _read(self, image: Image.Image) -> list[str]:
        key = f"{image.size}{image.mode}" + hashlib.sha1(image.tobytes()).hexdigest()
        if key not in self._rows:
            self._rows[key] = ocr_lines(image)
            while len(self._rows) > self.CACHE_SIZE:
                self._rows.popitem(last=False)
        return self._rows[key]

    def _screens(self, evidence: Evidence) -> list[list[str]]:
        """One list of text lines per kept screen: the given DOM/OCR texts, else OCR of the screenshots."""
        if evidence.screen_texts:
            if evidence.screenshots and len(evidence.screen_texts) != len(evidence.screenshots):
                raise VerifyError(f"Evidence has {len(evidence.screen_texts)} screen_texts for "
                                  f"{len(evidence.screenshots)} screenshots; give one text per kept screenshot")
            return [text.splitlines() for text in evidence.screen_texts]
        return [self._read(image) for image in evidence.screenshots]

    @staticmethod
    def _status(point: KeyPoint, screens: list[list[str]]) -> tuple[PointStatus, str]:
        """`point_status`, except that a click, selection or focus asked for is never shown done by text: its
        target's name on the screen says it can be acted on, not that it was."""
        status, why = point_status(point, screens)
        if status is PointStatus.SATISFIED and point.act in _ELEMENT_ACTS:
            return PointStatus.UNDETERMINED, f"text cannot show the {point.act.value} was done ({why})"
        return status, why

    def judge(self, evidence: Evidence) -> Verdict:
        if not evidence.screenshots and not evidence.screen_texts:
            return _abstain(self.name, "no screens to read")
        points = (tuple(map(parse_key_point, evidence.key_points)) if evidence.key_points
                  else extract_key_points(evidence.task.instruction))
        if not points:
            return _abstain(self.name, "the task has no key points")
        screens = self._screens(evidence)
        if not any(screens[-1]):
            return _abstain(self.name, "no text could be read on the final screen")
        report = [(point, *self._status(point, screens)) for point in points]
        lines = tuple(f"{p.text}: {status.value} ({why})" for p, status, why in report)
        count = {status: sum(1 for _, s, _ in report if s is status) for status in PointStatus}
        decided = len(points) - count[PointStatus.UNDETERMINED]
        if count[PointStatus.CONTRADICTED]:
            confidence = self.BASE + self.SPAN * count[PointStatus.CONTRADICTED] / len(points)
            return Verdict(self.name, Vote.FAILURE, confidence,
                           f"{count[PointStatus.CONTRADICTED]} of {len(points)} key points contradicted", lines)
        unseen_acts = [p.text for p, status, _ in report if status is PointStatus.UNDETERMINED and p.act is not None]
        pending = unconfirmed_typing(evidence.acts)
        if pending is not None and count[PointStatus.SATISFIED]:  # the text on screen may be the unsent input
            return _abstain(self.name, f"the text typed at step {pending} was never confirmed (no click or key "
                                       "after it): the screen may show it unsent in its field", *lines)
        operand = ended_on_operand(points, evidence.acts)
        if operand is not None and count[PointStatus.SATISFIED]:  # the named item shows: it was picked, not changed
            return _abstain(self.name, f"the last act (step {operand.index}) clicked the item the task changes: "
                                       "its name on the screen does not show the change", *lines)
        unasked = unasked_acts(evidence.task.instruction, evidence.acts)
        if unasked and count[PointStatus.SATISFIED]:  # the screen shows text; the acts undid or destroyed work
            return _abstain(self.name, f"the actions did what the task does not ask: {unasked[0][1]}", *lines)
        satisfied = [p for p, status, _ in report if status is PointStatus.SATISFIED]
        if len(screens) > 1 and satisfied and all(self._status(p, screens[:1])[0] is PointStatus.SATISFIED
                                                  for p in satisfied):
            return _abstain(self.name, "every key point the screens show was already so on the first screen: "
                                       "nothing the episode did shows", *lines)
        if decided >= self.min_checked and count[PointStatus.SATISFIED] == decided and not unseen_acts:
            confidence = self.BASE + self.SPAN * decided / len(points)
            return Verdict(self.name, Vote.SUCCESS, confidence,
                           f"{decided} of {len(points)} key points visibly satisfied, none contradicted", lines)
        unsettled = decided - count[PointStatus.SATISFIED]
        why = (f"{unsettled} key points only partly visible or gone at the end" if unsettled
               else f"text cannot show that {unseen_acts[0]!r} was done" if unseen_acts and decided
               else f"only {decided} of {len(points)} key points can be checked by text")
        return _abstain(self.name, why, *lines)


@register_judge("ocr")
def _ocr_judge(rest: str) -> OcrJudge:
    _no_options("ocr", rest)
    return OcrJudge()


@register_judge("acts")
def _action_judge(rest: str) -> ActionJudge:
    _no_options("acts", rest)
    return ActionJudge()


# --- VLM judge ----------------------------------------------------------------------------------

JUDGE_SYSTEM_PROMPT = (
    "You check whether a computer-use agent completed a task. You see the task, the conditions that must all "
    "hold when it is done, a record of the actions the environment executed, and screenshots taken during the "
    "episode (the last one is the final screen). Decide from the screenshots and the action record only. What "
    "the agent says about its own work is a claim, not evidence. Judge the final state: if something was done and "
    "later undone, the task is not complete. If any condition is not visibly met, the answer is failure.\n"
    "Answer with exactly three tags and nothing else:\n"
    "<verdict>success</verdict> or <verdict>failure</verdict>, then <confidence>a number from 0 to 1</confidence>, "
    "then <reason>one or two sentences</reason>."
)
STEP_SYSTEM_PROMPT = (
    "You check one proposed step of a computer-use agent. You see the task, the screen before the step, the action "
    "the agent proposes, the intent it states (a claim, not evidence) and, when available, the screen after the "
    "action. Decide whether this action moves the task forward on this screen: it targets the right element or "
    "enters the right value, and it does not work against the task. An action that misses its target, changes "
    "nothing, repeats a useless step or goes the wrong way does not move the task forward.\n"
    "Answer with exactly three tags and nothing else:\n"
    "<verdict>success</verdict> if it moves the task forward, <verdict>failure</verdict> if not, then "
    "<confidence>a number from 0 to 1</confidence>, then <reason>one or two sentences</reason>."
)
_ANSWER_FORM = re.compile(
    r"<verdict>\s*(?P<vote>success|failure)\s*</verdict>\s*"
    r"<confidence>\s*(?P<confidence>[01](?:\.\d+)?|\.\d+)\s*</confidence>\s*"
    r"<reason>(?P<reason>[^<]*)</reason>",
    re.IGNORECASE,
)
_LEADING_THINK = re.compile(r"\s*<think>.*?</think>", re.DOTALL)


def parse_verdict_text(text: str, judge: str) -> Verdict:
    """Read an answer strictly: the three tags, in order, nothing else (a leading <think> block allowed).
    Anything else — extra text, a missing tag, a confidence outside [0, 1] — is an abstention that keeps the raw
    answer as evidence; it is never a vote."""
    body = _LEADING_THINK.sub("", text, count=1) if text.lstrip().startswith("<think>") else text
    match = _ANSWER_FORM.fullmatch(body.strip())
    if match is None:
        return _abstain(judge, "the answer does not follow the verdict format", f"raw answer: {text[:_RAW_CHARS]!r}")
    confidence = float(match["confidence"])
    if not 0.0 <= confidence <= 1.0:
        return _abstain(judge, f"confidence {confidence} is outside [0, 1]", f"raw answer: {text[:_RAW_CHARS]!r}")
    return Verdict(judge, Vote(match["vote"].lower()), confidence, match["reason"].strip(),
                   (f"raw answer: {text[:_RAW_CHARS]!r}",))


@dataclass(frozen=True)
class VlmOptions:
    samples: int = 1  # answers per evidence; several are voted on (majority) by `judge`, or all returned
    temperature: float | None = None  # None: greedy for one sample, 0.7 for several (identical samples vote once)
    thinking: bool = False
    max_tokens: int = 256
    max_images: int = 4  # the last this many kept screenshots (the final one always among them)

    def __post_init__(self) -> None:
        if self.samples < 1 or self.max_tokens < 1 or self.max_images < 1:
            raise VerifyError(f"vlm judge options samples, max_tokens and max_images must be >= 1, got {self}")
        if self.temperature is not None and self.temperature < 0:
            raise VerifyError(f"vlm judge temperature must be >= 0, got {self.temperature}")

    @property
    def sampling(self) -> Sampling:
        temperature = self.temperature if self.temperature is not None else (0.0 if self.samples == 1 else 0.7)
        return Sampling(temperature=temperature, max_new_tokens=self.max_tokens, thinking=self.thinking)


def _bool(text: str) -> bool:
    lowered = text.lower()
    if lowered not in ("1", "0", "true", "false", "on", "off", "yes", "no"):
        raise VerifyError(f"expected a boolean (true/false), got {text!r}")
    return lowered in ("1", "true", "on", "yes")


#: Judge options a `vlm:` spec may carry in its query string, each with its converter.
VLM_OPTIONS: Mapping[str, Callable[[str], Any]] = MappingProxyType({
    "samples": int, "temperature": float, "thinking": _bool, "max_tokens": int, "max_images": int,
})


def _split_options(spec: str) -> tuple[str, VlmOptions]:
    """Take the judge's options out of every query string of the policy spec; the rest goes on to the policy
    (URL-encoded again, so the policy's parser reads the same values)."""
    found: dict[str, Any] = {}
    segments = []
    for segment in spec.split("#"):
        head, sep, query = segment.partition("?")
        kept = []
        for key, value in spec_pairs(query, "vlm judge", VerifyError):
            if key not in VLM_OPTIONS:
                kept.append((key, value))
                continue
            if key in found:
                raise VerifyError(f"vlm judge option {key!r} is given twice in {spec!r}; give it once")
            try:
                found[key] = VLM_OPTIONS[key](value)
            except ValueError:
                raise VerifyError(f"vlm judge option {key}={value!r} is malformed") from None
        segments.append(head + (sep + urlencode(kept) if kept else ""))
    return "#".join(segments), VlmOptions(**found)


def _agent_claim(extra: Mapping[str, Any]) -> str | None:
    claim = extra.get("agent_claim")
    return str(claim) if claim else None


class VlmJudge:
    """A vision-language model as judge, through any policy backend (`openai:`, `hf:`, …).

    The model sees the task, the key points, the factual action history and the kept screenshots; the agent's own
    claim (`Evidence.extra["agent_claim"]`, e.g. its Finished/Answer text) is shown only labelled as a claim. Its
    answer is parsed strictly (`parse_verdict_text`); a backend failure is an abstention too, so a broken or
    random judge model can never stop a run nor vote success.
    """

    def __init__(self, policy: Policy | str, options: VlmOptions = VlmOptions()) -> None:
        self._owned = isinstance(policy, str)
        if isinstance(policy, str):
            try:
                policy = policy_from_spec(policy)
            except PolicySpecError as exc:
                raise VerifyError(f"vlm judge: {exc}") from None
        self.policy: Policy = policy
        self.options = options
        self.name = f"vlm:{policy.name}"

    @classmethod
    def from_spec(cls, spec: str) -> VlmJudge:
        """`<policy spec>` with judge options (`samples`, `temperature`, `thinking`, `max_tokens`, `max_images`)
        anywhere in its query strings."""
        if not spec:
            raise VerifyError("the vlm judge needs a policy spec: vlm:openai:http://HOST:PORT/v1#MODEL or vlm:hf:PATH")
        policy_spec, options = _split_options(spec)
        return cls(policy_spec, options)

    # -- trace level --------------------------------------------------------------------------------

    def messages(self, evidence: Evidence) -> tuple[Message, ...]:
        """The judge's conversation for `evidence` (exposed so prompts can be inspected and tested)."""
        points = evidence.key_points or tuple(p.text for p in extract_key_points(evidence.task.instruction))
        parts: list[str | Image.Image] = [
            f"Task: {evidence.task.instruction}\n\nConditions that must all hold:\n"
            + "\n".join(f"{i}. {p}" for i, p in enumerate(points, 1))
            + "\n\nActions the environment executed, in order:\n"
            + ("\n".join(f"{i}. {h}" for i, h in enumerate(evidence.history, 1)) or "(none)")
        ]
        claim = _agent_claim(evidence.extra)
        if claim:
            parts.append(f"\n\nThe agent claims (unverified, not evidence): {claim}")
        images = evidence.screenshots[-self.options.max_images:]
        if images:
            parts.append(f"\n\nScreenshots, oldest first ({len(images)}):")
            for i, image in enumerate(images, 1):
                parts.extend((f"\nScreenshot {i}{' (final screen)' if i == len(images) else ''}:", image))
        else:
            parts.append("\n\nNo screenshots were kept.")
        parts.append("\n\nYour answer (three tags only):")
        return Message("system", (JUDGE_SYSTEM_PROMPT,)), Message("user", tuple(parts))

    def _ask(self, messages: tuple[Message, ...]) -> tuple[Verdict, ...]:
        request = PolicyRequest(messages=messages, mode=Mode.GROUNDING, sampling=self.options.sampling)
        try:
            replies = self.policy.act_batch([request] * self.options.samples)
        except PolicyError as exc:
            return tuple(_abstain(self.name, "the judge model could not answer", str(exc))
                         for _ in range(self.options.samples))
        return tuple(parse_verdict_text(reply.text, self.name) for reply in replies)

    def judge_samples(self, evidence: Evidence) -> tuple[Verdict, ...]:
        return self._ask(self.messages(evidence))

    def judge(self, evidence: Evidence) -> Verdict:
        """One verdict: the answer itself for one sample, the majority of the samples for several."""
        return self._combine(self.judge_samples(evidence))

    def _combine(self, samples: tuple[Verdict, ...]) -> Verdict:
        if len(samples) == 1:
            return samples[0]
        combined = as_verdict(aggregate(samples, "majority"), self.name)
        return replace(combined, evidence=tuple(e for v in samples for e in v.evidence))

    # -- step level ---------------------------------------------------------------------------------

    def step_messages(self, step: StepEvidence) -> tuple[Message, ...]:
        parts: list[str | Image.Image] = [f"Task: {step.task.instruction}"]
        if step.key_points:
            parts.append("\n\nConditions that must hold at the end:\n"
                         + "\n".join(f"{i}. {p}" for i, p in enumerate(step.key_points, 1)))
        parts.append("\n\nEarlier actions, in order:\n"
                     + ("\n".join(f"{i}. {h}" for i, h in enumerate(step.history, 1)) or "(none)"))
        parts.extend(("\n\nScreen before the step:", step.before, f"\n\nProposed action: {step.action}"))
        if step.intent:
            parts.append(f"\nThe agent states its intent (a claim, not evidence): {step.intent}")
        if step.after is not None:
            parts.extend(("\n\nScreen after the action:", step.after))
        parts.append("\n\nYour answer (three tags only):")
        return Message("system", (STEP_SYSTEM_PROMPT,)), Message("user", tuple(parts))

    def judge_step(self, step: StepEvidence) -> Verdict:
        """Success: the proposed action moves the task forward; failure: it does not; abstain: no usable answer."""
        return self._combine(self._ask(self.step_messages(step)))

    def close(self) -> None:
        if self._owned:
            self.policy.close()


@register_judge("vlm")
def _vlm_judge(rest: str) -> VlmJudge:
    return VlmJudge.from_spec(rest)


def judge_from_spec(spec: str) -> Judge:
    """Build a judge from its SPEC: `program`, `ocr`, `acts`, `vlm:openai:http://127.0.0.1:8000/v1#judge`, … (the
    built-in judges above are registered by the time anyone can call this)."""
    prefix, _, rest = spec.strip().partition(":")
    factory = JUDGE_FACTORIES.get(prefix)
    if factory is None:
        raise VerifyError(f"unknown judge spec {spec!r}; known kinds: {', '.join(sorted(JUDGE_FACTORIES))}")
    return factory(rest)
