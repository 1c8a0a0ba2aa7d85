"""The trajectory store: steps survive as they happen, kills lose at most the step in flight, exports load."""

import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from PIL import Image
from typer.testing import CliRunner

from uivenus.actions.space import ActionSequence, Answer, Click, Hotkey, Scroll, Type
from uivenus.cli.runs import app
from uivenus.records import Outcome, Step, TaskSpec
from uivenus.store import (
    StoreError,
    TrajectoryStore,
    encode_later,
    encode_png,
    export_parquet,
    list_runs,
    read_episode,
    read_run,
    screenshot,
    write_verdicts,
)

TASK = TaskSpec(id="notes/create", instruction="Create a note called “milk”", platform="web",
                url="http://127.0.0.1:8000/", check={"kind": "sandbox", "task": "notes/create"})


def image(colour, size=(32, 24)):
    return Image.new("RGB", size, colour)


def sample_steps():
    """Steps exercising every field: plain and Sequence actions, errors, timings, info, labels, no action."""
    return [
        Step(index=0, response="<think>open it</think>Click(point=(10, 20))", action=Click(point=(10, 20)),
             executed=True, timings={"model": 1.25, "execute": 0.5}, info={"url": "http://127.0.0.1:8000/"}),
        Step(index=0, response="bad", error="parse error: unbalanced ( at 4"),
        Step(index=0, response="seq",
             action=ActionSequence(actions=(Hotkey(keys=("ctrl", "a"), repeat=2), Type(content="milk ✓"),
                                      Scroll(direction="down", point=(5, 6), amount=3))),
             executed=True, info={"guard": {"decision": "allow", "rules": ["no-payment"]}}, labels={"useful": True}),
        Step(index=0, action=Answer(content="done"), executed=False, error="guard: blocked"),
    ]


def test_round_trip_keeps_every_field_and_numbers_steps(tmp_path):
    store = TrajectoryStore(tmp_path)
    shots = {0: image("red"), 2: image("blue", (40, 30))}
    with store.episode("run-1", "ep-0", TASK, {"model": "tiny", "seed": 7}) as writer:
        stored = [writer.append(step, shots.get(i)) for i, step in enumerate(sample_steps())]
        finished = writer.finish(Outcome.ANSWERED, answer="done", verdicts={"rule": {"success": True}})

    assert [s.index for s in stored] == [0, 1, 2, 3]
    assert [s.screen for s in stored] == ["screens/0.png", None, "screens/2.png", None]
    episode = read_episode(tmp_path / "run-1" / "ep-0")
    assert episode.steps == tuple(stored) == finished.steps
    assert episode.task == TASK
    assert episode.steps[2].action == sample_steps()[2].action
    assert dict(episode.steps[0].timings) == {"model": 1.25, "execute": 0.5}
    assert episode.steps[2].info["guard"]["rules"] == ["no-payment"]
    assert (episode.outcome, episode.answer, episode.verdicts["rule"]) == (Outcome.ANSWERED, "done", {"success": True})
    assert {k: episode.metadata[k] for k in ("model", "seed", "run_id", "episode_id")} == {
        "model": "tiny", "seed": 7, "run_id": "run-1", "episode_id": "ep-0"}
    assert episode.metadata["ended"] >= episode.metadata["started"]
    for index, shot in shots.items():
        back = screenshot(tmp_path / "run-1" / "ep-0", episode.steps[index])
        assert back.size == shot.size and back.getpixel((0, 0)) == shot.getpixel((0, 0))
    assert screenshot(tmp_path / "run-1" / "ep-0", 2).size == (40, 30)
    with pytest.raises(StoreError, match="without a screenshot"):
        screenshot(tmp_path / "run-1" / "ep-0", episode.steps[1])
    assert list_runs(tmp_path) == [tmp_path / "run-1"]
    assert json.loads((tmp_path / "run-1" / "run.json").read_text())["run_id"] == "run-1"


def test_fsync_setting_writes_the_same_files(tmp_path):
    store = TrajectoryStore(tmp_path, fsync=True)
    with store.episode("r", "e", TASK) as writer:
        writer.append(sample_steps()[0], image("green"))
        writer.finish(Outcome.FINISHED)
    assert read_episode(tmp_path / "r" / "e").steps[0].screen == "screens/0.png"


def no_temp_files(directory):
    return not [p for p in directory.rglob(".*") if p.is_file()]


def test_episode_json_appears_only_whole_and_failed_writes_leave_nothing(tmp_path):
    store = TrajectoryStore(tmp_path)
    directory = tmp_path / "r" / "e"
    writer = store.episode("r", "e", TASK)
    writer.append(sample_steps()[0])
    with pytest.raises(StoreError, match="screenshot of step 1"):
        writer.append(sample_steps()[0], Image.new("CMYK", (8, 8)))  # PNG cannot hold CMYK: fails mid-write
    assert not (directory / "screens" / "1.png").exists() and no_temp_files(directory)
    with pytest.raises(StoreError, match="not JSON-serialisable"):
        writer.append(Step(index=0, info={"when": object()}))
    with pytest.raises(StoreError, match="not JSON-serialisable"):
        writer.finish(Outcome.FINISHED, metadata={"bad": {1, 2}})
    assert not (directory / "episode.json").exists() and no_temp_files(directory)
    assert read_episode(directory).outcome is Outcome.INCOMPLETE and len(read_episode(directory).steps) == 1
    with pytest.raises(StoreError, match="INCOMPLETE"):
        writer.finish(Outcome.INCOMPLETE)
    writer.finish(Outcome.FINISHED)  # the failed attempts did not close the episode
    assert json.loads((directory / "episode.json").read_text())["n_steps"] == 1
    assert no_temp_files(directory)
    with pytest.raises(StoreError, match="closed"):
        writer.append(sample_steps()[0])
    with pytest.raises(StoreError, match="already finished"):
        writer.finish(Outcome.FINISHED)


def test_an_exception_inside_the_episode_finishes_it_as_error(tmp_path):
    store = TrajectoryStore(tmp_path)
    with pytest.raises(RuntimeError, match="browser died"):
        with store.episode("r", "e", TASK) as writer:
            writer.append(sample_steps()[0])
            raise RuntimeError("browser died")
    episode = read_episode(tmp_path / "r" / "e")
    assert episode.outcome is Outcome.ERROR and len(episode.steps) == 1
    assert episode.metadata["error"] == "RuntimeError: browser died"
    assert "browser died" in episode.metadata["traceback"]


def test_leaving_the_block_without_finish_is_an_error_and_keeps_it_resumable(tmp_path):
    store = TrajectoryStore(tmp_path)
    with pytest.raises(StoreError, match="without finish"):
        with store.episode("r", "e", TASK) as writer:
            writer.append(sample_steps()[0])
    assert read_episode(tmp_path / "r" / "e").outcome is Outcome.INCOMPLETE
    assert store.resume("r", "e").next_index == 1


@pytest.mark.parametrize("bad", ["a/b", "..", ".hidden", "", "a\\b", "tab\there", "x" * 201])
def test_ids_must_be_plain_directory_names(tmp_path, bad):
    with pytest.raises(StoreError, match="id"):
        TrajectoryStore(tmp_path).episode("run", bad, TASK)
    with pytest.raises(StoreError, match="id"):
        TrajectoryStore(tmp_path).episode(bad, "ep", TASK)
    assert not any(tmp_path.rglob("*task.json"))


def test_an_existing_episode_is_not_overwritten_and_finished_ones_cannot_resume(tmp_path):
    store = TrajectoryStore(tmp_path)
    with store.episode("r", "e", TASK) as writer:
        writer.finish(Outcome.FINISHED)
    with pytest.raises(StoreError, match="already exists"):
        store.episode("r", "e", TASK)
    with pytest.raises(StoreError, match="already finished"):
        store.resume("r", "e")


def test_run_metadata_is_merged_and_conflicts_are_refused(tmp_path):
    store = TrajectoryStore(tmp_path)
    store.start_run("r", {"model": "tiny"})
    store.start_run("r", {"model": "tiny", "seed": 1})
    assert json.loads((tmp_path / "r" / "run.json").read_text())["metadata"] == {"model": "tiny", "seed": 1}
    with pytest.raises(StoreError, match="model"):
        store.start_run("r", {"model": "big"})


KILLED_WRITER = textwrap.dedent("""
    import sys, time
    from PIL import Image
    from uivenus.actions.space import Click
    from uivenus.records import Step, TaskSpec
    from uivenus.store import TrajectoryStore, encode_later, encode_png
    root, form = sys.argv[1], sys.argv[2]
    writer = TrajectoryStore(root).episode("run", "ep", TaskSpec(id="t", instruction="go", platform="web"),
                                           {"model": "tiny"})
    noise = Image.effect_noise((640, 360), 64).convert("RGB")  # slow enough to encode that kills land mid-encoding
    for i in range(10_000):
        shot = Image.new("RGB", (64, 48), (i % 256, 0, 0)) if form == "image" else noise.copy()
        shot.putpixel((0, 0), (i % 256, 0, 0))
        screen = {"image": shot, "png": encode_png(shot) if form == "png" else None,
                  "encode_later": encode_later(shot) if form == "encode_later" else None}[form]
        if form == "image":
            time.sleep(0.01)  # the step's other work; the other forms append as fast as they can
        writer.append(Step(index=i, action=Click(point=(i, i)), response="x" * 2000), screen)
        print(i, flush=True)  # append returned: step i must survive the kill
""")


@pytest.mark.parametrize("form", ["image", "png", "encode_later"])
def test_a_run_killed_mid_episode_reads_back_incomplete_and_resumes(tmp_path, form):
    """Whatever form the screenshot comes in (an image, the env's PNG bytes, a background encoding), a SIGKILL at
    any moment leaves each line's PNG whole on disk and loses at most the step in flight: every step whose append
    returned, except that the last one may still be with the background writer when its encoding was still running
    (it is stored by the next append), and at most one step more."""
    process = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(tmp_path), form], stdout=subprocess.PIPE)
    steps_file = tmp_path / "run" / "ep" / "steps.jsonl"
    deadline = time.monotonic() + 20
    try:
        while not (steps_file.exists() and steps_file.read_bytes().count(b"\n") >= 5):
            assert process.poll() is None and time.monotonic() < deadline, "writer died or never wrote 5 steps"
            time.sleep(0.01)
    finally:
        os.kill(process.pid, signal.SIGKILL)
        returned = process.stdout.read().split()
        process.wait()
    assert process.returncode == -signal.SIGKILL

    episode = read_episode(tmp_path / "run" / "ep")
    n = len(episode.steps)
    assert episode.outcome is Outcome.INCOMPLETE and n >= 5
    in_flight = 1 if form == "encode_later" else 0  # the last acknowledged step may be pending in the writer
    assert int(returned[-1]) + 1 - in_flight <= n <= int(returned[-1]) + 2  # nothing else acknowledged is lost
    assert [s.index for s in episode.steps] == list(range(n))
    assert episode.steps[-1].action == Click(point=(n - 1, n - 1))
    assert all(screenshot(tmp_path / "run" / "ep", s).getpixel((0, 0)) == (s.index % 256, 0, 0) for s in episode.steps)
    assert episode.task.id == "t" and episode.metadata["model"] == "tiny"
    assert read_run(tmp_path / "run") == [episode]

    writer = TrajectoryStore(tmp_path).resume("run", "ep")
    assert writer.next_index == n and no_temp_files(tmp_path / "run" / "ep")
    assert sorted(int(p.stem) for p in (tmp_path / "run" / "ep" / "screens").iterdir()) == list(range(n))
    assert writer.append(Step(index=0, action=Click(point=(1, 1)))).index == n
    writer.finish(Outcome.FINISHED)
    again = read_episode(tmp_path / "run" / "ep")
    assert again.outcome is Outcome.FINISHED and [s.index for s in again.steps] == list(range(n + 1))
    assert again.metadata["resumes"][0]["from_step"] == n


def test_screenshots_given_as_png_bytes_or_background_encodings_are_written_as_given(tmp_path):
    shot = image("purple", (50, 40))
    png = encode_png(shot)
    with TrajectoryStore(tmp_path).episode("r", "e", TASK) as writer:
        writer.append(sample_steps()[0], png)
        writer.append(sample_steps()[0], encode_later(shot))
        with pytest.raises(StoreError, match="not PNG data"):
            writer.append(sample_steps()[0], b"GIF89a....")
        cmyk = encode_later(Image.new("CMYK", (8, 8)))
        concurrent.futures.wait([cmyk])  # done: appended in the foreground, so append itself raises
        with pytest.raises(StoreError, match="screenshot of step 2"):
            writer.append(sample_steps()[0], cmyk)
        writer.finish(Outcome.FINISHED)
    directory = tmp_path / "r" / "e"
    assert (directory / "screens" / "0.png").read_bytes() == png  # not decoded and encoded again
    assert screenshot(directory, 1).getpixel((3, 3)) == shot.getpixel((3, 3))
    assert len(read_episode(directory).steps) == 2 and no_temp_files(directory)


def test_a_step_whose_encoding_is_still_running_is_written_in_the_background_in_order(tmp_path):
    """`append` does not wait for an encoding still running: the step is written (PNG, then line) once it is done,
    before the next step; a failed encoding surfaces at the next call, and that step is not stored."""
    shot = image("teal", (40, 30))
    directory = tmp_path / "r" / "e"
    with TrajectoryStore(tmp_path).episode("r", "e", TASK) as writer:
        encoding: concurrent.futures.Future[bytes] = concurrent.futures.Future()
        assert writer.append(sample_steps()[0], encoding).index == 0  # returns while the encoding runs
        assert (directory / "steps.jsonl").read_bytes() == b"" and not (directory / "screens" / "0.png").exists()
        encoding.set_result(encode_png(shot))
        assert writer.append(sample_steps()[1]).index == 1  # waits for step 0: lines stay in order
        assert [s.index for s in read_episode(directory).steps] == [0, 1]
        assert (directory / "screens" / "0.png").read_bytes() == encoding.result()

        failing: concurrent.futures.Future[bytes] = concurrent.futures.Future()
        writer.append(sample_steps()[2], failing)
        failing.set_exception(OSError("encoder died"))
        with pytest.raises(StoreError, match="screenshot of step 2 as PNG: encoder died"):
            writer.append(sample_steps()[3])
        assert writer.next_index == 2  # neither step 2 nor the append that found its failure is stored
        writer.append(sample_steps()[3], encode_png(shot))
        late: concurrent.futures.Future[bytes] = concurrent.futures.Future()
        writer.append(sample_steps()[0], late)
        threading.Timer(0.2, late.set_result, [encode_png(shot)]).start()
        writer.finish(Outcome.FINISHED)  # waits for the last step
    episode = read_episode(directory)
    assert [s.index for s in episode.steps] == [0, 1, 2, 3] and episode.outcome is Outcome.FINISHED
    assert [p.name for p in sorted((directory / "screens").iterdir())] == ["0.png", "2.png", "3.png"]
    assert no_temp_files(directory)


def test_a_truncated_last_line_is_dropped_noted_and_cleaned_on_resume(tmp_path):
    store = TrajectoryStore(tmp_path)
    directory = tmp_path / "r" / "e"
    writer = store.episode("r", "e", TASK)
    for step in sample_steps()[:3]:
        writer.append(step)
    writer.close()
    with open(directory / "steps.jsonl", "ab") as f:
        f.write(b'{"index":3,"response":"half wri')
    image("red").save(directory / "screens" / "3.png")  # the in-flight step's screenshot, and a half-written one
    (directory / "screens" / ".4.png.123.tmp").write_bytes(b"\x89PNG")

    episode = read_episode(directory)
    assert episode.outcome is Outcome.INCOMPLETE and len(episode.steps) == 3
    assert "line 4" in episode.metadata["warnings"][0] and "in flight" in episode.metadata["warnings"][0]

    resumed = store.resume("r", "e")
    assert not (directory / "screens" / "3.png").exists() and no_temp_files(directory)
    assert resumed.append(sample_steps()[3]).index == 3
    resumed.finish(Outcome.ANSWERED, answer="done")
    again = read_episode(directory)
    assert len(again.steps) == 4 and again.steps[3].action == Answer(content="done")
    assert "warnings" not in again.metadata and "line 4" in again.metadata["resumes"][0]["warnings"][0]


def test_a_corrupt_middle_line_is_an_error_naming_file_and_line(tmp_path):
    store = TrajectoryStore(tmp_path)
    with store.episode("r", "e", TASK) as writer:
        for step in sample_steps():
            writer.append(step)
        writer.finish(Outcome.FINISHED)
    path = tmp_path / "r" / "e" / "steps.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = '{"index": 1, "action": {"type": "Teleport"}}\n'
    path.write_text("".join(lines))
    with pytest.raises(StoreError, match=r"steps\.jsonl line 2 is corrupt"):
        read_episode(tmp_path / "r" / "e")


def _finished_episode(tmp_path, finish=True):
    store = TrajectoryStore(tmp_path)
    writer = store.episode("r", "e", TASK)
    for step in sample_steps():
        writer.append(step)
    if finish:
        writer.finish(Outcome.FINISHED)
    else:
        writer.close()
    return store, tmp_path / "r" / "e"


def _renumber(path, line_index, step_index):
    lines = path.read_text().splitlines(keepends=True)
    record = json.loads(lines[line_index])
    record["index"] = step_index
    lines[line_index] = json.dumps(record) + "\n"
    path.write_text("".join(lines))


@pytest.mark.parametrize("finish", [True, False], ids=["finished", "unfinished"])
def test_a_middle_line_holding_another_step_number_is_an_error_naming_line_and_numbers(tmp_path, finish):
    store, directory = _finished_episode(tmp_path, finish)
    _renumber(directory / "steps.jsonl", 1, 5)  # well-formed JSON, a valid step: only its number is wrong
    with pytest.raises(StoreError, match=r"steps\.jsonl line 2 holds step 5, expected 1; was it edited\?"):
        read_episode(directory)
    if not finish:
        with pytest.raises(StoreError, match=r"line 2 holds step 5, expected 1"):
            store.resume("r", "e")


def test_swapped_step_lines_are_an_error(tmp_path):
    _, directory = _finished_episode(tmp_path)
    path = directory / "steps.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[1], lines[2] = lines[2], lines[1]
    path.write_text("".join(lines))
    with pytest.raises(StoreError, match=r"line 2 holds step 2, expected 1"):
        read_episode(directory)


@pytest.mark.parametrize("n_steps", [3, 5, None])
def test_an_episode_whose_step_count_disagrees_with_its_steps_is_an_error(tmp_path, n_steps):
    _, directory = _finished_episode(tmp_path)
    summary = json.loads((directory / "episode.json").read_text())
    assert summary["n_steps"] == 4 and len(read_episode(directory).steps) == 4
    summary["n_steps"] = n_steps
    (directory / "episode.json").write_text(json.dumps(summary))
    with pytest.raises(StoreError, match=rf"episode\.json says {n_steps} steps but steps\.jsonl holds 4 complete ones"):
        read_episode(directory)


def test_a_finished_episode_that_lost_its_last_step_line_is_an_error_not_a_shorter_episode(tmp_path):
    _, directory = _finished_episode(tmp_path)
    path = directory / "steps.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][:10])  # the last line cut short, as by a crash
    with pytest.raises(StoreError, match=r"says 4 steps but steps\.jsonl holds 3 complete ones \(steps\.jsonl line 4: "
                                         r"dropped an incomplete last line"):
        read_episode(directory)


def test_verdicts_and_step_labels_are_merged_atomically(tmp_path):
    store = TrajectoryStore(tmp_path)
    directory = tmp_path / "r" / "e"
    with store.episode("r", "e", TASK) as writer:
        for step in sample_steps():
            writer.append(step)
        writer.finish(Outcome.FINISHED, verdicts={"rule": {"success": False}})
    write_verdicts(directory, {"judge": {"success": True}}, {2: {"progress": 0.5}})
    updated = write_verdicts(directory, {}, {2: {"critical": True}, 0: {"progress": 0.1}})
    assert dict(updated.verdicts) == {"rule": {"success": False}, "judge": {"success": True}}
    assert dict(updated.steps[2].labels) == {"useful": True, "progress": 0.5, "critical": True}
    assert dict(updated.steps[0].labels) == {"progress": 0.1}
    assert read_episode(directory) == updated and no_temp_files(directory)
    with pytest.raises(StoreError, match=r"step\(s\) \[9\]"):
        write_verdicts(directory, {}, {9: {"x": 1}})
    store.episode("r", "open", TASK).close()
    with pytest.raises(StoreError, match="not finished"):
        write_verdicts(tmp_path / "r" / "open", {"judge": {}})


@pytest.fixture
def two_episode_run(tmp_path):
    store = TrajectoryStore(tmp_path / "runs")
    with store.episode("run-7", "ep-a", TASK) as writer:
        writer.append(sample_steps()[0], image("red"))
        writer.append(sample_steps()[2], image("blue", (40, 30)))
        writer.append(sample_steps()[1])
        writer.finish(Outcome.FINISHED, answer="a note")
    writer = store.episode("run-7", "ep-b", TASK.with_instruction("Delete it"))
    writer.append(sample_steps()[0], image("green"))
    writer.close()
    return tmp_path / "runs" / "run-7"


def test_export_to_parquet_loads_with_datasets_and_images_decode(two_episode_run, tmp_path):
    import datasets

    out = export_parquet(two_episode_run, tmp_path / "export" / "steps.parquet")
    rows = datasets.load_dataset("parquet", data_files=str(out), split="train", cache_dir=str(tmp_path / "hf"))
    assert rows.num_rows == 4
    assert isinstance(rows.features["image"], datasets.Image)
    assert rows["episode_id"] == ["ep-a", "ep-a", "ep-a", "ep-b"]
    assert rows["outcome"] == ["finished", "finished", "finished", "incomplete"]
    assert rows["instruction"][3] == "Delete it" and rows["platform"][0] == "web" and rows["step"] == [0, 1, 2, 0]
    assert json.loads(rows["action"][1])["actions"][1] == {"type": "Type", "content": "milk ✓"}
    assert rows["action"][2] is None and rows["error"][2].startswith("parse error")
    assert rows["executed"] == [True, True, False, True]
    assert json.loads(rows["timings"][0]) == {"model": 1.25, "execute": 0.5}
    first, second, third = rows[0]["image"], rows[1]["image"], rows[2]["image"]
    assert first.size == (32, 24) and first.convert("RGB").getpixel((1, 1)) == (255, 0, 0)
    assert second.size == (40, 30) and third is None
    assert not list(out.parent.glob(".*"))


def test_export_of_a_directory_without_episodes_is_an_error(tmp_path):
    with pytest.raises(StoreError, match="neither a run directory"):
        export_parquet(tmp_path, tmp_path / "x.parquet")
    assert not (tmp_path / "x.parquet").exists()


def test_runs_cli_shows_episodes_steps_and_exports(two_episode_run, tmp_path):
    runner = CliRunner()
    shown = runner.invoke(app, ["show", str(two_episode_run)])
    assert shown.exit_code == 0, shown.output
    assert "ep-a" in shown.output and "ep-b" in shown.output and "notes/create" in shown.output
    assert "finished" in shown.output and "incomplete" in shown.output and "a note" in shown.output
    assert '"Click"' not in shown.output

    detailed = runner.invoke(app, ["show", str(two_episode_run / "ep-a"), "--steps"], terminal_width=200)
    assert detailed.exit_code == 0, detailed.output
    assert "ep-b" not in detailed.output
    assert '"Click"' in detailed.output and "parse error" in detailed.output and "model 1.25s" in detailed.output

    out = tmp_path / "cli.parquet"
    exported = runner.invoke(app, ["export", str(two_episode_run), "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    assert "wrote 4 steps" in exported.output and out.exists()

    missing = runner.invoke(app, ["show", str(tmp_path / "nowhere")])
    assert missing.exit_code == 1 and "not a directory" in missing.output
