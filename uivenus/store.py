"""The trajectory store: episodes on disk, written as they happen so a killed run loses at most one step.

Layout (SYSTEM.md, "The trajectory store")::

    ROOT/<run-id>/run.json                      run metadata and creation time
    ROOT/<run-id>/<episode-id>/task.json        the task, start metadata, resume history (written at start)
    ROOT/<run-id>/<episode-id>/steps.jsonl      one Step per line, appended and flushed as it happens
    ROOT/<run-id>/<episode-id>/screens/<n>.png  the screenshot seen at step n (written before its line)
    ROOT/<run-id>/<episode-id>/episode.json     `Trajectory.summary_dict()`, written once at the end
    ROOT/<run-id>/<episode-id>/labels.jsonl     per-step labels written by verification

Every file other than `steps.jsonl` is written through `uivenus.files` (a dot-prefixed temporary sibling moved
into place with `os.replace`), so a file under its final name is always whole. `steps.jsonl` is append-only:
only its last line can be cut short by a crash, and readers drop that line (the step in flight) and say so.

A step's line is its commit point. Its screenshot is written whole under its final name before the line, so
any line a reader finds has its PNG; a PNG without a line (the step in flight) is removed on resume. Without
`fsync` both survive a killed process (the kernel holds what was written) and nothing is forced to disk; with
it the PNG and its directory entry are flushed before the line is written, and the line after, so a power cut
cannot leave a line whose PNG never reached the disk.

Screenshots are not re-encoded: PNG bytes the environment already holds (`Observation.png`) are written as they
are. Raw pixels are encoded by `encode_later` on a bounded background thread as soon as the loop has the
observation, so the encoding overlaps the step (the model's turn, the action). A step whose encoding is still
running when it is appended is written by the episode's background writer (its PNG, then its line) and `append`
returns at once; at most one step is ever pending there (the next `append`, `finish` or `close` waits for it and
raises its error), so a killed run still loses at most the step in flight. Every other step is stored before
`append` returns.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from PIL import Image

from uivenus.files import atomic_path, write_bytes, write_text
from uivenus.records import Outcome, RecordError, Step, TaskSpec, Trajectory

RUN_FILE = "run.json"
TASK_FILE = "task.json"
STEPS_FILE = "steps.jsonl"
EPISODE_FILE = "episode.json"
LABELS_FILE = "labels.jsonl"
SCREENS_DIR = "screens"
_ID_MAX_LEN = 200
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: A step's screenshot as `EpisodeWriter.append` takes it: an image (encoded there), PNG bytes (written as they
#: are: `Observation.png`), or the encoding `encode_later` started.
Screenshot = Image.Image | bytes | Future[bytes]


class StoreError(RuntimeError):
    """The store cannot write or read an episode as asked; the message names the file and what to do."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _check_id(kind: str, value: Any) -> str:
    """Ids become directory names, so they must name exactly one plain, visible directory."""
    if not isinstance(value, str) or not value:
        raise StoreError(f"{kind} must be a non-empty string, got {value!r}")
    bad = {"/", "\\", "\0"} | ({os.sep, os.altsep} - {None})
    if len(value) > _ID_MAX_LEN or value.startswith(".") or any(c in bad or not c.isprintable() for c in value):
        raise StoreError(
            f"{kind} {value!r} is not a usable directory name: use at most {_ID_MAX_LEN} printable characters, "
            "no path separators, not starting with '.'"
        )
    return value


def _dumps(value: Any, what: str, *, indent: int | None = None) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent,
                          separators=(",", ": ") if indent else (",", ":"))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{what} is not JSON-serialisable ({exc}); store str/number/bool/None/lists/dicts") from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"{path} is missing; is this a store directory?") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path} is not valid JSON ({exc}); it was not written by the store") from None


# --- screenshots ----------------------------------------------------------------------------------

def encode_png(image: Image.Image) -> bytes:
    """`image` as PNG bytes (fast compression: screenshots are many, and disk is cheaper than the loop's time)."""
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=1)
    return buffer.getvalue()


class _Encoder:
    """One background thread per process that encodes screenshots; at most `limit` wait or run at once, and
    `submit` blocks beyond that, so a loop that outruns the encoder slows down instead of piling up frames."""

    def __init__(self, limit: int = 4) -> None:
        self._limit = limit
        self._pid: int | None = None
        self._lock = threading.Lock()

    def _start(self) -> None:
        # per process: a forked worker inherits the parent's executor object but not its thread
        with self._lock:
            if self._pid != os.getpid():
                self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="uivenus-png")
                self._slots = threading.BoundedSemaphore(self._limit)
                self._pid = os.getpid()

    def submit(self, image: Image.Image) -> Future[bytes]:
        if self._pid != os.getpid():
            self._start()
        image.load()  # read the file (if any) here: PIL's lazy loading is not thread-safe
        slots = self._slots
        slots.acquire()
        try:
            future = self._executor.submit(encode_png, image)
        except BaseException:
            slots.release()
            raise
        future.add_done_callback(lambda _: slots.release())
        return future


_ENCODER = _Encoder()


def encode_later(image: Image.Image) -> Future[bytes]:
    """Start encoding `image` as PNG on the store's background encoder; hand the result to `append`.

    The image must not change afterwards (observations never do)."""
    return _ENCODER.submit(image)


def _png_bytes(screenshot: Screenshot, index: int) -> bytes:
    try:
        if isinstance(screenshot, Future):
            data = screenshot.result()
        elif isinstance(screenshot, Image.Image):
            data = encode_png(screenshot)
        else:
            data = bytes(screenshot)
    except (OSError, ValueError) as exc:
        raise StoreError(f"could not save the screenshot of step {index} as PNG: {exc}") from exc
    if not data.startswith(_PNG_SIGNATURE):
        raise StoreError(f"the screenshot of step {index} is not PNG data (starts {data[:8]!r}); pass an image")
    return data


# --- writing ------------------------------------------------------------------------------------

class TrajectoryStore:
    """Opens episodes under `root`; `fsync=True` also forces each step to disk (survives power loss, slower)."""

    def __init__(self, root: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.root = Path(root)
        self.fsync = fsync

    def run_dir(self, run_id: str) -> Path:
        return self.root / _check_id("run id", run_id)

    def episode_dir(self, run_id: str, episode_id: str) -> Path:
        return self.run_dir(run_id) / _check_id("episode id", episode_id)

    def start_run(self, run_id: str, metadata: Mapping[str, Any] | None = None) -> Path:
        """Create the run (idempotent). New metadata keys are added; a key that changes value is an error."""
        run_dir = self.run_dir(run_id)
        run_dir.mkdir(parents=True, exist_ok=True)
        path = run_dir / RUN_FILE
        new = json.loads(_dumps(dict(metadata or {}), f"run {run_id!r} metadata"))
        if path.exists():
            record = _read_json(path)
            old = record.get("metadata", {})
            clash = sorted(k for k in new.keys() & old.keys() if new[k] != old[k])
            if clash:
                raise StoreError(f"run {run_id!r} already exists with different {clash}; use a new run id")
            if new.keys() <= old.keys():
                return run_dir
            record["metadata"] = {**old, **new}
        else:
            record = {"run_id": run_id, "created": _now(), "metadata": new}
        write_text(path, _dumps(record, "run record", indent=2), fsync=self.fsync)
        return run_dir

    def episode(
        self, run_id: str, episode_id: str, task: TaskSpec, metadata: Mapping[str, Any] | None = None
    ) -> EpisodeWriter:
        """Start a new episode; its directory must not exist yet (use `resume` for a killed one)."""
        directory = self.episode_dir(run_id, episode_id)
        header = {"task": task.to_dict(), "metadata": dict(metadata or {}), "started": _now(), "resumes": []}
        text = _dumps(header, f"episode {episode_id!r} task/metadata", indent=2)
        self.start_run(run_id)
        try:
            directory.mkdir()
        except FileExistsError:
            raise StoreError(
                f"episode {directory} already exists; use TrajectoryStore.resume() to continue it or pick a new id"
            ) from None
        try:
            (directory / SCREENS_DIR).mkdir()
            write_text(directory / TASK_FILE, text, fsync=self.fsync)
            (directory / STEPS_FILE).touch()
        except BaseException:
            shutil.rmtree(directory)
            raise
        return EpisodeWriter(directory, task, header, steps=(), fsync=self.fsync)

    def resume(self, run_id: str, episode_id: str) -> EpisodeWriter:
        """Reopen an incomplete episode; new steps are numbered after its last complete one."""
        directory = self.episode_dir(run_id, episode_id)
        if (directory / EPISODE_FILE).exists():
            raise StoreError(f"episode {directory} is already finished; there is nothing to resume")
        header = _read_json(directory / TASK_FILE)
        steps, warnings, good_bytes = _read_steps(directory / STEPS_FILE)
        os.truncate(directory / STEPS_FILE, good_bytes)  # drop the step in flight so appends start on a clean line
        for path in (directory / SCREENS_DIR).iterdir():  # its screenshot and any half-written temporaries too
            if path.name.startswith(".") or (path.stem.isdigit() and int(path.stem) >= len(steps)):
                path.unlink()
        header["resumes"] = [*header.get("resumes", []), {"at": _now(), "from_step": len(steps), "warnings": warnings}]
        write_text(directory / TASK_FILE, _dumps(header, "task header", indent=2), fsync=self.fsync)
        return EpisodeWriter(directory, TaskSpec.from_dict(header["task"]), header, steps=steps, fsync=self.fsync)


class EpisodeWriter:
    """Appends the steps of one episode and finishes it; a context manager that records crashes as ERROR."""

    def __init__(
        self, directory: Path, task: TaskSpec, header: Mapping[str, Any], *, steps: tuple[Step, ...], fsync: bool
    ) -> None:
        self.directory = directory
        self.task = task
        self._header = dict(header)
        self._steps = list(steps)
        self._fsync = fsync
        self._file: IO[str] | None = open(directory / STEPS_FILE, "a", encoding="utf-8", newline="\n")
        self._writer: Executor | None = None  # writes a step whose screenshot is still being encoded
        self._pending: Future[None] | None = None  # that step's write (at most one)

    @property
    def next_index(self) -> int:
        return len(self._steps)

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(self._steps)

    def append(self, step: Step, screenshot: Screenshot | None = None) -> Step:
        """Store `step` as step `next_index` (the store numbers steps); its screenshot is saved first.

        `screenshot` is an image, PNG bytes (written as they are) or `encode_later(image)`'s encoding. An encoding
        still running is waited for and written in the background: the step is then stored when the next `append`,
        `finish` or `close` returns, and its error (if any) is raised there."""
        if self._file is None:
            raise StoreError(f"episode {self.directory} is closed; resume it if unfinished, or open a new episode")
        self._wait_pending()
        index = self.next_index
        screen = f"{SCREENS_DIR}/{index}.png" if screenshot is not None else step.screen
        stored = replace(step, index=index, screen=screen)
        line = _dumps(stored.to_dict(), f"step {index}") + "\n"
        if isinstance(screenshot, Future) and not screenshot.done():
            if self._writer is None:
                self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="uivenus-store")
            self._pending = self._writer.submit(self._write, index, screen, screenshot, line)
        else:
            self._write(index, screen, screenshot, line)
        self._steps.append(stored)
        return stored

    def _write(self, index: int, screen: str | None, screenshot: Screenshot | None, line: str) -> None:
        """Step `index`'s screenshot (whole, under its final name), then its line: the line is the commit point."""
        assert self._file is not None
        if screenshot is not None and screen is not None:
            data = _png_bytes(screenshot, index)
            try:
                write_bytes(self.directory / screen, data, fsync=self._fsync)
            except OSError as exc:
                raise StoreError(f"could not save the screenshot of step {index}: {exc}") from exc
        try:
            self._file.write(line)
            self._file.flush()
            if self._fsync:
                os.fsync(self._file.fileno())
        except OSError as exc:
            raise StoreError(f"could not append step {index} to {self.directory / STEPS_FILE}: {exc}") from exc

    def _wait_pending(self) -> None:
        """Wait for the step the background writer holds; if it failed it is not stored: forget it, raise why."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        try:
            pending.result()
        except Exception:
            self._steps.pop()
            raise
        except BaseException:  # interrupted while waiting (Ctrl-C): the write goes on, still pending
            self._pending = pending
            raise

    def _stop_writer(self) -> None:
        if self._writer is not None:
            self._writer.shutdown()
            self._writer = None

    def finish(
        self,
        outcome: Outcome,
        answer: str | None = None,
        verdicts: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        task: TaskSpec | None = None,
    ) -> Trajectory:
        """Write `episode.json` (atomically) and close the episode; nothing is written if it fails.

        `task` replaces the task the episode started with when the episode learned more about it (e.g. an
        instruction a page only shows once it is up)."""
        if self._file is None:
            raise StoreError(f"episode {self.directory} is already finished or closed; resume it if unfinished")
        self._wait_pending()
        outcome = Outcome(outcome)
        if outcome is Outcome.INCOMPLETE:
            raise StoreError("finish() needs a final outcome; INCOMPLETE is what readers infer for unfinished episodes")
        trajectory = Trajectory(
            task=task or self.task,
            steps=tuple(self._steps),
            outcome=outcome,
            answer=answer,
            verdicts=verdicts or {},
            metadata={**_episode_metadata(self.directory, self._header), "ended": _now(), **(metadata or {})},
        )
        text = _dumps(trajectory.summary_dict(), "episode summary (answer/verdicts/metadata)", indent=2)
        write_text(self.directory / EPISODE_FILE, text, fsync=self._fsync)
        self._file.close()
        self._file = None
        self._stop_writer()
        return trajectory

    def close(self) -> None:
        """Stop writing without finishing: the episode stays INCOMPLETE and can be resumed.

        A step still being written is waited for; if its write fails it is simply not stored (a resume starts
        there), and the error is raised."""
        if self._file is None:
            return
        try:
            self._wait_pending()
        finally:
            self._file.close()
            self._file = None
            self._stop_writer()

    def __enter__(self) -> EpisodeWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._file is None:
            return
        if exc is None:
            self.close()
            raise StoreError(f"episode {self.directory} left its `with` block without finish(); it stays incomplete")
        if isinstance(exc, Exception):  # a crash of the episode; Ctrl-C/SystemExit leave it resumable instead
            error = {"error": f"{type(exc).__name__}: {exc}", "traceback": "".join(traceback.format_exception(exc))}
            try:
                self.finish(Outcome.ERROR, metadata=error)
            except StoreError:
                pass  # let the episode's own exception surface; the episode stays incomplete
        try:
            self.close()
        except StoreError:
            pass  # the step in flight was not stored; the episode's own exception is the one to see


def _episode_metadata(directory: Path, header: Mapping[str, Any]) -> dict[str, Any]:
    meta = {**header.get("metadata", {}), "run_id": directory.parent.name, "episode_id": directory.name,
            "started": header.get("started")}
    if header.get("resumes"):
        meta["resumes"] = header["resumes"]
    return meta


# --- reading ------------------------------------------------------------------------------------

def _read_steps(path: Path) -> tuple[tuple[Step, ...], list[str], int]:
    """Complete steps, warnings about a dropped last line, and the byte length of the good prefix."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return (), [], 0
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the file ends with a newline: no partial line
    steps: list[Step] = []
    warnings: list[str] = []
    good_bytes = 0
    for number, raw in enumerate(lines, start=1):
        is_last = number == len(lines)
        try:
            step = Step.from_dict(json.loads(raw.decode("utf-8")))
        except (ValueError, TypeError) as exc:  # bad JSON/UTF-8, RecordError and ActionError are ValueErrors
            if not is_last:
                raise StoreError(f"{path} line {number} is corrupt ({exc}); the episode cannot be read") from None
            warnings.append(f"{path.name} line {number}: dropped an incomplete last line (the step in flight): {exc}")
            break
        if step.index != len(steps):
            raise StoreError(f"{path} line {number} holds step {step.index}, expected {len(steps)}; was it edited?")
        steps.append(step)
        good_bytes += len(raw) + 1
    return tuple(steps), warnings, good_bytes


def _read_labels(path: Path) -> dict[int, dict[str, Any]]:
    if not path.exists():
        return {}
    out: dict[int, dict[str, Any]] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            entry = json.loads(raw)
            out[int(entry["index"])] = dict(entry["labels"])
        except (ValueError, TypeError, KeyError) as exc:
            raise StoreError(f"{path} line {number} is corrupt ({exc!r})") from None
    return out


def is_episode_dir(path: str | os.PathLike[str]) -> bool:
    return (Path(path) / TASK_FILE).is_file()


def read_episode(path: str | os.PathLike[str]) -> Trajectory:
    """The episode at `path`; without `episode.json` it is INCOMPLETE and holds every completed step."""
    directory = Path(path)
    header = _read_json(directory / TASK_FILE)
    steps, warnings, _ = _read_steps(directory / STEPS_FILE)
    labels = _read_labels(directory / LABELS_FILE)
    steps = tuple(replace(s, labels={**s.labels, **labels[s.index]}) if s.index in labels else s for s in steps)
    try:
        task = TaskSpec.from_dict(header["task"])
    except (KeyError, TypeError, RecordError) as exc:
        raise StoreError(f"{directory / TASK_FILE} does not hold a valid task ({exc!r})") from None
    if not (directory / EPISODE_FILE).exists():
        metadata = _episode_metadata(directory, header)
        if warnings:
            metadata["warnings"] = warnings
        return Trajectory(task=task, steps=steps, outcome=Outcome.INCOMPLETE, metadata=metadata)
    summary = _read_json(directory / EPISODE_FILE)
    if summary.get("n_steps") != len(steps):
        raise StoreError(
            f"{directory / EPISODE_FILE} says {summary.get('n_steps')} steps but {STEPS_FILE} holds {len(steps)} "
            f"complete ones{' (' + '; '.join(warnings) + ')' if warnings else ''}"
        )
    try:
        if "task" in summary:  # the task as the episode ended with it (e.g. an instruction learned at reset)
            task = TaskSpec.from_dict(summary["task"])
        return Trajectory(task=task, steps=steps, outcome=Outcome(summary["outcome"]), answer=summary.get("answer"),
                          verdicts=summary.get("verdicts") or {}, metadata=summary.get("metadata") or {})
    except (KeyError, ValueError) as exc:
        raise StoreError(f"{directory / EPISODE_FILE} is malformed ({exc!r})") from None


def episode_dirs(path: str | os.PathLike[str]) -> list[Path]:
    """The episode directories of a run directory (or `[path]` when `path` is itself an episode)."""
    path = Path(path)
    if is_episode_dir(path):
        return [path]
    if not path.is_dir():
        raise StoreError(f"{path} is not a directory; pass a run or episode directory of the store")
    found = sorted(p for p in path.iterdir() if not p.name.startswith(".") and is_episode_dir(p))
    if not found and not (path / RUN_FILE).is_file():
        raise StoreError(f"{path} is neither a run directory (no {RUN_FILE}) nor an episode directory (no {TASK_FILE})")
    return found


def read_run(path: str | os.PathLike[str]) -> list[Trajectory]:
    """Every episode of a run, ordered by episode id."""
    return [read_episode(d) for d in episode_dirs(path)]


def list_runs(root: str | os.PathLike[str]) -> list[Path]:
    """The run directories under a store root, ordered by run id."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if not p.name.startswith(".") and (p / RUN_FILE).is_file())


def screenshot(trajectory_dir: str | os.PathLike[str], step: Step | int) -> Image.Image:
    """The screenshot seen at `step` (a Step, or a step index), fully loaded."""
    directory = Path(trajectory_dir)
    if isinstance(step, int):
        relative = f"{SCREENS_DIR}/{step}.png"
    elif step.screen is None:
        raise StoreError(f"step {step.index} of {directory} was stored without a screenshot")
    else:
        relative = step.screen
    path = (directory / relative).resolve()
    if not path.is_relative_to(directory.resolve()):
        raise StoreError(f"screenshot path {relative!r} points outside the episode {directory}")
    try:
        with Image.open(path) as image:
            image.load()
            return image
    except FileNotFoundError:
        raise StoreError(f"{path} does not exist; that step was stored without a screenshot") from None


def write_verdicts(
    episode_dir: str | os.PathLike[str],
    verdicts: Mapping[str, Any],
    labels: Mapping[int, Mapping[str, Any]] | None = None,
) -> Trajectory:
    """Merge `verdicts` into a finished episode and `labels` (step index -> labels) into `labels.jsonl`."""
    directory = Path(episode_dir)
    trajectory = read_episode(directory)
    if not trajectory.complete:
        raise StoreError(f"episode {directory} is not finished (no {EPISODE_FILE}); finish or resume it first")
    labels = {int(i): dict(v) for i, v in (labels or {}).items()}
    outside = sorted(i for i in labels if not 0 <= i < len(trajectory.steps))
    if outside:
        last = len(trajectory.steps) - 1
        raise StoreError(f"labels for step(s) {outside} but episode {directory} has steps 0..{last}")
    summary = trajectory.summary_dict()
    summary["verdicts"] = {**summary["verdicts"], **verdicts}
    text = _dumps(summary, "verdicts", indent=2)
    merged = _read_labels(directory / LABELS_FILE)
    for index, new in labels.items():
        merged[index] = {**merged.get(index, {}), **new}
    lines = "".join(_dumps({"index": i, "labels": merged[i]}, f"labels of step {i}") + "\n" for i in sorted(merged))
    write_text(directory / LABELS_FILE, lines)
    write_text(directory / EPISODE_FILE, text)
    return read_episode(directory)


# --- export -------------------------------------------------------------------------------------

def _export_features() -> Any:
    import datasets

    string = datasets.Value("string")
    return datasets.Features({
        "run_id": string, "episode_id": string, "task_id": string, "instruction": string, "platform": string,
        "step": datasets.Value("int32"), "response": string, "action": string, "error": string,
        "executed": datasets.Value("bool"), "timings": string, "labels": string, "outcome": string,
        "image": datasets.Image(),
    })


def _step_rows(directory: Path, trajectory: Trajectory) -> Iterator[dict[str, Any]]:
    for step in trajectory.steps:
        image = None
        if step.screen is not None:
            try:
                image = {"bytes": (directory / step.screen).read_bytes(), "path": f"{directory.name}/{step.screen}"}
            except FileNotFoundError:
                raise StoreError(f"step {step.index} of {directory} refers to missing {step.screen}") from None
        yield {
            "run_id": directory.parent.name, "episode_id": directory.name, "task_id": trajectory.task.id,
            "instruction": trajectory.task.instruction, "platform": trajectory.task.platform.value,
            "step": step.index, "response": step.response,
            "action": json.dumps(step.action.to_dict(), ensure_ascii=False) if step.action is not None else None,
            "error": step.error, "executed": step.executed, "timings": json.dumps(dict(step.timings)),
            "labels": json.dumps(dict(step.labels), ensure_ascii=False), "outcome": trajectory.outcome.value,
            "image": image,
        }


def export_parquet(
    run_dir: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """One row per step (PNG bytes as a `datasets` Image column), one row group per episode; written atomically.

    `progress(done, total)` is called after each episode.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    directories = episode_dirs(run_dir)
    if not directories:
        raise StoreError(f"{run_dir} holds no episodes; nothing to export")
    schema = _export_features().arrow_schema
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)

    with atomic_path(out) as tmp, pq.ParquetWriter(str(tmp), schema) as writer:
        for done, directory in enumerate(directories, start=1):
            rows = list(_step_rows(directory, read_episode(directory)))
            writer.write_table(pa.Table.from_pylist(rows, schema=schema))
            if progress is not None:
                progress(done, len(directories))
    return out
