"""Prompts are generated from the action records: each platform lists exactly what it allows, in its frame."""

from __future__ import annotations

import dataclasses
import re
from importlib import resources
from pathlib import Path

import pytest

from uivenus.actions.calls import parse_action
from uivenus.actions.coords import Frame
from uivenus.actions.space import ACTION_CLASSES, ActionType, Platform, actions_for
from uivenus.agent.prompts import (
    ACTION_DESCRIPTIONS, PromptError, PromptSet, action_specs, grounding_prompt, navigation_prompt,
)

CALL = re.compile(r"\b([A-Z][A-Za-z]+)\(")
RELATIVE = Frame.relative(1080, 2400)


def _camel_case_names() -> set[str]:
    """Action names that cannot be ordinary English words (two capitals), so any mention counts."""
    return {t.value for t in ActionType if sum(c.isupper() for c in t.value) > 1}


@pytest.mark.parametrize("platform", list(Platform))
@pytest.mark.parametrize("thinking", [True, False])
def test_prompt_names_exactly_the_platforms_actions(platform: Platform, thinking: bool) -> None:
    prompt = navigation_prompt(platform, RELATIVE, thinking=thinking)
    allowed = {t.value for t in actions_for(platform)}
    assert set(CALL.findall(prompt)) == allowed
    words = set(re.findall(r"\b[A-Za-z]+\b", prompt))
    assert not (words & _camel_case_names()) - allowed


@pytest.mark.parametrize("platform", list(Platform))
def test_action_list_follows_actions_for_order(platform: Platform) -> None:
    section = navigation_prompt(platform, RELATIVE).split("## Actions")[1].split("## ")[0]
    listed = [m.group(1) for m in re.finditer(r"^- ([A-Z][A-Za-z]+)\(", section, flags=re.M)]
    assert listed == [t.value for t in actions_for(platform)]


@pytest.mark.parametrize("action_type", list(ActionType))
def test_signature_shows_every_field_and_brackets_only_optional_ones(action_type: ActionType) -> None:
    platform = next(p for p in Platform if action_type in actions_for(p))
    spec = next(s for s in action_specs(platform) if s.type is action_type)
    assert spec.signature.startswith(f"{action_type.value}(")
    assert spec.description == ACTION_DESCRIPTIONS[action_type]
    for f in dataclasses.fields(ACTION_CLASSES[action_type]):
        assert f"{f.name}=" in spec.signature
        bracketed = re.search(rf"\[(, )?{f.name}=", spec.signature) is not None
        assert bracketed == (f.name in spec.optional)
    required = [f.name for f in dataclasses.fields(ACTION_CLASSES[action_type]) if f.name not in spec.optional]
    if action_type is ActionType.SEQUENCE:
        assert required == ["actions"]  # its empty default is a dataclass artefact, not an optional field


def test_signatures_without_optional_parts_parse_as_actions_once_filled() -> None:
    """The signature is the grammar the parser reads: filled with numbers it parses back to the same type."""
    fills = {"(x, y)": "(10, 20)", "(x1, y1)": "(1, 2)", "(x2, y2)": "(3, 4)", "'up'|'down'|'left'|'right'": "'up'",
             "'https://…'": "'https://a.example'"}
    for platform in Platform:
        for spec in action_specs(platform):
            if spec.type is ActionType.SEQUENCE:
                continue
            text = re.sub(r"\[(, )?[a-z_]+=[^\[\]]*\]", "", spec.signature)
            for placeholder, value in fills.items():
                text = text.replace(placeholder, value)
            assert parse_action(text).type is spec.type, text


def test_relative_frame_is_stated_with_its_divisor() -> None:
    assert "from 0 to 999" in navigation_prompt(Platform.MOBILE, RELATIVE)
    assert "from 0 to 998" in navigation_prompt(Platform.MOBILE, Frame.relative(1080, 2400, divisor=999))


def test_smart_frame_states_the_resized_image_size() -> None:
    prompt = navigation_prompt(Platform.DESKTOP, Frame.smart(1920, 1080))
    assert "1932x1092" in prompt and "from 0 to 1931" in prompt
    assert "0 to 999" not in prompt


def test_absolute_frame_states_the_screen_size() -> None:
    assert "1280x720" in navigation_prompt(Platform.WEB, Frame.absolute(1280, 720))


def test_thinking_switch_changes_the_reply_format() -> None:
    with_thinking = navigation_prompt(Platform.WEB, RELATIVE, thinking=True)
    without = navigation_prompt(Platform.WEB, RELATIVE, thinking=False)
    assert "<think>" in with_thinking and "<action>" in with_thinking
    assert "<think>" not in without and "<action>" in without


def test_guidance_follows_the_platform() -> None:
    mobile = navigation_prompt(Platform.MOBILE, RELATIVE)
    desktop = navigation_prompt(Platform.DESKTOP, RELATIVE)
    web = navigation_prompt(Platform.WEB, RELATIVE)
    assert "explore with Swipe(" in mobile and "LongPress(...) on it and choose Copy" in mobile
    assert "Hotkey(keys=['ctrl', 'c'])" in desktop and "Swipe" not in desktop
    assert "at most 3 keys" in web and "at most 3 keys" not in desktop
    for prompt in (mobile, desktop, web):
        assert "CallUser(...)" in prompt and "paying" in prompt and "credentials" in prompt
        assert "TakeNote(...)" in prompt and "Answer(...)" in prompt


def test_grounding_prompt_asks_for_a_point_or_refusal() -> None:
    prompt = grounding_prompt("the blue Save button", Frame.smart(1920, 1080, factor=32))
    assert "the blue Save button" in prompt
    assert "[x,y]" in prompt and "[-1,-1]" in prompt
    assert "1920x1088" in prompt  # smart_resize(1080, 1920, factor=32)


def test_user_template_receives_the_same_variables(tmp_path: Path) -> None:
    template = tmp_path / "release.j2"
    template.write_text("{{ platform }}|{% for a in actions %}{{ a.name }},{% endfor %}|"
                        "{{ frame.width }}x{{ frame.height }}|{{ frame.max_x }}|{{ thinking }}|{{ tips | length }}")
    out = navigation_prompt(Platform.MOBILE, RELATIVE, thinking=False, template=template)
    names = ",".join(t.value for t in actions_for(Platform.MOBILE))
    platform, actions, size, max_x, thinking, tips = out.split("|")
    assert (platform, actions, size, max_x, thinking) == ("mobile", names + ",", "1000x1000", "999", "False")
    assert int(tips) > 3


def test_prompt_set_applies_both_templates(tmp_path: Path) -> None:
    nav, ground = tmp_path / "nav.j2", tmp_path / "ground.j2"
    nav.write_text("NAV {{ platform_name }}")
    ground.write_text("Where is {{ instruction }}? Answer within {{ frame.width }}x{{ frame.height }}.")
    prompts = PromptSet(navigation_template=nav, grounding_template=ground)
    assert prompts.navigation("web", RELATIVE) == "NAV a web browser"
    grounding = prompts.grounding("the OK button", Frame.absolute(800, 600))
    assert grounding == "Where is the OK button? Answer within 800x600."
    assert PromptSet().grounding("x", RELATIVE) == grounding_prompt("x", RELATIVE)


def test_bundled_template_is_a_working_starting_point(tmp_path: Path) -> None:
    bundled = resources.files("uivenus.agent").joinpath("templates", "navigation.j2").read_text()
    copy = tmp_path / "copy.j2"
    copy.write_text(bundled)
    assert navigation_prompt(Platform.WEB, RELATIVE, template=copy) == navigation_prompt(Platform.WEB, RELATIVE)


def test_template_errors_are_typed_and_name_the_problem(tmp_path: Path) -> None:
    broken = tmp_path / "broken.j2"
    broken.write_text("{{ no_such_variable }}")
    with pytest.raises(PromptError, match="no_such_variable.*variables are: .*platform"):
        navigation_prompt(Platform.WEB, RELATIVE, template=broken)
    with pytest.raises(PromptError, match="cannot read prompt template"):
        grounding_prompt("x", RELATIVE, template=tmp_path / "missing.j2")


def test_templates_cannot_reach_python_internals(tmp_path: Path) -> None:
    sneaky = tmp_path / "sneaky.j2"
    sneaky.write_text("{{ actions[0].__class__.__init__.__globals__ }}")
    with pytest.raises(PromptError):
        navigation_prompt(Platform.WEB, RELATIVE, template=sneaky)
