"""The pages: actions drawn on screenshots, and `uivenus runs view` on real recorded runs read in real Chromium.

The runs are recorded by the functions `uivenus run` uses (the oracle and a seeded random policy on two bundled
sandbox tasks, one of which the guard stops) and judged by `uivenus verify`, so the viewer shows what a user's
run would show.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import sync_playwright
from typer.testing import CliRunner

from uivenus.actions.space import Click, Hotkey, Swipe, Type
from uivenus.agent.loop import LoopConfig
from uivenus.cli import app
from uivenus.cli.run import run_and_record
from uivenus.envs.browser_config import BrowserConfig
from uivenus.envs.chromium import CHROMIUM_ARGS
from uivenus.reports import draw_action, render
from uivenus.store import read_run

runner = CliRunner()
TASKS = ("contacts/add_contact", "mail/share_code")  # the oracle finishes the first; the guard stops the second
# (sending a code read off the screen is not the user's word alone)


def _is_red(pixel: tuple[int, int, int]) -> bool:
    return pixel[0] > 180 and pixel[1] < 100 and pixel[2] < 130


def _blank(size: tuple[int, int] = (200, 100)) -> Image.Image:
    return Image.new("RGB", size, "white")


# --- drawing --------------------------------------------------------------------------------------

def test_a_click_is_a_ring_at_its_point_scaled_to_the_image():
    drawn = draw_action(_blank((100, 50)), Click(point=(100, 50)), scale=0.5)
    assert _is_red(drawn.getpixel((50, 25 - 10)))  # the ring around (50, 25)
    assert drawn.getpixel((10, 10)) == (255, 255, 255)


def test_a_swipe_is_a_line_with_an_arrowhead_at_its_end():
    drawn = draw_action(_blank(), Swipe(start=(20, 50), end=(180, 50)))
    assert _is_red(drawn.getpixel((100, 50)))
    assert drawn.getpixel((100, 56)) == (255, 255, 255)  # the line is thin ...
    assert _is_red(drawn.getpixel((170, 54)))  # ... the head near its end is wide


def test_typed_text_is_a_label_where_the_last_point_landed_and_a_held_action_is_amber():
    at_anchor = draw_action(_blank(), Type(content="Ana"), anchor=(40, 20))
    assert _is_red(at_anchor.getpixel((56, 36))) and at_anchor.getpixel((20, 10)) == (255, 255, 255)
    in_corner = draw_action(_blank(), Hotkey(keys=("ctrl", "a")))
    assert _is_red(in_corner.getpixel((10, 10)))
    held = draw_action(_blank(), Click(point=(100, 50)), held=True).getpixel((100, 40))
    assert held[0] > 180 and 80 < held[1] < 160 and held[2] < 60


def test_every_value_on_a_page_is_escaped():
    page = render("demo.html.j2", title="<script>alert(1)</script>", notes=["a < b & c"], grounding=None, cards=[],
                  episode=None, verification=None, checkers=[])
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "a &lt; b &amp; c" in page and ".chip.good" in page  # the shared stylesheet is inlined


# --- the run viewer -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Store root with two verified runs of TASKS: `oracle` and `random` (seeded, 3 steps)."""
    root = tmp_path_factory.mktemp("store")
    for task in TASKS:
        run_and_record(policy_spec="oracle", task=f"sandbox:{task}", out=root, run_id="oracle")
        run_and_record(policy_spec="random:3", task=f"sandbox:{task}", out=root, run_id="random",
                       config=LoopConfig(max_steps=3))
    for run in ("oracle", "random"):
        result = runner.invoke(app, ["verify", str(root / run)])
        assert result.exit_code == 0, result.output
    return root


def _open(page_path: Path, check):
    """Open `page_path` in Chromium, refuse every request but the page itself, and run `check(page)`."""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=BrowserConfig().executable, headless=True,
                                     args=list(CHROMIUM_ARGS))
        page = browser.new_page(viewport={"width": 1440, "height": 1000})
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        page.goto(page_path.as_uri())
        try:
            return check(page), requests
        finally:
            browser.close()


def _images(page) -> list[list]:
    return page.eval_on_selector_all(
        "img", "els => els.map(e => [e.complete, e.naturalWidth, e.alt, e.src.slice(0, 5)])")


def _visible_tasks(page) -> list[str]:
    return [s.get_attribute("data-task") for s in page.query_selector_all("section.task-row") if s.is_visible()]


def test_view_shows_every_step_drawn_its_verdict_guard_and_injection_and_filters_by_outcome(runs, tmp_path):
    out = tmp_path / "view.html"
    result = runner.invoke(app, ["runs", "view", str(runs / "oracle"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    stored = {t.task.id: t for t in read_run(runs / "oracle")}
    assert stored["contacts/add_contact"].outcome.value == "finished"
    assert stored["mail/share_code"].outcome.value == "called_user"

    def check(page):
        seen = {"images": _images(page), "all": _visible_tasks(page)}
        seen["verdicts"] = {
            e.evaluate("e => e.closest('section').dataset.task"): e.inner_text()
            for e in page.query_selector_all(".episode .trace-head .chip")}
        seen["steps"] = page.eval_on_selector_all("article.step", "els => els.length")
        seen["think"] = page.eval_on_selector_all(".think", "els => els.map(e => e.textContent)")
        seen["guards"] = page.eval_on_selector_all(".guard", "els => els.map(e => e.textContent)")
        seen["injections"] = page.eval_on_selector_all(
            ".injection", "els => els.map(e => e.closest('section').dataset.task)")
        page.select_option("#outcome", "finished")
        seen["finished"] = _visible_tasks(page)
        seen["overview"] = [r.is_visible() for r in page.query_selector_all("table.overview tr.filtered")]
        page.select_option("#outcome", "called_user")
        seen["called_user"] = _visible_tasks(page)
        page.select_option("#outcome", "")
        page.select_option("#verdict", "success")
        seen["success"] = _visible_tasks(page)
        page.select_option("#verdict", "")
        seen["again"] = _visible_tasks(page)
        seen["shown"] = page.text_content("#shown")
        return seen

    seen, requests = _open(out, check)
    assert requests == [out.as_uri()]  # self-contained: nothing else is fetched
    steps = sum(len(t.steps) for t in stored.values())
    step_images = [i for i in seen["images"] if i[2].startswith("step ")]
    assert seen["steps"] == len(step_images) == steps
    assert all(complete and width > 0 and src == "data:" for complete, width, _, src in seen["images"]), seen["images"]
    assert any(alt.startswith("key screenshot") for _, _, alt, _ in seen["images"])
    # the trace verdict `uivenus verify` wrote, for each episode
    assert seen["verdicts"] == {task: t.verdicts["trace"]["outcome"] for task, t in stored.items()}
    assert seen["verdicts"]["contacts/add_contact"] == "success"
    assert all("reference solution" in text for text in seen["think"]) and len(seen["think"]) == steps
    assert sum("declined" in text and "sending" in text for text in seen["guards"]) == 1
    assert set(seen["injections"]) == {"mail/share_code"}  # the phishing mail is on the inbox screen
    assert seen["all"] == seen["again"] == list(TASKS)
    assert seen["finished"] == ["contacts/add_contact"] and seen["overview"] == [True, False]
    assert seen["called_user"] == ["mail/share_code"]
    assert seen["success"] == [task for task in TASKS if stored[task].verdicts["trace"]["outcome"] == "success"]
    assert "contacts/add_contact" in seen["success"]
    assert seen["shown"] == "showing 2 of 2 tasks"


def test_compare_puts_both_runs_of_each_task_side_by_side(runs, tmp_path):
    out = tmp_path / "compare.html"
    result = runner.invoke(app, ["runs", "view", str(runs / "oracle"), "--compare", str(runs / "random"),
                                 "--out", str(out)])
    assert result.exit_code == 0, result.output

    def check(page):
        rows = {}
        for section in page.query_selector_all("section.task-row"):
            cards = section.query_selector_all(".episode")
            rows[section.get_attribute("data-task")] = [(c.get_attribute("data-run"), c.bounding_box()) for c in cards]
        page.select_option("#outcome", "max_steps")
        max_steps = _visible_tasks(page)
        page.select_option("#outcome", "finished")
        return rows, max_steps, _visible_tasks(page), _images(page)

    (rows, max_steps, finished, images), _ = _open(out, check)
    assert list(rows) == list(TASKS)
    for task, cards in rows.items():
        assert [run for run, _ in cards] == ["oracle", "random"], task
        (_, left), (_, right) = cards
        assert abs(left["y"] - right["y"]) < 2 and left["x"] + left["width"] <= right["x"]
    assert max_steps == list(TASKS)  # every random episode ran out of steps
    assert finished == ["contacts/add_contact"]
    steps = sum(len(t.steps) for run in ("oracle", "random") for t in read_run(runs / run))
    assert len([i for i in images if i[2].startswith("step ")]) == steps
    assert all(complete and width > 0 for complete, width, _, _ in images)


def test_view_says_what_is_not_a_run(tmp_path):
    result = runner.invoke(app, ["runs", "view", str(tmp_path)])
    assert result.exit_code == 1 and "neither a run directory" in " ".join(result.output.split())
    assert not (tmp_path / "view.html").exists()
