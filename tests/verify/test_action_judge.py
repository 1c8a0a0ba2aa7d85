"""The action judge and the structured key points it reads: what each action hit decides, "OK" is not "Cancel"."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from uivenus.actions.space import Platform
from uivenus.records import TaskSpec
from uivenus.verify.acts import ocr_target, target_from_dom
from uivenus.verify.base import ActRecord, Evidence, Target, Vote
from uivenus.verify.judges import judge_from_spec
from uivenus.verify.keypoints import ALL_FIELDS, Act, extract_key_points

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def _point(instruction: str, i: int = 0):
    return extract_key_points(instruction)[i]


def test_key_points_carry_act_target_role_ordinal_value_and_confirmation() -> None:
    ok = _point('Click the button in the dialog box labeled "OK".')
    assert (ok.act, ok.targets, ok.role) == (Act.CLICK, ("OK",), "button")
    assert _point("Click button ONE.").targets == ("ONE",) and _point("Click the button.").targets == ()
    focus = _point("Focus into the 2nd input textbox.")
    assert (focus.act, focus.role, focus.ordinal) == (Act.FOCUS, "field", 2)
    both = extract_key_points('Enter the password "yA" into both text fields and press submit.')
    assert (both[0].act, both[0].value, both[0].fields, both[0].field) == (Act.TYPE, "yA", 2, "password")
    assert (both[1].act, both[1].targets, both[1].confirm) == (Act.CLICK, ("submit",), True)
    login = extract_key_points('Enter the username "kim" and the password "x1" into the text fields and press login.')
    assert [(p.act, p.value, p.field) for p in login[:2]] == [(Act.TYPE, "kim", "username"),
                                                             (Act.TYPE, "x1", "password")]
    items = extract_key_points("Select AU, gHF2 and click Submit.")
    assert (items[0].act, items[0].targets) == (Act.SELECT, ("AU", "gHF2")) and items[1].confirm
    assert _point("Select nothing and click Submit.").targets == ()
    then = extract_key_points("Click button ONE, then click button TWO.")
    assert [p.after_previous for p in then] == [False, True] and not then[1].confirm
    assert _point('Type "ann" in all upper case letters in the text input and press Submit.').value == "ANN"
    assert _point("Fill every field with \"x\"", 0).fields == ALL_FIELDS
    assert _point("Turn Wi-Fi off").act is None  # a state, read off the screens


def _dom(text: str, tag: str = "button", **more) -> Target:
    return target_from_dom({"tag": tag, "text": text, "interactive": True, **more})


def _click(i: int, target: Target | None, executed: bool = True) -> ActRecord:
    return ActRecord(index=i, type="Click", executed=executed, point=(10.0 * i, 20.0), target=target)


def _type(i: int, text: str) -> ActRecord:
    return ActRecord(index=i, type="Type", executed=True, typed=text)


def _finish(i: int) -> ActRecord:
    return ActRecord(index=i, type="Finished", executed=True, terminal=True)


def _judge(instruction: str, acts: list[ActRecord], screens: tuple[str, ...] = ()):
    task = TaskSpec(id="t", instruction=instruction, platform=Platform.WEB)
    evidence = Evidence(task=task, key_points=(), history=(), screenshots=(), screen_texts=screens, acts=tuple(acts))
    return judge_from_spec("acts").judge(evidence)


def test_the_right_target_is_success_and_its_sibling_failure() -> None:
    instruction = 'Click the button in the dialog box labeled "OK".'
    assert _judge(instruction, [_click(0, _dom("OK")), _finish(1)]).vote is Vote.SUCCESS
    wrong = _judge(instruction, [_click(0, _dom("Cancel")), _finish(1)])
    assert wrong.vote is Vote.FAILURE and "'Cancel'" in " ".join(wrong.evidence)
    assert _judge(instruction, [_click(0, _dom("OK"), executed=False)]).vote is Vote.FAILURE  # it never ran
    blank = target_from_dom({"tag": "div", "text": 'Click the button labeled "OK". OK Cancel', "interactive": False})
    assert _judge(instruction, [_click(0, blank)]).vote is Vote.FAILURE  # a container names nothing
    assert _judge(instruction, [_finish(0)]).vote is Vote.FAILURE  # done without acting


def test_typing_needs_the_value_in_enough_fields_then_the_confirming_click() -> None:
    instruction = 'Enter the password "yA" into both text fields and press submit.'
    field1 = _dom("", "input", type="password", id="password", nth=1)
    field2 = _dom("", "input", type="password", id="verify", nth=2)
    done = [_click(0, field1), _type(1, "yA"), _click(2, field2), _type(3, "yA"), _click(4, _dom("Submit"))]
    assert _judge(instruction, done).vote is Vote.SUCCESS
    assert _judge(instruction, done[:4]).vote is Vote.FAILURE  # never confirmed
    early = [_click(0, _dom("Submit")), _click(1, field1), _type(2, "yA"), _click(3, field2), _type(4, "yA")]
    assert _judge(instruction, early).vote is Vote.FAILURE  # confirmed before the edits
    assert _judge(instruction, [*done[:2], _click(2, _dom("Submit"))]).vote is Vote.FAILURE  # one field of two
    near = [_click(0, field1), _type(1, "yB"), _click(2, field2), _type(3, "yA"), _click(4, _dom("Submit"))]
    assert _judge(instruction, near).vote is Vote.FAILURE
    login = 'Enter the username "kim" and the password "x1" into the text fields and press login.'
    user = _dom("", "input", type="text", id="username", nth=1)
    swapped = [_click(0, field1), _type(1, "kim"), _click(2, user), _type(3, "x1"), _click(4, _dom("Login"))]
    assert _judge(login, swapped).vote is Vote.FAILURE  # each value in the other's field
    right = [_click(0, user), _type(1, "kim"), _click(2, field1), _type(3, "x1"), _click(4, _dom("Login"))]
    assert _judge(login, right).vote is Vote.SUCCESS


def test_select_means_every_item_and_nothing_else() -> None:
    instruction = "Select AU, HF2 and click Submit."
    box = lambda name, n: _dom("", "input", type="checkbox", label=name, nth=n)  # noqa: E731
    submit = _dom("Submit")
    assert _judge(instruction, [_click(0, box("AU", 1)), _click(1, box("HF2", 2)), _click(2, submit)]).vote \
        is Vote.SUCCESS
    extra = [_click(0, box("AU", 1)), _click(1, box("HF2", 2)), _click(2, box("ZZ", 3)), _click(3, submit)]
    assert _judge(instruction, extra).vote is Vote.FAILURE
    untoggled = [_click(0, box("AU", 1)), _click(1, box("HF2", 2)), _click(2, box("HF2", 2)), _click(3, submit)]
    assert _judge(instruction, untoggled).vote is Vote.FAILURE  # clicked twice: off again
    assert _judge("Select nothing and click Submit.", [_click(0, submit)]).vote is Vote.SUCCESS


def test_order_ordinal_and_abstention() -> None:
    one, two = _dom("ONE"), _dom("TWO")
    sequence = "Click button ONE, then click button TWO."
    assert _judge(sequence, [_click(0, one), _click(1, two)]).vote is Vote.SUCCESS
    assert _judge(sequence, [_click(0, two), _click(1, one)]).vote is Vote.FAILURE
    focus = "Focus into the 2nd input textbox."
    assert _judge(focus, [_click(0, _dom("", "input", type="text", nth=2))]).vote is Vote.SUCCESS
    assert _judge(focus, [_click(0, _dom("", "input", type="text", nth=3))]).vote is Vote.FAILURE
    unknown = _judge('Click on the "no" button.', [_click(0, None)])  # no DOM record, no screen to OCR
    assert unknown.vote is Vote.ABSTAIN and "unknown" in unknown.reason
    state = _judge("Turn Wi-Fi off", [_click(0, _dom("Wi-Fi"))], screens=("Wi-Fi On", "Wi-Fi Off"))
    assert state.vote is Vote.SUCCESS  # a state point read off the final screen
    assert _judge("Turn Wi-Fi off", [_click(0, _dom("Wi-Fi"))]).vote is Vote.ABSTAIN  # nothing to read it on


@pytest.mark.skipif(not FONT.exists(), reason="needs the DejaVu font")
def test_ocr_reads_the_target_under_the_point_when_no_dom_was_recorded() -> None:
    image = Image.new("RGB", (360, 120), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(FONT), 22)
    draw.text((30, 45), "Cancel", fill="black", font=font)
    draw.text((250, 45), "OK", fill="black", font=font)
    assert ocr_target(image, (265, 57)).text == "OK"  # the line under the point, not its neighbour "Cancel"
    assert ocr_target(image, (2, 2), window=(2, 2)) is None  # too small a window to read


def test_typed_text_left_unsent_is_no_success_for_either_judge() -> None:
    """A run that types the new name and stops (a truncated run) shows the name in its field: not the end state."""
    instruction = 'Rename the device to "Atlas".'
    field = _dom("", "input", type="text", id="name", nth=1)
    screens = ("Device name Pixel", "Device name Atlas Save")
    unsent = [_click(0, field), _type(1, "Atlas"), _finish(2)]
    task = TaskSpec(id="t", instruction=instruction, platform=Platform.WEB)

    def ocr(acts: list[ActRecord]):
        evidence = Evidence(task=task, key_points=(), history=(), screenshots=(), screen_texts=screens,
                            acts=tuple(acts))
        return judge_from_spec("ocr").judge(evidence)

    acts = _judge(instruction, unsent, screens)
    assert acts.vote is Vote.FAILURE and "step 1" in " ".join(acts.evidence)
    verdict = ocr(unsent)
    assert verdict.vote is Vote.ABSTAIN and "never confirmed" in verdict.reason
    for confirm in (_click(2, _dom("Save")), ActRecord(index=2, type="Hotkey", executed=True)):
        sent = [*unsent[:2], confirm, _finish(3)]
        assert _judge(instruction, sent, screens).vote is Vote.SUCCESS
        assert ocr(sent).vote is Vote.SUCCESS
    with_enter = [_click(0, field), _type(1, "Atlas\n"), _finish(2)]
    assert _judge(instruction, with_enter, screens).vote is Vote.SUCCESS
    not_run = [*unsent[:2], _click(2, _dom("Save"), executed=False), _finish(3)]
    assert _judge(instruction, not_run, screens).vote is Vote.FAILURE


def test_a_run_that_ends_on_picking_the_item_to_change_is_no_success() -> None:
    """"Pin the note" that stops after opening the note shows the note's title, not a pinned note."""
    instruction = 'Pin the note "Dentist".'
    screens = ("Notes Weekly plan", "Notes Dentist Dr. Okafor Pin Delete")
    task = TaskSpec(id="t", instruction=instruction, platform=Platform.WEB)
    picked = [_click(0, _dom("Dentist Dr. Okafor", "div")), _finish(1)]
    pinned = [*picked[:1], _click(1, _dom("Pin")), _finish(2)]

    def ocr(acts: list[ActRecord]):
        evidence = Evidence(task=task, key_points=(), history=(), screenshots=(), screen_texts=screens,
                            acts=tuple(acts))
        return judge_from_spec("ocr").judge(evidence)

    stopped = _judge(instruction, picked, screens)
    assert stopped.vote is Vote.FAILURE and "'Dentist Dr. Okafor'" in " ".join(stopped.evidence)
    assert ocr(picked).vote is Vote.ABSTAIN and ocr(pinned).vote is Vote.SUCCESS
    assert _judge(instruction, pinned, screens).vote is Vote.SUCCESS
    opened = 'Open the note "Dentist".'  # reaching the item is all this clause asks
    assert _judge(opened, picked, screens).vote is Vote.SUCCESS
    switch = _dom("Bluetooth", "input", type="checkbox")  # clicking a switch is the change itself
    assert _judge("Turn Bluetooth on.", [_click(0, switch), _finish(1)], ("Bluetooth On",)).vote is Vote.SUCCESS


def test_archiving_is_no_licence_to_delete() -> None:
    """Archive and delete both empty the inbox row; only archiving keeps the mail, so "Delete" fails the task."""
    instruction = "Archive the newsletter from Trailhead Outfitters in my inbox."
    screens = ("Inbox Trailhead Outfitters Winter sale", "Inbox Marco Rossi")
    mail = _click(0, _dom("Trailhead Outfitters Winter sale", "div"))
    deleted = _judge(instruction, [mail, _click(1, _dom("Delete")), _finish(2)], screens)
    assert deleted.vote is Vote.FAILURE and "'Delete'" in " ".join(deleted.evidence)
    assert _judge(instruction, [mail, _click(1, _dom("Archive")), _finish(2)], screens).vote is Vote.SUCCESS
    removal = "Delete the newsletter from Trailhead Outfitters in my inbox."
    assert _judge(removal, [mail, _click(1, _dom("Delete")), _finish(2)], screens).vote is Vote.SUCCESS


def test_a_state_that_held_from_the_first_screen_is_no_work_done() -> None:
    """"Keep Bluetooth on" shows on a screen where Bluetooth was on all along: alone it proves nothing was done."""
    instruction = "Turn on airplane mode, but keep Bluetooth on."
    task = TaskSpec(id="t", instruction=instruction, platform=Platform.WEB)

    def ocr(screens: tuple[str, ...]):
        return judge_from_spec("ocr").judge(Evidence(task=task, key_points=(), history=(), screenshots=(),
                                                     screen_texts=screens))

    untouched = ocr(("Airplane mode\nBluetooth On", "Wallpaper\nBluetooth On"))
    assert untouched.vote is Vote.ABSTAIN and "first screen" in untouched.reason
    assert ocr(("Airplane mode Off\nBluetooth On", "Airplane mode On\nBluetooth On")).vote is Vote.SUCCESS
