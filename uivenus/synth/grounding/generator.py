"""The public API: `GroundingSynth` (one browser, reusable) and `generate_grounding` (a dataset on disk).

Sample `index` of a run with `seed` draws everything (platform, size, theme, screen, instructions) from
`random.Random(sample_seed(seed, index))`, and Chromium renders the same page to the same pixels, so a
sample is the same bytes whichever worker makes it and however many workers there are (for one Chromium
build and font set: install fonts-dejavu, fonts-liberation and fonts-urw-base35 for the intended faces).
"""

from __future__ import annotations

import hashlib
import itertools
import random
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from uivenus.synth import SynthError
from uivenus.synth.grounding.export import write_annotations
from uivenus.synth.grounding.instructions import (
    DEFAULT_WEIGHTS,
    KINDS,
    Instruction,
    write_instructions,
)
from uivenus.synth.grounding.layout import Screen, compose
from uivenus.synth.grounding.styles import PLATFORMS, SIMPLE_SIZES, Size, pick_size

if TYPE_CHECKING:
    from uivenus.synth.grounding.render import Renderer


class SynthConfigError(SynthError, ValueError):
    """A SynthConfig value is illegal; the message names the field."""


@dataclass(frozen=True)
class SynthConfig:
    """What to generate. sizes=None: each platform's own mix (or tiny screens when simple)."""

    platforms: tuple[str, ...] = PLATFORMS
    sizes: tuple[Size, ...] | None = None
    simple: bool = False  # few, big elements (for tiny models on 224-448 px screens)
    per_sample: int = 5  # instructions per screen
    weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    min_side: int = 4  # px: smaller elements are never targets
    executable: str | None = None  # Chromium; None = BrowserConfig's (UIVENUS_CHROMIUM or /usr/bin/chromium)

    def __post_init__(self) -> None:
        object.__setattr__(self, "platforms", tuple(self.platforms))
        if not self.platforms or any(p not in PLATFORMS for p in self.platforms):
            raise SynthConfigError(
                f"platforms must be a non-empty subset of {list(PLATFORMS)}, got {list(self.platforms)}"
            )
        if self.sizes is not None:
            sizes = tuple((int(w), int(h)) for w, h in self.sizes)
            if not sizes or any(w < 64 or h < 64 or w > 7680 or h > 4320 for w, h in sizes):
                raise SynthConfigError(
                    f"sizes must be (width, height) pairs within 64..7680 x 64..4320, got {self.sizes}"
                )
            object.__setattr__(self, "sizes", sizes)
        if self.per_sample < 1:
            raise SynthConfigError(f"per_sample must be >= 1, got {self.per_sample}")
        unknown = set(self.weights) - set(KINDS)
        if unknown or not any(w > 0 for w in self.weights.values()):
            raise SynthConfigError(
                f"weights must give a positive weight to some of {list(KINDS)}, got {dict(self.weights)}"
            )
        if self.min_side < 1:
            raise SynthConfigError(f"min_side must be >= 1, got {self.min_side}")


def sample_seed(seed: int, index: int) -> int:
    """The seed of one sample: a hash of (seed, index), so samples are independent and order-free."""
    digest = hashlib.sha256(f"uivenus.grounding:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def sample_id(seed: int, index: int) -> str:
    return f"s{seed}_{index:06d}"


def _compose(config: SynthConfig, rng: random.Random) -> Screen:
    platform = rng.choice(config.platforms)
    sizes = config.sizes or (SIMPLE_SIZES if config.simple else None)
    return compose(rng, platform, pick_size(rng, platform, sizes), simple=config.simple)


def compose_screen(seed: int, index: int, config: SynthConfig | None = None) -> Screen:
    """The screen (HTML and candidates) of sample `index` of a run: a pure function, no browser."""
    return _compose(config or SynthConfig(), random.Random(sample_seed(seed, index)))


@dataclass(frozen=True)
class Sample:
    """One screen and its instructions."""

    id: str
    seed: int
    index: int
    screen: Screen
    png: bytes
    instructions: tuple[Instruction, ...]
    boxes: Mapping[str, tuple[int, int, int, int]]

    def annotations(self) -> list[dict[str, Any]]:
        """ScreenSpot-v2-style records ([x1,y1,x2,y2] px), one per instruction."""
        width, height = self.screen.size
        out = []
        for k, ins in enumerate(self.instructions):
            out.append(
                {
                    "id": f"{self.id}_{k}",
                    "img_filename": f"{self.id}.png",
                    "bbox": list(self.boxes[ins.target]) if ins.target else [-1, -1, -1, -1],
                    "instruction": ins.text,
                    "data_type": ins.data_type,
                    "platform": self.screen.platform,
                    "img_size": [width, height],
                    "instruction_kind": ins.kind,
                    "negative": ins.negative,
                    "seed": self.seed,
                    "index": self.index,
                    "target": ins.target,
                    "absent": ins.absent,
                    "domain": self.screen.domain,
                }
            )
        return out


class GroundingSynth:
    """Composes, renders and annotates grounding screens with one Chromium; reuse it, then close it."""

    def __init__(self, config: SynthConfig | None = None, *, renderer: Renderer | None = None) -> None:
        """Launches its own Chromium, or borrows `renderer` (left open on close) to switch configs cheaply."""
        from uivenus.synth.grounding.render import Renderer

        self.config = config or SynthConfig()
        self._owns_renderer = renderer is None
        self.renderer = renderer or Renderer(executable=self.config.executable)

    def compose(self, seed: int, index: int) -> Screen:
        """The screen of sample `index` (pure: no browser involved)."""
        return compose_screen(seed, index, self.config)

    def sample(self, seed: int, index: int) -> Sample:
        rng = random.Random(sample_seed(seed, index))
        screen = _compose(self.config, rng)
        rendered = self.renderer.render(screen.html, screen.size, min_side=self.config.min_side)
        instructions = write_instructions(screen, rendered, rng, self.config.per_sample, self.config.weights)
        return Sample(
            id=sample_id(seed, index),
            seed=seed,
            index=index,
            screen=screen,
            png=rendered.png,
            instructions=tuple(instructions),
            boxes=rendered.boxes,
        )

    def close(self) -> None:
        if self._owns_renderer:
            self.renderer.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def generate_grounding(
    n: int,
    out_dir: str | Path,
    seed: int = 0,
    platforms: Sequence[str] | None = None,
    sizes: Sequence[Size] | None = None,
    workers: int = 1,
    progress: bool = True,
    simple: bool = False,
    per_sample: int = 5,
) -> list[dict[str, Any]]:
    """Write n screens to out_dir/images/<id>.png and their instructions to out_dir/annotations.json."""
    if n < 0 or workers < 1:
        raise SynthConfigError(f"n must be >= 0 and workers >= 1, got n={n}, workers={workers}")
    config = SynthConfig(
        platforms=tuple(platforms or PLATFORMS),
        sizes=tuple(sizes) if sizes else None,
        simple=simple,
        per_sample=per_sample,
    )
    out = Path(out_dir)
    images = out / "images"
    images.mkdir(parents=True, exist_ok=True)
    results: dict[int, list[dict[str, Any]]] = {}
    counter = itertools.count()
    lock = threading.Lock()
    stop = threading.Event()

    def work(advance: Any) -> None:
        with GroundingSynth(config) as synth:
            while not stop.is_set():
                with lock:
                    index = next(counter)
                if index >= n:
                    return
                sample = synth.sample(seed, index)
                (images / f"{sample.id}.png").write_bytes(sample.png)
                results[index] = sample.annotations()
                advance()

    def run(advance: Any) -> None:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="uivenus-synth-worker") as pool:
            futures = [pool.submit(work, advance) for _ in range(min(workers, n))]
            try:
                for future in futures:
                    future.result()
            finally:
                stop.set()

    if progress:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        columns = (TextColumn("grounding screens"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns) as bar:
            task = bar.add_task("screens", total=n)
            run(lambda: bar.advance(task))
    else:
        run(lambda: None)
    annotations = [record for index in range(n) for record in results[index]]
    write_annotations(out, annotations)
    return annotations
