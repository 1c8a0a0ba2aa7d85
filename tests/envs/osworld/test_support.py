"""What support.py says about a task from its JSON alone: every missing step, getter, metric and app, once."""

from __future__ import annotations

from pathlib import Path

import pytest

from uivenus.envs.osworld.apps import AppMissing, app_argv, opener
from uivenus.envs.osworld.getters import GETTERS, UNSUPPORTED_GETTERS
from uivenus.envs.osworld.setup_steps import SETUP_STEPS, UNSUPPORTED_STEPS, task_command
from uivenus.envs.osworld.support import unsupported


def test_a_runnable_task_has_no_reasons() -> None:
    task = {"related_apps": ["libreoffice_calc"], "config": [{"type": "download", "parameters": {}},
                                                             {"type": "open", "parameters": {}}],
            "evaluator": {"func": ["compare_table", "exact_match"], "conj": "or",
                          "postconfig": [{"type": "execute", "parameters": {}}],
                          "result": [{"type": "vm_file"}, {"type": "vm_command_line"}],
                          "expected": [{"type": "cache_file"}, {"type": "rule"}]}}
    assert unsupported(task) == ()
    assert unsupported({"evaluator": {"func": "infeasible"}, "config": []}) == ()


def test_each_missing_piece_is_named_once_with_its_reason() -> None:
    task = {"related_apps": ["vs_code"],
            "config": [{"type": "googledrive"}, {"type": "teleport"}, {"type": "googledrive"}],
            "evaluator": {"func": ["compare_table", "no_such_metric"], "postconfig": [{"type": "login"}],
                          "result": [{"type": "cloud_file"}, {"type": "mystery"}], "expected": {"type": "rule"}}}
    assert unsupported(task) == (
        "app 'vs_code': VS Code is not in Debian",
        "setup step 'googledrive': needs a Google account",
        "setup step 'teleport': unknown",
        "setup step 'login': needs an online account",
        "metric 'no_such_metric': unknown",
        "getter 'cloud_file': " + UNSUPPORTED_GETTERS["cloud_file"],
        "getter 'mystery': unknown",
    )


def test_a_malformed_task_gives_reasons_not_a_crash() -> None:
    assert unsupported({"config": "nope", "evaluator": {"func": 3, "result": ["x"]}}) == (
        "setup step 'nope': unknown", "metric 3: unknown", "getter 'x': unknown")
    assert unsupported({}) == ("evaluator: no 'func' (a metric name or a list of them)",)


def test_registries_and_refusals_do_not_overlap() -> None:
    assert not set(SETUP_STEPS) & set(UNSUPPORTED_STEPS)
    assert not set(GETTERS) & set(UNSUPPORTED_GETTERS)
    assert {"download", "open", "launch", "execute", "command", "activate_window", "sleep", "chrome_open_tabs",
            "chrome_close_tabs", "update_browse_history"} <= set(SETUP_STEPS)


def test_osworld_apps_map_to_debian_programs() -> None:
    chrome = app_argv(["google-chrome", "--remote-debugging-port=1337", "https://a.test"], cdp_port=4242)
    assert chrome[0] == "chromium" and "--remote-debugging-port=4242" in chrome and chrome[-1] == "https://a.test"
    assert "--remote-debugging-port=1337" not in chrome
    assert app_argv(["libreoffice", "--calc", "/home/user/a.xlsx"], cdp_port=1) == ["soffice", "--calc",
                                                                                     "/home/user/a.xlsx"]
    assert app_argv(["python3", "-c", "pass"], cdp_port=1) == ["python3", "-c", "pass"]
    assert [opener(p) for p in ("a.XLSX", "b.docx", "c.pptx", "d.png", "e.mp3", "f.unknown")] == [
        "libreoffice_calc", "libreoffice_writer", "libreoffice_impress", "gimp", "vlc", "gedit"]


def test_a_missing_program_names_its_debian_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(AppMissing, match="apt-get install vlc"):
        app_argv(["vlc", "/home/user/a.mp3"], cdp_port=1)
    with pytest.raises(AppMissing, match="apt-get install libreoffice-calc"):
        app_argv(["libreoffice_calc"], cdp_port=1)


def test_task_commands_fill_osworld_placeholders() -> None:
    assert task_command("echo {CLIENT_PASSWORD} | sudo -S true") == "echo password | sudo -S true"
    assert task_command(["ls", "/home/{USERNAME}"], shell=True) == "ls /home/user"
