"""The safety guard: stop consequential actions before they run, and flag screens that try to instruct the agent.

An action is consequential when it pays, deletes, sends or posts, enters credentials or card numbers, installs /
irreversibly changes the system (also: starts a terminal, a shell, the settings or a package manager), or opens a
site the task is not on (another host, a local address, a non-web scheme). The guard judges that from the action
itself (typed content such as a card number that passes the Luhn check, a hotkey such as shift+delete, the app a
LaunchApp starts, the URL a Launch opens against the task's URL), the text of what it acts on (the DOM
element under the point or the focused field where the env has a DOM, rapidocr text boxes around the point
otherwise) and the task (an action the user asked for is still confirmed, and the reason says so). Categories
are a registry of rules (multilingual keyword lists and matchers): adding one is adding an entry.

Modes: `confirm` hands a consequential action to the user through a callback (the CLI asks on the terminal),
`block` refuses it, `allow` lets it run but still records what it would have stopped (for safety evaluations).
Every review returns a `GuardDecision` with its reason, which the loop stores in the step.

Prompt injection: `scan_injection` looks through the screen's text for instructions aimed at an agent
("ignore your instructions", "AI agent: …", "forward all mail to …") and returns each match as a flag.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from PIL import Image

from uivenus.actions.points import iter_points
from uivenus.actions.space import Action, ActionSequence, ActionType, Hotkey, Launch, LaunchApp, PressEnter, Type
from uivenus.agent.policies.ocr import TextBox, ocr_text_boxes
from uivenus.envs.base import EnvError, Observation
from uivenus.envs.hosts import DEFAULT_PORTS, Origin, launch_url
from uivenus.records import TaskSpec

__all__ = [
    "HOTKEY_RULES", "INJECTION_PATTERNS", "LAUNCH_RULES", "RULES", "Category", "Guard", "GuardDecision",
    "GuardError", "GuardMode", "InjectionFlag", "InjectionPattern", "LaunchRule", "OcrReader", "Rule", "Target",
    "TextBox", "Verdict", "Where",
    "approve_all", "decline_all", "element_at", "keyword_rule", "luhn_valid", "register_rule", "scan_injection",
]


class GuardError(ValueError):
    """The guard was configured wrongly (unknown mode); the message lists the modes."""


class GuardMode(StrEnum):
    CONFIRM = "confirm"  # ask the user (callback) before a consequential action
    BLOCK = "block"  # never run a consequential action
    ALLOW = "allow"  # run everything, but still record what would have been stopped


class Category(StrEnum):
    PAYMENT = "payment"
    DELETION = "deletion"
    SENDING = "sending"  # sending, posting, publishing
    CREDENTIALS = "credentials"  # passwords, card numbers, security codes
    SYSTEM = "system"  # installing, resetting, irreversible system changes; terminals, shells, settings
    NAVIGATION = "navigation"  # opening a host, a local address or a scheme the task did not name


class Where(StrEnum):
    """What text a rule reads."""

    TARGET = "target"  # the element a pointer action activates, or the submit button Enter would press
    FIELD = "field"  # the focused field a Type goes into (label, name, type, autocomplete)
    CONTENT = "content"  # the text a Type enters
    APP = "app"  # the app a LaunchApp starts


class Verdict(StrEnum):
    HARMLESS = "harmless"  # nothing consequential found: runs
    ALLOWED = "allowed"  # consequential, run anyway because the mode is allow
    CONFIRMED = "confirmed"  # consequential, the user said yes
    DECLINED = "declined"  # consequential, the user said no: not run
    BLOCKED = "blocked"  # consequential, mode block: not run


#: Verdicts under which the action is executed.
RUNS = frozenset({Verdict.HARMLESS, Verdict.ALLOWED, Verdict.CONFIRMED})


# --- rules ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    """One way to recognise a category: `match(text)` returns the evidence found in the text, or None."""

    category: Category
    where: Where
    name: str
    match: Callable[[str], str | None]


def _word_pattern(word: str) -> str:
    """ASCII words match whole words with any run of spaces, '-' or '_' between their parts; other scripts
    (CJK has no word breaks) match as substrings."""
    parts = [re.escape(p) for p in re.split(r"[\s_-]+", word.strip())]
    if word.isascii():
        return r"(?<![a-z0-9])" + r"[\s_-]+".join(parts) + r"(?![a-z0-9])"
    return r"\s*".join(parts)


def keyword_rule(category: Category, where: Where, name: str, words: Iterable[str]) -> Rule:
    """A rule that fires on any of `words` (case-insensitive); the longest matching phrase is the evidence."""
    ordered = sorted(words, key=len, reverse=True)
    pattern = re.compile("|".join(_word_pattern(w) for w in ordered), re.IGNORECASE)

    def match(text: str) -> str | None:
        found = pattern.search(text)
        return found.group(0) if found else None

    return Rule(category, where, name, match)


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum every payment card number satisfies."""
    total = 0
    for i, char in enumerate(reversed(digits)):
        d = int(char)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


_CARD_CANDIDATE = re.compile(r"(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)")


def _card_number(text: str) -> str | None:
    for found in _CARD_CANDIDATE.finditer(text):
        digits = re.sub(r"\D", "", found.group(0))
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            return f"card number ending {digits[-4:]}"
    return None


def _program_path(app: str) -> str | None:
    """An app given as a path starts whatever program lies there, not an app by name."""
    return app if "/" in app or "\\" in app else None


_T, _F, _C, _A = Where.TARGET, Where.FIELD, Where.CONTENT, Where.APP

#: Every rule the guard applies, by category. Keyword lists are English first, then a few other languages.
RULES: list[Rule] = [
    keyword_rule(Category.PAYMENT, _T, "pay or buy", [
        "pay", "pay now", "paying", "buy", "buy now", "place order", "place your order", "confirm order",
        "complete order", "complete purchase", "purchase", "subscribe", "donate", "send money", "transfer money",
        "confirm payment",
        "pagar", "comprar", "payer", "acheter", "bezahlen", "kaufen", "jetzt kaufen", "zahlungspflichtig bestellen",
        "支付", "付款", "购买", "立即购买", "提交订单", "下单", "结算",
    ]),
    keyword_rule(Category.DELETION, _T, "delete or remove", [
        "delete", "remove", "erase", "move to trash", "discard", "clear all", "empty trash", "wipe",
        "eliminar", "borrar", "supprimer", "löschen", "entfernen", "删除", "移除", "清空",
    ]),
    keyword_rule(Category.SENDING, _T, "send or post", [
        "send", "send now", "post", "publish", "tweet", "share publicly", "submit post",
        "enviar", "publicar", "envoyer", "publier", "senden", "absenden", "veröffentlichen", "发送", "发布", "发表",
    ]),
    keyword_rule(Category.SYSTEM, _T, "install or reset", [
        "install", "uninstall", "factory reset", "reset all", "reset settings", "erase all", "format disk",
        "update now", "restart now", "grant access", "instalar", "installer", "installieren", "zurücksetzen",
        "安装", "卸载", "恢复出厂设置",
    ]),
    keyword_rule(Category.CREDENTIALS, _F, "secret field", [
        "password", "passcode", "passwort", "contraseña", "mot de passe", "密码", "pin", "card number",
        "card-number", "cc-number", "cc-csc", "cc-exp", "cvc", "cvv", "csc", "security code", "expiry",
        "expiration", "iban", "social security", "ssn", "one-time code", "otp",
    ]),
    Rule(Category.CREDENTIALS, _C, "card number (Luhn)", _card_number),
    keyword_rule(Category.SYSTEM, _C, "system command", [
        "sudo", "rm -rf", "rm -r", "mkfs", "apt install", "apt-get install", "pip install", "dd if", "shutdown",
        "reboot", "format c:",
    ]),
    Rule(Category.SYSTEM, _A, "program path", _program_path),
    keyword_rule(Category.SYSTEM, _A, "terminal or shell", [
        "terminal", "x-terminal-emulator", "xterm", "uxterm", "lxterminal", "konsole", "terminator", "tilix",
        "alacritty", "urxvt", "rxvt", "shell", "sh", "bash", "zsh", "ksh", "csh", "tcsh", "cmd", "command prompt",
        "powershell", "pwsh", "python", "python3", "perl", "node", "终端", "命令行",
    ]),
    keyword_rule(Category.SYSTEM, _A, "system settings", [
        "settings", "system settings", "control center", "gnome-control-center", "xfce4-settings-manager",
        "control panel", "system preferences", "dconf-editor", "regedit", "einstellungen", "configuración",
        "paramètres", "设置", "系统设置",
    ]),
    keyword_rule(Category.SYSTEM, _A, "package manager", [
        "synaptic", "apt", "apt-get", "aptitude", "dpkg", "pip", "pip3", "snap", "flatpak", "gnome-software",
        "software center", "software updater", "update manager", "app store", "package manager", "yum", "dnf",
        "pacman", "软件中心", "应用商店",
    ]),
    keyword_rule(Category.SYSTEM, _A, "privileged or system tool", [
        "sudo", "su", "pkexec", "gksu", "gksudo", "doas", "passwd", "systemctl", "task manager", "system monitor",
        "gparted", "gnome-disks", "disk utility", "users and groups", "任务管理器",
    ]),
]


def register_rule(rule: Rule) -> None:
    RULES.append(rule)


@dataclass(frozen=True)
class LaunchRule:
    """One way a Launch(url) leaves the task's site: `match(url, task_url)` (url as Launch opens it, task_url
    None for a task without one) returns the evidence, or None."""

    category: Category
    name: str
    match: Callable[[str, str | None], str | None]


def _non_web_scheme(url: str, task_url: str | None) -> str | None:
    scheme = url.split(":", 1)[0].lower()
    return None if url == "about:blank" or scheme in DEFAULT_PORTS else f"{scheme}: URL"


def _local_address(url: str, task_url: str | None) -> str | None:
    origin = Origin.of(url)
    if origin is None or not origin.local or (task_url is not None and origin == Origin.of(task_url)):
        return None
    return origin.host


def _another_host(url: str, task_url: str | None) -> str | None:
    origin, home = Origin.of(url), Origin.of(task_url) if task_url is not None else None
    if origin is None or home is None or origin.host == home.host:
        return None
    if origin.host.endswith(f".{home.host}") or home.host.endswith(f".{origin.host}"):
        return None  # a subdomain of the task's site, or the site of the task's subdomain
    return f"{origin.host} (the task is on {home.host})"


#: Every rule a Launch(url) is checked against, in order (the first that fires is the finding).
LAUNCH_RULES: list[LaunchRule] = [
    LaunchRule(Category.NAVIGATION, "non-web scheme", _non_web_scheme),
    LaunchRule(Category.NAVIGATION, "local address", _local_address),
    LaunchRule(Category.NAVIGATION, "another host", _another_host),
]


#: Key chords that are consequential wherever they are pressed (lower-case key names).
HOTKEY_RULES: dict[frozenset[str], Category] = {
    frozenset({"shift", "delete"}): Category.DELETION,
    frozenset({"shift", "del"}): Category.DELETION,
    frozenset({"ctrl", "enter"}): Category.SENDING,
    frozenset({"cmd", "enter"}): Category.SENDING,
    frozenset({"ctrl", "return"}): Category.SENDING,
}

#: Pointer actions that activate what is under their point (a hover or a drag does not press a button).
_ACTIVATING = frozenset({ActionType.CLICK, ActionType.DOUBLE_CLICK, ActionType.TRIPLE_CLICK, ActionType.LONG_PRESS})


# --- reading the screen ---------------------------------------------------------------------------



def element_at(env: Any, point: tuple[float, float] | None) -> Mapping[str, Any] | None:
    """The DOM element at `point` (None: the focused element) of a browser env; None over blank page or no DOM.

    Envs with a DOM (BrowserEnv, and SandboxEnv around one) offer `element_at`; others have nothing to read.
    """
    reader = getattr(env, "element_at", None)
    if not callable(reader):
        return None
    try:
        return reader(point)
    except EnvError:  # the page was being replaced mid-read
        return None


class OcrReader:
    """The screen's OCR text boxes (`ocr_text_boxes`, the process's one engine), computed once per image: the guard
    and the injection scan share them."""

    def __init__(self, min_score: float = 0.5) -> None:
        self.min_score = min_score
        self._last: tuple[Image.Image, tuple[TextBox, ...]] | None = None  # the screen of the current step

    def boxes(self, image: Image.Image) -> tuple[TextBox, ...]:
        if self._last is not None and self._last[0] is image:
            return self._last[1]
        found = tuple(box._replace(text=box.text.strip()) for box in ocr_text_boxes(image)
                      if box.score >= self.min_score and box.text.strip())
        self._last = (image, found)
        return found

    def near(self, image: Image.Image, point: tuple[float, float], radius: float = 24.0, limit: int = 2) -> str:
        """Text of the boxes at or nearest to `point` (within `radius` pixels), closest first."""
        close = sorted((b for b in self.boxes(image) if b.distance(point) <= radius), key=lambda b: b.distance(point))
        return " ".join(b.text for b in close[:limit])

    def text(self, image: Image.Image) -> str:
        return "\n".join(b.text for b in self.boxes(image))


@dataclass(frozen=True)
class Target:
    """What an action acts on, as text: the words rules read and where they came from."""

    text: str
    source: str  # "dom", "ocr" or "none"
    element: Mapping[str, Any] | None = None


_ELEMENT_TEXT_KEYS = ("text", "aria_label", "title", "value", "label", "placeholder", "name", "id", "testid",
                      "autocomplete", "type")
#: Elements whose whole text names what they do; other elements (a list row, a card) contribute only
#: short text, so a message row is not judged by the words of the message it previews.
_CONTROL_TAGS = frozenset({"button", "a", "summary", "label", "input", "select"})
_CONTROL_ROLES = frozenset({"button", "link", "menuitem", "tab", "switch", "checkbox"})
_SHORT_TEXT = 60


def _element_text(element: Mapping[str, Any]) -> str:
    is_control = element.get("tag") in _CONTROL_TAGS or element.get("role") in _CONTROL_ROLES
    seen: list[str] = []
    for key in _ELEMENT_TEXT_KEYS:
        value = element.get(key)
        if key == "text" and value and not is_control and len(value) > _SHORT_TEXT:
            continue
        if value and str(value) not in seen:
            seen.append(str(value))
    return " | ".join(seen)


# --- prompt injection -------------------------------------------------------------------------------

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
        r"(?:previous|prior|earlier|above|original|current|your|system)?\s*(?:instructions|prompts?|rules|task|guidelines)"),
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


# --- decisions ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class GuardDecision:
    """The guard's word on one action: whether it runs, why, and on what evidence."""

    verdict: Verdict
    reason: str
    mode: GuardMode
    category: Category | None = None
    evidence: str | None = None  # the words that matched
    rule: str | None = None
    target: str | None = None  # the text of what the action acts on
    source: str = "none"  # where that text came from: dom, ocr, action, none
    requested: bool = False  # the task itself asks for this kind of action
    action: Mapping[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def runs(self) -> bool:
        return self.verdict in RUNS

    @property
    def consequential(self) -> bool:
        return self.category is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.value, "runs": self.runs, "reason": self.reason, "mode": self.mode.value,
            "category": self.category.value if self.category else None, "evidence": self.evidence,
            "rule": self.rule, "target": self.target, "source": self.source, "requested": self.requested,
            "action": dict(self.action), "seconds": round(self.seconds, 6),
        }


Confirm = Callable[[GuardDecision], bool]


def decline_all(decision: GuardDecision) -> bool:
    """The confirm callback when nobody can be asked: every consequential action is declined."""
    return False


def approve_all(decision: GuardDecision) -> bool:
    return True


@dataclass(frozen=True)
class _Finding:
    category: Category
    rule: str
    evidence: str
    target: Target


class Guard:
    """Reviews each action before it runs; `confirm(decision) -> bool` is asked in confirm mode."""

    def __init__(self, mode: GuardMode | str = GuardMode.CONFIRM, confirm: Confirm = decline_all, *,
                 ocr: bool | OcrReader = True, rules: Iterable[Rule] | None = None,
                 hotkeys: Mapping[frozenset[str], Category] | None = None) -> None:
        try:
            self.mode = GuardMode(mode)
        except ValueError:
            raise GuardError(f"unknown guard mode {mode!r}; use one of {', '.join(GuardMode)}") from None
        self.confirm = confirm
        self.ocr = ocr if isinstance(ocr, OcrReader) else OcrReader() if ocr else None
        self._rules = RULES if rules is None else list(rules)
        self._hotkeys = HOTKEY_RULES if hotkeys is None else dict(hotkeys)

    # -- reading -----------------------------------------------------------------------------------

    def target(self, observation: Observation, point: tuple[float, float] | None, *, env: Any = None,
               focused: bool = False) -> Target:
        """The text of the element at `point` (or the focused field): DOM where `env` has one, else OCR."""
        if env is not None and callable(getattr(env, "element_at", None)):
            element = element_at(env, None if focused else point)
            if element:
                return Target(_element_text(element), "dom", element)
            if observation.text is not None:  # a page that answered: blank space, nothing focused
                return Target("", "dom")
        if point is not None and self.ocr is not None:
            return Target(self.ocr.near(observation.screenshot, point), "ocr")
        return Target("", "none")

    def screen_text(self, observation: Observation) -> str | None:
        """The screen's text: DOM text where the env gives it, OCR otherwise (None when OCR is off)."""
        if observation.text is not None:
            return observation.text
        return self.ocr.text(observation.screenshot) if self.ocr is not None else None

    def scan(self, observation: Observation) -> tuple[InjectionFlag, ...]:
        """Injection flags for the screen the agent is looking at."""
        return scan_injection(self.screen_text(observation))

    # -- judging -----------------------------------------------------------------------------------

    def classify(self, where: Where, text: str) -> tuple[Rule, str] | None:
        """The first rule for `where` that fires on `text`, with its evidence."""
        if not text:
            return None
        for rule in self._rules:
            if rule.where is where and (evidence := rule.match(text)) is not None:
                return rule, evidence
        return None

    def _match(self, where: Where, text: str, target: Target) -> _Finding | None:
        found = self.classify(where, text)
        return None if found is None else _Finding(found[0].category, found[0].name, found[1], target)

    def _findings(self, action: Action, observation: Observation, env: Any, focus: tuple[float, float] | None,
                  task: TaskSpec | None) -> tuple[_Finding | None, Target]:
        """The first consequential finding for `action` (a Sequence: its first consequential member)."""
        if isinstance(action, ActionSequence):
            last = Target("", "none")
            for member in action.actions:
                found, last = self._findings(member, observation, env, focus, task)
                if found is not None:
                    return found, last
                focus = next((p for _, p in iter_points(member)), focus)
            return None, last
        if isinstance(action, Hotkey):
            keys = frozenset(k.lower() for k in action.keys)
            category = self._hotkeys.get(keys)
            target = Target("+".join(action.keys), "action")
            return (_Finding(category, "hotkey", target.text, target) if category else None), target
        if isinstance(action, LaunchApp):
            target = Target(action.app, "action")
            return self._match(Where.APP, action.app, target), target
        if isinstance(action, Launch):
            return self._launch_finding(launch_url(action.url), task.url if task is not None else None)
        if action.type in _ACTIVATING:
            point = next(p for _, p in iter_points(action))
            target = self.target(observation, point, env=env)
            return self._match(Where.TARGET, target.text, target), target
        if isinstance(action, Type):
            field_target = self.target(observation, focus, env=env, focused=True)
            found = (self._match(Where.CONTENT, action.content, Target(action.content, "action"))
                     or self._match(Where.FIELD, field_target.text, field_target))
            if found is None and action.content.endswith("\n") and field_target.element:
                found = self._submit_finding(field_target)
            return found, field_target
        if isinstance(action, PressEnter):
            field_target = self.target(observation, focus, env=env, focused=True)
            return (self._submit_finding(field_target) if field_target.element else None), field_target
        return None, Target("", "none")

    def _launch_finding(self, url: str, task_url: str | None) -> tuple[_Finding | None, Target]:
        """The first of `LAUNCH_RULES` that fires on opening `url` in a task at `task_url`."""
        target = Target(url, "action")
        for rule in LAUNCH_RULES:
            if (evidence := rule.match(url, task_url)) is not None:
                return _Finding(rule.category, rule.name, evidence, target), target
        return None, target

    def _submit_finding(self, field_target: Target) -> _Finding | None:
        """Enter in a form presses its submit button: judge that button."""
        submit = (field_target.element or {}).get("submit")
        if not submit:
            return None
        button = Target(submit, "dom", field_target.element)
        return self._match(Where.TARGET, submit, button)

    def _requested(self, category: Category, task: TaskSpec | None) -> bool:
        """Whether the task's instruction asks for this kind of action (a card number in it asks for paying)."""
        if task is None:
            return False
        if category in (Category.PAYMENT, Category.CREDENTIALS) and _card_number(task.instruction) is not None:
            return True
        return any(r.category is category and r.where is Where.TARGET and r.match(task.instruction)
                   for r in self._rules)

    def review(self, action: Action, observation: Observation, task: TaskSpec | None = None, *, env: Any = None,
               focus: tuple[float, float] | None = None) -> GuardDecision:
        """Decide whether `action` (in screen pixels) may run on the screen `observation` shows.

        `env` gives DOM access when it has one; `focus` is where the pointer last acted (the field a Type
        goes into, for OCR). In confirm mode the callback is asked before this returns.
        """
        started = time.perf_counter()
        found, target = self._findings(action, observation, env, focus, task)
        base = GuardDecision(Verdict.HARMLESS, "", self.mode, target=target.text or None, source=target.source,
                             action=action.to_dict())
        if found is None:
            what = f" ({target.text[:80]!r})" if target.text else ""
            decision = replace(base, reason=f"nothing consequential found in {action.type}{what}")
        else:
            requested = self._requested(found.category, task)
            on = f" on {found.target.text[:80]!r}" if found.target.text and found.target.source != "action" else ""
            why = f"{found.category.value}: {found.rule} matched {found.evidence!r}{on} (source {found.target.source})"
            if requested:
                why += "; the task asks for this, but a consequential step is still the user's call"
            decision = replace(base, category=found.category, evidence=found.evidence, rule=found.rule,
                               target=found.target.text or None, source=found.target.source, requested=requested)
            decision = self._apply_mode(decision, why)
        return replace(decision, seconds=time.perf_counter() - started)

    def _apply_mode(self, decision: GuardDecision, why: str) -> GuardDecision:
        if self.mode is GuardMode.ALLOW:
            return replace(decision, verdict=Verdict.ALLOWED, reason=f"{why}; allowed (guard mode allow)")
        if self.mode is GuardMode.BLOCK:
            return replace(decision, verdict=Verdict.BLOCKED, reason=f"{why}; blocked (guard mode block)")
        pending = replace(decision, reason=why)
        if self.confirm(pending):
            return replace(decision, verdict=Verdict.CONFIRMED, reason=f"{why}; the user confirmed it")
        return replace(decision, verdict=Verdict.DECLINED, reason=f"{why}; the user declined it")
