"""The training loop the three stages share: each stage brings a loss, the loop does the rest.

A stage supplies `loss_fn(model, batch) -> (loss, metrics)` and a batch stream; `Trainer` loads the checkpoint
(any Qwen-VL family model through the Auto classes), builds AdamW and the learning-rate schedule, and runs
gradient accumulation, clipping, logging (JSON lines, TensorBoard, a rich progress bar), evaluation hooks and
checkpoints. It runs through `accelerate`, so the same code trains in one CPU process, on one GPU, or under
`accelerate launch` with DDP or FSDP (configs in `configs/accelerate/`).

A checkpoint is `out_dir/checkpoints/step-N/`: `model/` (a `save_pretrained` checkpoint with its processor, what
the next stage loads), `state/` (optimizer, scheduler and every process's RNG states, through
`Accelerator.save_state`), `data-rank<r>.json` (each rank's stream position) and `trainer.json`. Resuming from it
continues the run exactly: the same batches, the same losses.
"""

from __future__ import annotations

import contextlib
import json
import math
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from uivenus.files import atomic_path, write_text
from uivenus.train.collate import Batch
from uivenus.train.config import ConfigError, save_config
from uivenus.train.encode import IGNORE_INDEX
from uivenus.train.sources import SourceSpec, samples_from_spec
from uivenus.train.stream import SampleStream

if TYPE_CHECKING:
    import torch

__all__ = ["BatchStream", "EvalContext", "EvalHook", "LossFn", "TrainConfig", "Trainer", "TrainError",
           "load_model", "loss_eval_hook", "stage_main", "stream_for", "token_log_distributions", "token_logprobs"]

CHECKPOINTS = "checkpoints"
LATEST = "latest"  # file in out_dir naming the newest complete checkpoint
METRICS = "metrics.jsonl"


class TrainError(RuntimeError):
    """Training cannot start or go on as configured; the message says what to change."""


@dataclass(frozen=True)
class TrainConfig:
    """What every stage shares. `batch_size` is per process and per micro-step; one optimizer step sees
    batch_size × grad_accum × processes samples. `max_steps` counts optimizer steps (None: `epochs` passes over
    the data). `vision_lr_scale` multiplies the learning rate of the vision tower and its mergers (parameters
    under `visual`), which can outpace the language model on a tiny one. `resume`: "auto" continues from the
    newest checkpoint in `out_dir` if there is one, a path continues from that checkpoint, None starts afresh.
    `dtype` is the weights' dtype ("auto": bfloat16 on a GPU, float32 on a CPU); `mixed_precision` None keeps
    what `accelerate launch` set."""

    model: str
    out_dir: Path = Path("runs/train")
    lr: float = 1e-5
    vision_lr_scale: float = 1.0
    warmup_steps: int = 0
    schedule: Literal["cosine", "linear", "constant"] = "cosine"
    weight_decay: float = 0.0
    adam_betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = 1e-8
    max_grad_norm: float | None = 1.0
    batch_size: int = 1
    grad_accum: int = 1
    max_length: int = 4096
    max_steps: int | None = None
    epochs: int = 1
    seed: int = 0
    shuffle_buffer: int = 1024
    padding_side: Literal["left", "right"] = "right"
    log_every: int = 1
    save_every: int = 0
    eval_every: int = 0
    keep_checkpoints: int | None = None
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    mixed_precision: Literal["no", "bf16", "fp16"] | None = None
    gradient_checkpointing: bool = False
    resume: str | None = "auto"
    tensorboard: bool = True
    progress: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "out_dir", Path(self.out_dir))
        positive = ("batch_size", "grad_accum", "max_length", "epochs", "log_every")
        for name in positive:
            if getattr(self, name) < 1:
                raise TrainError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("warmup_steps", "save_every", "eval_every", "shuffle_buffer"):
            if getattr(self, name) < 0:
                raise TrainError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.max_steps is not None and self.max_steps < 1:
            raise TrainError(f"max_steps must be >= 1 or None, got {self.max_steps}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise TrainError(f"lr must be a positive number, got {self.lr}")
        if not (self.vision_lr_scale > 0 and math.isfinite(self.vision_lr_scale)):
            raise TrainError(f"vision_lr_scale must be a positive number (1.0: the same lr), "
                             f"got {self.vision_lr_scale}")
        if self.keep_checkpoints is not None and self.keep_checkpoints < 1:
            raise TrainError(f"keep_checkpoints must be >= 1 or None, got {self.keep_checkpoints}")


#: A stage's loss: the model (wrapped by accelerate) and a batch on its device → (scalar loss, float metrics).
#: Every process must return the same metric names.
LossFn = Callable[[Any, Any], tuple["torch.Tensor", Mapping[str, float]]]


@runtime_checkable
class BatchStream(Protocol):
    """Endless batches with a position a checkpoint can save (`SampleStream` is the reference implementation)."""

    def __iter__(self) -> Iterator[Any]: ...

    def shard(self, rank: int, world_size: int) -> None: ...

    def samples_per_epoch(self) -> int | None: ...

    def state_dict(self) -> Mapping[str, Any]: ...

    def load_state_dict(self, state: Mapping[str, Any]) -> None: ...


@dataclass(frozen=True)
class EvalContext:
    """What an evaluation or step hook gets: the unwrapped model (for an evaluation in eval mode, under no_grad),
    the processor, the step (optimizer steps done), the accelerator (device, process index, reductions) and the
    stage's loss."""

    model: Any
    processor: Any
    step: int
    accelerator: Any
    loss_fn: LossFn = field(repr=False)


EvalHook = Callable[[EvalContext], Mapping[str, float]]


# --- model and forward --------------------------------------------------------------------------

_DTYPES = ("float32", "bfloat16", "float16")


def _param_groups(model: Any, config: TrainConfig) -> list[dict[str, Any]]:
    """AdamW groups: weight decay on matrices only, and the vision tower at `lr × vision_lr_scale` (split off only
    when the scale is not 1, so checkpoints keep their two groups). The language model's decayed group is first:
    its lr is the one logged."""
    split = config.vision_lr_scale != 1.0
    groups: dict[tuple[bool, bool], list[Any]] = {}
    for name, param in model.named_parameters():
        if param.requires_grad:
            groups.setdefault((split and "visual." in f".{name}", param.ndim < 2), []).append(param)
    return [{"params": groups[vision, flat], "weight_decay": 0.0 if flat else config.weight_decay,
             "lr": config.lr * (config.vision_lr_scale if vision else 1.0)}
            for vision, flat in sorted(groups)]


def load_model(path: str | Path, dtype: str = "auto") -> Any:
    """Any Qwen-VL family checkpoint through `AutoModelForImageTextToText`, in `dtype`."""
    import torch
    from transformers import AutoModelForImageTextToText

    if dtype == "auto":
        dtype = "bfloat16" if torch.cuda.is_available() else "float32"
    if dtype not in _DTYPES:
        raise TrainError(f"dtype must be auto or one of {', '.join(_DTYPES)}, got {dtype!r}")
    try:
        return AutoModelForImageTextToText.from_pretrained(str(path), dtype=getattr(torch, dtype))
    except (OSError, ValueError) as exc:
        raise TrainError(f"cannot load a model from {path}: {exc}") from None


def token_logprobs(model: Any, batch: Batch, *, temperature: float = 1.0) -> torch.Tensor:
    """log π(token_t | tokens before t) for every labelled position t ([B, L], 0 elsewhere).

    Logits are computed only where a label follows (`logits_to_keep`), which keeps the vocabulary-sized tensor
    the size of the replies, not of the prompts with their image tokens.
    """
    import torch
    import torch.nn.functional as F

    labelled = batch.labels != IGNORE_INDEX
    positions = labelled[:, 1:].any(dim=0).nonzero().squeeze(-1)  # predicting position p + 1
    out = torch.zeros(labelled.shape, dtype=torch.float32, device=labelled.device)
    if positions.numel() == 0:
        return out
    logits = model(**batch.model_inputs(), logits_to_keep=positions, use_cache=False).logits.float()
    if temperature != 1.0:
        logits = logits / temperature
    targets = batch.input_ids[:, positions + 1]
    picked = -F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")
    out[:, positions + 1] = picked
    return out * labelled


def token_log_distributions(model: Any, batch: Batch, width: int, *, temperature: float = 1.0) -> torch.Tensor:
    """log π(· | tokens before t) over the whole vocabulary for each of the last `width` positions t ([B, width, V],
    0 where t is not labelled), at `temperature`: what an exact per-token divergence needs on a left-padded rollout
    batch (`sampling.completion_view`), whose replies all end in those columns. B × width × V floats."""
    labelled = (batch.labels != IGNORE_INDEX)[:, -width:]
    logits = model(**batch.model_inputs(), logits_to_keep=width + 1, use_cache=False).logits[:, :-1].float()
    return (logits / temperature).log_softmax(-1) * labelled.unsqueeze(-1)


def loss_eval_hook(batches: Callable[[], Iterator[Batch]], name: str = "loss") -> EvalHook:
    """An evaluation hook: the stage's loss averaged over the batches `batches()` yields (held-out data).

    Every process evaluates its own share and the means are averaged across processes.
    """
    def hook(context: EvalContext) -> Mapping[str, float]:
        import torch

        accelerator = context.accelerator
        total, count = 0.0, 0
        for batch in batches():
            loss, _ = context.loss_fn(context.model, batch.to(accelerator.device))
            total, count = total + float(loss), count + 1
        mean = torch.tensor([total / max(count, 1)], device=accelerator.device)
        return {name: float(accelerator.reduce(mean, "mean"))}

    return hook


# --- the trainer --------------------------------------------------------------------------------

def _schedule(name: str, optimizer: Any, warmup: int, total: int) -> Any:
    from transformers import get_scheduler

    names = {"cosine": "cosine", "linear": "linear", "constant": "constant_with_warmup"}
    return get_scheduler(names[name], optimizer, num_warmup_steps=warmup, num_training_steps=total)


class Trainer:
    """Runs `loss_fn` over `stream` with AdamW under `config`; `train()` returns the final model directory.

    `eval_hooks` run every `eval_every` steps (eval mode, no gradients); `step_hooks` run before every optimizer
    step with the model in training, their metrics logged with the step's."""

    def __init__(self, config: TrainConfig, loss_fn: LossFn, stream: BatchStream, *, processor: Any = None,
                 eval_hooks: Sequence[EvalHook] = (), step_hooks: Sequence[EvalHook] = ()) -> None:
        import torch
        from accelerate import Accelerator
        from accelerate.utils import set_seed

        from uivenus.agent.policies.transformers_local import load_processor

        self.config, self.loss_fn, self.stream, self.eval_hooks = config, loss_fn, stream, tuple(eval_hooks)
        self.step_hooks = tuple(step_hooks)
        self.accelerator = Accelerator(mixed_precision=config.mixed_precision, step_scheduler_with_optimizer=False)
        set_seed(config.seed)
        self.out_dir = config.out_dir
        self.resume_from = self._resume_dir()
        self.processor = processor if processor is not None else load_processor(config.model)
        model = load_model(self.resume_from / "model" if self.resume_from else config.model, config.dtype)
        for part in (model.config, getattr(model.config, "text_config", None)):
            if part is not None and hasattr(part, "use_cache"):
                part.use_cache = False  # no generation cache while training
        if config.gradient_checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.train()
        optimizer = torch.optim.AdamW(
            _param_groups(model, config), lr=config.lr, betas=config.adam_betas, eps=config.adam_eps,
            fused=True)  # one kernel over all tensors, not a Python loop per tensor (transformers' default too)
        stream.shard(self.accelerator.process_index, self.accelerator.num_processes)
        self.total_steps = self._total_steps()
        scheduler = _schedule(config.schedule, optimizer, config.warmup_steps, self.total_steps)
        self.model, self.optimizer, self.scheduler = self.accelerator.prepare(model, optimizer, scheduler)
        self.accelerator.register_save_state_pre_hook(self._drop_weights_from_state)
        self.accelerator.register_load_state_pre_hook(self._keep_loaded_weights)
        self.step = 0
        if self.resume_from is not None:
            self._load(self.resume_from)

    # -- setup -------------------------------------------------------------------------------------

    def _resume_dir(self) -> Path | None:
        resume = self.config.resume
        if resume is None:
            return None
        if resume == "auto":
            latest = self.out_dir / LATEST
            if not latest.is_file():
                return None
            directory = self.out_dir / CHECKPOINTS / latest.read_text(encoding="utf-8").strip()
        else:
            directory = Path(resume)
        if not (directory / "trainer.json").is_file():
            raise TrainError(f"{directory} is not a complete checkpoint (no trainer.json); pass another resume path "
                             "or resume: null to start afresh")
        return directory

    def _total_steps(self) -> int:
        if self.config.max_steps is not None:
            return self.config.max_steps
        samples = self.stream.samples_per_epoch()
        if samples is None:
            raise TrainError("this stream cannot count its samples; set max_steps")
        per_step = self.config.batch_size * self.config.grad_accum * self.accelerator.num_processes
        return max(1, self.config.epochs * math.ceil(samples / per_step))

    # -- checkpoints -------------------------------------------------------------------------------

    def _drop_weights_from_state(self, models: list[Any], weights: list[Any], output_dir: str) -> None:
        """The weights go to `model/` with save_pretrained; `state/` keeps the rest (FSDP shards stay there)."""
        weights.clear()

    def _keep_loaded_weights(self, models: list[Any], input_dir: str) -> None:
        """The model was built from the checkpoint's `model/`; only FSDP shards are loaded from `state/`."""
        models.clear()

    def save_checkpoint(self) -> Path:
        """Write `checkpoints/step-N/` (complete before `latest` names it) and return it."""
        accelerator = self.accelerator
        name = f"step-{self.step:07d}"
        final = self.out_dir / CHECKPOINTS / name
        partial = self.out_dir / CHECKPOINTS / f".{name}.partial"  # every rank writes into it
        # the main process moves it into place once all ranks are done; the others only write
        writing = atomic_path(final, temp=partial) if accelerator.is_main_process else contextlib.nullcontext(partial)
        with writing as tmp:
            accelerator.wait_for_everyone()  # a stale partial folder is gone before anyone writes
            accelerator.save_state(str(tmp / "state"))
            state_dict = accelerator.get_state_dict(self.model)
            accelerator.unwrap_model(self.model).save_pretrained(
                tmp / "model", state_dict=state_dict, is_main_process=accelerator.is_main_process,
                save_function=accelerator.save)
            rank = accelerator.process_index
            (tmp / f"data-rank{rank}.json").write_text(json.dumps(dict(self.stream.state_dict())), encoding="utf-8")
            if accelerator.is_main_process:
                self.processor.save_pretrained(tmp / "model")
                save_config(self.config, tmp / "config.yaml")
                trainer_state = {"step": self.step, "total_steps": self.total_steps,
                                 "world_size": accelerator.num_processes}
                (tmp / "trainer.json").write_text(json.dumps(trainer_state, indent=2), encoding="utf-8")
            accelerator.wait_for_everyone()
        if accelerator.is_main_process:
            write_text(self.out_dir / LATEST, name + "\n")
            self._prune()
        accelerator.wait_for_everyone()
        return final

    def _prune(self) -> None:
        keep = self.config.keep_checkpoints
        if keep is None:
            return
        found = sorted(p for p in (self.out_dir / CHECKPOINTS).iterdir() if p.name.startswith("step-"))
        for old in found[:-keep]:
            shutil.rmtree(old)

    def _load(self, directory: Path) -> None:
        state = json.loads((directory / "trainer.json").read_text(encoding="utf-8"))
        if state["world_size"] != self.accelerator.num_processes:
            raise TrainError(f"{directory} was written by {state['world_size']} processes, this run has "
                             f"{self.accelerator.num_processes}; resume with the same number of processes")
        self.accelerator.load_state(str(directory / "state"))
        data = directory / f"data-rank{self.accelerator.process_index}.json"
        self.stream.load_state_dict(json.loads(data.read_text(encoding="utf-8")))
        self.step = int(state["step"])

    # -- logging -----------------------------------------------------------------------------------

    def _open_logs(self) -> tuple[Any, Any]:
        """The metrics file (lines past the resumed step dropped) and a TensorBoard writer, on the main process."""
        if not self.accelerator.is_main_process:
            return None, None
        self.out_dir.mkdir(parents=True, exist_ok=True)
        path = self.out_dir / METRICS
        if path.exists():
            kept = [line for line in path.read_text(encoding="utf-8").splitlines()
                    if line.strip() and json.loads(line).get("step", 0) <= self.step]
            write_text(path, "".join(line + "\n" for line in kept))
        writer = None
        if self.config.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            writer = SummaryWriter(str(self.out_dir / "tensorboard"), purge_step=self.step + 1)
        return open(path, "a", encoding="utf-8"), writer

    def _log(self, record: Mapping[str, float], files: tuple[Any, Any]) -> None:
        metrics_file, writer = files
        if metrics_file is None:
            return
        metrics_file.write(json.dumps({"step": self.step, **record}) + "\n")
        metrics_file.flush()
        if writer is not None:
            for key, value in record.items():
                writer.add_scalar(key if "/" in key else f"train/{key}", value, self.step)

    def _reduced(self, sums: Mapping[str, float], count: int) -> dict[str, float]:
        import torch

        if not sums:
            return {}
        keys = sorted(sums)
        values = torch.tensor([sums[k] / count for k in keys], device=self.accelerator.device)
        return dict(zip(keys, self.accelerator.reduce(values, "mean").tolist()))

    def evaluate(self) -> dict[str, float]:
        """Run every evaluation hook now (model in eval mode, no gradients); metrics are prefixed "eval/"."""
        import torch

        out: dict[str, float] = {}
        context = EvalContext(model=self.accelerator.unwrap_model(self.model), processor=self.processor,
                              step=self.step, accelerator=self.accelerator, loss_fn=self.loss_fn)
        self.model.eval()
        try:
            with torch.no_grad():
                for hook in self.eval_hooks:
                    out |= {f"eval/{k}": float(v) for k, v in hook(context).items()}
        finally:
            self.model.train()
        return out

    # -- the loop ----------------------------------------------------------------------------------

    def _before_step(self) -> dict[str, float]:
        """Run the step hooks (a weight push to a sampling server) before the step's first micro-step."""
        context = EvalContext(model=self.accelerator.unwrap_model(self.model), processor=self.processor,
                              step=self.step, accelerator=self.accelerator, loss_fn=self.loss_fn)
        out: dict[str, float] = {}
        for hook in self.step_hooks:
            out |= hook(context)
        return out

    def _micro_step(self, batch: Batch, last: bool) -> tuple[float, Mapping[str, float]]:
        accelerator = self.accelerator
        sync = contextlib.nullcontext() if last else accelerator.no_sync(self.model)
        with sync:
            loss, metrics = self.loss_fn(self.model, batch.to(accelerator.device))
            accelerator.backward(loss / self.config.grad_accum)
        return float(loss.detach()), metrics

    def train(self) -> Path:
        """Train to `total_steps` (from where a resumed checkpoint left off); returns the final `model/` dir."""
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        config, accelerator = self.config, self.accelerator
        files = self._open_logs()
        batches = iter(self.stream)
        sums: dict[str, float] = {}  # per micro-step metrics, summed since the last log line
        norms: list[float] = []
        count, started = 0, time.perf_counter()
        last_saved = self.step if self.resume_from is not None else -1
        show = config.progress and accelerator.is_main_process
        progress = Progress(TextColumn("[bold]train"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                            TextColumn("{task.fields[info]}"), TimeRemainingColumn(), disable=not show)
        try:
            with progress:
                task = progress.add_task("train", total=self.total_steps, completed=self.step, info="")
                while self.step < self.total_steps:
                    for key, value in self._before_step().items():  # once a step: weighted as its micro-steps
                        sums[key] = sums.get(key, 0.0) + float(value) * config.grad_accum
                    for micro in range(config.grad_accum):
                        loss, metrics = self._micro_step(next(batches), micro == config.grad_accum - 1)
                        for key, value in {"loss": loss, **metrics}.items():
                            sums[key] = sums.get(key, 0.0) + float(value)
                        count += 1
                    if config.max_grad_norm is not None:
                        norms.append(float(accelerator.clip_grad_norm_(self.model.parameters(), config.max_grad_norm)))
                    self.optimizer.step()
                    self.scheduler.step()
                    self.optimizer.zero_grad(set_to_none=True)
                    self.step += 1
                    if self.step % config.log_every == 0 or self.step == self.total_steps:
                        steps = count // config.grad_accum
                        record = self._reduced(sums, count)
                        if norms:
                            record["grad_norm"] = sum(norms) / len(norms)
                        record |= {"lr": self.scheduler.get_last_lr()[0],
                                   "epoch": float(self.stream.state_dict().get("epoch", 0)),
                                   "seconds_per_step": (time.perf_counter() - started) / steps}
                        self._log(record, files)
                        progress.update(task, info=f"loss {record['loss']:.4f}")
                        sums, norms, count, started = {}, [], 0, time.perf_counter()
                    if config.eval_every and self.step % config.eval_every == 0 and self.eval_hooks:
                        self._log(self.evaluate(), files)
                    if config.save_every and self.step % config.save_every == 0:
                        self.save_checkpoint()
                        last_saved = self.step
                    progress.update(task, completed=self.step)
            if last_saved != self.step:
                self.save_checkpoint()
        finally:
            for handle in files:
                if handle is not None:
                    handle.close()
        return self.out_dir / CHECKPOINTS / f"step-{self.step:07d}" / "model"


def stream_for(config: TrainConfig, sources: Sequence[SourceSpec], processor: Any, *, where: str = "sources",
               shuffle: bool = True) -> SampleStream:
    """A stage's batch stream over the sources its config names (`shuffle=False`: held-out data, in file order),
    mixed by their weights when the config gives them (every source or none)."""
    weighted = [s.weight for s in sources if s.weight is not None]
    if weighted and len(weighted) != len(sources):
        raise ConfigError(f"{where}: {len(weighted)} of {len(sources)} sources have a weight; give every source a "
                          "mixture weight or none")
    return SampleStream([samples_from_spec(s, f"{where}.{i}") for i, s in enumerate(sources)], processor,
                        batch_size=config.batch_size, max_length=config.max_length, seed=config.seed,
                        shuffle_buffer=config.shuffle_buffer if shuffle else 0, padding_side=config.padding_side,
                        weights=weighted if weighted and shuffle else None)


def stage_main(argv: Sequence[str] | None, doc: str | None, config_class: type,
               train: Callable[[Any], Path]) -> None:
    """`python -m uivenus.train.<stage> CONFIG.yaml [key=value ...]`: train and print the final model directory."""
    import sys

    from uivenus.train.config import load_config

    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(doc)
        raise SystemExit(0 if args else 2)
    print(train(load_config(args[0], config_class, overrides=args[1:])))
