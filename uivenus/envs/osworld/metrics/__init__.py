"""OSWorld's evaluator metrics, implemented from the public benchmark's documented semantics (not its code).

`METRICS` maps each `evaluator.func` name to a function `(result, expected_or_rules, **options) -> float` in [0, 1];
`metric_for(name)` looks one up and raises `UnknownMetric` naming the known ones. Importing this package imports
every metric module, so the registry is complete whatever the caller imported before. A file a metric cannot read
(missing, corrupt, the wrong format) scores 0.0; a malformed `rules`/`options` (a bug in the task) raises.
docs/osworld-metrics.md lists the implemented metrics and the public ones left out, with the reason.
"""

from uivenus.envs.osworld.metrics import (  # noqa: F401 - each module registers its metrics on import
    accessibility, archives, documents, general, gimp, images, media, pages, pdfs, settings, slides, system, tables,
    text, web,
)
from uivenus.envs.osworld.metrics.registry import METRICS, Metric, UnknownMetric, metric, metric_for

__all__ = ["METRICS", "Metric", "UnknownMetric", "metric", "metric_for"]
