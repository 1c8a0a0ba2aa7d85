"""Settings tasks: switches, the brightness slider, dark mode, language, device name and a full reset.

Every checker compares the *whole* settings state with what it should be, so a solution that changes
anything it was not asked to change fails too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from uivenus.actions.space import Action, Finished, Platform
from uivenus.envs.sandbox.solving import choose, expect_fields, fill, set_switch, slide, tap, tid
from uivenus.envs.sandbox.tasks import CheckResult, DomQuery, SandboxTask, register

#: The app's defaults (apps/settings/app.js); the reset task restores exactly these.
DEFAULTS: Mapping[str, Any] = {
    "wifi": True, "bluetooth": False, "airplane": False, "notifications": True,
    "brightness": 70, "dark_mode": False, "language": "en", "device_name": "Venus Phone",
}
BACK = tid("back")


def open_section(q: DomQuery, section: str) -> Iterator[Action]:
    """Show a section: its sidebar link on the web; on a phone, back to the section list first if needed."""
    link = tid(f"section-{section}")
    if q.center(link) is None and q.center(BACK) is not None:
        yield from tap(q, BACK)
    yield from tap(q, link)


def _task(name: str, instructions: tuple[str, ...], setup: Mapping[str, Any], expected: Mapping[str, Any],
          solve) -> SandboxTask:
    state = {**DEFAULTS, **setup}
    want = {**state, **expected}

    def check(app_state: Mapping[str, Any]) -> CheckResult:
        return expect_fields(app_state, want, "settings")

    return SandboxTask(app="settings", name=name, instructions=instructions, setup=state, check=check, solve=solve)


def solve_wifi_bluetooth(q: DomQuery) -> Iterator[Action]:
    yield from open_section(q, "connections")
    yield from set_switch(q, tid("toggle-wifi"), False)
    yield from set_switch(q, tid("toggle-bluetooth"), True)
    yield Finished()


def solve_airplane_bluetooth(q: DomQuery) -> Iterator[Action]:
    yield from open_section(q, "connections")
    yield from set_switch(q, tid("toggle-airplane"), True)
    yield from set_switch(q, tid("toggle-bluetooth"), True)  # airplane mode just switched it off
    yield Finished()


def solve_brightness_dark(q: DomQuery) -> Iterator[Action]:
    yield from open_section(q, "display")
    yield from slide(
        q, tid("brightness"), 30, lo=(tid("brightness-tick-0"), 0), hi=(tid("brightness-tick-100"), 100),
        readout=tid("brightness-value"),
    )
    yield from set_switch(q, tid("toggle-dark-mode"), True)
    yield Finished()


def solve_notifications_language(q: DomQuery) -> Iterator[Action]:
    yield from open_section(q, "notifications")
    yield from set_switch(q, tid("toggle-notifications"), False)
    yield from open_section(q, "language")
    if q.platform is Platform.WEB:
        yield from choose(q, tid("language-select"), "de")
    else:
        yield from tap(q, tid("lang-de"))
    yield Finished()


def solve_rename(q: DomQuery) -> Iterator[Action]:
    yield from open_section(q, "about")
    yield from fill(q, tid("device-name"), "Kitchen Tablet")
    yield from tap(q, tid("save-device-name"))
    yield Finished()


def solve_reset(q: DomQuery) -> Iterator[Action]:
    yield from open_section(q, "system")
    yield from tap(q, tid("reset-settings"))
    yield from tap(q, tid("confirm-ok"))  # consequential: every setting goes back to its default
    yield Finished()


register(
    _task(
        "wifi_off_bluetooth_on",
        ("Turn Wi-Fi off and Bluetooth on.",
         "Disable Wi-Fi and enable Bluetooth in Settings.",
         "In the connection settings, switch Wi-Fi off and switch Bluetooth on."),
        {"notifications": False, "brightness": 55},
        {"wifi": False, "bluetooth": True},
        solve_wifi_bluetooth,
    ),
    _task(
        "airplane_keep_bluetooth",
        ("Turn on airplane mode, but keep Bluetooth on.",
         "Enable airplane mode and then make sure Bluetooth is still switched on.",
         "I'm boarding a flight: put the phone in airplane mode but leave Bluetooth on for my headphones."),
        {"wifi": True, "bluetooth": True, "dark_mode": True},
        {"airplane": True, "wifi": False, "bluetooth": True},
        solve_airplane_bluetooth,
    ),
    _task(
        "brightness_dark_mode",
        ("Set the screen brightness to 30% and turn on dark mode.",
         "Lower the brightness to 30 percent and enable the dark theme.",
         "Make the display easier on the eyes: brightness at 30% and dark mode on."),
        {"brightness": 85, "language": "fr"},
        {"brightness": 30, "dark_mode": True},
        solve_brightness_dark,
    ),
    _task(
        "notifications_off_german",
        ("Turn off notifications and change the display language to Deutsch.",
         "Block all notifications and switch the language to German (Deutsch).",
         "Set the language to Deutsch and disable notifications."),
        {"wifi": False, "brightness": 40},
        {"notifications": False, "language": "de"},
        solve_notifications_language,
    ),
    _task(
        "rename_device",
        ("Rename this device to \"Kitchen Tablet\".",
         "Change the device name to Kitchen Tablet and save it.",
         "Set the name of this device, shown under About device, to \"Kitchen Tablet\"."),
        {"device_name": "Galaxy of Ana", "bluetooth": True},
        {"device_name": "Kitchen Tablet"},
        solve_rename,
    ),
    _task(
        "reset_all",
        ("Reset all settings to their defaults.",
         "Restore the factory defaults of every setting.",
         "Use the reset option in System settings to put everything back to default."),
        {"wifi": False, "bluetooth": True, "notifications": False, "brightness": 15, "dark_mode": True,
         "language": "fr", "device_name": "Old Phone"},
        DEFAULTS,
        solve_reset,
    ),
)
