"""CAPTCHA generation: every instance's verified solution passes its own page grader in real Chromium, a near-miss
attempt fails it, the first attempt is final, and generation is reproducible byte for byte.

One instance per family and difficulty on the desktop layout (both the solution and the near miss), and one per
family on the phone layout (touch input), all driven through BrowserEnv with unified actions in screen pixels.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from uivenus.actions.points import iter_points
from uivenus.actions.space import Type
from uivenus.envs.browser import BrowserEnv
from uivenus.synth.captcha import (
    FAMILIES,
    INDEX_FILE,
    LAYOUTS,
    LEVELS,
    SCENES,
    CaptchaError,
    CaptchaSite,
    Difficulty,
    Instance,
    attempt,
    browser_config,
    build_instance,
    generate_captchas,
    load_captchas,
    read_grade,
)

FAMILY_NAMES = ("arithmetic", "click_order", "drag_match", "grid", "odd_one_out", "rotate", "slider", "text")
COMBOS = [(family, level.value) for level in Difficulty for family in FAMILY_NAMES]


@pytest.fixture(scope="module")
def desktop_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("captcha-desktop")
    generate_captchas(len(COMBOS), root, seed=7, families=FAMILY_NAMES)
    return root


@pytest.fixture(scope="module")
def phone_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("captcha-phone")
    generate_captchas(len(COMBOS), root, seed=8, families=FAMILY_NAMES, layouts=("phone",))
    return root


@pytest.fixture(scope="module")
def desktop(desktop_dir: Path) -> dict[tuple[str, str], Instance]:
    return {(i.family, i.difficulty.value): i for i in load_captchas(desktop_dir)}


@pytest.fixture(scope="module")
def desktop_site(desktop_dir: Path) -> Iterator[CaptchaSite]:
    with CaptchaSite(desktop_dir) as site:
        yield site


@pytest.fixture(scope="module")
def web(desktop: dict[tuple[str, str], Instance]) -> Iterator[BrowserEnv]:
    with BrowserEnv(browser_config(next(iter(desktop.values())))) as env:
        yield env


# --- generation --------------------------------------------------------------------------------

def test_the_registry_holds_at_least_the_eight_families_and_four_scenes() -> None:
    assert set(FAMILY_NAMES) <= set(FAMILIES)
    assert {"login", "checkout", "signup", "comment"} <= set(SCENES)


def test_generation_cycles_families_and_difficulties_and_writes_an_index(
        desktop_dir: Path, desktop: dict[tuple[str, str], Instance]) -> None:
    assert set(desktop) == set(COMBOS)
    lines = (desktop_dir / INDEX_FILE).read_text().splitlines()
    assert len(lines) == len(COMBOS)
    record = json.loads(lines[0])
    assert {"id", "family", "difficulty", "seed", "solution", "answer", "viewport"} <= set(record)
    for instance in desktop.values():
        assert instance.viewport == LAYOUTS["desktop"].viewport and instance.platform.value == "web"
        assert (desktop_dir / instance.page).read_text() == instance.html
        width, height = instance.viewport
        for action in (*instance.solution, *instance.near_miss):
            assert all(0 <= x < width and 0 <= y < height for _, (x, y) in iter_points(action))
        assert instance.solution != instance.near_miss


def test_same_seed_writes_the_same_bytes_and_another_seed_does_not(tmp_path: Path) -> None:
    first = generate_captchas(16, tmp_path / "a", seed=3, layouts=("desktop", "phone"))
    second = generate_captchas(16, tmp_path / "b", seed=3, layouts=("desktop", "phone"))
    other = generate_captchas(16, tmp_path / "c", seed=4, layouts=("desktop", "phone"))
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert len(names) == 17 and names == sorted(p.name for p in (tmp_path / "b").iterdir())
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert [i.solution for i in first] == [i.solution for i in second]
    assert [i.solution for i in first] != [i.solution for i in other]
    assert [i.html for i in first] != [i.html for i in other]
    loaded = load_captchas(tmp_path / "a")
    assert loaded == first and [i.html for i in loaded] == [i.html for i in first]
    assert build_instance("slider", "hard", 99).html == build_instance("slider", "hard", 99).html


def test_pages_are_self_contained(desktop: dict[tuple[str, str], Instance]) -> None:
    for instance in desktop.values():
        html = instance.html.lower()
        assert "<link" not in html and " src=" not in html and "http" not in html, instance.id
        assert "window.captcharesult" in html and "window.uivenus" in html


def test_difficulty_tightens_tolerances_and_adds_clutter(desktop: dict[tuple[str, str], Instance]) -> None:
    easy, medium, hard = (LEVELS[d] for d in Difficulty)
    assert easy.noise < medium.noise < hard.noise and easy.distortion < medium.distortion < hard.distortion
    assert easy.distractors < medium.distractors < hard.distractors
    assert easy.tolerance_px > medium.tolerance_px > hard.tolerance_px
    assert easy.tolerance_deg > medium.tolerance_deg > hard.tolerance_deg
    text = [len(desktop["text", d.value].answer["text"]) for d in Difficulty]
    assert text == sorted(text) and text[0] < text[-1]
    radii = [desktop["click_order", d.value].answer["radius"] for d in Difficulty]
    assert radii == sorted(radii, reverse=True) and radii[0] > radii[-1]
    assert desktop["grid", "easy"].answer["size"] < desktop["grid", "hard"].answer["size"]
    assert desktop["rotate", "easy"].answer["tolerance_deg"] > desktop["rotate", "hard"].answer["tolerance_deg"]


def test_bad_requests_fail_with_typed_errors(tmp_path: Path) -> None:
    with pytest.raises(CaptchaError, match="unknown families"):
        generate_captchas(1, tmp_path, families=["sudoku"])
    with pytest.raises(CaptchaError, match="unknown difficulty"):
        build_instance("text", "impossible", 1)
    with pytest.raises(CaptchaError, match="generate instances there first"):
        load_captchas(tmp_path / "missing")


# --- grading in the browser ------------------------------------------------------------------

@pytest.mark.parametrize(("family", "difficulty"), COMBOS, ids=[f"{f}-{d}" for f, d in COMBOS])
def test_verified_solution_passes_its_own_grader(family: str, difficulty: str, web: BrowserEnv,
                                                 desktop_site: CaptchaSite, desktop) -> None:
    instance = desktop[family, difficulty]
    grade = attempt(web, desktop_site, instance, instance.solution)
    assert grade.done and grade.passed, f"{instance.id}: {grade.reason}"


@pytest.mark.parametrize(("family", "difficulty"), COMBOS, ids=[f"{f}-{d}" for f, d in COMBOS])
def test_near_miss_fails_its_grader(family: str, difficulty: str, web: BrowserEnv, desktop_site: CaptchaSite,
                                    desktop) -> None:
    instance = desktop[family, difficulty]
    grade = attempt(web, desktop_site, instance, instance.near_miss)
    assert grade.done and not grade.passed, f"{instance.id}: {grade.reason}"


def test_the_first_attempt_is_final_and_an_empty_answer_is_no_attempt(web: BrowserEnv, desktop_site: CaptchaSite,
                                                                      desktop) -> None:
    instance = desktop["text", "easy"]
    field, _, verify = instance.solution
    grade = attempt(web, desktop_site, instance, [field, verify])
    assert grade.done is False and grade.reason == "not attempted"
    web.step(field)
    web.step(Type(content=instance.answer["text"] + "Q"))
    web.step(verify)
    assert read_grade(web).done and not read_grade(web).passed
    web.step(field)
    web.step(Type(content=instance.answer["text"]))
    web.step(verify)
    assert not read_grade(web).passed, "a second attempt must not overturn the first"


def test_solutions_pass_on_a_touch_phone(phone_dir: Path) -> None:
    instances = load_captchas(phone_dir)
    chosen = instances[::3]  # every family once, across the difficulties
    assert {i.family for i in chosen} == set(FAMILY_NAMES) and len({i.difficulty for i in chosen}) == 3
    with CaptchaSite(phone_dir) as site, BrowserEnv(browser_config(chosen[0])) as phone:
        assert phone.platform.value == "mobile"
        failures = {i.id: g.reason for i in chosen if not (g := attempt(phone, site, i, i.solution)).passed}
    assert not failures
