"""Any uivenus environment as a `gymnasium.Env`, so RL libraries can drive phones, browsers and desktops.

Observations are the screenshot as an (H, W, 3) uint8 array. An action is the model's text (a bare call
such as `Click(point=(500, 300))`, or a whole `<think>…</think><action>…</action>` response) or a
unified action record; either is in the model's frame, which the `frame` factory maps to screen pixels.
Text that does not parse, or an action the env refuses, is a step that did nothing: the episode goes on
and `info["error"]` says why, because a policy's bad output is data to learn from, not a crash.

Importing this module registers one gymnasium id per environment kind (`GYM_IDS`); each builds its env
through `uivenus.envs.registry.make_env`, e.g. `gymnasium.make("uivenus/Sandbox-v0", spec="sandbox:notes")`
(or, without importing it first, `gymnasium.make("uivenus.envs.gym:uivenus/Sandbox-v0", ...)`).
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from uivenus.actions.calls import parse_action
from uivenus.actions.coords import CoordinateError, Frame
from uivenus.actions.grammar import parse_response
from uivenus.actions.space import Action, ActionSequence, is_action
from uivenus.actions.syntax import ParseError
from uivenus.actions.values import ActionError
from uivenus.envs.base import Env, EnvError, Observation
from uivenus.records import TaskSpec

FrameFactory = Callable[[int, int], Frame]  # (width, height) of the screen -> the model's frame
Checker = Callable[[TaskSpec, Env], bool]  # did the episode's task succeed? (called once, at termination)

#: Longest action text the action space holds; longer text still parses, it is just outside the space.
MAX_ACTION_CHARS = 2048
#: Characters of the action space (what `action_space.sample()` draws from); non-ASCII text still steps.
ACTION_CHARSET = string.printable


def free_task(env: Env) -> TaskSpec:
    """The task of a reset without one: no instruction, whatever the env opens by default."""
    return TaskSpec(id="gym/free", instruction="", platform=env.platform)


def ends_episode(action: Action) -> bool:
    """Terminal actions end an episode, also as the last action of a Sequence."""
    if isinstance(action, ActionSequence):
        return action.actions[-1].is_terminal
    return action.is_terminal


def _parse(text: str) -> Action:
    return parse_response(text).action if "<action>" in text else parse_action(text)


def _pixels(observation: Observation) -> np.ndarray:
    return np.array(observation.screenshot.convert("RGB"), dtype=np.uint8)


class GymEnv(gymnasium.Env):
    """A uivenus `Env` behind the gymnasium API; reward 1.0 when a terminal action ends a task `checker` passes."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, env: Env, *, frame: FrameFactory | None = None, checker: Checker | None = None,
                 task: TaskSpec | None = None, max_action_chars: int = MAX_ACTION_CHARS,
                 render_mode: str | None = None) -> None:
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.env = env
        self.frame = frame
        self.checker = checker
        self.default_task = task or free_task(env)
        self.render_mode = render_mode
        width, height = env.screen_size  # type: ignore[attr-defined]
        self.observation_space = spaces.Box(0, 255, shape=(height, width, 3), dtype=np.uint8)
        self.action_space = spaces.Text(max_length=max_action_chars, charset=ACTION_CHARSET)
        self._task: TaskSpec | None = None
        self._steps = 0
        self._done = False
        self._last: np.ndarray | None = None
        self._closed = False

    @property
    def task(self) -> TaskSpec | None:
        return self._task

    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start `options["task"]` (a TaskSpec or its dict), or the default task."""
        super().reset(seed=seed)
        task = (options or {}).get("task") or self.default_task
        if isinstance(task, Mapping):
            task = TaskSpec.from_dict(task)
        observation = self.env.reset(task)
        self._task, self._steps, self._done = task, 0, False
        self._last = _pixels(observation)
        return self._last.copy(), {"task": task.id, **_observation_info(observation)}

    def step(self, action: str | Action) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._task is None or self._done:
            raise gymnasium.error.ResetNeeded("call reset() before step() (and after an episode ends)")
        self._steps += 1
        info: dict[str, Any] = {"step": self._steps, "action": None, "executed": False, "error": None,
                                "timings": {}, "env_info": {}}
        terminated = False
        try:
            record = self._to_screen(action)
            info["action"] = record.to_dict()
            result = self.env.step(record)
        except (ParseError, ActionError, CoordinateError, EnvError) as exc:
            observation, info["error"] = self.env.observe(), f"{type(exc).__name__}: {exc}"
        else:
            observation = result.observation
            info.update(executed=result.executed, error=result.error, timings=dict(result.timings),
                        env_info=dict(result.info))
            terminated = result.executed and ends_episode(record)
        reward = 1.0 if terminated and self.checker is not None and self.checker(self._task, self.env) else 0.0
        truncated = not terminated and self._steps >= self._task.max_steps
        self._done = terminated or truncated
        self._last = _pixels(observation)
        info.update(_observation_info(observation))
        return self._last.copy(), reward, terminated, truncated, info

    def _to_screen(self, action: str | Action) -> Action:
        """Parse text, then map the model's frame to screen pixels."""
        record = _parse(action) if isinstance(action, str) else action
        if not is_action(record):
            raise ActionError(f"an action is model text or an action record, got {type(action).__name__}")
        if self.frame is None:
            return record
        width, height = self.env.screen_size  # type: ignore[attr-defined]
        return self.frame(width, height).action_to_screen(record)

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array" or self._last is None:
            return None
        return self._last.copy()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.env.close()


def _observation_info(observation: Observation) -> dict[str, Any]:
    return {"url": observation.url, "app": observation.app}


def make_gym_env(spec: str, **options: Any) -> GymEnv:
    """The gymnasium entry point: `make_env(spec)` wrapped in a GymEnv (`options` go to GymEnv)."""
    from uivenus.envs.registry import make_env

    env = make_env(spec)
    try:
        return GymEnv(env, **options)
    except BaseException:
        env.close()
        raise


def sandbox_checker(task: TaskSpec, env: Env) -> bool:
    """A sandbox task passes when its exact checker accepts the app state the page exposes."""
    from uivenus.envs.sandbox import check_spec

    if not task.check or task.check.get("kind") != "sandbox":
        return False
    return check_spec(task, env.app_state()).passed  # type: ignore[attr-defined]


#: The registered gymnasium ids and the `make_gym_env` arguments each gets by default.
GYM_IDS: Mapping[str, Mapping[str, Any]] = {
    "uivenus/Browser-v0": {"spec": "browser"},
    "uivenus/Phone-v0": {"spec": "phone"},
    "uivenus/Desktop-v0": {"spec": "desktop"},
    "uivenus/Android-v0": {"spec": "android"},
    "uivenus/Sandbox-v0": {"spec": "sandbox:launcher", "checker": sandbox_checker},
}


def register_gym_envs() -> None:
    """Register every id of `GYM_IDS` (once); real screens are not deterministic, so the specs say so."""
    for gym_id, kwargs in GYM_IDS.items():
        if gym_id not in gymnasium.registry:
            gymnasium.register(id=gym_id, entry_point="uivenus.envs.gym:make_gym_env", kwargs=dict(kwargs),
                               nondeterministic=True)


register_gym_envs()
