"""OSWorld tasks on the real desktop: config steps in an isolated root, getters, the evaluator and the checker.

One Xvfb desktop for the module; apps are the cheap ones (l3afpad, Chromium); files come from a local HTTP server.
"""

from __future__ import annotations

import http.server
import re
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from uivenus.actions.space import CallUser, Finished, Hotkey, LaunchApp, Platform, Type
from uivenus.agent.loop import run_episode
from uivenus.agent.policies.base import policy_from_spec
from uivenus.agent.safety import Guard
from uivenus.envs.base import SetupError
from uivenus.envs.checks import checker_for
from uivenus.envs.desktop import DesktopConfig, DesktopEnv
from uivenus.envs.osworld.a11y_reader import A11yError
from uivenus.envs.osworld.downloads import DownloadFailed, cached_path
from uivenus.envs.osworld.evaluator import evaluate
from uivenus.envs.osworld.getters import get
from uivenus.envs.osworld.metrics.accessibility import check_accessibility_tree
from uivenus.envs.osworld.setup_steps import run_steps
from uivenus.records import Outcome, TaskSpec


#: Server base URL -> the paths it was asked for.
SERVED_HITS: dict[str, list[str]] = {}


class _Files(http.server.SimpleHTTPRequestHandler):
    hits: list[str]

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.hits.append(self.path)
        super().do_GET()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A local HTTP server of task files; its handler records every path asked for."""
    folder = tmp_path_factory.mktemp("served")
    (folder / "report.txt").write_text("quarterly report\n")
    (folder / "page.html").write_text("<title>Page B</title><p>b</p>")
    (folder / "first.html").write_text("<title>Page A</title><p>a</p>")
    handler = type("Handler", (_Files,), {"hits": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: handler(*a, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    SERVED_HITS[base] = handler.hits
    yield base
    server.shutdown()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DesktopEnv]:
    config = DesktopConfig(width=1024, height=768, downloads=tmp_path_factory.mktemp("downloads"),
                           sandbox_dir=tmp_path_factory.mktemp("roots"))
    with DesktopEnv(config) as desktop:
        yield desktop


def osworld_task(config: list[Mapping[str, Any]], evaluator: Mapping[str, Any], *, apps: tuple[str, ...] = ("gedit",),
                 uivenus: Mapping[str, Any] | None = None, solution: str = "reference") -> TaskSpec:
    original = {"id": "t", "instruction": "do it", "related_apps": list(apps), "config": config,
                "evaluator": evaluator, **({"uivenus": uivenus} if uivenus else {})}
    return TaskSpec(id="t", instruction="do it", platform=Platform.DESKTOP, setup={"osworld": original},
                    check={"kind": "osworld", "evaluator": evaluator, "solution": solution},
                    metadata={"osworld": original})


NOTES = [
    {"type": "execute", "parameters": {"command": "printf 'hello\\n' > /home/user/notes.txt"}},
    {"type": "open", "parameters": {"path": "/home/user/notes.txt"}},
    {"type": "activate_window", "parameters": {"window_name": "notes.txt", "strict": True}},
]
SAYS_HELLO_WORLD = {"func": "exact_match",
                    "result": {"type": "vm_command_line", "command": ["cat", "/home/user/notes.txt"]},
                    "expected": {"type": "rule", "rules": {"expected": "hello world\n"}}}


def test_config_runs_in_the_root_and_the_evaluator_reads_what_the_agent_saved(env: DesktopEnv) -> None:
    task = osworld_task(NOTES, SAYS_HELLO_WORLD)
    env.reset(task)
    state = env.state()
    assert state["focused"] == "notes.txt" and state["osworld"]["isolated"] is True
    home = Path(state["osworld"]["home"])
    assert (home / "notes.txt").read_text() == "hello\n"
    ctx = env.osworld.context
    assert get(ctx, {"type": "vm_screen_size"}) == {"width": 1024, "height": 768}
    editor = state["windows"][0]["geometry"]
    assert get(ctx, {"type": "vm_window_size", "app_class_name": "l3afpad"}) == {"width": editor[2],
                                                                                 "height": editor[3]}
    assert get(ctx, {"type": "vm_window_size", "app_class_name": "gimp"}) is None
    checker = checker_for("osworld")
    assert checker.verdict(env, task)["passed"] is False
    for action in (Hotkey(keys=("ctrl", "end")), Hotkey(keys=("left",)), Type(content=" world"),
                   Hotkey(keys=("ctrl", "s"))):
        env.step(action)
    env.step(Finished())
    verdict = checker.verdict(env, task)
    assert verdict["passed"] is True and verdict["score"] == 1.0, verdict
    env.step(CallUser(content="I cannot do this"))
    assert checker.verdict(env, task)["reason"] == "the agent refused a feasible task"
    env.reset(osworld_task([], SAYS_HELLO_WORLD))
    assert not home.exists()  # the last task's root is gone with its apps
    assert env.state()["windows"] == []


def test_the_checker_plays_the_stored_reference_and_wrong_solutions(env: DesktopEnv) -> None:
    stored = {"reference": ["Hotkey(keys=['ctrl', 'end'])", "Hotkey(keys=['left'])", "Type(content=' world')",
                            "Hotkey(keys=['ctrl', 's'])"],
              "wrong": ["Type(content='nonsense')", "Hotkey(keys=['ctrl', 's'])"]}
    checker = checker_for("osworld")
    for which, passes in (("reference", True), ("wrong", False)):
        task = osworld_task(NOTES, SAYS_HELLO_WORLD, uivenus=stored, solution=which)
        env.reset(task)
        actions = list(checker.solver(env, task))
        assert isinstance(actions[-1], Finished)
        for action in actions:
            assert env.step(action).executed
        assert checker.verdict(env, task)["passed"] is passes


def test_an_infeasible_task_passes_only_on_a_refusal(env: DesktopEnv) -> None:
    task = osworld_task([], {"func": "infeasible"}, uivenus={"reference": ["CallUser(content='not possible')"]})
    env.reset(task)
    assert [a.type.value for a in checker_for("osworld").solver(env, task)] == ["CallUser"]  # no Finished after it
    refusing = run_episode(env, policy_from_spec("oracle"), task, guard=Guard(ocr=False))
    assert refusing.outcome is Outcome.CALLED_USER and refusing.verdicts["osworld"]["passed"] is True
    finishing = run_episode(env, policy_from_spec("noop"), task, guard=Guard(ocr=False))
    assert finishing.outcome is Outcome.FINISHED and finishing.verdicts["osworld"]["passed"] is False
    feasible = osworld_task(NOTES[:1], SAYS_HELLO_WORLD, uivenus={"reference": ["CallUser(content='no')"]})
    refused = run_episode(env, policy_from_spec("oracle"), feasible, guard=Guard(ocr=False))
    assert refused.verdicts["osworld"]["reason"] == "the agent refused a feasible task"


def _rule(value: Any) -> dict[str, Any]:
    return {"type": "rule", "rules": {"expected": value}}


def _echo(text: str) -> dict[str, Any]:
    return {"type": "vm_command_line", "command": f"printf {text}", "shell": True}


@pytest.mark.parametrize(("evaluator", "score", "error"), [
    ({"func": ["exact_match", "exact_match"], "result": [_echo("a"), _echo("b")], "expected": [_rule("a"), _rule("b")]},
     1.0, None),
    ({"func": ["exact_match", "exact_match"], "result": [_echo("a"), _echo("b")], "expected": [_rule("a"), _rule("x")]},
     0.0, None),
    ({"func": ["exact_match", "exact_match"], "conj": "or", "result": [_echo("a"), _echo("b")],
      "expected": [_rule("x"), _rule("b")]}, 1.0, None),
    ({"func": ["exact_match", "exact_match"], "conj": "or", "result": [_echo("a"), _echo("b")],
      "expected": [_rule("x"), _rule("y")]}, 0.0, None),
    ({"func": "literal_match", "result": _echo("ABC"), "expected": {"type": "rule", "rules": "abc"},
      "options": {"ignore_case": True}}, 1.0, None),
    ({"func": "exact_match", "result": {"type": "no_such_getter"}, "expected": _rule("a")}, 0.0, "UnsupportedGetter"),
    ({"func": "no_such_metric", "result": _echo("a")}, 0.0, "UnknownMetric"),
    ({"func": ["exact_match", "exact_match"], "result": [_echo("a")], "expected": _rule("a")}, 0.0, "EvaluatorError"),
    ({"func": "exact_match", "conj": "xor", "result": _echo("a"), "expected": _rule("a")}, 0.0, "EvaluatorError"),
    ({"func": "exact_match", "postconfig": [{"type": "execute", "parameters": {"command": "printf z > /home/user/z"}}],
      "result": {"type": "vm_command_line", "command": ["cat", "/home/user/z"]}, "expected": _rule("z")}, 1.0, None),
    ({"func": "exact_match", "postconfig": [{"type": "googledrive", "parameters": {}}], "result": _echo("a"),
      "expected": _rule("a")}, 0.0, "UnsupportedStep"),
])
def test_evaluator_combines_metrics_and_never_succeeds_on_a_crash(env: DesktopEnv, evaluator: Mapping[str, Any],
                                                                   score: float, error: str | None) -> None:
    env.reset(osworld_task([], evaluator))
    assert env.osworld is not None
    result = evaluate(evaluator, env.osworld.context, last_action=Finished())
    assert result.score == score and result.success is (score == 1.0)
    assert (result.error or "").startswith(error or "")
    assert (result.error is None) is (error is None)


def test_file_getters_copy_out_the_roots_files_and_give_none_for_missing_ones(env: DesktopEnv, files: str) -> None:
    env.reset(osworld_task(NOTES[:1], SAYS_HELLO_WORLD))
    ctx = env.osworld.context
    got = get(ctx, {"type": "vm_file", "path": "/home/user/notes.txt", "dest": "notes.txt"})
    assert got.read_text() == "hello\n" and got.parent == ctx.task_cache
    assert get(ctx, {"type": "vm_file", "path": "/home/user/absent.txt", "dest": "absent.txt"}) is None
    multi = get(ctx, {"type": "vm_file", "multi": True, "path": ["/home/user/notes.txt", "/home/user/absent.txt"],
                      "dest": ["a.txt", "b.txt"], "gives": [0, 1]})
    assert multi[0].read_text() == "hello\n" and multi[1] is None
    assert get(ctx, {"type": "cache_file", "path": f"{files}/report.txt", "dest": "r.txt"}).read_text() == \
        "quarterly report\n"
    run_steps(ctx, [{"type": "execute", "parameters": {"command": "mkdir -p ~/d/sub && touch ~/d/b.txt ~/d/sub/a.txt",
                                                       "shell": True}}])
    assert get(ctx, {"type": "list_directory", "path": "/home/user/d"}) == {
        "type": "directory", "name": "d", "children": [
            {"type": "file", "name": "b.txt"},
            {"type": "directory", "name": "sub", "children": [{"type": "file", "name": "a.txt"}]}]}
    assert get(ctx, {"type": "list_directory", "path": "/home/user/none"}) is None
    relative = get(ctx, {"type": "rule_relativeTime", "rules": {"relativeTime": {"from": "2 days ago"},
                                                                "expected": "%Y"}})
    assert relative["expected"].isdigit()


def test_download_uses_the_cache_and_offline_names_the_missing_urls(env: DesktopEnv, files: str) -> None:
    url = f"{files}/report.txt"
    step = {"type": "download", "parameters": {"files": [{"url": url, "path": "/home/user/Desktop/report.txt"}]}}
    hits = SERVED_HITS[files]
    for _ in range(2):
        env.reset(osworld_task([step], SAYS_HELLO_WORLD))
        assert env.osworld.root.host_path("/home/user/Desktop/report.txt").read_text() == "quarterly report\n"
    assert hits.count("/report.txt") == 1  # the second episode took it from the cache
    assert cached_path(env.config.downloads, url).is_file()
    missing = f"{files}/not-cached.txt"
    absent = {"type": "download",
              "parameters": {"files": [{"url": url, "path": "a.txt"}, {"url": missing, "path": "b"}]}}
    with pytest.raises(DownloadFailed, match=f"config\\[0\\] \\(download\\): offline .*: {missing}$"):
        run_steps(replace(env.osworld.context, offline=True), [absent])
    assert "/not-cached.txt" not in hits
    with pytest.raises(SetupError, match="cannot download .*404"):
        env.reset(osworld_task([{"type": "download", "parameters": {"files": [{"url": missing, "path": "b"}]}}],
                               SAYS_HELLO_WORLD))


def test_unsupported_and_malformed_steps_fail_the_reset_with_their_name(env: DesktopEnv) -> None:
    with pytest.raises(SetupError, match="config\\[1\\]: setup step 'googledrive' is not supported: needs a Google"):
        env.reset(osworld_task([NOTES[0], {"type": "googledrive", "parameters": {}}], SAYS_HELLO_WORLD))
    with pytest.raises(SetupError, match="config\\[0\\] \\(sleep\\): bad parameters"):
        env.reset(osworld_task([{"type": "sleep", "parameters": {"minutes": 1}}], SAYS_HELLO_WORLD))
    with pytest.raises(SetupError, match="cannot open /home/user/none.txt: no such file"):
        env.reset(osworld_task([{"type": "open", "parameters": {"path": "/home/user/none.txt"}}], SAYS_HELLO_WORLD))


def test_launch_app_in_an_osworld_task_starts_only_its_apps_inside_the_root(env: DesktopEnv) -> None:
    env.reset(osworld_task([], SAYS_HELLO_WORLD, apps=("gedit",)))
    refused = env.step(LaunchApp(app="xterm"))
    assert not refused.executed and "refused" in (refused.error or "")
    launched = env.step(LaunchApp(app="gedit"))
    assert launched.executed and launched.info["window"]
    assert "l3afpad" in env.osworld.root.run("ps -eo comm").stdout  # the editor runs in the task's pid namespace


def test_chrome_steps_and_getters_speak_to_chromium_in_the_root(env: DesktopEnv, files: str) -> None:
    config = [
        {"type": "launch", "parameters": {"command": ["google-chrome", "--remote-debugging-port=1337"]}},
        {"type": "launch", "parameters": {"command": "socat tcp-listen:9222,fork tcp:localhost:1337", "shell": True}},
        {"type": "chrome_open_tabs",
         "parameters": {"urls_to_open": [f"{files}/first.html", f"{files}/page.html?q=cats"]}},
        {"type": "chrome_close_tabs", "parameters": {"urls_to_close": [f"{files}/first.html"]}},
    ]
    evaluator = {"func": "is_expected_tabs", "result": {"type": "open_tabs_info"},
                 "expected": {"type": "rule", "rules": {"type": "url", "urls": [f"{files}/page.html?q=cats"]}}}
    task = osworld_task(config, evaluator, apps=("chrome",))
    env.reset(task)
    ctx = env.osworld.context
    assert get(ctx, {"type": "open_tabs_info"}) == [{"title": "Page B", "url": f"{files}/page.html?q=cats"}]
    assert get(ctx, {"type": "active_tab_info"})["title"] == "Page B"
    assert get(ctx, {"type": "active_url_from_accessTree"}) == f"{files}/page.html?q=cats"
    parse = {"type": "active_tab_url_parse", "parse_keys": ["q"], "replace": {"q": "query"}}
    assert get(ctx, parse) == {"query": "cats"}
    assert checker_for("osworld").verdict(env, task)["passed"] is True
    profile = env.osworld.root.host_path("/home/user/.config/google-chrome")
    assert profile.is_dir()  # Chromium keeps its profile in the root, where OSWorld's getters look
    assert get(ctx, {"type": "chrome_font_size"})["default_font_size"] == 16
    assert get(ctx, {"type": "chrome_language"}) == "en-US"
    visits = [{"url": "https://example.org/seen", "title": "Seen", "visit_time_from_now_in_seconds": 3600}]
    run_steps(ctx, [{"type": "execute", "parameters": {"command": "pkill -x chromium; sleep 1", "shell": True}},
                    {"type": "update_browse_history", "parameters": {"history": visits}}])
    rows = get(ctx, {"type": "history", "dest": "History"})
    assert ("https://example.org/seen", "Seen") in [(url, title) for url, title, _ in rows]


def _icon_drawn(shot: Image.Image) -> bool:
    """Something light in the top-left corner of the desktop, where the first icon goes (the wallpaper is dark)."""
    return max(high for _, high in shot.crop((60, 32, 180, 120)).getextrema()) > 200


def test_the_desktop_has_a_top_bar_a_dock_a_wallpaper_and_the_tasks_desktop_icons(env: DesktopEnv) -> None:
    config = [{"type": "execute", "parameters": {"command": "echo hi > /home/user/Desktop/notes.txt"}}]
    env.reset(osworld_task(config, SAYS_HELLO_WORLD))
    deadline = time.monotonic() + 10
    while True:  # the task's panels and icons start with it and draw on their own time
        shot = env.observe().screenshot
        width, height = shot.size
        if (shot.getpixel((4, height // 2)) == (29, 29, 29) and _icon_drawn(shot)) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert _icon_drawn(shot)  # notes.txt on the task's desktop
    assert shot.getpixel((width - 10, 5)) == (29, 29, 29)  # the top bar (its clock is in the middle)
    assert shot.getpixel((4, height // 2)) == (29, 29, 29)  # the dock
    top, bottom = shot.getpixel((width // 2, 40)), shot.getpixel((width // 2, height - 2))
    assert top[0] < 80 and bottom[0] > 200  # the aubergine-to-orange wallpaper
    assert env.state()["windows"] == []  # panels are the desktop's, not apps' windows
    processes = env.osworld.root.run("ps -eo comm").stdout.split()
    assert processes.count("tint2") == 2 and "pcmanfm" in processes  # a launcher click starts its app in the root
    env.reset(osworld_task([], SAYS_HELLO_WORLD))
    time.sleep(0.5)
    assert not _icon_drawn(env.observe().screenshot)  # the next task's desktop is empty


def test_the_accessibility_tree_is_read_over_the_roots_own_bus(env: DesktopEnv) -> None:
    rules = [{"xpath": "//frame[@name='notes.txt']//text[@st:editable='true']", "text": "hello\n"}]
    evaluator = {"func": "check_accessibility_tree", "result": {"type": "accessibility_tree"},
                 "expected": {"type": "rule", "rules": rules}}
    task = osworld_task(NOTES, evaluator)
    env.reset(task)
    tree = get(env.osworld.context, {"type": "accessibility_tree"})
    assert tree.startswith("<desktop-frame") and "l3afpad" in tree
    assert checker_for("osworld").verdict(env, task)["passed"] is True
    env.step(Type(content="changed "))
    assert checker_for("osworld").verdict(env, task)["passed"] is False


def test_unsafe_host_runs_the_config_on_this_machine_only_when_asked(env: DesktopEnv, tmp_path: Path) -> None:
    marker = tmp_path / "written-by-setup"
    task = osworld_task([{"type": "execute", "parameters": {"command": f"touch {marker}; cat /proc/1/comm > ~/init"}}],
                        SAYS_HELLO_WORLD)
    env.reset(task)
    assert not marker.exists()  # isolated: the host's tmp_path is not the sandbox's
    with DesktopEnv(DesktopConfig(display=env.display, unsafe_host=True)) as host:
        host.reset(task)
        assert marker.exists() and host.state()["osworld"]["isolated"] is False
        init = host.osworld.root.host_path("/home/user/init").read_text().strip()
        assert init == Path("/proc/1/comm").read_text().strip()


def _shows_a_table(env: DesktopEnv) -> bool:
    try:
        return any(e.role == "table" for e in env.elements(fresh=True))
    except A11yError:  # a starting LibreOffice: its launcher leaves the bus mid-read, its windows do not answer yet
        return False


def test_a_calc_sheet_reads_in_seconds_with_the_cells_on_screen_and_no_others(env: DesktopEnv) -> None:
    rules = [{"xpath": "//document-spreadsheet//table-cell[@name='A2']", "text": "42"}]
    evaluator = {"func": "check_accessibility_tree", "result": {"type": "accessibility_tree"},
                 "expected": {"type": "rule", "rules": rules}}
    task = osworld_task([{"type": "launch", "parameters": {"command": ["localc", "--norestore"]}}], evaluator,
                        apps=("libreoffice_calc",))
    env.reset(task)
    deadline = time.monotonic() + 60
    while not _shows_a_table(env) and time.monotonic() < deadline:
        time.sleep(0.5)  # LibreOffice is still starting
    env.step(Type(content="7\n42\n"))
    time.sleep(1)
    started = time.monotonic()
    tree = get(env.osworld.context, {"type": "accessibility_tree"})
    assert time.monotonic() - started < 20  # the whole 2^20-row sheet would take hours
    cells = re.findall(r'<table-cell name="([A-Z]+[0-9]+)"', tree)
    assert cells[0] == "A1" and "B2" in cells and 50 < len(cells) < 2000  # the shown block, not the sheet
    assert "A1000" not in cells
    assert checker_for("osworld").verdict(env, task)["passed"] is True
    env.step(Type(content="5\n"))
    time.sleep(1)
    tree = get(env.osworld.context, {"type": "accessibility_tree"})
    a3 = "//document-spreadsheet//table-cell[@name='A3']"
    assert check_accessibility_tree(tree, [{"xpath": a3, "text": "5"}]) == 1.0
    assert check_accessibility_tree(tree, [{"xpath": a3, "text": "42"}]) == 0.0
