"""GUI grounding data: realistic screens composed from a component library, rendered in headless Chromium,
with instructions (by text, icon, function, position, and negatives) whose boxes are read from the DOM.

`generate_grounding(n, out_dir, seed=...)` writes a ScreenSpot-v2-style dataset; `GroundingSynth` makes
samples one by one with a reusable browser; `export_parquet` packs a dataset for training.
"""

from uivenus.synth.grounding.export import export_parquet, read_annotations
from uivenus.synth.grounding.generator import (
    GroundingSynth,
    Sample,
    SynthConfig,
    SynthConfigError,
    compose_screen,
    generate_grounding,
    sample_seed,
)

__all__ = [
    "GroundingSynth",
    "Sample",
    "SynthConfig",
    "SynthConfigError",
    "compose_screen",
    "export_parquet",
    "generate_grounding",
    "read_annotations",
    "sample_seed",
]
