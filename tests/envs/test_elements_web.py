"""A web page's elements from Chromium's accessibility tree: roles, names, values, states and on-screen bounds."""

from __future__ import annotations

from uivenus.actions.space import Click, Platform
from uivenus.envs.base import HIT_ELEMENT
from uivenus.envs.browser import BrowserEnv
from uivenus.envs.elements import element_at, tree_hash
from uivenus.records import TaskSpec

FORM = ("data:text/html,<title>Form</title><form><label>Name <input name=n value=ab></label>"
        "<select name=s><option>one<option>two</select><label><input type=checkbox checked> Keep</label>"
        "<button type=button disabled>Off</button><button type=button onclick='this.textContent=\"Done\"'>Go</button>"
        "</form><div style='margin-top:2000px'><a href='%23x'>far link</a></div>")


def test_page_elements_are_normalised_records_placed_in_the_viewport(web_env: BrowserEnv) -> None:
    web_env.reset(TaskSpec(id="ax", instruction="x", platform=Platform.WEB, url=FORM))
    elements = web_env.elements()
    by = {(e.role, e.name): e for e in elements}
    name, keep, go = by[("textbox", "Name")], by[("checkbox", "Keep")], by[("button", "Go")]
    assert name.value == "ab" and name.actionable and "checked" in keep.states
    assert by[("combobox", "")].value == "one"
    assert [e.name for e in elements if e.role == "option"] == ["one", "two"]
    assert not by[("button", "Off")].actionable and "disabled" in by[("button", "Off")].states
    far = by[("link", "far link")]
    assert not far.visible and not far.actionable  # laid out 2000 px below the 720 px viewport
    # the bounds are the screen's: the element under the button's centre is the button, and a click there hits it
    assert element_at(elements, go.center) == go
    result = web_env.step(Click(point=go.center))
    assert result.info[HIT_ELEMENT]["text"] == "Go"
    after = web_env.elements()
    assert ("button", "Done") in {(e.role, e.name) for e in after}
    assert tree_hash(after) != tree_hash(elements)
