"""Fixtures shared across test packages (expensive things built once per session)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_qwen3_vl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised tiny Qwen3-VL checkpoint (model, tokenizer, image-only processor) on disk."""
    from uivenus.train.tiny import build_tiny_qwen3_vl

    return build_tiny_qwen3_vl(tmp_path_factory.mktemp("tiny_qwen3_vl"))


@pytest.fixture(scope="module")
def torch_single_thread() -> Iterator[None]:
    """Tiny models run fastest on one thread; several stall badly when the CPUs are shared with other tests."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
