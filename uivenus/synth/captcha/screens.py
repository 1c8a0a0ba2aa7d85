"""A screenshot export of CAPTCHA instances: what an agent first sees on each page (training data for Stage I)."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from uivenus.synth.captcha.drive import CaptchaSite, browser_config
from uivenus.synth.captcha.generate import load_captchas

__all__ = ["SCREENS_DIR", "capture_captcha_screens"]

SCREENS_DIR = "screens"


def capture_captcha_screens(data_dir: Path | str, *, envs: Mapping[str, Any] | None = None,
                            progress: bool = False) -> Path:
    """Open every instance of a CAPTCHA directory in Chromium and save what an agent first sees, as
    `screens/<id>.png`; returns the screens folder.

    `envs` maps a layout ("desktop", "phone") to a browser env to reuse; other layouts get one opened here.
    """
    from uivenus.envs.browser import BrowserEnv

    data_dir = Path(data_dir)
    out = data_dir / SCREENS_DIR
    out.mkdir(exist_ok=True)
    instances = load_captchas(data_dir)
    with ExitStack() as stack:
        site = stack.enter_context(CaptchaSite(data_dir))
        live = dict(envs or {})
        if progress:
            from rich.progress import track

            instances = list(track(instances, description="CAPTCHA screens"))
        for instance in instances:
            if instance.layout not in live:
                live[instance.layout] = stack.enter_context(BrowserEnv(browser_config(instance)))
            live[instance.layout].reset(site.task(instance)).screenshot.save(out / f"{instance.id}.png")
    return out
