"""`nano` is the bundled student: it loads offline from package data and answers grounding requests with text the
grounding parser reads; without its files it fails with an error that says how to get them."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from uivenus.actions.coords import Frame
from uivenus.actions.grounding import parse_grounding
from uivenus.actions.syntax import ParseError
from uivenus.agent.conversation import grounding_messages
from uivenus.agent.policies import Mode, PolicyError, PolicyRequest, PolicySpecError, policy_from_spec
from uivenus.agent.policies import nano


def test_bundled_weights_are_small_half_precision_files() -> None:
    folder = nano.nano_weights()
    size = sum(f.stat().st_size for f in folder.iterdir() if f.is_file())
    assert size < 9_000_000, f"nano weights are {size / 1e6:.1f} MB"
    from safetensors import safe_open

    with safe_open(str(folder / "model.safetensors"), "pt") as weights:
        name = next(iter(weights.keys()))
        assert str(weights.get_slice(name).get_dtype()) == "F16"


def test_nano_grounds_a_screen_with_parseable_text() -> None:
    import torch

    torch.set_num_threads(1)
    image = Image.new("RGB", (224, 224), "white")
    ImageDraw.Draw(image).rectangle([60, 90, 140, 130], fill="#2563eb")
    frame = Frame.relative(224, 224)
    requests = [PolicyRequest(messages=grounding_messages(image, text, frame), mode=Mode.GROUNDING)
                for text in ("the blue button", "the submit button")]
    policy = policy_from_spec("nano:?device=cpu&dtype=float32&batch_size=2")
    try:
        replies = policy.act_batch(requests)
    finally:
        policy.close()
    assert policy.name == "nano" and len(replies) == 2
    for reply in replies:
        try:
            answer = parse_grounding(reply.text)
        except ParseError as exc:
            pytest.fail(f"nano replied {reply.text!r}, which does not parse: {exc}")
        assert answer.refused or all(0 <= v <= 999 for v in answer.point)
        assert reply.usage["completion_tokens"] <= 64


def test_nano_without_weights_says_how_to_build_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nano.resources, "files", lambda package: tmp_path)
    with pytest.raises(PolicyError, match="uivenus train recipe --config configs/nano.yaml"):
        policy_from_spec("nano")


def test_nano_takes_only_options() -> None:
    with pytest.raises(PolicySpecError, match="only options"):
        policy_from_spec("nano:/some/path")
