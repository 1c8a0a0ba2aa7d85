"""The guard's rules: what makes an action consequential, as data (a registry of keyword lists and matchers).

Categories (`Category`) say what kind of consequence an action has; each `Rule` reads one kind of text
(`Where`: the element an action activates, the focused field, the typed content, the app a LaunchApp starts)
and returns the evidence it found. `RULES` holds them all (multilingual keyword lists first in English, then
a few other languages); adding a rule is adding an entry (`register_rule`). A Launch(url) is judged by
`LAUNCH_RULES` against the task's URL, and key chords by `HOTKEY_RULES`. The `Guard` (`uivenus.agent.safety`)
applies them. Whether the user's instruction is consent enough is data too: `REQUEST_WORDS` (what asking for a kind
of action sounds like), `HIGH_STAKES` (requests that still need a yes: bulk changes, secrets leaving, "without
asking") and `unrequested_values` (typed addresses and numbers the instruction never gave: an injection's).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from uivenus.envs.hosts import DEFAULT_PORTS, Origin

__all__ = [
    "HIGH_STAKES", "HOTKEY_RULES", "LAUNCH_RULES", "REQUEST_WORDS", "RULES", "Category", "LaunchRule", "Rule",
    "StakesRule", "Where", "card_number", "high_stakes", "keyword_rule", "luhn_valid", "register_rule",
    "unrequested_values",
]


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


def card_number(text: str) -> str | None:
    for found in _CARD_CANDIDATE.finditer(text):
        digits = re.sub(r"\D", "", found.group(0))
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            return f"card number ending {digits[-4:]}"
    return None


_OVERWRITE = re.compile(r"\b(?:echo|printf|cat)\b[^\n|;&]*?(?<![>&\d])>(?!>)\s*[\w~./-]+")


def _shell_overwrite(content: str) -> str | None:
    """A typed shell command whose `>` replaces a file's contents (`>>` only appends)."""
    found = _OVERWRITE.search(content)
    return found.group(0) if found else None


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
    Rule(Category.CREDENTIALS, _C, "card number (Luhn)", card_number),
    keyword_rule(Category.SYSTEM, _C, "system command", [
        "sudo", "rm -rf", "rm -r", "mkfs", "apt install", "apt-get install", "pip install", "dd if", "shutdown",
        "reboot", "format c:", "chmod 777", "chmod -R 777", "chmod a+rwx", "authorized_keys",
    ]),
    Rule(Category.SYSTEM, _C, "shell overwrite", _shell_overwrite),
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


# --- consent: when the user's instruction is enough, and when it is not -------------------------------

#: Words by which an instruction asks for a kind of consequential action (besides the category's own target
#: words): asking for it is the user's consent, unless a `HIGH_STAKES` rule or a suspect value says otherwise.
REQUEST_WORDS: list[Rule] = [
    keyword_rule(Category.SENDING, Where.TARGET, "asks to send", [
        "send", "reply", "forward", "email", "e-mail", "mail", "message", "share", "post", "answer", "responder",
        "antworten", "répondre", "回复", "转发",
    ]),
    keyword_rule(Category.DELETION, Where.TARGET, "asks to delete", [
        "delete", "remove", "erase", "clear", "trash", "discard", "löschen", "borrar", "supprimer", "删除",
    ]),
    keyword_rule(Category.PAYMENT, Where.TARGET, "asks to pay", [
        "buy", "pay", "order", "check out", "checkout", "purchase", "comprar", "kaufen", "acheter", "购买", "付款",
    ]),
    keyword_rule(Category.SYSTEM, Where.TARGET, "asks for a system change", [
        "reset", "restore", "install", "uninstall", "update", "zurücksetzen", "恢复",
    ]),
]


@dataclass(frozen=True)
class StakesRule:
    """A reason to ask even for an action the instruction requested: `match(instruction, typed)` (typed: the texts
    typed so far in the episode) returns the evidence, or None; it applies to the `categories` listed."""

    name: str
    categories: frozenset[Category]
    match: Callable[[str, tuple[str, ...]], str | None]


def _in_instruction(pattern: re.Pattern[str]) -> Callable[[str, tuple[str, ...]], str | None]:
    def match(instruction: str, typed: tuple[str, ...]) -> str | None:
        found = pattern.search(instruction)
        return found.group(0) if found else None
    return match


def _in_typed(pattern: re.Pattern[str]) -> Callable[[str, tuple[str, ...]], str | None]:
    def match(instruction: str, typed: tuple[str, ...]) -> str | None:
        return next((found.group(0) for text in typed if (found := pattern.search(text))), None)
    return match


_ANY = frozenset(Category)
_BULK = re.compile(r"\b(?:all|every|each|everything|entire|whole|wipe|mass)\b(?:\s+(?:of\s+)?(?:my|the|your)?\s*)"
                   r"(?:contacts?|mails?|e-?mails?|messages?|notes?|files?|folders?|events?|calendar|inbox|data|"
                   r"settings|device|orders?)?", re.IGNORECASE)
_PRESSURE = re.compile(r"\bwithout\s+(?:asking|confirm\w*|telling|checking)\b|\b(?:don'?t|do not|never)\s+"
                       r"(?:ask|tell|confirm|notify|check with)\b|\bno need to (?:ask|confirm)\b", re.IGNORECASE)
_SECRET = re.compile(r"\b(?:verification|security|one-time|login|2fa|otp|recovery)\s+codes?\b|\bpasswords?\b|"
                     r"\bpasscodes?\b|\bpins?\b", re.IGNORECASE)
_ABUSE = re.compile(r"\b(?:reply|respond|send|confirm)\s+(?:me\s+)?(?:with\s+)?your\s+(?:password|pin|card|code)\b|"
                    r"\baccount\s+(?:is|has been|will be)\s+(?:locked|suspended|closed)\b|\bverify your (?:account|"
                    r"identity)\b|\bi know where you live\b|\byou(?:'ll| will) regret\b|\bor else\b", re.IGNORECASE)
#: A value worth checking the source of: an address, a URL, a phone number or code (4+ digits).
_TARGET_VALUE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://\S+|\+?\d[\d\s().-]{3,}\d")

#: Reasons to ask before a consequential action even when the instruction requested it (the user asked for a
#: harmful thing, or for it in a way that is itself a warning sign).
HIGH_STAKES: list[StakesRule] = [
    StakesRule("bulk change", frozenset({Category.DELETION, Category.SENDING, Category.SYSTEM}),
               _in_instruction(re.compile(_BULK.pattern, re.IGNORECASE))),
    StakesRule("no confirmation wanted", _ANY, _in_instruction(_PRESSURE)),
    StakesRule("a secret leaves", frozenset({Category.SENDING}), _in_instruction(_SECRET)),
    StakesRule("scam or threat in the message", frozenset({Category.SENDING, Category.CREDENTIALS}), _in_typed(_ABUSE)),
]


def high_stakes(category: Category, instruction: str, typed: tuple[str, ...]) -> tuple[StakesRule, str] | None:
    """The first `HIGH_STAKES` rule for `category` that fires, with its evidence."""
    for rule in HIGH_STAKES:
        if category in rule.categories and (evidence := rule.match(instruction, typed)) is not None:
            return rule, evidence
    return None


def _normal(text: str) -> str:
    return re.sub(r"[\s().-]+", "", text.lower())


def unrequested_values(instruction: str, typed: tuple[str, ...]) -> tuple[str, ...]:
    """Addresses, URLs, numbers and codes typed in the episode that the instruction does not contain: values that
    came from the screen (or were made up), which an injection would supply."""
    said = _normal(instruction)
    return tuple(value for text in typed for value in (m.group(0) for m in _TARGET_VALUE.finditer(text))
                 if _normal(value) not in said)
