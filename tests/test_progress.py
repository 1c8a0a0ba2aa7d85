"""The progress helper: plain periodic lines off a terminal, a live bar on one, nothing when it is off."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from uivenus.progress import Tracker, format_duration, track


def _console(terminal: bool) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=terminal, width=120), out


def test_off_a_terminal_lines_come_each_tenth_of_the_total_and_at_the_close():
    console, out = _console(False)
    assert list(track(range(20), label="grounding", console=console, every_s=3600)) == list(range(20))
    lines = out.getvalue().splitlines()
    # every second item is a tenth of 20; the 20th is left to the closing line
    assert [line.split(",")[0] for line in lines] == [f"grounding: {n}/20 items" for n in range(2, 20, 2)] + \
        ["grounding: 20/20 items"]
    assert all(re.fullmatch(r"grounding: \d+/20 items, [0-9.]+/s, ~\d+ (s|min) left", line) for line in lines[:-1])
    assert re.fullmatch(r"grounding: 20/20 items, [0-9.]+/s, done in \d+ s", lines[-1])


def test_a_time_interval_prints_a_line_for_work_of_unknown_size_with_its_note():
    console, out = _console(False)
    with Tracker("verifier build", unit="episodes", console=console, every_s=0) as tracker:
        tracker.advance(1, note="sandbox a")
        tracker.advance(2, note="miniwob b")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("verifier build: 1 episodes, ") and lines[0].endswith("(sandbox a)")
    assert lines[1].startswith("verifier build: 3 episodes, ") and "left" not in lines[1]
    assert lines[2].startswith("verifier build: 3 episodes, ") and " done in " in lines[2]


def test_a_failure_closes_with_where_it_stopped():
    console, out = _console(False)
    with pytest.raises(KeyError):
        for n in track(range(10), label="work", console=console, every_s=3600):
            if n == 3:
                raise KeyError(n)
    assert re.search(r"^work: 3/10 items, [0-9.]+/s, stopped after \d+ s$", out.getvalue(), re.M)


def test_on_a_terminal_a_bar_draws_and_one_summary_line_stays():
    console, out = _console(True)
    list(track(range(5), label="grounding", console=console, every_s=0))
    text = out.getvalue()
    assert "\x1b[" in text  # a live display: colours and cursor control
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    assert re.search(r"grounding: 5/5 items, [0-9.]+/s, done in \d+ s", plain)
    assert " left" not in plain  # the bar, not the plain periodic lines


def test_show_false_prints_nothing():
    console, out = _console(False)
    assert sum(track(range(7), label="quiet", console=console, every_s=0, show=False)) == 21
    assert out.getvalue() == ""


@pytest.mark.parametrize("seconds, text", [(4.2, "4 s"), (89, "89 s"), (150, "2 min"), (5400, "1 h 30 min")])
def test_durations_are_coarse(seconds, text):
    assert format_duration(seconds) == text
