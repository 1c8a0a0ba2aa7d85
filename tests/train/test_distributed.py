"""Two processes: the tiny SFT and MOPD steps under `accelerate launch --num_processes 2` on CPU (gloo) give the
losses and final weights of one process that sees the same global batch.

The equality holds because every loss is a mean of per-sample (MOPD) or per-token (SFT, equal-length replies here)
terms, so DDP's mean of the ranks' gradients is the gradient of the one-process batch. MOPD samples through a
stand-in OpenAI server that answers each prompt the same way however the prompts are split between ranks, so both
runs score the very same rollouts.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load_file

from uivenus.agent.policies.base import PolicyBase, PolicyReply, PolicyRequest
from uivenus.agent.serve import ServerThread, create_app
from uivenus.train.config import from_dict
from uivenus.train.mopd import MOPDConfig, train_mopd
from uivenus.train.sft import SFTConfig, train_sft
from uivenus.train.trainer import METRICS, load_model

pytestmark = pytest.mark.usefixtures("torch_single_thread")

REPO = Path(__file__).resolve().parents[2]
#: The stand-in server's reply to each instruction: right, a wrong point (parameter wrong), a refusal (type wrong).
REPLIES = {"red": "[120,240]", "blue": "[500,500]", "green": "[-1,-1]", "orange": "[900,100]"}


class ByInstruction(PolicyBase):
    """Answers by the colour the instruction names: the same reply for a prompt whichever rank asks."""

    name = "by-instruction"

    def act(self, request: PolicyRequest) -> PolicyReply:
        text = " ".join(part for m in request.messages for part in m.content if isinstance(part, str))
        return PolicyReply(next(reply for colour, reply in REPLIES.items() if f"the {colour} square" in text))


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    with ServerThread(create_app(ByInstruction(), "standin")) as running:
        yield running


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch_two(*program: str) -> None:
    """`accelerate launch` of a program (`-m module args` or `script args`) on two CPU processes (gloo): torchrun's
    launcher with accelerate told to stay on the CPU."""
    env = {**os.environ, "ACCELERATE_USE_CPU": "true", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
               "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
               "--main_process_port", str(_free_port()), *program]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]


def _runs(out: Path) -> tuple[list[dict], dict[str, torch.Tensor], int]:
    """(metrics rows, final weights, world size) of a finished run."""
    final = sorted((out / "checkpoints").iterdir())[-1]
    rows = [json.loads(line) for line in (out / METRICS).read_text().splitlines()]
    world = json.loads((final / "trainer.json").read_text())["world_size"]
    return rows, load_file(final / "model" / "model.safetensors"), world


def _assert_same_run(one: Path, two: Path, start: dict[str, torch.Tensor], keys: Sequence[str]) -> None:
    rows1, weights1, world1 = _runs(one)
    rows2, weights2, world2 = _runs(two)
    assert (world1, world2) == (1, 2)
    for key in keys:
        assert [r[key] for r in rows2] == pytest.approx([r[key] for r in rows1], rel=1e-4, abs=1e-5), key
    moved = max(float((weights1[k] - start[k]).abs().max()) for k in weights1)
    apart = max(float((weights1[k] - weights2[k]).abs().max()) for k in weights1)
    assert apart < 0.05 * moved, (apart, moved)  # the two runs agree far more closely than training moved them


def _initial(path: Path) -> dict[str, torch.Tensor]:
    return load_file(path / "model.safetensors")


def test_two_process_sft_matches_one_process_on_the_same_global_batch(tiny_qwen3_vl: Path, tmp_path: Path,
                                                                      grounding_squares) -> None:
    base = dict(model=str(tiny_qwen3_vl), dtype="float32", lr=1e-3, schedule="constant", max_steps=2,
                shuffle_buffer=0, resume=None, tensorboard=False, progress=False,
                sources=[{"kind": "grounding", "annotations": str(grounding_squares(tmp_path / "g", n=8))}])
    path = tmp_path / "sft.yaml"
    path.write_text(yaml.safe_dump(base))
    train_sft(from_dict(SFTConfig, {**base, "batch_size": 4, "out_dir": str(tmp_path / "one")}))
    _launch_two("-m", "uivenus.train.sft", str(path), "batch_size=2", f"out_dir={tmp_path / 'two'}")
    _assert_same_run(tmp_path / "one", tmp_path / "two", _initial(tiny_qwen3_vl), ["loss", "grad_norm"])


def _sharper(source: Path, out: Path) -> Path:
    """A teacher with the student's tokenizer and sharper logits."""
    from uivenus.agent.policies.transformers_local import load_processor

    model = load_model(source, "float32")
    with torch.no_grad():
        model.model.language_model.norm.weight.mul_(4.0)
    model.save_pretrained(out)
    load_processor(str(source)).save_pretrained(out)
    return out


def test_two_process_mopd_matches_one_process_on_the_same_global_batch(tiny_qwen3_vl: Path, tmp_path: Path,
                                                                       grounding_squares,
                                                                       server: ServerThread) -> None:
    teacher = _sharper(tiny_qwen3_vl, tmp_path / "teacher")
    base = dict(model=str(tiny_qwen3_vl), dtype="float32", lr=1e-3, schedule="constant", max_steps=2,
                shuffle_buffer=0, resume=None, tensorboard=False, progress=False,
                sources=[{"kind": "grounding", "annotations": str(grounding_squares(tmp_path / "g", n=8))}],
                teachers={"grounding": str(teacher)},
                sampling={"k": 1, "max_new_tokens": 8, "server": f"openai:{server.base_url}#standin"})
    path = tmp_path / "mopd.yaml"
    path.write_text(yaml.safe_dump(base))
    train_mopd(from_dict(MOPDConfig, {**base, "batch_size": 4, "out_dir": str(tmp_path / "one")}))
    _launch_two("-m", "uivenus.train.mopd", str(path), "batch_size=2", f"out_dir={tmp_path / 'two'}")
    _assert_same_run(tmp_path / "one", tmp_path / "two", _initial(tiny_qwen3_vl),
                     ["loss", "reverse_kl", "param_wrong", "type_wrong", "correct"])
    rows, _, _ = _runs(tmp_path / "two")
    assert all(r["type_wrong"] > 0 and r["param_wrong"] > 0 for r in rows)  # the replies mix the cases


#: Run on each of two ranks: a student sharded with FSDP2, two teachers sharded like it, and ranks whose rollouts
#: cover different domains (rank 1 has no CAPTCHA rollout, yet must take part in the CAPTCHA teacher's gathers).
SHARDED_TEACHERS = """
import json, sys
from pathlib import Path
import torch
from accelerate import Accelerator
from PIL import Image
from torch.distributed.fsdp import fully_shard
from uivenus.actions.coords import Frame
from uivenus.actions.space import Click
from uivenus.agent.conversation import grounding_messages
from uivenus.agent.policies.transformers_local import load_processor
from uivenus.train.encode import encode_prompt
from uivenus.train.mopd import MOPDConfig, MOPDLoss
from uivenus.train.samples import ChatSample
from uivenus.train.sampling import Rollout, completion_view, encode_rollouts
from uivenus.train.sources import SourceSpec
from uivenus.train.trainer import load_model
from uivenus.verify.rewards import ReferenceAction

student, grounding, captcha, out = sys.argv[1:5]
accelerator = Accelerator(cpu=True)
rank = accelerator.process_index
config = MOPDConfig(model=student, sources=(SourceSpec("grounding", {"annotations": "x"}),),
                    teachers={"grounding": grounding, "captcha": captcha})
processor = load_processor(student)
reference = ReferenceAction(Click(point=(500, 500)), boxes={"point": (450, 450, 550, 550)})
def rollout(domain, reply):
    messages = grounding_messages(Image.new("RGB", (64, 64), "white"), "the box", Frame.relative(64, 64))
    sample = ChatSample(messages=messages, target="[500,500]", domain=domain, reference=reference, thinking=False)
    ids = (*processor.tokenizer(reply, add_special_tokens=False)["input_ids"],
           processor.tokenizer.convert_tokens_to_ids("<|im_end|>"))
    return Rollout(sample, encode_prompt(processor, messages, thinking=False), ids, reply)
rollouts = [rollout("grounding", "[120,870]"), rollout("captcha" if rank == 0 else "grounding", "[-1,-1]")]
width = completion_view(encode_rollouts(processor, rollouts))[0]
sharded_student = fully_shard(load_model(student, "float32"))
loss = MOPDLoss(config, processor)
sharded = loss.teacher_logps(rollouts, width, "cpu", shard_like=sharded_student)
whole = MOPDLoss(config, processor).teacher_logps(rollouts, width, "cpu")
sizes = {}
for domain in ("grounding", "captcha"):
    model, _ = loss.teacher(domain)
    sizes[domain] = [sum(p.to_local().numel() for p in model.parameters()), sum(p.numel() for p in model.parameters())]
Path(out, f"rank{rank}.json").write_text(json.dumps({"diff": float((sharded - whole).abs().max()), "sizes": sizes}))
"""


def test_teachers_are_sharded_like_an_fsdp_student_and_score_as_whole_ones(tiny_qwen3_vl: Path,
                                                                          tmp_path: Path) -> None:
    script = tmp_path / "sharded_teachers.py"
    script.write_text(SHARDED_TEACHERS)
    grounding, captcha = _sharper(tiny_qwen3_vl, tmp_path / "tg"), _sharper(tiny_qwen3_vl, tmp_path / "tc")
    _launch_two(str(script), str(tiny_qwen3_vl), str(grounding), str(captcha), str(tmp_path))
    for rank in (0, 1):
        result = json.loads((tmp_path / f"rank{rank}.json").read_text())
        assert result["diff"] < 1e-5  # the sharded teachers give the whole teachers' log-probabilities
        for local, whole in result["sizes"].values():
            assert local <= 0.55 * whole, result  # each rank holds about half of every teacher
