"""Generate CAPTCHA instances into a directory (one page per instance plus instances.jsonl) and load them back.

Everything is drawn from seeds derived from the master seed and the instance index, so the same call writes
the same bytes; families, difficulties and layouts cycle so any `n` spreads evenly over them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from uivenus.records import read_jsonl
from uivenus.synth.captcha import families as _families  # noqa: F401 - registers every family
from uivenus.synth.captcha.base import (
    FAMILIES,
    LEVELS,
    CaptchaError,
    Difficulty,
    Instance,
    Rng,
    derive_seed,
    shift_actions,
)
from uivenus.synth.captcha.page import LAYOUTS, compose

INDEX_FILE = "instances.jsonl"


def _check_names(names: Sequence[str], known: Sequence[str], what: str) -> None:
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CaptchaError(f"unknown {what} {unknown}; choose from {', '.join(known)}")


def _difficulty(value: Difficulty | str) -> Difficulty:
    try:
        return Difficulty(value)
    except ValueError:
        raise CaptchaError(f"unknown difficulty {value!r}; choose from {', '.join(Difficulty)}") from None


def build_instance(family: str, difficulty: Difficulty | str, seed: int, layout: str = "desktop",
                   instance_id: str | None = None) -> Instance:
    """One instance of `family` at `difficulty`, fully determined by `seed` and `layout`."""
    _check_names([family], sorted(FAMILIES), "family")
    _check_names([layout], sorted(LAYOUTS), "layout")
    level_name = _difficulty(difficulty)
    level = LEVELS[level_name]
    challenge = FAMILIES[family].build(Rng(derive_seed(seed, "challenge")), level)
    instance_id = instance_id or f"{family}-{level_name}-{seed:08x}"
    page = compose(challenge, Rng(derive_seed(seed, "page")), LAYOUTS[layout], {
        "family": family, "id": instance_id, "difficulty": level_name.value, "seed": derive_seed(seed, "draw"),
        "noise": level.noise, "distortion": level.distortion,
    })
    dx, dy = page.origin
    screen = LAYOUTS[layout]
    return Instance(
        id=instance_id, family=family, difficulty=level_name, seed=seed, layout=layout, viewport=screen.viewport,
        platform=screen.platform, scene=page.scene, instruction=challenge.instruction,
        solution=shift_actions(challenge.solution, dx, dy), near_miss=shift_actions(challenge.near_miss, dx, dy),
        answer={**challenge.answer, "placement": page.placement, "brand": page.brand},
        page=f"{instance_id}.html", html=page.html,
    )


def generate_captchas(n: int, out_dir: Path | str, seed: int = 0, families: Sequence[str] | None = None,
                      difficulty: Difficulty | str | None = None,
                      layouts: Sequence[str] = ("desktop",)) -> list[Instance]:
    """Write `n` instances to `out_dir` (`<id>.html` each, plus instances.jsonl) and return them.

    Families cycle fastest, then difficulties (all three unless one is given), then layouts.
    """
    names = list(families) if families else sorted(FAMILIES)
    _check_names(names, sorted(FAMILIES), "families")
    _check_names(list(layouts), sorted(LAYOUTS), "layouts")
    levels = [_difficulty(difficulty)] if difficulty else list(Difficulty)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    instances = []
    for i in range(n):
        family = names[i % len(names)]
        level = levels[(i // len(names)) % len(levels)]
        layout = layouts[(i // (len(names) * len(levels))) % len(layouts)]
        instance = build_instance(family, level, derive_seed(seed, i), layout, f"{i:05d}-{family}-{level}-{layout}")
        (out / instance.page).write_text(instance.html, encoding="utf-8")
        instances.append(instance)
    lines = "".join(json.dumps(inst.to_dict(), sort_keys=True) + "\n" for inst in instances)
    (out / INDEX_FILE).write_text(lines, encoding="utf-8")
    return instances


def load_captchas(data_dir: Path | str) -> list[Instance]:
    """The instances a `generate_captchas` call wrote to `data_dir`, pages included."""
    root = Path(data_dir)
    index = root / INDEX_FILE
    if not index.is_file():
        raise CaptchaError(f"{index} does not exist; generate instances there first with generate_captchas")
    instances = []
    for number, data in read_jsonl(index, CaptchaError, "regenerate the directory"):
        name = str(data.get("page", ""))
        page = root / name
        if Path(name).name != name or not page.is_file():
            raise CaptchaError(f"{index}:{number} names page {page.name!r}, which is missing from {root}")
        instances.append(Instance.from_dict(data, html=page.read_text(encoding="utf-8")))
    return instances
