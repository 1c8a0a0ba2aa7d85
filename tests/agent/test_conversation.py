"""The UI-Venus-2 message layout: system prompt, past steps with raw replies, current turn with the screenshot last."""

from __future__ import annotations

import pytest
from PIL import Image

from uivenus.actions.coords import Frame, smart_resize
from uivenus.agent.conversation import Turn, build_messages, grounding_messages, prepare_image
from uivenus.agent.prompts import grounding_prompt

FRAME = Frame.relative(400, 800)


def _screen(shade: int, size: tuple[int, int] = (400, 800)) -> Image.Image:
    return Image.new("RGB", size, (shade, shade, shade))


def _history(n: int) -> list[Turn]:
    return [Turn(_screen(10 * (k + 1)),
                 f"<think>step {k + 1} reasoning</think>\n<action>Click(point=({k}, {k}))</action>")
            for k in range(n)]


def test_roles_alternate_after_the_system_prompt() -> None:
    messages = build_messages("SYSTEM", "turn on wifi", _history(3), _screen(200), frame=FRAME)
    assert [m.role for m in messages] == ["system", *["user", "assistant"] * 3, "user"]
    assert messages[0].content == ("SYSTEM",)


def test_only_the_last_n_past_steps_keep_their_screenshot() -> None:
    history = _history(4)
    messages = build_messages("S", "task", history, _screen(200), frame=FRAME, images_in_history=2)
    past_users = [m for m in messages[1:-1] if m.role == "user"]
    assert [len(m.images) for m in past_users] == [0, 0, 1, 1]
    assert past_users[0].text == "Step 1 screenshot omitted." and past_users[1].text == "Step 2 screenshot omitted."
    assert past_users[2].text == "Step 3 screenshot:"
    assert past_users[2].images[0].getpixel((0, 0)) == (30, 30, 30)  # step 3's own screenshot, not another's
    assert past_users[3].images[0].getpixel((0, 0)) == (40, 40, 40)


@pytest.mark.parametrize(("keep", "expected"), [(0, [0, 0, 0]), (1, [0, 0, 1]), (5, [1, 1, 1])])
def test_history_image_budget(keep: int, expected: list[int]) -> None:
    messages = build_messages("S", "task", _history(3), _screen(200), frame=FRAME, images_in_history=keep)
    assert [len(m.images) for m in messages[1:-1] if m.role == "user"] == expected


def test_a_step_without_a_kept_screenshot_gets_the_placeholder() -> None:
    history = [Turn(None, "<action>PressHome()</action>")]
    messages = build_messages("S", "task", history, _screen(200), frame=FRAME)
    assert messages[1].images == () and messages[1].text == "Step 1 screenshot omitted."


def test_raw_replies_are_fed_back_with_their_reasoning() -> None:
    history = _history(2)
    messages = build_messages("S", "task", history, _screen(200), frame=FRAME)
    assistants = [m for m in messages if m.role == "assistant"]
    assert [m.content for m in assistants] == [(t.response,) for t in history]
    assert "<think>step 1 reasoning</think>" in assistants[0].text


def test_current_turn_has_task_notes_and_screenshot_last() -> None:
    current = _screen(222)
    messages = build_messages("S", "book a table for two", _history(1), current, frame=FRAME,
                              notes=["table at 7pm costs $40", "code 1234"])
    last = messages[-1]
    assert last.role == "user" and isinstance(last.content[-1], Image.Image)
    assert last.content[-1].getpixel((0, 0)) == (222, 222, 222)
    assert "Task: book a table for two" in last.text
    assert "- table at 7pm costs $40\n- code 1234" in last.text
    assert "Step 2 screenshot (current)" in last.text


def test_no_notes_means_no_notes_section() -> None:
    messages = build_messages("S", "task", [], _screen(1), frame=FRAME)
    assert len(messages) == 2 and "notes" not in messages[-1].text


def test_negative_history_budget_is_rejected() -> None:
    with pytest.raises(ValueError, match="images_in_history"):
        build_messages("S", "task", [], _screen(1), frame=FRAME, images_in_history=-1)


@pytest.mark.parametrize("factor", [28, 32])
def test_smart_frames_show_the_smart_resized_image(factor: int) -> None:
    frame = Frame.smart(1920, 1080, factor=factor)
    height, width = smart_resize(1080, 1920, factor=factor)
    messages = build_messages("S", "task", _history(1), _screen(5, (1920, 1080)), frame=frame)
    for image in (messages[1].images[0], messages[-1].images[0]):
        assert image.size == (width, height) == frame.model_size
    assert (width, height) == ((1932, 1092) if factor == 28 else (1920, 1088))


def test_absolute_frames_show_the_screen_at_its_logical_size() -> None:
    hidpi = _screen(5, (2560, 1440))
    assert prepare_image(hidpi, Frame.absolute(1280, 720)).size == (1280, 720)


def test_relative_frames_keep_the_image_unless_capped() -> None:
    image = _screen(5, (1000, 2000))
    assert prepare_image(image, Frame.relative(1000, 2000)) is image
    capped = prepare_image(image, Frame.relative(1000, 2000), max_pixels=500_000)
    assert capped.size[0] * capped.size[1] <= 500_000
    assert abs(capped.size[1] / capped.size[0] - 2.0) < 0.01


def test_images_become_rgb() -> None:
    rgba = Image.new("RGBA", (40, 80), (1, 2, 3, 128))
    assert prepare_image(rgba, Frame.relative(40, 80)).mode == "RGB"


def test_grounding_messages_are_one_user_turn_with_the_image_first() -> None:
    frame = Frame.smart(1280, 720, factor=32)
    (message,) = grounding_messages(_screen(9, (1280, 720)), "the search box", frame)
    assert message.role == "user"
    image, text = message.content
    assert isinstance(image, Image.Image) and image.size == frame.model_size
    assert text == grounding_prompt("the search box", frame)


def test_a_screenshot_is_sized_once_and_is_the_same_history_image_on_every_step() -> None:
    frame = Frame.smart(1920, 1080, factor=28)
    first = _screen(5, (1920, 1080))
    step2 = build_messages("S", "task", [Turn(first, "r1")], _screen(6, (1920, 1080)), frame=frame)
    step3 = build_messages("S", "task", [Turn(first, "r1"), Turn(_screen(6, (1920, 1080)), "r2")],
                           _screen(7, (1920, 1080)), frame=frame)
    assert step2[1].images[0] is step3[1].images[0]  # step 1's screenshot, resized once for both requests
    assert prepare_image(first, frame).size == frame.model_size
    assert prepare_image(first, Frame.absolute(1280, 720)).size == (1280, 720)  # another frame, another copy
    same_size = _screen(8, (1280, 720))
    assert prepare_image(same_size, Frame.absolute(1280, 720)) is same_size
