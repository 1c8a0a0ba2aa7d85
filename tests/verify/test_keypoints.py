"""Key points from the bundled sandbox task instructions, and the strict model path."""

from __future__ import annotations

import pytest

from uivenus.agent.policies.script import ScriptedPolicy
from uivenus.envs.sandbox.tasks import get_task
from uivenus.verify.keypoints import (
    KeyPointError, KeyPointKind, Toggle, extract_key_points, key_point_texts, literal_tokens, parse_vlm_key_points,
    vlm_key_points,
)


def points_of(task_id: str):
    return extract_key_points(get_task(task_id).instructions[0])


def test_names_and_numbers_are_kept_exactly() -> None:
    points = points_of("contacts/add_contact")  # "Add a contact named Ana Lima with the number 555-0101."
    literals = {lit for p in points for lit in p.literals}
    assert {"Ana Lima", "555-0101"} <= literals
    assert any("Ana Lima" in p.text and "555-0101" in p.text for p in points)
    assert "Add" not in literals  # a capitalised verb is no name


def test_and_splits_clauses_but_not_quoted_text() -> None:
    points = points_of("contacts/add_contact_with_email")
    assert key_point_texts(points) == (
        "Add Rafael Souza to my contacts with phone +1 (555) 014-7788", "email rafael.souza@example.com")
    assert points[0].literals == ("Rafael Souza", "+1 (555) 014-7788")
    assert points[1].literals == ("rafael.souza@example.com",)
    note = points_of("notes/create_note")  # the quoted "passport, charger, sunscreen" holds commas
    assert len(note) == 1
    assert note[0].literals == ("Packing list", "passport, charger, sunscreen")


def test_then_and_commas_before_a_new_clause_split() -> None:
    texts = key_point_texts(points_of("launcher/open_two_apps"))
    assert texts == ("Open Settings", "go back to the home screen", "open Contacts", "return home")


def test_addresses_and_dates_stay_whole() -> None:
    shop = points_of("shop/buy_blue_mugs")
    assert "Ship them to Ana Lima, 12 Harbor St, Lisbon" in key_point_texts(shop)
    card = next(p for p in shop if "card" in p.text)
    assert "4242 4242 4242 4242" in card.literals and "12/28" in card.literals
    offsite = points_of("calendar/team_offsite")
    assert offsite[0].literals == ("Team offsite", "November 20, 2026", "10:00")
    assert points_of("calendar/create_dentist")[0].literals == ("Dentist", "2026-12-03", "09:30")


def test_superlatives_become_sort_filter_points() -> None:
    points = points_of("shop/cheapest_headphones")
    sort = [p for p in points if p.kind is KeyPointKind.SORT_FILTER]
    assert [p.text for p in sort] == ["sort/filter: cheapest (lowest price)"]
    assert "add the cheapest pair to my cart" in key_point_texts(points)  # the clause itself stays too
    latest = extract_key_points("Open the latest email from Nimbus")
    assert "sort/filter: latest (most recent date)" in key_point_texts(latest)


def test_removals_and_switches_are_marked() -> None:
    delete = points_of("contacts/delete_contact")
    assert delete[0].kind is KeyPointKind.REMOVAL and delete[0].literals == ("Bruno Costa",)
    switches = points_of("settings/wifi_off_bluetooth_on")
    assert [p.toggles for p in switches] == [(Toggle("Wi-Fi", "off"),), (Toggle("Bluetooth", "on"),)]
    airplane = points_of("settings/airplane_keep_bluetooth")
    assert airplane[0].toggles == (Toggle("airplane mode", "on"),)


def test_nothing_is_inferred() -> None:
    for task_id in ("contacts/add_contact", "mail/send_lunch", "shop/buy_blue_mugs", "files/file_receipt"):
        instruction = get_task(task_id).instructions[0]
        for point in extract_key_points(instruction):
            if point.kind is not KeyPointKind.SORT_FILTER:
                assert point.text in instruction
                assert all(lit in instruction for lit in point.literals)


def test_literal_tokens_kinds() -> None:
    assert literal_tokens('Rename report.txt to "final copy" and mail bo@x.org at 09:30') == (
        "report.txt", "final copy", "bo@x.org", "09:30")
    assert literal_tokens("Change Diego Alves's phone") == ("Diego Alves",)


def test_vlm_path_parses_strictly_and_checks_literals() -> None:
    instruction = "Add a contact named Ana Lima with the number 555-0101."
    policy = ScriptedPolicy(["<point>a contact named Ana Lima exists</point>\n<point>its number is 555-0101</point>\n"])
    points = vlm_key_points(instruction, policy)
    assert key_point_texts(points) == ("a contact named Ana Lima exists", "its number is 555-0101")
    request = policy.requests[0]
    assert request.sampling.temperature == 0.0 and not request.sampling.thinking
    assert instruction in request.messages[-1].text


@pytest.mark.parametrize("answer, match", [
    ("<point>contact Ana Lima</point> and more text", "expected a line"),
    ("Here are the points:\n<point>contact Ana Lima</point>", "expected a line"),
    ("", "no <point>"),
    ("<point>a contact named Ana Lima with number 555-9999</point>", "does not say"),
    ("<point>a contact named Bob Stone</point>", "does not say"),
])
def test_vlm_path_rejects_malformed_or_invented(answer: str, match: str) -> None:
    with pytest.raises(KeyPointError, match=match):
        parse_vlm_key_points(answer, "Add a contact named Ana Lima with the number 555-0101.")


def test_a_verb_that_asks_a_question_is_not_an_act() -> None:
    inspect, = extract_key_points("Check how many kettles are 'In stock' on the live stock page")
    tick, = extract_key_points("Check 'In stock' and nothing else")[:1]
    assert inspect.act is None and inspect.targets == ()
    assert tick.act is not None and "In stock" in tick.targets


def test_enable_and_disable_set_switches_whose_subject_ends_before_a_place() -> None:
    points = extract_key_points("Disable Wi-Fi and enable Bluetooth in Settings.")
    assert [p.toggles for p in points] == [(Toggle("Wi-Fi", "off"),), (Toggle("Bluetooth", "on"),)]
    assert extract_key_points("Enable the dark theme")[0].toggles == (Toggle("dark theme", "on"),)
    assert extract_key_points("Enable notifications for the Mail app in Settings")[0].toggles == ()  # no switch name
