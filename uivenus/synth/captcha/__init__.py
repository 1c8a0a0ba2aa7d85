"""CAPTCHA generation: eight families of interactive challenge pages with verified solutions and their own graders.

    instances = generate_captchas(24, "data/captcha", seed=0)       # <id>.html + instances.jsonl
    with CaptchaSite("data/captcha") as site, BrowserEnv(browser_config(instances[0])) as env:
        grade = attempt(env, site, instances[0], instances[0].solution)   # Grade(done=True, passed=True, ...)
"""

from uivenus.synth.captcha.base import (
    FAMILIES,
    LEVELS,
    CaptchaError,
    Challenge,
    Difficulty,
    Family,
    Instance,
    Level,
    Rng,
    register_family,
)
from uivenus.synth.captcha.drive import (
    CaptchaSite,
    Grade,
    attempt,
    browser_config,
    read_grade,
)
from uivenus.synth.captcha.generate import (
    INDEX_FILE,
    build_instance,
    generate_captchas,
    load_captchas,
)
from uivenus.synth.captcha.page import LAYOUTS, PLACEMENTS
from uivenus.synth.captcha.scenes import SCENES
from uivenus.synth.captcha.screens import SCREENS_DIR, capture_captcha_screens

__all__ = [
    "FAMILIES", "INDEX_FILE", "LAYOUTS", "LEVELS", "PLACEMENTS", "SCENES", "SCREENS_DIR", "CaptchaError", "CaptchaSite",
    "Challenge", "Difficulty", "Family", "Grade", "Instance", "Level", "Rng", "attempt", "browser_config",
    "build_instance", "capture_captcha_screens", "generate_captchas", "load_captchas", "read_grade", "register_family",
]
