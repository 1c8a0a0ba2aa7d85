"""The `nano` policy: the miniature recipe's MOPD student, bundled with the package so a policy works offline.

    nano                      the bundled checkpoint (CPU + float32 here; a GPU + bfloat16 where there is one)
    nano:?batch_size=4        with `hf:` options (device, dtype, max_pixels, min_pixels, batch_size, attn)

It is a ~4M-parameter Qwen3-VL trained in under an hour on 2 CPU cores on small synthetic screens: for demos and
smoke tests, not for real tasks. The weights are stored in float16 and run in float32 on a CPU.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from uivenus.agent.policies.base import PolicyError, PolicySpecError, register_policy
from uivenus.agent.policies.transformers_local import HFOptions, TransformersPolicy

__all__ = ["NANO_FILES", "nano_weights"]

#: What a usable bundled checkpoint holds at least.
NANO_FILES = ("config.json", "model.safetensors", "tokenizer.json", "processor_config.json")


def nano_weights() -> Path:
    """The bundled checkpoint folder; PolicyError when its files are missing."""
    folder = Path(str(resources.files("uivenus.agent.weights").joinpath("nano")))
    missing = [name for name in NANO_FILES if not (folder / name).is_file()]
    if missing:
        raise PolicyError(f"the bundled nano weights are missing {missing} in {folder}; rebuild them with "
                          "`uivenus train recipe --config configs/nano.yaml` (it ships the student there) or "
                          "reinstall uivenus")
    return folder


@register_policy("nano")
def _nano_policy(spec: str) -> TransformersPolicy:
    if spec and not spec.startswith("?"):
        raise PolicySpecError(f"nano takes only options (nano or nano:?device=cpu&batch_size=4), got {spec!r}")
    policy = TransformersPolicy(HFOptions.parse(f"{nano_weights()}{spec}"))
    policy.name = "nano"
    return policy
