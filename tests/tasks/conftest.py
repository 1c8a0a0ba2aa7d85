"""Shared pieces of the task-pipeline tests."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from uivenus.tasks.catalog import Catalog
from uivenus.tasks.spec import SynthTask
from uivenus.tasks.synthesis import Synthesis


class FixedSynthesizer:
    """Proposes the given tasks (a synthesizer whose output the test knows)."""

    name = "fixed"

    def __init__(self, tasks: Sequence[SynthTask]) -> None:
        self.tasks = tuple(tasks)

    def synthesize(self, catalog: Catalog, n: int) -> Synthesis:
        return Synthesis(self.tasks[:n])


@pytest.fixture
def fixed_synthesizer() -> type[FixedSynthesizer]:
    """The class itself: tests build one over the tasks they choose."""
    return FixedSynthesizer
