"""MiniWoBEnv against the `miniwob` wheel's own pages in real Chromium: the pages grade every episode.

Targets are found in `core.getDOMInfo()` (boxes in screen pixels), so a click that lands where the page says
the element is earns the page's +1 and a click on the wrong element its -1.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from uivenus.actions.space import Click, Direction, PressBack, Scroll, Type, Wait
from uivenus.envs.base import Env
from uivenus.envs.miniwob import (
    FLIGHT_AREA, TASK_AREA, MiniWoBEnv, MiniWoBError, list_flight_tasks, list_tasks, miniwob_task,
)
from uivenus.records import TaskSpec

Node = Mapping[str, Any]


@pytest.fixture(scope="module")
def env() -> Iterator[MiniWoBEnv]:
    with MiniWoBEnv() as env:
        yield env


def nodes(dom: Node) -> Iterator[Node]:
    yield dom
    for child in dom.get("children", ()):
        yield from nodes(child)


def center_of(env: MiniWoBEnv, match: Callable[[Node], bool]) -> tuple[int, int]:
    node = next(n for n in nodes(env.dom()) if match(n))
    return round(node["left"] + node["width"] / 2), round(node["top"] + node["height"] / 2)


def quoted(text: str) -> str:
    found = re.search(r'"([^"]+)"', text)
    assert found, f"no quoted target in {text!r}"
    return found.group(1)


def test_the_wheel_ships_130_tasks_and_the_flight_sites() -> None:
    tasks = list_tasks()
    assert len(tasks) == 130 and {"click-test", "click-button", "enter-text", "book-flight"} <= set(tasks)
    assert {"flight.AA", "flight.Alaska"} <= set(list_flight_tasks())


def test_reset_seeds_the_episode_and_reads_the_utterance(env: MiniWoBEnv) -> None:
    assert isinstance(env, Env)
    observation = env.reset(miniwob_task("enter-text", seed=7))
    first = env.task.instruction
    assert first.startswith("Enter \"") and first.endswith("into the text field and press Submit.")
    assert observation.info["instruction"] == first and env.task.id == "miniwob/enter-text"
    assert observation.size == env.screen_size == observation.screenshot.size == TASK_AREA
    assert env.state() == {"done": False, "raw_reward": 0, "reward": 0, "reason": None, "utterance": first}
    env.reset(miniwob_task("enter-text", seed=7))
    assert env.task.instruction == first
    others = set()
    for seed in (8, 9):
        env.reset(miniwob_task("enter-text", seed=seed))
        others.add(env.task.instruction)
    assert others - {first}, "other seeds should give other names to type"


def test_click_test_clicking_the_button_earns_the_pages_reward(env: MiniWoBEnv) -> None:
    env.reset(miniwob_task("click-test", seed=0))
    result = env.step(Click(point=center_of(env, lambda n: n["tag"] == "BUTTON")))
    assert result.executed and result.observation.size == TASK_AREA
    state = env.state()
    assert state["done"] and env.done and state["raw_reward"] == 1 and 0 < state["reward"] <= 1


def test_click_button_right_button_wins_and_wrong_button_loses(env: MiniWoBEnv) -> None:
    env.reset(miniwob_task("click-button", seed=3))
    target = quoted(env.task.instruction)
    env.step(Click(point=center_of(env, lambda n: n["tag"] == "BUTTON" and n.get("text") == target)))
    assert env.state()["raw_reward"] == 1

    for seed in range(20):  # a seed whose page has a button with another label
        env.reset(miniwob_task("click-button", seed=seed))
        target = quoted(env.task.instruction)
        labels = {n.get("text") for n in nodes(env.dom()) if n["tag"] == "BUTTON"}
        if labels - {target}:
            break
    env.step(Click(point=center_of(env, lambda n: n["tag"] == "BUTTON" and n.get("text") != target)))
    state = env.state()
    assert state["done"] and state["raw_reward"] == -1 and state["reward"] == -1


def test_enter_text_typing_the_name_wins_and_a_wrong_name_loses(env: MiniWoBEnv) -> None:
    for text, reward in ((None, 1), ("not the name", -1)):
        env.reset(miniwob_task("enter-text", seed=11))
        name = quoted(env.task.instruction)
        env.step(Click(point=center_of(env, lambda n: n["tag"] == "INPUT_text")))
        env.step(Type(content=text or name))
        env.step(Click(point=center_of(env, lambda n: n.get("id") == "subbtn")))
        assert env.state()["raw_reward"] == reward


def test_an_ended_episode_keeps_its_reward_and_the_page_is_not_left(env: MiniWoBEnv) -> None:
    env.reset(miniwob_task("click-test", seed=0))
    left = env.step(PressBack())
    assert not left.executed and "leave the MiniWoB page" in left.error
    env.step(Click(point=center_of(env, lambda n: n["tag"] == "BUTTON")))
    ended = dict(env.state())
    again = env.step(Click(point=(80, 105)))  # on the end-of-episode cover, which would start a new episode
    assert again.executed and env.state() == ended


def test_a_sideways_scroll_at_the_edge_does_not_go_back_in_history(env: MiniWoBEnv) -> None:
    observation = env.reset(miniwob_task("click-test", seed=0))
    env.step(Scroll(direction=Direction.LEFT, point=(60, 90), amount=3))  # Chromium's overscroll navigation
    after = env.step(Click(point=(150, 205)))
    assert after.observation.url == observation.url and not env.done


def test_a_page_that_left_its_task_ends_the_episode_without_reward(env: MiniWoBEnv) -> None:
    env.reset(miniwob_task("click-test", seed=0))
    env._call(lambda: env._live().page.reload(), 30)  # the document is replaced, as by a form that reloads it
    state = env.state()
    assert state["done"] and state["raw_reward"] == 0 and "left its task" in state["reason"]
    assert state["utterance"] == "Click the button."


def test_the_pages_own_time_limit_ends_the_episode(env: MiniWoBEnv) -> None:
    env.reset(miniwob_task("click-test", seed=0, episode_max_ms=300))
    env.step(Wait(seconds=0.6))
    state = env.state()
    assert state["done"] and state["raw_reward"] == -1 and state["reason"] == "timed out"


def test_a_flight_task_loads_over_http(env: MiniWoBEnv) -> None:
    observation = env.reset(miniwob_task("flight.Alaska", seed=1))
    assert observation.url.startswith("http://127.0.0.1:") and observation.url.endswith("/flight/Alaska/wrapper.html")
    assert observation.size == env.screen_size == observation.screenshot.size == FLIGHT_AREA
    assert "Departure City" in env.task.instruction and not env.state()["done"]
    env.reset(miniwob_task("click-test", seed=0))  # back to a plain page: the viewport follows the task
    assert env.screen_size == TASK_AREA


def test_unknown_tasks_and_foreign_specs_are_refused(env: MiniWoBEnv) -> None:
    with pytest.raises(MiniWoBError, match="list_tasks"):
        env.reset(miniwob_task("no-such-task"))
    with pytest.raises(MiniWoBError, match="miniwob_task"):
        env.reset(TaskSpec(id="x", instruction="", platform="web", url="about:blank"))
