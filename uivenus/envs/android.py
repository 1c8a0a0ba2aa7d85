"""Android phones and emulators over adb: screenshots by `screencap`, input by `input`, apps by `pm`/`monkey`.

adb `input` takes the display's own pixels, so the logical screen *is* the device's pixel size from
`wm size` and screen density never enters: a point in logical pixels is the pixel that gets touched.
Every device command is an argument list (never a shell string built from model text) sent through a
small `AdbTransport`, so what the env does is testable without a device; `connect_adb` finds the device
and builds the real transport over adbutils. The action-to-`input` mapping itself is
`uivenus.actions.convert.adb.adb_commands`; this module adds what needs the device: app lookup, the
IME for non-ASCII text, screenshots and device discovery.
"""

from __future__ import annotations

import base64
import io
import re
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from PIL import Image, UnidentifiedImageError

from uivenus.actions.convert.adb import adb_commands
from uivenus.actions.convert.base import ConvertError
from uivenus.actions.space import Action, ActionType, LaunchApp, Platform, PressHome, Type, Wait
from uivenus.envs.base import EnvBase, EnvCrashedError, EnvError, Observation, SetupError
from uivenus.records import TaskSpec

#: The ADBKeyboard IME (https://github.com/senzhk/ADBKeyBoard), which types any Unicode text it is sent.
ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
ADB_KEYBOARD_URL = "https://github.com/senzhk/ADBKeyBoard"
#: The broadcast ADBKeyboard listens for: base64 of the UTF-8 text, so no character needs escaping.
IME_BROADCAST_ACTION = "ADB_INPUT_B64"

#: Display names of common AOSP/Google apps whose package names do not spell the name.
DEFAULT_APP_LABELS: Mapping[str, str] = MappingProxyType({
    "camera": "com.android.camera2",
    "clock": "com.google.android.deskclock",
    "files": "com.google.android.documentsui",
    "messages": "com.google.android.apps.messaging",
    "phone": "com.google.android.dialer",
    "gmail": "com.google.android.gm",
    "maps": "com.google.android.apps.maps",
    "photos": "com.google.android.apps.photos",
    "calendar": "com.google.android.calendar",
    "playstore": "com.android.vending",
    "youtube": "com.google.android.youtube",
})

_ADB_SETUP_HINT = ("see docs/android.md (start an emulator with `emulator -avd NAME` or plug in a phone with USB "
                   "debugging on)")


class AndroidError(EnvError):
    """Base of Android errors: discovery, device commands, apps, text input."""


class AdbServerUnavailableError(AndroidError):
    """Nothing answers at the adb server's host:port."""


class NoDeviceError(AndroidError):
    """The adb server sees no device at all."""


class AmbiguousDeviceError(AndroidError):
    """Several devices are attached and no serial says which one to use."""


class DeviceNotFoundError(AndroidError):
    """The requested serial is not attached to the adb server."""


class DeviceUnauthorizedError(AndroidError):
    """The device has not accepted this computer's adb key yet."""


class DeviceOfflineError(AndroidError):
    """The device is attached but not answering (booting, or its adb connection is stuck)."""


class AdbCommandError(AndroidError):
    """A device command exited with an error."""


class UnsupportedActionError(AndroidError):
    """The action cannot be done on a phone as given (e.g. a Drag without a start point)."""


class ImeMissingError(AndroidError):
    """Non-ASCII text needs the ADBKeyboard IME, which is not installed (or IME typing is switched off)."""


class AppNotFoundError(AndroidError):
    """No installed app matches the name, or several do."""


@dataclass(frozen=True)
class AndroidConfig:
    """Which device and adb server to use, and how patient to be with them."""

    serial: str | None = None  # None: the only attached device
    adb_host: str = "127.0.0.1"
    adb_port: int = 5037
    screenshot_timeout_s: float = 10.0
    command_timeout_s: float = 30.0
    ime: str | None = ADB_KEYBOARD_IME  # IME for non-ASCII text; None: non-ASCII text is an error
    app_labels: Mapping[str, str] = field(default_factory=dict)  # display name -> package, over DEFAULT_APP_LABELS
    settle_s: float = 1.0  # pause after an action so animations finish before the screenshot
    default_wait_s: float = 2.0  # Wait() without seconds

    def __post_init__(self) -> None:
        object.__setattr__(self, "app_labels", MappingProxyType(dict(self.app_labels)))


class AdbTransport(Protocol):
    """The two things the env needs from a device: run a command, take a PNG screenshot."""

    @property
    def serial(self) -> str: ...

    def shell(self, args: Sequence[str]) -> str:
        """Run `args` on the device; its output. A non-zero exit raises `AdbCommandError`."""

    def screencap(self) -> bytes:
        """PNG bytes of the current screen (`adb exec-out screencap -p`)."""


# --- device discovery -----------------------------------------------------------------------------

_STATE_ERRORS: Mapping[str, tuple[type[AndroidError], str]] = MappingProxyType({
    "unauthorized": (DeviceUnauthorizedError,
                     "unlock the phone and accept the 'Allow USB debugging?' prompt, then retry"),
    "offline": (DeviceOfflineError,
                "wait for it to finish booting, or run `adb reconnect` (or `adb kill-server`) and retry"),
})


def choose_device(devices: Sequence[tuple[str, str]], serial: str | None) -> str:
    """The serial to use among `(serial, state)` pairs the adb server lists, or a typed error saying what to do."""
    listing = ", ".join(f"{s} ({state})" for s, state in devices)
    if serial is not None:
        found = [state for s, state in devices if s == serial]
        if not found:
            raise DeviceNotFoundError(
                f"no device {serial!r} is attached; attached: {listing or 'none'}. Check `adb devices` "
                f"(network devices need `adb connect {serial}` first)")
        state = found[0]
    elif not devices:
        raise NoDeviceError(f"the adb server sees no device; {_ADB_SETUP_HINT}, then check `adb devices`")
    elif len(devices) > 1:
        raise AmbiguousDeviceError(
            f"{len(devices)} devices are attached ({listing}); pick one with AndroidConfig(serial=...) "
            "or `--env android:SERIAL`")
    else:
        serial, state = devices[0]
    if state != "device":
        error, advice = _STATE_ERRORS.get(state, (DeviceOfflineError, "check `adb devices` and retry"))
        raise error(f"device {serial} is {state}: {advice}")
    return serial


def connect_adb(config: AndroidConfig) -> AdbutilsTransport:
    """Find the configured device through the adb server and wrap it (typed errors say what to fix)."""
    import adbutils

    _require_server(config.adb_host, config.adb_port)
    client = adbutils.AdbClient(host=config.adb_host, port=config.adb_port, socket_timeout=config.command_timeout_s)
    try:
        devices = [(info.serial, info.state) for info in client.list()]
    except (adbutils.AdbError, OSError) as exc:
        raise AdbServerUnavailableError(
            f"the adb server at {config.adb_host}:{config.adb_port} did not list devices ({exc}); "
            "restart it with `adb kill-server && adb start-server`") from None
    serial = choose_device(devices, config.serial)
    return AdbutilsTransport(client.device(serial), config)


def _require_server(host: str, port: int) -> None:
    """Fail fast when no adb server listens (adbutils would otherwise try to launch one itself)."""
    try:
        with socket.create_connection((host, port), timeout=3):
            return
    except OSError as exc:
        raise AdbServerUnavailableError(
            f"no adb server at {host}:{port} ({exc.strerror or exc}); start it with `adb start-server` "
            f"(or point AndroidConfig.adb_host/adb_port at yours), then {_ADB_SETUP_HINT}") from None


class AdbutilsTransport:
    """The real transport: one adbutils device; adb errors become `EnvCrashedError` (the env may reconnect)."""

    def __init__(self, device: Any, config: AndroidConfig) -> None:
        self._device = device
        self._config = config

    @property
    def serial(self) -> str:
        return self._device.serial

    def shell(self, args: Sequence[str]) -> str:
        import adbutils

        try:
            result = self._device.shell2(list(args), timeout=self._config.command_timeout_s, rstrip=True)
        except (adbutils.AdbError, OSError) as exc:
            raise EnvCrashedError(f"adb lost device {self.serial} running {args[0]!r}: {exc}") from None
        if result.returncode != 0:
            raise AdbCommandError(f"`{' '.join(args)}` exited {result.returncode}: {result.output.strip()[:300]}")
        return result.output

    def screencap(self) -> bytes:
        import adbutils

        try:
            with self._device.open_transport(timeout=self._config.screenshot_timeout_s) as conn:
                conn.send_command("exec:screencap -p")
                conn.check_okay()
                return conn.read_until_close(encoding=None)
        except (adbutils.AdbError, OSError) as exc:
            raise EnvCrashedError(f"screencap on {self.serial} failed: {exc}") from None


# --- parsing device answers (pure) ------------------------------------------------------------------

_WM_SIZE = re.compile(r"(Physical|Override) size:\s*(\d+)x(\d+)")
_FOCUS = re.compile(r"mCurrentFocus=Window\{[^}]*\s([\w.]+)/[\w.$]+\}")
_PACKAGE_NAME = re.compile(r"^[A-Za-z]\w*(\.[A-Za-z_]\w*)+$")
_COMPONENT_LINE = re.compile(r"^\s*([A-Za-z]\w*(?:\.\w+)+)/[\w.$]+\s*$", re.MULTILINE)
#: Lists the activities that have a home-screen icon (`package/activity` per line): the apps one can launch.
LAUNCHER_QUERY = ("cmd", "package", "query-activities", "--brief", "--components",
                  "-a", "android.intent.action.MAIN", "-c", "android.intent.category.LAUNCHER")


def parse_wm_size(output: str) -> tuple[int, int]:
    """(width, height) from `wm size`; an override (`wm size WxH`) wins over the physical size."""
    sizes = {kind: (int(w), int(h)) for kind, w, h in _WM_SIZE.findall(output)}
    size = sizes.get("Override") or sizes.get("Physical")
    if size is None:
        raise AdbCommandError(f"`wm size` gave no size: {output.strip()[:200]!r}")
    return size


def parse_packages(output: str) -> list[str]:
    """Package names from `pm list packages` (`package:com.android.settings` lines)."""
    return [line.removeprefix("package:").strip() for line in output.splitlines() if line.startswith("package:")]


def parse_launchable(output: str) -> list[str]:
    """The packages of the `package/activity` lines of `LAUNCHER_QUERY`, each once, in order."""
    return list(dict.fromkeys(_COMPONENT_LINE.findall(output)))


def _normalize(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def resolve_package(app: str, packages: Sequence[str], labels: Mapping[str, str]) -> str:
    """The package among `packages` that `app` names: a package name, a label in `labels`, or one unique match
    of the name against the packages' last parts, else against whole names."""
    installed = set(packages)
    if app in installed:
        return app
    key = _normalize(app)
    by_label = {_normalize(label): package for label, package in {**DEFAULT_APP_LABELS, **labels}.items()}
    if by_label.get(key) in installed:
        return by_label[key]
    for matches in ([p for p in packages if _normalize(p.rsplit(".", 1)[-1]) == key],
                    [p for p in packages if key and key in _normalize(p)]):
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise AppNotFoundError(
                f"{app!r} matches several apps ({', '.join(sorted(matches)[:8])}); launch one by package "
                "name or map the name in AndroidConfig.app_labels")
    hint = "a package name" if _PACKAGE_NAME.match(app) else "a name"
    raise AppNotFoundError(
        f"no launchable app matches {hint} {app!r}; list packages with `adb shell pm list packages`, "
        "install the app, or map the name in AndroidConfig.app_labels")


def ime_commands(text: str, ime: str) -> list[list[str]]:
    """Type any Unicode `text` through ADBKeyboard: make it the current IME, then broadcast the text."""
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return [["ime", "enable", ime], ["ime", "set", ime],
            ["am", "broadcast", "-a", IME_BROADCAST_ACTION, "--es", "msg", encoded]]


def view_url_command(url: str) -> list[str]:
    return ["am", "start", "-a", "android.intent.action.VIEW", "-d", url]


# --- the environment --------------------------------------------------------------------------------

#: Actions the agent or the episode handles; nothing runs on the device for them.
_HOST_ONLY = frozenset({ActionType.FINISHED, ActionType.ANSWER, ActionType.CALL_USER, ActionType.TAKE_NOTE,
                        ActionType.GET_SCREENSHOT})


class AndroidEnv(EnvBase):
    """A phone or emulator as a uivenus environment (platform MOBILE, logical pixels = device pixels)."""

    platform = Platform.MOBILE

    def __init__(self, config: AndroidConfig | None = None, transport: AdbTransport | None = None) -> None:
        self.config = config or AndroidConfig()
        self._owns_transport = transport is None
        self._transport = transport if transport is not None else connect_adb(self.config)
        self._size: tuple[int, int] | None = None
        self._ime_ready = False
        self._task: TaskSpec | None = None

    @property
    def serial(self) -> str:
        return self._transport.serial

    @property
    def screen_size(self) -> tuple[int, int]:
        if self._size is None:
            self._size = parse_wm_size(self._transport.shell(["wm", "size"]))
        return self._size

    def reset(self, task: TaskSpec) -> Observation:
        """Go home, then open the task's app (freshly started) and/or its URL."""
        if task.platform is not Platform.MOBILE:
            raise SetupError(f"task {task.id} is for {task.platform.value}; AndroidEnv runs mobile tasks")
        self._task = task
        self._run(adb_commands(PressHome()))
        try:
            if task.app:
                package = self.resolve_app(task.app)
                self._run([["am", "force-stop", package], *adb_commands(LaunchApp(app=package))])
            if task.url:
                self._run([view_url_command(task.url)])
        except AndroidError as exc:
            raise SetupError(f"task {task.id}: {exc}") from None
        self._settle()
        return self.observe()

    def resolve_app(self, app: str) -> str:
        """The package `app` (a package or display name) stands for, among the apps with a launcher icon
        (so `Settings` is not confused with `com.android.providers.settings`); devices too old to list those
        fall back to every installed package."""
        try:
            packages = parse_launchable(self._transport.shell(LAUNCHER_QUERY))
        except AdbCommandError:
            packages = []
        if not packages:
            packages = parse_packages(self._transport.shell(["pm", "list", "packages"]))
        return resolve_package(app, packages, self.config.app_labels)

    def type_text(self, text: str) -> None:
        """Printable ASCII through `input text`; any other text through the ADBKeyboard IME broadcast."""
        try:
            commands = adb_commands(Type(content=text))
        except ConvertError:
            commands = self._ime_commands(text)
        self._run(commands)

    def _ime_commands(self, text: str) -> list[list[str]]:
        ime = self.config.ime
        if ime is None:
            raise ImeMissingError(f"{text!r} is not printable ASCII and AndroidConfig.ime is None; set it to "
                                  f"{ADB_KEYBOARD_IME!r} with ADBKeyboard installed ({ADB_KEYBOARD_URL})")
        if not self._ime_ready:
            if ime not in self._transport.shell(["ime", "list", "-a", "-s"]).split():
                raise ImeMissingError(
                    f"typing {text!r} needs the {ime} IME (adb `input text` types printable ASCII only), and it "
                    f"is not installed on {self.serial}; install ADBKeyboard ({ADB_KEYBOARD_URL}) with "
                    "`adb install ADBKeyboard.apk`, then retry (see docs/android.md)")
            self._ime_ready = True
        return ime_commands(text, ime)

    def _execute(self, action: Action) -> Mapping[str, Any] | None:
        if action.type in _HOST_ONLY:
            return None
        match action:
            case LaunchApp(app=app):
                package = self.resolve_app(app)
                self._run(adb_commands(LaunchApp(app=package)))
                self._settle()
                return {"package": package}
            case Wait(seconds=seconds):
                time.sleep(self.config.default_wait_s if seconds is None else seconds)
                return None
            case Type(content=text):
                self.type_text(text)
            case _:
                try:
                    commands = adb_commands(action)
                except ConvertError as exc:
                    raise UnsupportedActionError(str(exc)) from None
                self._run(commands)
        self._settle()
        return None

    def _run(self, commands: Sequence[Sequence[str]]) -> None:
        for args in commands:
            self._transport.shell(args)

    def _settle(self) -> None:
        if self.config.settle_s > 0:
            time.sleep(self.config.settle_s)

    def _recover(self) -> bool:
        if not self._owns_transport:
            return False
        try:
            self._transport = connect_adb(self.config)
        except AndroidError:
            return False
        return True

    def observe(self) -> Observation:
        data = self._transport.screencap()
        try:
            image = Image.open(io.BytesIO(data))
            image.load()
        except (UnidentifiedImageError, OSError):
            raise EnvCrashedError(f"screencap on {self.serial} returned no PNG "
                                  f"({len(data)} bytes: {data[:60]!r})") from None
        png: bytes | None = data if image.mode == "RGB" else None  # the bytes hold the pixels as the agent sees them
        image = image.convert("RGB")
        width, height = self.screen_size
        if image.size == (height, width):  # rotated: the size follows the screen
            self._size = image.size
        elif image.size != (width, height):
            image, png = image.resize((width, height), Image.Resampling.BILINEAR), None
        return Observation(screenshot=image, platform=self.platform, size=self.screen_size,
                           app=self.foreground_package(), info={"serial": self.serial}, png=png)

    def foreground_package(self) -> str | None:
        """The package of the focused window (from `dumpsys window`), None when nothing has focus."""
        found = _FOCUS.search(self._transport.shell(["dumpsys", "window"]))
        return found.group(1) if found else None

    def state(self) -> Mapping[str, Any]:
        return {"serial": self.serial, "size": list(self.screen_size), "package": self.foreground_package(),
                "task": self._task.id if self._task else None}

    def close(self) -> None:
        """adb connections last one command each, so nothing stays open; the device is left as it is."""
        self._task = None
