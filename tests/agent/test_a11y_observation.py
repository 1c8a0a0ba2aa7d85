"""The screenshot_a11y_tree observation: the policy is shown the accessibility tree's elements (role, name, value,
centre in its own frame) beside the screenshot — from a real web page in Chromium and from a real GTK app in an
isolated OSWorld root on Xvfb — bounded in size, and never when the loop is left at its default."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from uivenus.actions.coords import Frame
from uivenus.actions.space import Platform
from uivenus.agent.element_listing import A11Y_HEADER, ObservationType, list_elements
from uivenus.agent.loop import A11Y_TREE_KEY, LoopConfig, LoopError, run_episode
from uivenus.agent.policies import PolicyBase, PolicyReply, PolicyRequest
from uivenus.cli import app
from uivenus.envs.browser import BrowserEnv
from uivenus.envs.desktop import DesktopConfig, DesktopEnv
from uivenus.envs.elements import UIElement
from uivenus.records import Outcome, TaskSpec

PAGE = ("data:text/html,<title>Order</title><label>City <input value=Paris></label>"
        "<label>Copies <input type=number value=2 min=1 max=9></label><button>Place order</button>"
        "<div style='margin-top:2000px'><button>Far away</button></div>")

#: A GTK window (system Python, where PyGObject is) with a filled entry and a button.
GTK_APP = """
import gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk
window = Gtk.Window(title="Invoice")
window.connect("destroy", Gtk.main_quit)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
window.add(box)
entry = Gtk.Entry()
entry.set_text("ACME Ltd")
box.add(entry)
box.add(Gtk.Button(label="Send invoice"))
window.move(50, 50)
window.show_all()
Gtk.main()
"""

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


@pytest.fixture(scope="module")
def desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DesktopEnv]:
    config = DesktopConfig(width=1024, height=768, sandbox_dir=tmp_path_factory.mktemp("roots"))
    with DesktopEnv(config) as env:
        yield env


def test_the_policy_reads_a_gtk_apps_elements_on_the_desktop(desktop: DesktopEnv) -> None:
    launch = {"type": "launch", "parameters": {"command": ["python3", "-c", GTK_APP]}}
    original = {"id": "a11y-gtk", "instruction": "Send the invoice.", "related_apps": ["os"], "config": [launch],
                "evaluator": {"func": "infeasible"}}
    spec = TaskSpec(id="a11y-gtk", instruction=original["instruction"], platform=Platform.DESKTOP,
                    setup={"osworld": original}, check={"kind": "osworld", "evaluator": original["evaluator"]},
                    metadata={"osworld": original})
    watcher = Watcher("Send invoice")
    trajectory = run_episode(desktop, watcher, spec, config=LoopConfig(observation=ObservationType.SCREENSHOT_A11Y_TREE,
                                                                       max_steps=20, frame="abs"))
    assert trajectory.outcome is Outcome.FINISHED, [s.error for s in trajectory.steps]
    request = watcher.requests[-1]
    button = next(e for e in request.context["a11y_elements"] if e.name == "Send invoice")
    text = _prompt(request)
    assert f"push button\tSend invoice\t\t{button.center}" in text  # abs frame: screen pixels
    assert "\tACME Ltd\t(" in text  # the entry's value
    listed = [line for line in text.split(A11Y_HEADER)[1].splitlines()[1:-1] if not line.startswith("(")]
    assert listed and all(line.count("\t") == 3 for line in listed)
