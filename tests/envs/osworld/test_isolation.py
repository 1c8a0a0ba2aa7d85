"""The isolated root: what a task's commands write stays in its throwaway folder; the host is never touched."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from uivenus.envs.osworld.isolation import BubblewrapMissing, CommandFailed, IsolatedRoot, UnsafeHost


@pytest.fixture()
def root(tmp_path: Path):
    made = IsolatedRoot(":0", parent=tmp_path)
    yield made
    made.close()


def test_writes_to_host_paths_stay_in_the_root(root: IsolatedRoot) -> None:
    name = f"uivenus-escape-{uuid.uuid4().hex}"
    done = root.run(f"echo home > /home/user/{name}; echo tmp > /tmp/{name}; echo r > /root/{name}; "
                    f"echo etc > /etc/{name} || echo etc-refused", setup=True)
    assert "etc-refused" in done.stdout and "Read-only file system" in done.stderr
    assert root.host_path(f"/home/user/{name}").read_text() == "home\n"
    assert root.host_path(f"/tmp/{name}").read_text() == "tmp\n"
    for host in (Path("/root") / name, Path("/tmp") / name, Path("/etc") / name):
        assert not host.exists(), f"the sandbox wrote the host's {host}"
    folder = root.dir
    root.close()
    assert not folder.exists()


def test_everything_runs_as_user_and_sudo_only_in_setup_commands(root: IsolatedRoot) -> None:
    app = root.run("id -u; echo $HOME; pwd; sudo true || echo no-sudo")
    assert app.stdout.split()[:3] == ["1000", "/home/user", "/home/user"]
    assert "no-sudo" in app.stdout
    setup = root.run("echo password | sudo -S sh -c 'id -u > /home/user/who'; sudo -u root touch /etc/x || echo ro",
                     setup=True)
    assert setup.stdout == "ro\n", setup.stderr
    assert root.host_path("/home/user/who").read_text() == "1000\n"  # the sandbox's one user; no real root


def test_the_sandbox_sees_only_its_own_processes_and_close_kills_them(root: IsolatedRoot) -> None:
    app = root.spawn(["sleep", "300"])
    deadline = time.monotonic() + 5
    while root.run("ps -eo comm").stdout.split().count("sleep") < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # the sandbox's pid 1 is a sleep too; wait for the app's
    seen = root.run("ps -eo comm").stdout.split()
    assert seen.count("sleep") == 2 and "python" not in " ".join(seen) and len(seen) < 10  # none of the host's
    killed = root.run("pkill -x sleep; echo $?", setup=True)
    assert killed.stdout == "0\n" and app.wait(timeout=5) is not None  # a setup command reaches the task's apps
    again = root.spawn(["sleep", "300"])
    root.close()
    assert again.wait(timeout=5) is not None


def test_a_command_past_its_timeout_is_an_error(root: IsolatedRoot) -> None:
    with pytest.raises(CommandFailed, match="timeout"):
        root.run(["sleep", "5"], timeout=0.5)


def test_without_bwrap_nothing_runs_and_the_error_names_the_package(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BubblewrapMissing, match="apt-get install bubblewrap.*--unsafe-host"):
        IsolatedRoot(":0", parent=tmp_path)


def test_unsafe_host_runs_on_the_bare_host(tmp_path: Path) -> None:
    host = UnsafeHost(":0", parent=tmp_path)
    try:
        marker = tmp_path / "written-by-the-host"
        done = host.run(f"echo $HOME > {marker}; echo hi > /home/user/x 2>/dev/null || true; cat /proc/1/comm")
        assert marker.read_text().strip() == str(host.home)  # a real host path: no sandbox in between
        assert done.stdout.strip() == Path("/proc/1/comm").read_text().strip()  # the host's own init
        assert host.host_path("/home/user/notes.txt") == host.home / "notes.txt"
        assert host.host_path("/etc/hostname") == Path("/etc/hostname")
    finally:
        host.close()


def test_host_paths_map_the_sandboxs_home_and_tmp(root: IsolatedRoot) -> None:
    assert root.host_path("/home/user/a/b.txt") == root.home / "a" / "b.txt"
    assert root.host_path("~/c.txt") == root.home / "c.txt"
    assert root.host_path("d.txt") == root.home / "d.txt"
    assert root.host_path("/tmp/e") == root.tmp / "e"
    assert root.host_path("/home/user/../user/f") == root.home / "f"
    assert root.host_path("/usr/share") == Path("/usr/share")
    assert os.path.isdir(root.host_path("/home/user"))



def test_a_command_that_leaves_a_process_running_returns_at_its_own_end(root: IsolatedRoot) -> None:
    started = time.monotonic()
    done = root.run("sleep 30 & echo started", setup=True)
    assert done.stdout == "started\n" and time.monotonic() - started < 5  # the sleep holds no pipe of ours
