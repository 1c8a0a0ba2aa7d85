"""GymEnv over a real Chromium (the session's `web_env`) on the bundled sandbox apps, the registered
gymnasium ids, and environment spec strings."""

from __future__ import annotations

import gymnasium
import httpx
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from uivenus.actions.coords import Frame
from uivenus.actions.space import Click, Finished, Wait
from uivenus.envs.gym import GYM_IDS, GymEnv, sandbox_checker
from uivenus.envs.registry import ENV_FACTORIES, EnvSpecError, SandboxEnv, make_env
from uivenus.envs.sandbox import get_task
from uivenus.records import TaskSpec

TASK = "settings/wifi_off_bluetooth_on"


@pytest.fixture
def gym_env(web_env):
    """A GymEnv over the shared browser (not closed here: the session fixture owns the browser)."""
    return GymEnv(web_env, checker=sandbox_checker)


@pytest.fixture
def spec(sandbox_server):
    return get_task(TASK).spec(sandbox_server.base_url, "web")


def test_reset_and_step_with_text_and_records(gym_env, spec):
    observation, info = gym_env.reset(seed=0, options={"task": spec})
    assert observation.shape == (720, 1280, 3) and observation.dtype == np.uint8
    assert gym_env.observation_space.contains(observation)
    assert info["task"] == TASK and info["url"] == spec.url

    observation, reward, terminated, truncated, info = gym_env.step("Click(point=(1, 1))")
    assert info["executed"] and info["error"] is None and info["action"] == {"type": "Click", "point": [1, 1]}
    assert set(info["timings"]) == {"execute_s", "observe_s"}
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert gym_env.observation_space.contains(observation)

    _, _, _, _, info = gym_env.step(Wait(seconds=0.01))
    assert info["executed"] and info["step"] == 2


def test_reference_solution_earns_the_reward(gym_env, web_env, spec):
    gym_env.reset(options={"task": spec.to_dict()})  # a TaskSpec's dict works too
    steps = [gym_env.step(action) for action in get_task(TASK).solve(web_env)]
    *before, (_, reward, terminated, truncated, info) = steps
    assert all(not s[2] and not s[3] and s[1] == 0.0 for s in before)
    assert info["action"] == {"type": "Finished"}
    assert (reward, terminated, truncated) == (1.0, True, False)
    with pytest.raises(gymnasium.error.ResetNeeded):
        gym_env.step(Wait(seconds=0))


def test_finishing_without_doing_the_task_earns_nothing(gym_env, spec):
    gym_env.reset(options={"task": spec})
    _, reward, terminated, truncated, _ = gym_env.step("<think>done?</think><action>Finished()</action>")
    assert (reward, terminated, truncated) == (0.0, True, False)
    gym_env.reset(options={"task": spec})
    _, reward, terminated, _, _ = gym_env.step(Finished())
    assert (reward, terminated) == (0.0, True)


def test_truncated_at_max_steps(gym_env):
    gym_env.reset(options={"task": TaskSpec(id="short", instruction="", platform="web", max_steps=2)})
    assert gym_env.step(Wait(seconds=0))[2:4] == (False, False)
    assert gym_env.step(Wait(seconds=0))[2:4] == (False, True)


def test_bad_actions_are_steps_that_did_nothing(gym_env):
    gym_env.reset()
    for action, error in [("Click(point=", "ParseError"), ("Tap(x=1)", "ParseError"),
                          (Click(point=(5000, 5)), "OffScreenError"), ("PressRecent()", "PlatformMismatchError"),
                          (42, "ActionError")]:
        observation, reward, terminated, truncated, info = gym_env.step(action)
        assert info["error"].startswith(error) and not info["executed"], (action, info)
        assert observation.shape == (720, 1280, 3) and (reward, terminated) == (0.0, False)


def test_frame_maps_model_coordinates_to_pixels(web_env, pages_server):
    gym_env = GymEnv(web_env, frame=Frame.relative)
    gym_env.reset(options={"task": TaskSpec(id="p", instruction="", platform="web",
                                            url=f"{pages_server.base_url}/home.html")})
    _, _, _, _, info = gym_env.step("Click(point=(500, 999))")
    assert info["executed"] and info["action"]["point"] == [640, 719]
    _, _, _, _, info = gym_env.step("Click(point=(1200, 5))")  # past the 0..999 frame: off screen
    assert info["error"].startswith("CoordinateError") and not info["executed"]


def test_registered_ids_build_through_the_registry():
    assert set(GYM_IDS) == {f"uivenus/{n}-v0" for n in ("Browser", "Phone", "Desktop", "Android", "Sandbox")}
    env = gymnasium.make("uivenus/Browser-v0")  # the browser starts at the first reset, not here
    try:
        assert env.observation_space.shape == (720, 1280, 3)
        assert isinstance(env.action_space, gymnasium.spaces.Text)
        assert env.unwrapped.env.platform.value == "web"
        assert env.spec.nondeterministic
    finally:
        env.close()
    phone = gymnasium.make("uivenus/Phone-v0")
    assert phone.observation_space.shape[2] == 3 and phone.unwrapped.env.platform.value == "mobile"
    phone.close()
    desktop = gymnasium.make("uivenus/Desktop-v0")  # starts its own Xvfb
    try:
        assert desktop.unwrapped.env.platform.value == "desktop"
        width, height = desktop.unwrapped.env.screen_size
        assert desktop.observation_space.shape == (height, width, 3)
    finally:
        desktop.close()


def test_sandbox_env_passes_gymnasiums_checker_and_closes_its_server():
    env = gymnasium.make("uivenus/Sandbox-v0", spec="sandbox:settings")
    sandbox = env.unwrapped.env
    assert isinstance(sandbox, SandboxEnv) and sandbox.app == "settings"
    try:
        check_env(env.unwrapped, skip_render_check=True)
        _, info = env.reset()
        assert info["url"].startswith(f"{sandbox.base_url}/settings/index.html")
        assert sandbox.state()["app_state"]["wifi"] is True
    finally:
        env.close()
        env.close()  # twice is fine
    with pytest.raises(httpx.TransportError):
        httpx.get(sandbox.base_url, timeout=2)


def test_spec_strings():
    assert set(ENV_FACTORIES) == {"browser", "phone", "desktop", "android", "sandbox", "sandbox-phone"}
    with pytest.raises(EnvSpecError, match="unknown environment 'nonsense'; kinds: browser, phone, desktop, android"):
        make_env("nonsense")
    with pytest.raises(EnvSpecError, match="sandbox needs a bundled app, as in sandbox:notes"):
        make_env("sandbox")
    with pytest.raises(EnvSpecError, match="'weather'"):
        make_env("sandbox-phone:weather")
    with pytest.raises(EnvSpecError, match="takes no argument"):
        make_env("browser:phone")
    env = make_env("phone")
    assert env.platform.value == "mobile"
    env.close()
