"""Live-web evaluation on a local shop (tests/evals/conftest.py): task files in both public formats, the oracle
playing scripted references and a seeded random policy, judged from key points and key screenshots."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from uivenus.evals.web import RESULTS_FILE, WebEvalConfig, evaluate_web
from uivenus.evals.web_tasks import WebTaskError, load_web_tasks
from uivenus.tasks.executors import SerialExecutor

SEARCH = [{"click": "#q"}, {"type": "blue kettle"}, {"press": "enter"}, {"click": "#p-blue-kettle"},
          {"finished": "opened it"}]
#: The shop's consent button (the default selectors include it too; one selector is one DOM query per step).
BANNER = ("[data-testid=cookie-accept]",)
WRONG = [{"click": "#q"}, {"type": "kettle"}, {"press": "enter"}, {"click": "#p-blue-kettle"}, {"finished": "done"}]


def mind2web_rows(base: str) -> list[dict]:
    """Online-Mind2Web rows (a JSON list) with the truth of the oracle's run on each."""
    return [
        {"task_id": "m-search", "confirmed_task": "Search for 'blue kettle' and open the product page of the "
         "'Blue Kettle'", "website": f"{base}/", "reference_length": 4, "level": "easy", "reference": SEARCH,
         "annotator": "kept-as-is", "truth": True},
        {"task_id": "m-wrong", "confirmed_task": "Open the product page of the 'Red Kettle'", "website": f"{base}/",
         "reference_length": 4, "level": "easy", "reference": WRONG, "truth": False},
        {"task_id": "m-form", "confirmed_task": "Send a message to the shop with the name 'Ada Lovelace'",
         "website": f"{base}/contact", "reference_length": 3, "level": "medium", "truth": True,
         "reference": [{"click": "#name"}, {"type": "Ada Lovelace"}, {"click": "#send"}, {"finished": "sent"}]},
        {"task_id": "m-slow", "confirmed_task": "Find the 'Standard delivery' price on the shipping page",
         "website": f"{base}/", "reference_length": 1, "level": "medium", "truth": True,
         "reference": [{"click": "a[href='/shipping']"}, {"finished": "4.99 EUR"}]},
        {"task_id": "m-popup", "confirmed_task": "Show the coupon code 'KETTLE10' from the promo pop-up",
         "website": f"{base}/promo", "reference_length": 1, "level": "hard", "truth": True,
         "reference": [{"click": "#coupon"}, {"finished": "shown"}]},
    ]


def webvoyager_rows(base: str) -> list[dict]:
    """WebVoyager rows (JSON lines) with the truth of the oracle's run on each."""
    return [
        {"web_name": "KettleShop", "id": "KettleShop--0", "web": f"{base}/deals", "truth": True,
         "ques": "Open today's deal and find the discount on the 'Copper Kettle'",
         "reference": [{"click": "#today"}, {"finished": "20 percent"}]},
        {"web_name": "KettleShop", "id": "KettleShop--1", "web": f"{base}/refill", "truth": True,
         "ques": "Check how many kettles are 'In stock' on the live stock page",
         "reference": [{"click": "#live"}, {"answer": "12"}]},
        {"web_name": "KettleShop", "id": "KettleShop--2", "web": f"{base}/busy", "truth": True,
         "ques": "Look up the 'Opening times' of the shop", "reference": [{"finished": "it is"}]},
        {"web_name": "KettleShop", "id": "KettleShop--3", "web": f"{base}/", "truth": False,
         "ques": "Find the price of the 'Red Kettle'"},  # no reference: the oracle cannot play it
    ]


@pytest.fixture(scope="module")
def task_files(web_shop: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("web_tasks")
    mind2web = folder / "Online_Mind2Web.json"
    mind2web.write_text(json.dumps(mind2web_rows(web_shop), indent=1), encoding="utf-8")
    voyager = folder / "WebVoyager_data.jsonl"
    voyager.write_text("".join(json.dumps(row) + "\n" for row in webvoyager_rows(web_shop)), encoding="utf-8")
    return {"online-mind2web": mind2web, "webvoyager": voyager}


def truth(path: Path) -> dict[str, bool]:
    tasks = load_web_tasks(path).tasks
    return {t.id: t.metadata["row"]["truth"] for t in tasks}


# --- loaders ------------------------------------------------------------------------------------------

def test_both_public_formats_load_with_their_fields_and_unknown_fields_kept(task_files: dict[str, Path],
                                                                            web_shop: str) -> None:
    mind2web = load_web_tasks(task_files["online-mind2web"])
    assert mind2web.format == "online-mind2web" and not mind2web.errors and len(mind2web.tasks) == 5
    search = mind2web.tasks[0]
    assert (search.id, search.url, search.platform.value) == ("m-search", f"{web_shop}/", "web")
    assert search.instruction.startswith("Search for 'blue kettle'")
    assert search.metadata["level"] == "easy" and search.metadata["website"] == "127.0.0.1"
    assert search.metadata["row"]["annotator"] == "kept-as-is"  # a field no format reads
    assert search.check["kind"] == "scripted" and search.check["steps"][0] == {"click": "#q"}
    voyager = load_web_tasks(task_files["webvoyager"], viewport="phone")
    assert voyager.format == "webvoyager" and len(voyager.tasks) == 4
    assert voyager.tasks[0].metadata["website"] == "KettleShop" and voyager.tasks[0].platform.value == "mobile"
    assert voyager.tasks[3].check is None


def test_malformed_rows_are_reported_with_their_line_and_the_rest_load(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([
        json.dumps({"id": "a", "instruction": "Find 'x'", "start_url": "https://example.com/"}),
        "{not json",
        json.dumps({"id": "b", "instruction": "", "start_url": "https://example.com/"}),
        json.dumps(["a", "list"]),
        json.dumps({"id": "c", "instruction": "Go", "start_url": "javascript:alert(1)"}),
        "",
        json.dumps({"id": "a", "instruction": "again", "start_url": "https://example.com/"}),
        json.dumps({"id": "d", "instruction": "Go", "start_url": "https://example.org/x", "reference": [{"fly": 1}]}),
        json.dumps({"id": "e", "instruction": "Go", "start_url": "http://shop.example/", "level": "hard"}),
    ]), encoding="utf-8")
    loaded = load_web_tasks(path)
    assert loaded.format == "plain" and [t.id for t in loaded.tasks] == ["a", "e"]
    lines = {e.line: e.message for e in loaded.errors}
    assert sorted(lines) == [2, 3, 4, 5, 7, 8]
    assert "not JSON" in lines[2] and "instruction" in lines[3] and "JSON object" in lines[4]
    assert "http(s)" in lines[5] and "appears again" in lines[7] and "reference step 1" in lines[8]
    assert loaded.tasks[1].metadata["level"] == "hard" and loaded.tasks[1].metadata["website"] == "shop.example"


def test_an_unknown_or_undetectable_format_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "odd.json"
    path.write_text(json.dumps([{"question": "?"}]), encoding="utf-8")
    with pytest.raises(WebTaskError, match="no row has the fields of a known format"):
        load_web_tasks(path)
    with pytest.raises(WebTaskError, match="unknown task format"):
        load_web_tasks(path, format="mind2web-offline")
    forced = load_web_tasks(path, format="webvoyager")
    assert not forced.tasks and "missing or empty: web_name, id, ques, web" in forced.errors[0].message


# --- the runner -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def oracle_runs(task_files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """The oracle on both task files, serially in this process (one browser for all)."""
    out = {}
    with SerialExecutor() as executor:
        for name, path in task_files.items():
            config = WebEvalConfig(policy="oracle", judges=("ocr", "program"), retries=2, retry_wait_s=0.2,
                                   settle_timeout_s=1.0, consent=BANNER)
            folder = tmp_path_factory.mktemp(f"oracle-{name}")
            result = evaluate_web(load_web_tasks(path), config, folder, executor)
            out[name] = {"result": result, "folder": folder, "config": config, "path": path}
    return out


@pytest.mark.parametrize("name", ["online-mind2web", "webvoyager"])
def test_the_oracle_success_rate_equals_the_truth_of_each_task(oracle_runs: dict[str, dict], name: str) -> None:
    run = oracle_runs[name]
    results = json.loads((run["folder"] / RESULTS_FILE).read_text(encoding="utf-8"))
    expected = truth(run["path"])
    got = {r["task_id"]: r["success"] for r in results["tasks"]}
    assert got == expected, [(r["task_id"], r["verdict"], r["reason"]) for r in results["tasks"]]
    summary = results["summary"]
    assert summary["n"] == len(expected) and summary["success"] == sum(expected.values())
    assert summary["success_rate"] == pytest.approx(sum(expected.values()) / len(expected))
    assert summary["seconds_per_episode"] > 0
    for record in results["tasks"]:
        assert record["key_points"] and record["key_steps"], record["task_id"]
        assert {j["judge"] for j in record["judges"]} == {"ocr", "program"}
        episode = run["folder"] / record["episode"]
        assert (episode / "episode.json").exists() and (episode / "screens" / "0.png").exists()


def test_summaries_group_by_website_and_by_level(oracle_runs: dict[str, dict]) -> None:
    summary = oracle_runs["online-mind2web"]["result"].results["summary"]
    assert summary["by_level"] == {
        "easy": {"n": 2, "success": 1, "success_rate": 0.5}, "hard": {"n": 1, "success": 1, "success_rate": 1.0},
        "medium": {"n": 2, "success": 2, "success_rate": 1.0}}
    assert summary["by_website"] == {"127.0.0.1": {"n": 5, "success": 4, "success_rate": 0.8}}
    voyager = oracle_runs["webvoyager"]["result"].results["summary"]
    assert voyager["by_website"] == {"KettleShop": {"n": 4, "success": 3, "success_rate": 0.75}}
    assert voyager["by_level"] == {"-": {"n": 4, "success": 3, "success_rate": 0.75}}


def test_live_web_events_are_recorded_per_task(oracle_runs: dict[str, dict]) -> None:
    mind2web = {r["task_id"]: r for r in oracle_runs["online-mind2web"]["result"].results["tasks"]}
    voyager = {r["task_id"]: r for r in oracle_runs["webvoyager"]["result"].results["tasks"]}
    # the cookie banner on the home page is clicked away as the first step, by the dismisser, on the record
    assert mind2web["m-search"]["consent_steps"] == [0] and mind2web["m-form"]["consent_steps"] == []
    # a pop-up window and a target=_blank link are followed; the final screen is theirs
    assert mind2web["m-popup"]["new_tabs"][0]["new_tab"].endswith("/coupon")
    assert voyager["KettleShop--0"]["new_tabs"][0]["new_tab"].endswith("/deal-today")
    # a page that never settles costs the settle wait, recorded; the slow page still loads
    assert voyager["KettleShop--1"]["unsettled"] and voyager["KettleShop--1"]["unsettled"][0]["unsettled_s"] == 1.0
    assert mind2web["m-slow"]["success"]
    # the site answered 429 once: one recorded retry, then success
    busy = voyager["KettleShop--2"]
    assert len(busy["attempts"]) == 1 and "HTTP 429" in busy["attempts"][0]["error"] and busy["success"]
    # a task without a reference: the oracle errs, and that is a failure, never a success
    assert voyager["KettleShop--3"]["outcome"] == "error" and not voyager["KettleShop--3"]["success"]
    assert all(r["injection_steps"] == [] for r in [*mind2web.values(), *voyager.values()])


def test_a_second_run_resumes_and_runs_nothing_again(oracle_runs: dict[str, dict]) -> None:
    run = oracle_runs["webvoyager"]
    with SerialExecutor() as executor:
        again = evaluate_web(load_web_tasks(run["path"]), run["config"], run["folder"], executor)
    assert (again.ran, again.skipped) == (0, 4)
    assert again.results["tasks"] == run["result"].results["tasks"]


def test_random_policy_completes_nothing(task_files: dict[str, Path], tmp_path: Path) -> None:
    config = WebEvalConfig(policy="random:3", judges=("ocr",), max_steps=2, settle_timeout_s=1.0, retry_wait_s=0.2,
                           consent=BANNER)
    loaded = load_web_tasks(task_files["online-mind2web"])
    with SerialExecutor() as executor:
        result = evaluate_web(replace(loaded, tasks=loaded.tasks[:3]), config, tmp_path, executor)
    summary = result.results["summary"]
    assert summary["n"] == 3 and summary["success"] == 0, [(r["task_id"], r["reason"]) for r in result.results["tasks"]]
    assert all(r["outcome"] == "max_steps" for r in result.results["tasks"])


# --- the command line: a plain task file, downloads, the host allow-list, the report, agreement ------------

def test_eval_web_command_records_downloads_and_keeps_to_the_site_then_agreement(web_shop: str,
                                                                                  tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from uivenus.cli import app

    tasks = tmp_path / "mine.jsonl"
    rows = [
        {"id": "manual", "instruction": "Download the kettle manual, then visit 'Our partner shop'",
         "start_url": f"{web_shop}/manual", "level": "easy",
         "reference": [{"click": "#pdf"}, {"click": "#away"}, {"finished": "done"}]},
        {"id": "deal", "instruction": "Find the discount on the 'Copper Kettle'", "start_url": f"{web_shop}/deals",
         "reference": [{"click": "#today"}, {"finished": "20 percent"}]},
        {"id": "broken"},
    ]
    tasks.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(app, ["eval", "web", "--tasks", str(tasks), "--policy", "oracle", "--out", str(out),
                                 "--executor", "serial", "--keep-to-site", "--judges", "ocr"])
    assert result.exit_code == 0, result.output
    assert "line 3" in result.output and "success 1/2 = 0.500" in result.output
    records = {r["task_id"]: r for r in json.loads((out / RESULTS_FILE).read_text(encoding="utf-8"))["tasks"]}
    manual = records["manual"]
    # a download is recorded on the step during which the browser reported it (its click, or the next one)
    assert [d for step in manual["downloads"] for d in step["downloads"]] == [
        {"url": f"{web_shop}/files/kettle-manual.pdf", "filename": "kettle-manual.pdf"}]
    assert manual["blocked"][0]["blocked_navigations"][0]["url"].startswith("http://localhost:")
    assert not manual["success"] and records["deal"]["success"]
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count("key screenshot") >= 4 and "visibly satisfied" in page and "Copper Kettle" in page

    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"task_id": "manual", "success": true}\n{"task_id": "deal", "success": true}\nnope\n',
                      encoding="utf-8")
    result = runner.invoke(app, ["eval", "web-agreement", "--results", str(out), "--labels", str(labels)])
    assert result.exit_code == 0, result.output
    assert "line 3: not JSON" in result.output
    final = next(line for line in result.output.splitlines() if " final " in line)
    assert [cell.strip() for cell in final.strip("│ ").split("│")] == ["final", "2", "0.500", "1.000", "0.500", "–"]


def test_agreement_counts_against_hand_made_labels() -> None:
    from uivenus.evals.agreement import compare

    def record(task: str, success: bool, vote: str) -> dict:
        return {"task_id": task, "success": success, "judges": [{"judge": "ocr", "vote": vote}]}

    results = {"tasks": [record("a", True, "success"), record("b", True, "success"), record("c", False, "abstain"),
                         record("d", False, "failure"), record("e", False, "success")]}
    report = compare(results, {"a": True, "b": False, "c": True, "d": False, "f": True})
    final = report["judges"]["final"]
    assert (final["n"], final["true_success"], final["false_success"], final["true_failure"],
            final["false_failure"]) == (4, 1, 1, 1, 1)
    assert final["agreement"] == 0.5 and final["precision"] == 0.5 and final["recall"] == 0.5
    assert final["false_success_rate"] == 0.5
    assert report["unlabelled"] == ["e"] and report["missing"] == ["f"]
    assert report["judges"]["ocr"]["true_success"] == 1


def test_starts_on_one_site_are_spaced_across_limiters_sharing_a_folder(tmp_path: Path) -> None:
    import time

    from uivenus.evals.web import SiteRateLimiter

    first, second = SiteRateLimiter(tmp_path, 0.4), SiteRateLimiter(tmp_path, 0.4)  # as two workers would hold
    assert first.wait("shop.example") == 0.0
    started = time.time()  # the limiter keeps wall-clock times (shared by processes)
    waited = second.wait("shop.example")
    assert 0 < waited <= 0.4 and time.time() - started >= 0.4 - 0.05  # spaced by the interval, however late
    assert second.wait("other.example") == 0.0 and SiteRateLimiter(tmp_path, 0).wait("shop.example") == 0.0


def test_an_episode_that_ended_in_an_error_is_never_a_success_whatever_the_judges_say(tmp_path: Path) -> None:
    from uivenus.evals.web import EPISODES_RUN, task_record
    from uivenus.records import Outcome, TaskSpec
    from uivenus.store import TrajectoryStore, write_verdicts

    task = TaskSpec(id="t", instruction="Open the 'Blue Kettle'", platform="web", url="http://shop.example/",
                    metadata={"website": "shop.example", "level": "easy"})
    store = TrajectoryStore(tmp_path)
    for name, outcome in (("crashed", Outcome.ERROR), ("finished", Outcome.FINISHED)):
        with store.episode(EPISODES_RUN, name, task) as writer:
            writer.finish(outcome)
        write_verdicts(store.episode_dir(EPISODES_RUN, name), {"trace": {"outcome": "success", "verdicts": []}}, {})
    crashed = task_record(task, store.episode_dir(EPISODES_RUN, "crashed"), tmp_path)
    finished = task_record(task, store.episode_dir(EPISODES_RUN, "finished"), tmp_path)
    assert (crashed["verdict"], crashed["success"]) == ("success", False)
    assert (finished["verdict"], finished["success"]) == ("success", True)
    assert finished["episode"] == f"{EPISODES_RUN}/finished" and finished["level"] == "easy"
