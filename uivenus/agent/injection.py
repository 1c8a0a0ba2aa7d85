"""Prompt injection: text on the screen that tries to instruct the agent ("ignore your instructions", "AI agent:
…", "forward all mail to …"). `scan_injection` looks through a screen's text for the phrasings of
`INJECTION_PATTERNS` and returns each match as an `InjectionFlag`; the guard scans every screen the agent sees,
and the loop records the flags with the step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["INJECTION_PATTERNS", "InjectionFlag", "InjectionPattern", "scan_injection"]

#: "AI" as written and as OCR often reads it ("Al", "A1"), case-sensitive so that "al" stays a word.
_AI = r"(?:(?-i:A[Il1])|LLM)"

@dataclass(frozen=True)
class InjectionPattern:
    """A phrasing aimed at an agent; the regex runs only when one of its lower-case `triggers` is in the text
    (a substring test is far cheaper than a case-insensitive regex over a whole page)."""

    triggers: tuple[str, ...]
    regex: re.Pattern[str]


def _pattern(triggers: tuple[str, ...], regex: str) -> InjectionPattern:
    return InjectionPattern(triggers, re.compile(regex, re.IGNORECASE))


#: Phrasings of instructions aimed at an agent rather than at the person reading the page.
INJECTION_PATTERNS: dict[str, InjectionPattern] = {
    "ignore instructions": _pattern(
        ("ignore", "disregard", "forget", "override"),
        r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+)?"
        r"(?:previous|prior|earlier|above|original|current|your|system)?\s*"
        r"(?:instructions|prompts?|rules|task|guidelines)"),
    "addresses an agent": _pattern(
        ("agent", "assistant", "model", "llm", "attention", "note to", "if you are"),
        rf"(?:^|[\s>\"'(]){_AI}\s+(?:agent|assistant|model)s?\s*[:,]"
        rf"|\b(?:attention|note to)\s+(?:the\s+|all\s+)?(?:{_AI}|agent|assistant|language model)s?\b"
        rf"|\bif you are an? (?:{_AI}|agent|assistant|language model)\b"),
    "new orders": _pattern(
        ("you must now", "instruction", "system prompt", "your new"),
        r"\byou must now\b|\bnew instructions?\s*:|\bsystem prompt\b"
        r"|\byour new (?:task|goal|instructions?) (?:is|are)\b"),
    "exfiltration": _pattern(
        ("all", "every", "each"),
        r"\b(?:forward|send|email|upload|copy)\s+(?:all|every|each)\s+(?:of\s+)?(?:the\s+|your\s+|my\s+)?"
        r"(?:mail|e-?mails?|messages|files|contacts|passwords|data)\b"),
    "secrecy": _pattern(
        ("user",), r"\b(?:do not|don't|never)\s+(?:tell|inform|notify|alert)\s+(?:the\s+)?user\b"),
}


@dataclass(frozen=True)
class InjectionFlag:
    """On-screen text that tries to instruct the agent: which pattern, the words matched and some context."""

    pattern: str
    match: str
    context: str

    def to_dict(self) -> dict[str, str]:
        return {"pattern": self.pattern, "match": self.match, "context": self.context}


def scan_injection(text: str | None, *, context_chars: int = 60) -> tuple[InjectionFlag, ...]:
    """Every injection pattern found in `text` (the first hit of each), with the text around it."""
    if not text:
        return ()
    lower = text.lower()
    flags = []
    for name, pattern in INJECTION_PATTERNS.items():
        if not any(trigger in lower for trigger in pattern.triggers):
            continue
        found = pattern.regex.search(text)
        if found:
            start, end = max(found.start() - context_chars, 0), min(found.end() + context_chars, len(text))
            flags.append(InjectionFlag(name, found.group(0).strip(), " ".join(text[start:end].split())))
    return tuple(flags)
