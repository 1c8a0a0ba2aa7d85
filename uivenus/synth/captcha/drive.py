"""Drive CAPTCHA pages in a BrowserEnv: serve a directory on 127.0.0.1, open an instance, act, read the grade.

The page grades itself; Python only reads `window.uivenus.state().captcha` back through `BrowserEnv.state()`,
so what is tested is exactly what an agent faces: unified actions in screen pixels against a real page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from uivenus.actions.space import Action
from uivenus.envs.base import Env
from uivenus.envs.sandbox.server import SandboxServer
from uivenus.records import TaskSpec
from uivenus.synth.captcha.base import CaptchaError, Instance


@dataclass(frozen=True)
class Grade:
    """The page grader's verdict: `done` once an attempt was graded (first attempt only), `passed` if right."""

    done: bool
    passed: bool
    reason: str

    @classmethod
    def from_state(cls, app_state: Mapping[str, Any] | None) -> Grade:
        captcha = (app_state or {}).get("captcha")
        if not isinstance(captcha, Mapping):
            raise CaptchaError("the page reports no CAPTCHA grade (window.uivenus.state().captcha); "
                               "is the env showing a page from generate_captchas?")
        return cls(bool(captcha.get("done")), bool(captcha.get("passed")), str(captcha.get("reason", "")))


class CaptchaSite:
    """A CAPTCHA directory served on 127.0.0.1; turns instances into browser tasks. Use as a context manager."""

    def __init__(self, root: Path | str) -> None:
        self._server = SandboxServer(root=Path(root))

    @property
    def base_url(self) -> str:
        return self._server.base_url

    def task(self, instance: Instance) -> TaskSpec:
        return TaskSpec(
            id=instance.id, instruction=instance.instruction, platform=instance.platform,
            url=f"{self.base_url}/{instance.page}", max_steps=8,
            metadata={"family": instance.family, "difficulty": instance.difficulty.value, "kind": "captcha"},
        )

    def close(self) -> None:
        self._server.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def browser_config(instance: Instance) -> Any:
    """The BrowserConfig whose viewport the instance's page was designed for."""
    from uivenus.envs.browser_config import BrowserConfig

    return BrowserConfig(mode=instance.layout, viewport=instance.viewport)


def read_grade(env: Env) -> Grade:
    return Grade.from_state(env.state().get("app_state"))


def attempt(env: Env, site: CaptchaSite, instance: Instance, actions: Iterable[Action]) -> Grade:
    """Open `instance` afresh, execute `actions` (screen pixels) and return the page's grade.

    An action the env could not execute stops the attempt there; the grade says what the page saw.
    """
    env.reset(site.task(instance))
    for action in actions:
        if not env.step(action).executed:
            break
    return read_grade(env)
