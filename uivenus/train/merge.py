"""Naive weight averaging of checkpoints: the baseline MOPD must beat when merging experts into one model."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

__all__ = ["MergeError", "average_checkpoints"]

WEIGHTS = "model.safetensors"


class MergeError(ValueError):
    """Checkpoints cannot be averaged (different tensors or shapes, bad weights); the message says which."""


def _tensors(checkpoint: Path) -> dict:
    from safetensors.torch import load_file

    files = sorted(checkpoint.glob("*.safetensors"))
    if not files:
        raise MergeError(f"{checkpoint} holds no *.safetensors weights; pass save_pretrained checkpoint folders")
    tensors: dict = {}
    for file in files:
        tensors |= load_file(str(file))
    return tensors


def average_checkpoints(checkpoints: Sequence[Path | str], out_dir: Path | str,
                        weights: Sequence[float] | None = None) -> Path:
    """Σ w_i θ_i over checkpoints of one architecture (equal weights by default), written as a checkpoint folder
    with the first checkpoint's config and processor files; tensors keep the first checkpoint's dtypes."""
    from safetensors.torch import save_file

    paths = [Path(p) for p in checkpoints]
    if not paths:
        raise MergeError("average_checkpoints needs at least one checkpoint")
    weights = list(weights) if weights is not None else [1.0 / len(paths)] * len(paths)
    if len(weights) != len(paths) or any(w < 0 for w in weights) or not sum(weights) > 0:
        raise MergeError(f"need one non-negative weight per checkpoint with a positive sum, got {weights}")
    total = sum(weights)
    first = _tensors(paths[0])
    merged = {name: tensor.float() * (weights[0] / total) for name, tensor in first.items()}
    for path, weight in zip(paths[1:], weights[1:]):
        tensors = _tensors(path)
        if tensors.keys() != first.keys():
            diff = sorted(set(tensors) ^ set(first))[:5]
            raise MergeError(f"{path} and {paths[0]} hold different tensors (e.g. {diff}); average only checkpoints "
                             "of one architecture")
        for name, tensor in tensors.items():
            if tensor.shape != first[name].shape:
                raise MergeError(f"{name} is {tuple(tensor.shape)} in {path} but {tuple(first[name].shape)} in "
                                 f"{paths[0]}")
            merged[name] += tensor.float() * (weight / total)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for file in paths[0].iterdir():
        if file.is_file() and file.suffix != ".safetensors" and not file.name.endswith(".safetensors.index.json"):
            shutil.copy2(file, out / file.name)
    save_file({name: merged[name].to(first[name].dtype).contiguous() for name in merged}, str(out / WEIGHTS),
              metadata={"format": "pt"})
    return out
