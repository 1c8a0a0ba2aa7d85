"""End states read off the action record (`verify.effects`), alone and through the action judge."""

from __future__ import annotations

from uivenus.actions.space import Platform
from uivenus.records import TaskSpec
from uivenus.verify.acts import target_from_dom
from uivenus.verify.base import ActRecord, Evidence, Target, Vote
from uivenus.verify.effects import confirmed_values, pressed, removed, typed_state
from uivenus.verify.judges import judge_from_spec
from uivenus.verify.keypoints import extract_key_points
from uivenus.verify.text_evidence import PointStatus, spellings


def _dom(text: str, tag: str = "button", **more) -> Target:
    return target_from_dom({"tag": tag, "text": text, "interactive": True, **more})


def _click(i: int, text: str, tag: str = "button") -> ActRecord:
    return ActRecord(index=i, type="Click", executed=True, point=(10.0 * i, 20.0), target=_dom(text, tag))


def _type(i: int, text: str) -> ActRecord:
    return ActRecord(index=i, type="Type", executed=True, typed=text)


def _enter(i: int) -> ActRecord:
    return ActRecord(index=i, type="Hotkey", executed=True, keys=("enter",))


NEW_EVENT = [_click(0, "New event"), _click(1, "Add title", "input"), _type(2, "Dentist"),
             _click(3, "2026-11-16", "input"), _type(4, "2026-12-03"), _click(5, "HH:MM", "input"), _type(6, "09:30")]
EVENT_TASK = "Add a Dentist appointment to my calendar for December 3, 2026 at 9:30."
LIST_SCREEN = ["Calendar", "December 2026", "3 Dentist"]  # the month view hides the time and the year in words


def test_spellings_cover_iso_dates_and_clock_times() -> None:
    assert "December 3, 2026" in spellings("2026-12-03") and "3 Dec 2026" in spellings("2026-12-03")
    assert spellings("09:30") == ("09:30", "9:30") and spellings("Dentist") == ("Dentist",)


def test_typed_values_count_only_once_a_confirming_control_or_enter_follows() -> None:
    assert confirmed_values([*NEW_EVENT, _click(7, "Save")]) == ["Dentist", "2026-12-03", "09:30"]
    assert confirmed_values(NEW_EVENT) == []  # the run ended with the form open
    assert confirmed_values([*NEW_EVENT, _click(7, "Cancel")]) == []  # dismissed, not saved
    assert confirmed_values([_type(0, "hello"), _enter(1)]) == ["hello"]
    assert confirmed_values([_type(0, "hello\n")]) == ["hello"]


def test_an_end_state_clause_is_done_when_its_values_were_typed_and_saved() -> None:
    point = extract_key_points(EVENT_TASK)[0]
    status, why = typed_state(point, [*NEW_EVENT, _click(7, "Save")], LIST_SCREEN)  # type: ignore[misc]
    assert status is PointStatus.SATISFIED and "9:30" in why
    assert typed_state(point, NEW_EVENT, LIST_SCREEN) is None  # unsaved: the acts say nothing it was taken
    wrong_time = [*NEW_EVENT[:6], _type(6, "10:30"), _click(7, "Save")]
    assert typed_state(point, wrong_time, LIST_SCREEN) is None  # 9:30 neither typed, clicked nor shown


def test_a_removal_needs_its_item_picked_then_removed_and_no_question_left_open() -> None:
    point = extract_key_points("Delete old-invoice.pdf from the Downloads folder.")[0]
    picked = [_click(0, "Downloads", "span"), _click(1, "More actions for old-invoice.pdf"), _click(2, "Delete")]
    toast = ["Files", "Deleted “old-invoice.pdf”.", "Downloads"]
    assert removed(point, [*picked, _click(3, "Delete")], toast)[0] is PointStatus.SATISFIED  # type: ignore[index]
    pending = ["Delete “old-invoice.pdf”?", "The file will be deleted permanently.", "Cancel Delete"]
    assert removed(point, picked, pending)[0] is PointStatus.CONTRADICTED  # type: ignore[index]
    other = [*picked, _click(3, "Delete"), _click(4, "More actions for font-pack.zip"), _click(5, "Delete"),
             _click(6, "Delete")]
    status, why = removed(point, other, toast)  # type: ignore[misc]
    assert status is PointStatus.CONTRADICTED and "font-pack.zip" in why  # a second file went too
    status = removed(point, picked[:2], ["old-invoice.pdf", "Downloads"])[0]  # type: ignore[index]
    assert status is PointStatus.CONTRADICTED
    archive = extract_key_points("Archive the newsletter from Trailhead Outfitters.")[0]
    mail = [_click(0, "Trailhead Outfitters Winter sale", "div")]
    assert removed(archive, [*mail, _click(1, "Archive")], ["Inbox"])[0] is PointStatus.SATISFIED  # type: ignore[index]
    assert removed(archive, [*mail, _click(1, "Delete")], ["Inbox"]) is None  # deleting is no archiving


def _verdict(instruction: str, acts: list[ActRecord], final: list[str]) -> Vote:
    task = TaskSpec(id="t", instruction=instruction, platform=Platform.WEB)
    evidence = Evidence(task=task, key_points=(), history=(), screenshots=(), screen_texts=("Calendar", "\n".join(
        final)), acts=tuple(acts))
    return judge_from_spec("acts").judge(evidence).vote


def test_the_action_judge_speaks_where_the_final_screen_shows_an_end_state_only_in_part() -> None:
    assert _verdict(EVENT_TASK, [*NEW_EVENT, _click(7, "Save")], LIST_SCREEN) is Vote.SUCCESS
    assert _verdict(EVENT_TASK, NEW_EVENT, LIST_SCREEN) is Vote.FAILURE  # typed, never saved
    assert _verdict(EVENT_TASK, [*NEW_EVENT, _click(7, "Cancel")], LIST_SCREEN) is Vote.FAILURE


def test_an_exact_new_value_that_nothing_entered_or_shows_contradicts_the_clause() -> None:
    point = extract_key_points("Change Diego Alves's phone number to 555-0199.")[0]
    first, final = ["Contacts", "Diego Alves 555-0104"], ["Contacts", "Diego Alves 555-0104", "Favorite Edit"]
    wandering = [_click(0, "DA Diego Alves 555-0104"), _click(1, "Favorite")]
    status, why = typed_state(point, wandering, final, first)  # type: ignore[misc]
    assert status is PointStatus.CONTRADICTED and "555-0199" in why
    # a name found by its capitals or a date proves nothing missing: pickers and paraphrases set those
    assert typed_state(extract_key_points("Switch the language to German (Deutsch).")[0],
                       [_click(0, "Deutsch", "option")], ["Language Deutsch"], ["Language English"]) is None


def test_a_clause_that_names_its_object_by_a_pronoun_asks_for_the_press_of_its_verb() -> None:
    send = extract_key_points("Find the verification code and send it to lee@example.com.")
    assert pressed(extract_key_points("Pin it.")[0], [_click(0, "Dentist note", "div"), _click(1, "Pin")])[0] \
        is PointStatus.SATISFIED  # type: ignore[index]
    assert pressed(extract_key_points("Pin it.")[0], [_click(0, "Dentist note", "div")])[0] \
        is PointStatus.CONTRADICTED  # type: ignore[index]
    assert pressed(send[1], []) is None  # it names an exact address: the typed values speak for it
    # the finding clause is done when the clause acting on what was found is: "Find the note … and pin it"
    task = "Find the note about the dentist appointment and pin it."
    assert _verdict(task, [_click(0, "Dentist Dr. Okafor", "div"), _click(1, "Pin")], ["Notes", "Pinned"]) \
        is Vote.SUCCESS
    assert _verdict(task, [_click(0, "Dentist Dr. Okafor", "div")], ["Notes"]) is Vote.FAILURE
