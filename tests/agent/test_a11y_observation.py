"""The screenshot_a11y_tree observation: the policy is shown the accessibility tree's elements (role, name, value,
centre in its own frame) beside the screenshot — from a real web page in Chromium and from a real GTK app in an
isolated OSWorld root on Xvfb — bounded in size, and never when the loop is left at its default."""

from __future__ import annotations

import time
from typing import Any

import pytest
from typer.testing import CliRunner

from uivenus.actions.coords import Frame
from uivenus.actions.space import Click, Hotkey, Platform, Type
from uivenus.agent.element_listing import A11Y_HEADER, ObservationType, list_elements
from uivenus.agent.loop import A11Y_TREE_KEY, LoopConfig, LoopError, run_episode
from uivenus.agent.policies import PolicyBase, PolicyReply, PolicyRequest
from uivenus.cli import app
from uivenus.envs.browser import BrowserEnv
from uivenus.envs.desktop import DesktopEnv
from uivenus.envs.elements import UIElement
from uivenus.envs.osworld.a11y_reader import A11yReader
from uivenus.records import Outcome, TaskSpec

from ..gtk_windows import INVOICE

PAGE = ("data:text/html,<title>Order</title><label>City <input value=Paris></label>"
        "<label>Copies <input type=number value=2 min=1 max=9></label><button>Place order</button>"
        "<div style='margin-top:2000px'><button>Far away</button></div>")

A11Y = LoopConfig(observation="screenshot_a11y_tree", max_steps=1)


class Watcher(PolicyBase):
    """Waits until the element it looks for is in its context, then finishes; keeps every request."""

    name = "watcher"

    def __init__(self, name: str) -> None:
        self.wanted = name
        self.requests: list[PolicyRequest] = []

    def act(self, request: PolicyRequest) -> PolicyReply:
        self.requests.append(request)
        seen = any(e.name == self.wanted for e in request.context.get("a11y_elements", ()))
        return PolicyReply("<action>Finished(content='seen')</action>" if seen else "<action>Wait(seconds=1)</action>")


def _prompt(request: PolicyRequest) -> str:
    return request.messages[-1].text


def test_the_policy_reads_a_web_pages_elements_in_its_own_frame(web_env: BrowserEnv) -> None:
    spec = TaskSpec(id="a11y-web", instruction="Order two copies.", platform=Platform.WEB, url=PAGE)
    watcher = Watcher("Place order")
    trajectory = run_episode(web_env, watcher, spec, config=A11Y)
    assert trajectory.outcome is Outcome.FINISHED
    request = watcher.requests[-1]
    elements = {e.name: e for e in request.context["a11y_elements"]}
    frame: Frame = request.context["frame"]
    button, city = elements["Place order"], elements["City"]
    x, y = frame.to_model(button.center)
    text = _prompt(request)
    assert A11Y_HEADER in text and f"button\tPlace order\t\t({x}, {y})" in text
    assert "textbox\tCity\tParis\t(" in text and "spinbutton\tCopies\t2\t(" in text and city.value == "Paris"
    assert "Far away" not in text and "Far away" not in elements  # laid out below the viewport
    assert trajectory.steps[0].info[A11Y_TREE_KEY] in text  # recorded as shown
    assert text.index("Accessibility tree") < text.index("screenshot (current)")  # the screenshot stays last


def test_the_listing_is_off_by_default_and_bounded_when_on(web_env: BrowserEnv) -> None:
    spec = TaskSpec(id="a11y-off", instruction="Order two copies.", platform=Platform.WEB, url=PAGE)
    watcher = Watcher("Place order")
    trajectory = run_episode(web_env, watcher, spec, config=LoopConfig(max_steps=1))
    first = watcher.requests[0]
    assert "Accessibility tree" not in _prompt(first) and "a11y_elements" not in first.context
    assert A11Y_TREE_KEY not in trajectory.steps[0].info
    # a window with many controls: the controls come first, the rest is counted, never listed
    many = [UIElement("label", f"note {n}", states=("showing",), bounds=(0, 20 * n, 50, 10)) for n in range(30)]
    many += [UIElement("push button", f"B{n}", states=("showing", "enabled"), bounds=(60, 20 * n, 50, 10))
             for n in range(30)]
    listing = list_elements(many, Frame.absolute(1024, 768), limit=10)
    assert [e.name for e in listing.elements] == [f"B{n}" for n in range(10)] and listing.omitted == 50
    assert listing.text.splitlines()[-1] == "(50 more elements not listed)" and len(listing.text.splitlines()) == 12
    with pytest.raises(LoopError, match="screenshot_a11y_tree"):
        LoopConfig(observation="a11y")
    result = CliRunner().invoke(app, ["run", "x", "--policy", "noop", "--observation", "tree"])
    assert result.exit_code != 0 and "screenshot_a11y_tree" in result.output


def _gtk_task() -> TaskSpec:
    launch = {"type": "launch", "parameters": {"command": INVOICE}}
    original = {"id": "a11y-gtk", "instruction": "Send the invoice.", "related_apps": ["os"], "config": [launch],
                "evaluator": {"func": "infeasible"}}
    return TaskSpec(id="a11y-gtk", instruction=original["instruction"], platform=Platform.DESKTOP,
                    setup={"osworld": original}, check={"kind": "osworld", "evaluator": original["evaluator"]},
                    metadata={"osworld": original})


@pytest.fixture
def bus_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the desktop's reads of the accessibility bus (each a real read of the root's tree)."""
    reads: list[int] = []
    read = A11yReader.elements

    def counted(self: A11yReader, *args: Any, **kwargs: Any) -> tuple[UIElement, ...]:
        reads.append(1)
        return read(self, *args, **kwargs)

    monkeypatch.setattr(A11yReader, "elements", counted)
    return reads


def test_the_policy_reads_a_gtk_apps_elements_on_the_desktop(desktop_env: DesktopEnv, bus_reads: list[int]) -> None:
    watcher = Watcher("Send invoice")
    trajectory = run_episode(desktop_env, watcher, _gtk_task(),
                             config=LoopConfig(observation=ObservationType.SCREENSHOT_A11Y_TREE, max_steps=20,
                                               frame="abs"))
    assert trajectory.outcome is Outcome.FINISHED, [s.error for s in trajectory.steps]
    # the guard's scan and the listing share one read per screen (each step's, the Wait's hit asks nothing)
    assert len(bus_reads) == len(trajectory.steps)
    request = watcher.requests[-1]
    button = next(e for e in request.context["a11y_elements"] if e.name == "Send invoice")
    text = _prompt(request)
    assert f"push button\tSend invoice\t\t{button.center}" in text  # abs frame: screen pixels
    assert "\tACME Ltd\t(" in text  # the entry's value
    listed = [line for line in text.split(A11Y_HEADER)[1].splitlines()[1:-1] if not line.startswith("(")]
    assert listed and all(line.count("\t") == 3 for line in listed)


def test_one_screen_is_read_once_and_an_action_makes_the_next_read_new(desktop_env: DesktopEnv,
                                                                        bus_reads: list[int]) -> None:
    desktop_env.reset(_gtk_task())
    deadline = time.monotonic() + 20
    while not any(e.name == "Send invoice" for e in desktop_env.elements(fresh=True)):
        assert time.monotonic() < deadline, "the GTK window never showed on the bus"
        time.sleep(0.3)  # the app is still starting: `fresh` reads the bus again on this screen
    desktop_env.observe()
    before = len(bus_reads)
    shown = desktop_env.elements()
    assert desktop_env.elements() is shown and len(bus_reads) == before + 1  # the guard's and the listing's read
    entry = next(e for e in shown if e.value == "ACME Ltd")
    desktop_env.step(Click(point=entry.center))  # type: ignore[arg-type]
    desktop_env.step(Hotkey(keys=("ctrl", "a")))
    desktop_env.step(Type(content="Initech"))
    time.sleep(0.5)  # the bus reports a change a moment after the screen shows it
    after = desktop_env.elements()
    assert len(bus_reads) == before + 2 and any(e.value == "Initech" for e in after)
    assert not any(e.value == "ACME Ltd" for e in after)
