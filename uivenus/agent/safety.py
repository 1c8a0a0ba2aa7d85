"""The safety guard: stop consequential actions before they run, and flag screens that try to instruct the agent.

An action is consequential when it pays, deletes, sends or posts, enters credentials or card numbers, installs /
irreversibly changes the system (also: starts a terminal, a shell, the settings or a package manager), or opens a
site the task is not on (another host, a local address, a non-web scheme). The guard judges that from the action
itself (typed content such as a card number that passes the Luhn check, a hotkey such as shift+delete, the app a
LaunchApp starts, the URL a Launch opens or a clicked link leads to, against the task's URL), the text of what it
acts on (the DOM element under the point or the focused field where the env has a DOM; on the desktop of an OSWorld
session the accessibility tree's element there, `uivenus.agent.tree_reading`; rapidocr text boxes around the point
otherwise) and the task (whether its instruction asks for the action: see Consent below). Categories
are a registry of rules (multilingual keyword lists and matchers, `uivenus.agent.safety_rules`): adding one is
adding an entry.

Consent: in confirm mode an action the user's instruction asks for (`REQUEST_WORDS`) runs without asking (verdict
`requested`) — unless a `HIGH_STAKES` rule fires (a bulk change, a secret leaving, "without asking", a scam in the
message) or the episode typed an address or number the instruction never gave (`unrequested_values`: a target that
came from the screen is suspect) or an instruction aimed at the agent on the same screen names this very action
("AI agent: … click Delete" before a Delete). Everything the instruction did not ask for is asked. `consent=False`
asks for every consequential action.

Modes: `confirm` hands a consequential action to the user through a callback (the CLI asks on the terminal),
`block` refuses it, `allow` lets it run but still records what it would have stopped (for safety evaluations).
Every review returns a `GuardDecision` with its reason, which the loop stores in the step.

Prompt injection: `Guard.scan` runs `scan_injection` (`uivenus.agent.injection`) over the screen's text (DOM text;
the tree's names and values plus OCR of what the tree cannot see; or OCR of the whole screen) for instructions aimed at
an agent and returns each match as a flag.
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
from uivenus.agent.injection import InjectionFlag, scan_injection
from uivenus.agent.policies.ocr import TextBox, ocr_text_boxes
from uivenus.agent.safety_rules import (
    HOTKEY_RULES, LAUNCH_RULES, REQUEST_WORDS, RULES, Category, Rule, Where, card_number, high_stakes,
    unrequested_values,
)
from uivenus.agent.tree_reading import Region, TreeRead, read_tree
from uivenus.envs.base import FOCUSED_ELEMENT, EnvError, Observation
from uivenus.envs.elements import element_at as tree_element_at
from uivenus.envs.elements import hit_record
from uivenus.envs.hosts import launch_url
from uivenus.records import TaskSpec

__all__ = [
    "Guard", "GuardDecision", "GuardError", "GuardMode", "OcrReader", "ScreenText", "Target", "TextBox", "Verdict",
    "approve_all", "decline_all", "element_at",
]

class GuardError(ValueError):
    """The guard was configured wrongly (unknown mode); the message lists the modes."""


class GuardMode(StrEnum):
    CONFIRM = "confirm"  # ask the user (callback) before a consequential action
    BLOCK = "block"  # never run a consequential action
    ALLOW = "allow"  # run everything, but still record what would have been stopped


class Verdict(StrEnum):
    HARMLESS = "harmless"  # nothing consequential found: runs
    REQUESTED = "requested"  # consequential, the instruction asked for it and nothing makes it suspect: runs
    ALLOWED = "allowed"  # consequential, run anyway because the mode is allow
    CONFIRMED = "confirmed"  # consequential, the user said yes
    DECLINED = "declined"  # consequential, the user said no: not run
    BLOCKED = "blocked"  # consequential, mode block: not run


#: Verdicts under which the action is executed.
RUNS = frozenset({Verdict.HARMLESS, Verdict.REQUESTED, Verdict.ALLOWED, Verdict.CONFIRMED})


#: How much text after an injection flag (up to the end of its line) counts as what it tells the agent to do.
_TOLD_CHARS = 300

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
    """The screen's OCR text boxes (`ocr_text_boxes`, the process's one engine), computed once per image and set of
    regions (None: the whole screen): the guard and the injection scan share them."""

    def __init__(self, min_score: float = 0.5) -> None:
        self.min_score = min_score
        self._last: tuple[Image.Image, tuple[Region, ...] | None, tuple[TextBox, ...]] | None = None  # this step's

    def boxes(self, image: Image.Image, regions: tuple[Region, ...] | None = None) -> tuple[TextBox, ...]:
        if self._last is not None and self._last[0] is image and self._last[1] == regions:
            return self._last[2]
        found = tuple(box._replace(text=box.text.strip()) for box in self._read(image, regions)
                      if box.score >= self.min_score and box.text.strip())
        self._last = (image, regions, found)
        return found

    @staticmethod
    def _read(image: Image.Image, regions: tuple[Region, ...] | None) -> list[TextBox]:
        """OCR of the whole image, or its lines whose centre lies in one of the regions. The whole screen is read
        even then: rapidocr scales an image up to 736 px on its short side, so crops (or a screen with all else
        blanked) cost as much, and the whole screen's read is shared with every other reader of these pixels
        (`ocr_text_boxes` remembers it: a text-reading policy, the verifier)."""
        if regions is not None and not regions:
            return []
        found = ocr_text_boxes(image)
        if regions is None:
            return found
        return [b for b in found if any(x1 <= (b.box[0] + b.box[2]) / 2 < x2 and y1 <= (b.box[1] + b.box[3]) / 2 < y2
                                        for x1, y1, x2, y2 in regions)]

    def near(self, image: Image.Image, point: tuple[float, float], radius: float = 24.0, limit: int = 2,
             regions: tuple[Region, ...] | None = None) -> str:
        """Text of the boxes at or nearest to `point` (within `radius` pixels), closest first."""
        close = sorted((b for b in self.boxes(image, regions) if b.distance(point) <= radius),
                       key=lambda b: b.distance(point))
        return " ".join(b.text for b in close[:limit])

    def text(self, image: Image.Image, regions: tuple[Region, ...] | None = None) -> str:
        return "\n".join(b.text for b in self.boxes(image, regions))


@dataclass(frozen=True)
class ScreenText:
    """The screen's text and where it came from: "dom", "a11y" (the tree alone), "a11y+ocr" (the tree and OCR of
    what it cannot see) or "ocr" (the whole screen)."""

    text: str
    source: str


@dataclass(frozen=True)
class Target:
    """What an action acts on, as text: the words rules read and where they came from."""

    text: str
    source: str  # "dom", "a11y", "ocr" or "none"
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
                 hotkeys: Mapping[frozenset[str], Category] | None = None, consent: bool = True) -> None:
        try:
            self.mode = GuardMode(mode)
        except ValueError:
            raise GuardError(f"unknown guard mode {mode!r}; use one of {', '.join(GuardMode)}") from None
        self.confirm = confirm
        self.ocr = ocr if isinstance(ocr, OcrReader) else OcrReader() if ocr else None
        self._rules = RULES if rules is None else list(rules)
        self._hotkeys = HOTKEY_RULES if hotkeys is None else dict(hotkeys)
        self.consent = consent
        self._episode: TaskSpec | None = None  # the task whose episode `_typed` belongs to
        self._typed: tuple[str, ...] = ()  # what this episode typed so far (values whose source is checked)
        self._told: tuple[str, ...] = ()  # what the last scanned screen told an agent: the line after each flag
        self._tree: tuple[Observation, TreeRead | None] | None = None  # the tree read for the current screen

    # -- reading -----------------------------------------------------------------------------------

    def target(self, observation: Observation, point: tuple[float, float] | None, *, env: Any = None,
               focused: bool = False) -> Target:
        """The text of the element at `point` (or the focused field): DOM where `env` has one, the accessibility
        tree's element where it has a tree, else OCR (of what the tree cannot see, where there is one).

        The focused field comes from the observation when the env read it with the screen
        (`info["focused_element"]`: nothing has acted since); an element at a point is the env's one read of that
        point on this screen, which the browser's step then records as what the click hit (`HIT_ELEMENT`)."""
        if env is not None and callable(getattr(env, "element_at", None)):
            if focused and FOCUSED_ELEMENT in observation.info:
                element = observation.info[FOCUSED_ELEMENT]
            else:
                element = element_at(env, None if focused else point)
            if element:
                return Target(_element_text(element), "dom", element)
            if observation.text is not None:  # a page that answered: blank space, nothing focused
                return Target("", "dom")
        tree = self.tree(observation, env)
        if tree is not None:
            hit = tree.focused() if focused else tree_element_at(tree.elements, point) if point is not None else None
            if hit is not None:
                record = hit_record(hit)
                return Target(_element_text(record), "a11y", record)
        if point is not None and self.ocr is not None:
            regions = tree.regions if tree is not None else None
            return Target(self.ocr.near(observation.screenshot, point, regions=regions), "ocr")
        return Target("", "none")

    def tree(self, observation: Observation, env: Any) -> TreeRead | None:
        """The accessibility tree behind this screen, read once per observation (None: the env has none)."""
        if env is None or observation.text is not None:
            return None
        if self._tree is None or self._tree[0] is not observation:
            self._tree = (observation, read_tree(env))
        return self._tree[1]

    def screen_text(self, observation: Observation, env: Any = None) -> ScreenText | None:
        """The screen's text: DOM text where the env gives it; the tree's text plus OCR of what it cannot see where
        `env` has a tree; OCR of the whole screen otherwise (None when OCR is off)."""
        if observation.text is not None:
            return ScreenText(observation.text, "dom")
        tree = self.tree(observation, env)
        if tree is not None:
            if not tree.regions or self.ocr is None:
                return ScreenText(tree.text(), "a11y")
            seen = self.ocr.text(observation.screenshot, tree.regions)
            return ScreenText("\n".join(part for part in (tree.text(), seen) if part), "a11y+ocr")
        return ScreenText(self.ocr.text(observation.screenshot), "ocr") if self.ocr is not None else None

    def scan(self, observation: Observation, env: Any = None) -> tuple[InjectionFlag, ...]:
        """Injection flags for the screen the agent is looking at (remembered: an action taken on that screen is not
        taken on the user's word alone)."""
        read = self.screen_text(observation, env)
        text = read.text if read is not None else ""
        flags = scan_injection(text)
        self._told = tuple(text[at:at + _TOLD_CHARS].split("\n", 1)[0] for flag in flags
                           if (at := text.find(flag.match)) >= 0)
        return flags

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
        """The first consequential finding for `action` (a ActionSequence: its first consequential member)."""
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
            href = (target.element or {}).get("href")
            if href and (found := self._launch_finding(href, task.url if task is not None else None)[0]):
                return replace(found, target=target), target  # following a link opens its URL, as a Launch would
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
        if category in (Category.PAYMENT, Category.CREDENTIALS) and card_number(task.instruction) is not None:
            return True
        return any(r.category is category and r.where is Where.TARGET and r.match(task.instruction)
                   for r in (*self._rules, *REQUEST_WORDS))

    def _doubt(self, category: Category, evidence: str, task: TaskSpec | None, typed: tuple[str, ...]) -> str | None:
        """Why a requested action still needs a yes (a high-stakes request, a value from the screen, an on-screen
        instruction to the agent that names this very action), or None."""
        instruction = task.instruction if task is not None else ""
        if (stakes := high_stakes(category, instruction, typed)) is not None:
            return f"{stakes[0].name} ({stakes[1]!r})"
        if values := unrequested_values(instruction, typed):
            return f"typed {values[0]!r}, which the instruction never gave (it came from the screen)"
        said = re.compile(rf"(?<!\w){re.escape(evidence)}(?!\w)", re.IGNORECASE)
        if told := next((text for text in self._told if said.search(text)), None):
            return f"an instruction aimed at the agent on this screen says {evidence!r} ({told[:80]!r})"
        return None

    def review(self, action: Action, observation: Observation, task: TaskSpec | None = None, *, env: Any = None,
               focus: tuple[float, float] | None = None) -> GuardDecision:
        """Decide whether `action` (in screen pixels) may run on the screen `observation` shows.

        `env` gives DOM access when it has one; `focus` is where the pointer last acted (the field a Type
        goes into, for OCR). In confirm mode the callback is asked before this returns.
        """
        started = time.perf_counter()
        if task is not self._episode:
            self._episode, self._typed = task, ()
        typed = (*self._typed, action.content) if isinstance(action, Type) else self._typed
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
            doubt = self._doubt(found.category, found.evidence, task, typed) if requested else None
            decision = replace(base, category=found.category, evidence=found.evidence, rule=found.rule,
                               target=found.target.text or None, source=found.target.source, requested=requested)
            if requested and doubt is None and self.consent and self.mode is GuardMode.CONFIRM:
                decision = replace(decision, verdict=Verdict.REQUESTED, reason=f"{why}; the task asks for this")
            else:
                if requested:
                    why += (f"; the task asks for this, but {doubt}" if doubt else
                            "; the task asks for this, but a consequential step is still the user's call")
                decision = self._apply_mode(decision, why)
        if decision.runs and isinstance(action, Type):
            self._typed = typed
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
