"""AndroidEnv without a phone: the exact commands each action sends, the IME path, coordinates, device
discovery against real TCP peers (a closed port, a small adb host-protocol server, the real adb server),
and the real adbutils transport over the adb wire protocol to a real /bin/sh holding stub device tools.

No emulator runs here, so command-level tests use `RecordingDevice`: it records every argument list the
env sends and answers the few queries the env makes (`wm size`, `pm list packages`, `ime list`, `dumpsys
window`, a screencap) with what a 1080x2400 phone answers.
"""

from __future__ import annotations

import base64
import io
import shlex
import socket
import subprocess
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from PIL import Image

from uivenus.actions.coords import Frame
from uivenus.actions.space import (
    Answer, Click, DoubleClick, Drag, Finished, Hotkey, LaunchApp, LongPress, PressBack, PressEnter, PressHome,
    PressRecent, Swipe, TakeNote, Type, Wait,
)
from uivenus.envs.android import (
    ADB_KEYBOARD_IME, AdbCommandError, AdbServerUnavailableError, AmbiguousDeviceError, AndroidConfig, AndroidEnv,
    AppNotFoundError, DeviceNotFoundError, DeviceOfflineError, DeviceUnauthorizedError, ImeMissingError,
    LAUNCHER_QUERY, NoDeviceError, connect_adb, parse_wm_size, resolve_package,
)
from uivenus.envs.base import EnvCrashedError, OffScreenError, PlatformMismatchError, SetupError
from uivenus.envs.gym import GymEnv
from uivenus.records import TaskSpec

PACKAGES = ("com.android.settings", "com.android.chrome", "com.google.android.deskclock",
            "com.android.providers.settings", "org.example.notes", "org.example.notes.widget")
#: What LAUNCHER_QUERY lists: the apps with an icon (the settings provider and the widget have none).
LAUNCHER_ACTIVITIES = ("com.android.settings/.Settings", "com.android.settings/.SubSettings",
                       "com.android.chrome/com.google.android.apps.chrome.Main",
                       "com.google.android.deskclock/com.android.deskclock.DeskClock",
                       "org.example.notes/.MainActivity")


def png(size: tuple[int, int], colour: tuple[int, int, int] = (20, 120, 220)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


class RecordingDevice:
    """Stands in for a phone we cannot run: records commands, answers the env's queries like a 1080x2400 device."""

    serial = "emulator-5554"

    def __init__(self, *, wm_size: str = "Physical size: 1080x2400", imes: Sequence[str] = (),
                 screen: bytes | None = None, launcher: Sequence[str] = LAUNCHER_ACTIVITIES) -> None:
        self.commands: list[list[str]] = []
        self.screen = screen if screen is not None else png((1080, 2400))
        self.answers = {
            ("wm", "size"): wm_size,
            ("pm", "list", "packages"): "\n".join(f"package:{p}" for p in PACKAGES),
            LAUNCHER_QUERY: "\n".join(launcher),
            ("ime", "list", "-a", "-s"): "\n".join(["com.android.inputmethod.latin/.LatinIME", *imes]),
            ("dumpsys", "window"):
                "  mCurrentFocus=Window{4a1b2c u0 com.android.settings/com.android.settings.Settings}",
        }

    def shell(self, args: Sequence[str]) -> str:
        assert all(isinstance(a, str) for a in args), args
        self.commands.append(list(args))
        return self.answers.get(tuple(args), "")

    def screencap(self) -> bytes:
        return self.screen

    @property
    def sent(self) -> list[list[str]]:
        """The commands that act on the device (queries left out)."""
        return [c for c in self.commands if tuple(c) not in self.answers]


def make_env(device: RecordingDevice | None = None, **config: object) -> tuple[AndroidEnv, RecordingDevice]:
    device = device or RecordingDevice()
    return AndroidEnv(AndroidConfig(settle_s=0, **config), transport=device), device  # type: ignore[arg-type]


# --- commands ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("action", "expected"), [
    (Click(point=(540, 1200)), [["input", "tap", "540", "1200"]]),
    (Click(point=(10.5, 20.4)), [["input", "tap", "11", "20"]]),
    (DoubleClick(point=(5, 6)), [["input", "tap", "5", "6"], ["input", "tap", "5", "6"]]),
    (LongPress(point=(100, 200)), [["input", "swipe", "100", "200", "100", "200", "1000"]]),
    (LongPress(point=(100, 200), duration=2.5), [["input", "swipe", "100", "200", "100", "200", "2500"]]),
    (Swipe(start=(500, 1800), end=(500, 600)), [["input", "swipe", "500", "1800", "500", "600", "300"]]),
    (Drag(start=(100, 100), end=(900, 100)), [["input", "swipe", "100", "100", "900", "100", "1000"]]),
    (PressBack(), [["input", "keyevent", "KEYCODE_BACK"]]),
    (PressHome(), [["input", "keyevent", "KEYCODE_HOME"]]),
    (PressEnter(), [["input", "keyevent", "KEYCODE_ENTER"]]),
    (PressRecent(), [["input", "keyevent", "KEYCODE_APP_SWITCH"]]),
    (Type(content="hello world"), [["input", "text", "hello%sworld"]]),
    (Type(content="a\nb"), [["input", "text", "a"], ["input", "keyevent", "KEYCODE_ENTER"], ["input", "text", "b"]]),
    (Type(content="50%s off"), [["input", "text", "50%"], ["input", "text", "s%soff"]]),
    (Wait(seconds=0.01), []),
    (Finished(), []),
    (Answer(content="42"), []),
    (TakeNote(content="price is 3"), []),
])
def test_each_mobile_action_sends_exact_argument_lists(action, expected):
    env, device = make_env()
    result = env.step(action)
    assert result.executed, result.error
    assert device.sent == expected


def test_shell_text_travels_as_one_quoted_argument():
    """Model text full of shell syntax stays one argument: quoting the list and splitting it gives it back."""
    env, device = make_env()
    env.step(Type(content="it's $HOME & `rm -rf /`; echo | x"))
    (command,) = device.sent
    assert command == ["input", "text", "it's%s$HOME%s&%s`rm%s-rf%s/`;%secho%s|%sx"]
    from adbutils._utils import list2cmdline  # what AdbutilsTransport's device.shell([...]) sends
    assert shlex.split(list2cmdline(command)) == command


def test_non_ascii_text_goes_through_the_ime_broadcast():
    env, device = make_env(RecordingDevice(imes=[ADB_KEYBOARD_IME]))
    assert env.step(Type(content="你好, café")).executed
    assert device.sent[:2] == [["ime", "enable", ADB_KEYBOARD_IME], ["ime", "set", ADB_KEYBOARD_IME]]
    broadcast = device.sent[2]
    assert broadcast[:6] == ["am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg"]
    assert base64.b64decode(broadcast[6]).decode("utf-8") == "你好, café"
    assert ["ime", "list", "-a", "-s"] in device.commands


def test_non_ascii_text_without_the_ime_is_a_clear_error():
    env, device = make_env()
    result = env.step(Type(content="naïve"))
    assert not result.executed
    assert result.error.startswith("ImeMissingError")
    assert "ADBKeyboard" in result.error and "adb install" in result.error
    assert device.sent == []
    with pytest.raises(ImeMissingError, match="ime is None"):
        make_env(ime=None)[0].type_text("naïve")


def test_launch_app_by_package_label_and_name():
    env, device = make_env(app_labels={"My Notes": "org.example.notes"})
    for app, package in [("com.android.chrome", "com.android.chrome"), ("Clock", "com.google.android.deskclock"),
                         ("my notes", "org.example.notes"), ("Chrome", "com.android.chrome"),
                         ("Settings", "com.android.settings"), ("notes", "org.example.notes")]:
        device.commands.clear()
        result = env.step(LaunchApp(app=app))
        assert result.executed, result.error
        assert result.info["package"] == package
        assert list(LAUNCHER_QUERY) in device.commands
        assert device.sent == [["monkey", "-p", package, "-c", "android.intent.category.LAUNCHER", "1"]]


def test_without_a_launcher_listing_names_match_installed_packages():
    env, device = make_env(RecordingDevice(launcher=()))
    assert env.step(LaunchApp(app="Chrome")).info["package"] == "com.android.chrome"
    assert ["pm", "list", "packages"] in device.commands
    result = env.step(LaunchApp(app="Settings"))  # now the settings provider matches as well
    assert not result.executed and "several apps" in result.error


def test_app_names_that_match_several_or_none_are_errors():
    with pytest.raises(AppNotFoundError, match="several apps.*com.android.providers.settings"):
        resolve_package("settings", PACKAGES, {})  # two packages end in .settings
    assert resolve_package("settings", PACKAGES, {"settings": "com.android.settings"}) == "com.android.settings"
    with pytest.raises(AppNotFoundError, match="no launchable app matches a package name 'com.example.gone'"):
        resolve_package("com.example.gone", PACKAGES, {})
    env, device = make_env()
    result = env.step(LaunchApp(app="Spotify"))
    assert not result.executed and "AppNotFoundError" in result.error and "pm list packages" in result.error
    assert device.sent == []


def test_reset_goes_home_and_starts_the_app_fresh():
    env, device = make_env()
    observation = env.reset(TaskSpec(id="t", instruction="open chrome", platform="mobile", app="Chrome",
                                     url="https://example.org/"))
    assert device.sent == [
        ["input", "keyevent", "KEYCODE_HOME"],
        ["am", "force-stop", "com.android.chrome"],
        ["monkey", "-p", "com.android.chrome", "-c", "android.intent.category.LAUNCHER", "1"],
        ["am", "start", "-a", "android.intent.action.VIEW", "-d", "https://example.org/"],
    ]
    assert observation.app == "com.android.settings"  # what dumpsys reported as focused
    with pytest.raises(SetupError, match="no launchable app matches"):
        env.reset(TaskSpec(id="t2", instruction="", platform="mobile", app="Spotify"))
    with pytest.raises(SetupError, match="AndroidEnv runs mobile tasks"):
        env.reset(TaskSpec(id="t3", instruction="", platform="web"))


def test_drag_without_start_and_desktop_actions_are_refused():
    env, device = make_env()
    result = env.step(Drag(end=(10, 10)))
    assert not result.executed and "UnsupportedActionError" in result.error and "give start" in result.error
    with pytest.raises(PlatformMismatchError):
        env.step(Hotkey(keys=("ctrl", "c")))
    with pytest.raises(OffScreenError):
        env.step(Click(point=(1080, 100)))
    assert device.sent == []


# --- screen and coordinates ---------------------------------------------------------------------------

def test_observation_is_the_device_screen_in_device_pixels():
    env, _ = make_env()
    observation = env.observe()
    assert env.screen_size == observation.size == (1080, 2400)
    assert observation.screenshot.mode == "RGB" and observation.screenshot.size == (1080, 2400)
    assert observation.screenshot.getpixel((5, 5)) == (20, 120, 220)
    assert observation.platform.value == "mobile"


def test_size_follows_override_and_rotation():
    assert parse_wm_size("Physical size: 1080x2400\nOverride size: 720x1600") == (720, 1600)
    env, _ = make_env(RecordingDevice(screen=png((2400, 1080))))
    assert env.observe().size == (2400, 1080)
    assert env.screen_size == (2400, 1080)


def test_garbage_screencap_is_a_crash():
    env, _ = make_env(RecordingDevice(screen=b"error: closed"))
    with pytest.raises(EnvCrashedError, match="returned no PNG"):
        env.observe()


def test_relative_frame_maps_to_exact_tap_pixels():
    frame = Frame.relative(1080, 2400)
    env, device = make_env()
    env.step(frame.action_to_screen(Click(point=(500, 500))))
    env.step(frame.action_to_screen(Swipe(start=(500, 750), end=(500, 250))))
    assert device.sent == [["input", "tap", "540", "1200"], ["input", "swipe", "540", "1800", "540", "600", "300"]]


def test_gym_wrapper_parses_model_text_in_the_relative_frame():
    env, device = make_env()
    gym_env = GymEnv(env, frame=Frame.relative)
    observation, _ = gym_env.reset(options={"task": TaskSpec(id="t", instruction="", platform="mobile")})
    assert observation.shape == (2400, 1080, 3) == gym_env.observation_space.shape
    device.commands.clear()
    _, reward, terminated, truncated, info = gym_env.step("Click(point=(999, 0))")
    assert device.sent == [["input", "tap", "1079", "0"]]
    assert info["executed"] and info["action"] == {"type": "Click", "point": [1079, 0]}
    assert (reward, terminated, truncated) == (0.0, False, False)


# --- discovery against real TCP peers -------------------------------------------------------------------

def _recv_exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n and (chunk := conn.recv(n - len(data))):
        data += chunk
    return data


class AdbHostServer:
    """A real TCP peer on 127.0.0.1 speaking the adb host protocol: `host:devices` and `host:version`, and,
    when `shell_path` is given, a device behind it: `host:tport:serial:…` then `shell:CMD` runs CMD in a real
    /bin/sh whose PATH is `shell_path` (stub device tools), and `exec:screencap -p` sends `screen`."""

    def __init__(self, devices: Sequence[tuple[str, str]], shell_path: Path | None = None,
                 screen: bytes = b"") -> None:
        self.listing = "".join(f"{serial}\t{state}\n" for serial, state in devices).encode()
        self.serials = {serial for serial, _ in devices}
        self.shell_path, self.screen = shell_path, screen
        self.requests: list[str] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            self._handle(conn)

    def _handle(self, conn: socket.socket) -> None:
        while len(length := _recv_exact(conn, 4)) == 4:  # a bare connect (probing the server) sends nothing
            request = _recv_exact(conn, int(length, 16)).decode()
            self.requests.append(request)
            blocks = {"host:devices": self.listing, "host:version": b"0029"}
            if request in blocks:
                conn.sendall(b"OKAY" + b"%04x" % len(blocks[request]) + blocks[request])
            elif request.startswith("host:tport:serial:") and request.split(":", 3)[3] in self.serials:
                conn.sendall(b"OKAY" + (1).to_bytes(8, "little"))
                continue  # the device's service request follows on this connection
            elif request.startswith("shell:") and self.shell_path is not None:
                ran = subprocess.run(["/bin/sh", "-c", request.removeprefix("shell:")], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env={"PATH": str(self.shell_path)}, timeout=10)
                conn.sendall(b"OKAY" + ran.stdout)
            elif request == "exec:screencap -p":
                conn.sendall(b"OKAY" + self.screen)
            else:
                conn.sendall(b"FAIL0007unknown")
            return

    def close(self) -> None:
        self._sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        self._sock.close()
        self._thread.join(timeout=5)


@pytest.fixture
def adb_server(request) -> Iterator[AdbHostServer]:
    server = AdbHostServer(request.param)
    yield server
    server.close()


def discover(port: int, serial: str | None = None):
    return connect_adb(AndroidConfig(serial=serial, adb_port=port, command_timeout_s=5))


def test_no_adb_server_is_a_typed_error():
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]
    with pytest.raises(AdbServerUnavailableError, match=rf"no adb server at 127.0.0.1:{port}.*adb start-server"):
        discover(port)


@pytest.mark.parametrize(("adb_server", "serial", "error", "advice"), [
    ([], None, NoDeviceError, "emulator -avd"),
    ([("emulator-5554", "device"), ("R58M123", "device")], None, AmbiguousDeviceError, "android:SERIAL"),
    ([("R58M123", "unauthorized")], None, DeviceUnauthorizedError, "Allow USB debugging"),
    ([("emulator-5554", "offline")], None, DeviceOfflineError, "adb reconnect"),
    ([("emulator-5554", "device")], "R58M123", DeviceNotFoundError, "attached: emulator-5554 \\(device\\)"),
    ([("emulator-5554", "device"), ("R58M123", "unauthorized")], "R58M123", DeviceUnauthorizedError, "R58M123"),
], indirect=["adb_server"])
def test_discovery_errors_say_what_to_do(adb_server, serial, error, advice):
    with pytest.raises(error, match=advice):
        discover(adb_server.port, serial)
    assert adb_server.requests == ["host:devices"]


@pytest.mark.parametrize("adb_server", [[("emulator-5554", "device"), ("R58M123", "device")]], indirect=True)
def test_discovery_picks_the_named_device(adb_server):
    assert discover(adb_server.port, "R58M123").serial == "R58M123"


def test_a_real_adb_server_with_no_device():
    """The adb binary adbutils ships, started on a private port: it sees no device here."""
    from adbutils._utils import adb_path

    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]
    try:
        adb = adb_path()
        subprocess.run([adb, "-P", str(port), "start-server"], check=True, timeout=30, capture_output=True)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"the adb binary cannot start a server here: {exc}")
    try:
        with pytest.raises(NoDeviceError, match="sees no device"):
            discover(port)
    finally:
        subprocess.run([adb, "-P", str(port), "kill-server"], timeout=30, capture_output=True)


# --- the real transport over the adb wire protocol ---------------------------------------------------

_RECORD = """#!/bin/sh
printf '%s\\0' "${0##*/}" "$@" >> "$0.log"
"""
_STUBS = {
    "wm": "#!/bin/sh\necho 'Physical size: 1080x2400'\n",
    "dumpsys": "#!/bin/sh\necho '  mCurrentFocus=Window{1 u0 com.android.chrome/org.chromium.Main}'\n",
    "fail": "#!/bin/sh\necho 'Error: no such thing' >&2\nexit 3\n",
    "input": _RECORD,
}


@pytest.fixture
def device_server(tmp_path) -> Iterator[AdbHostServer]:
    """One attached device whose shell is a real /bin/sh with stub `wm`, `dumpsys`, `input` and `fail`."""
    for name, script in _STUBS.items():
        (tmp_path / name).write_text(script)
        (tmp_path / name).chmod(0o755)
    server = AdbHostServer([("emulator-5554", "device")], shell_path=tmp_path, screen=png((1080, 2400), (1, 2, 3)))
    yield server
    server.close()


def recorded(server: AdbHostServer) -> list[list[str]]:
    log = server.shell_path / "input.log"
    fields = log.read_bytes().decode().split("\0")[:-1] if log.exists() else []
    calls, current = [], []
    for value in fields:
        if value == "input" and current:
            calls.append(current)
            current = []
        current.append(value)
    return calls + ([current] if current else [])


def test_real_transport_sends_argument_lists_a_shell_reads_back(device_server):
    transport = discover(device_server.port)
    text = "it's $HOME & `id`; echo \"x\" | y %s"
    transport.shell(["input", "text", text])
    assert recorded(device_server) == [["input", "text", text]]
    assert transport.shell(["wm", "size"]) == "Physical size: 1080x2400"
    with pytest.raises(AdbCommandError, match=r"`fail now` exited 3: Error: no such thing"):
        transport.shell(["fail", "now"])
    assert transport.screencap() == png((1080, 2400), (1, 2, 3))


def test_android_env_over_the_wire(device_server):
    env = AndroidEnv(AndroidConfig(adb_port=device_server.port, settle_s=0))
    observation = env.observe()
    assert observation.size == (1080, 2400) and observation.app == "com.android.chrome"
    assert observation.screenshot.getpixel((0, 0)) == (1, 2, 3)
    assert env.step(Frame.relative(1080, 2400).action_to_screen(Click(point=(500, 500)))).executed
    assert env.step(Type(content="hi there")).executed
    assert recorded(device_server) == [["input", "tap", "540", "1200"], ["input", "text", "hi%sthere"]]
