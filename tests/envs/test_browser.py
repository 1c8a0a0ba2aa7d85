"""BrowserEnv against real Chromium: every action has its visible effect on a page that records events.

The test page (pages/events.html) keeps the uivenus sandbox contract, so what happened is read back
through `app_state()` — the same DomQuery surface the sandbox solvers use — never by evaluating code.
"""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import psutil
import pytest
from PIL import Image, ImageChops

from uivenus.actions.space import (
    ActionSequence, Click, DoubleClick, Drag, GetScreenshot, GetUrl, Hotkey, Hover, Launch, LaunchApp, LongPress,
    PressBack, PressEnter, PressHome, PressRecent, RightClick, Scroll, SelectOption, Swipe, TripleClick, Type, Wait,
)
from uivenus.envs.base import HIT_ELEMENT, Env, OffScreenError, PlatformMismatchError, SetupError
from uivenus.envs.browser import BrowserEnv
from uivenus.envs.browser_actions import BrowserActionError, playwright_key
from uivenus.envs.browser_config import BrowserConfig, BrowserConfigError
from uivenus.envs.chromium import sandbox_blocker
from uivenus.envs.hosts import HostPolicy, HostPolicyError
from uivenus.envs.sandbox import DomQuery, SandboxServer, get_task
from uivenus.envs.sandbox.solving import tid
from uivenus.records import TaskSpec


def page_task(server: SandboxServer, page: str = "events.html", platform: str = "web", **setup: Any) -> TaskSpec:
    base = server.base_url
    return TaskSpec(
        id=f"test/{page}", instruction="exercise the page", platform=platform, url=f"{base}/{page}",
        setup={"home_url": f"{base}/home.html", "apps": {"Second": f"{base}/second.html"}, **setup},
    )


def events(env: BrowserEnv, kind: str, target: str | None = None) -> list[dict[str, Any]]:
    return [e for e in env.app_state()["log"] if e["type"] == kind and (target is None or e["id"] == target)]


def at(env: BrowserEnv, selector: str) -> tuple[int, int]:
    point = env.center(selector)
    assert point is not None, f"{selector} is not on screen"
    return point


@pytest.fixture
def web(web_env: BrowserEnv, pages_server: SandboxServer) -> BrowserEnv:
    web_env.reset(page_task(pages_server))
    return web_env


@pytest.fixture
def phone(phone_env: BrowserEnv, pages_server: SandboxServer) -> BrowserEnv:
    phone_env.reset(page_task(pages_server, platform="mobile"))
    return phone_env


# --- contract, observation, setup ----------------------------------------------------------------

def test_env_keeps_the_protocols(web_env: BrowserEnv) -> None:
    assert isinstance(web_env, Env)
    dom_query = [name for name in dir(DomQuery) if not name.startswith("_")]  # not runtime-checkable
    assert dom_query and all(hasattr(web_env, name) for name in dom_query)


def test_reset_observes_in_css_pixels_on_both_platforms(web_env: BrowserEnv, phone_env: BrowserEnv,
                                                        pages_server: SandboxServer) -> None:
    web_obs = web_env.reset(page_task(pages_server))
    phone_obs = phone_env.reset(page_task(pages_server, platform="mobile"))
    assert (web_obs.platform.value, web_obs.size, web_obs.screenshot.size) == ("web", (1280, 720), (1280, 720))
    assert (phone_obs.platform.value, phone_obs.size, phone_obs.screenshot.size) == ("mobile", (412, 915), (412, 915))
    assert phone_obs.url.endswith("/events.html") and phone_obs.app == "events"
    assert "alpha beta gamma delta" in phone_obs.text
    assert phone_obs.screenshot.convert("RGB").getpixel((95, 375)) == (0x44, 0x88, 0xCC)  # the knob, unscaled
    for obs in (web_obs, phone_obs):  # Chromium's own PNG rides along, so the store need not encode it again
        assert obs.png is not None and Image.open(io.BytesIO(obs.png)).size == obs.size
        assert ImageChops.difference(Image.open(io.BytesIO(obs.png)).convert("RGB"),
                                     obs.screenshot.convert("RGB")).getbbox() is None



def test_fast_png_is_the_same_screen_in_a_larger_file(web_env: BrowserEnv, pages_server: SandboxServer) -> None:
    # `fast_png` (the default) only trades file size for the browser's encoding CPU: the pixels must not change
    assert web_env.config.fast_png
    fast = web_env.reset(page_task(pages_server)).png
    session = web_env._session
    small = web_env._call(lambda: base64.b64decode(
        session.cdp.send("Page.captureScreenshot", {"format": "png", "optimizeForSpeed": False})["data"]), 10.0)
    assert fast is not None and len(fast) > len(small)  # the option took effect
    fast_pixels = Image.open(io.BytesIO(fast)).convert("RGB").tobytes()
    assert fast_pixels == Image.open(io.BytesIO(small)).convert("RGB").tobytes()

def test_reset_applies_app_state_and_state_reads_it(web_env: BrowserEnv, pages_server: SandboxServer) -> None:
    web_env.reset(page_task(pages_server, app_state={"field": "preset"}))
    state = web_env.state()
    assert state["title"] == "events" and state["url"].endswith("/events.html")
    assert state["app_state"]["field"] == "preset"
    web_env.reset(page_task(pages_server, page="home.html"))
    assert web_env.state()["app_state"] is None
    with pytest.raises(BrowserActionError, match="window.uivenus"):
        web_env.app_state()


def test_reset_waits_for_an_app_that_sets_up_late(web_env: BrowserEnv, pages_server: SandboxServer) -> None:
    obs = web_env.reset(page_task(pages_server, page="late_app.html", app_state={"field": "applied"}))
    assert web_env.app_state() == {"field": "applied"}
    assert obs.text is not None and "applied" in obs.text  # set up before the first screen was captured


def test_reset_of_a_missing_page_is_a_setup_error(web_env: BrowserEnv, pages_server: SandboxServer) -> None:
    with pytest.raises(SetupError, match="HTTP 404"):
        web_env.reset(page_task(pages_server, page="no-such-page.html"))
    with pytest.raises(SetupError, match="server running"):
        web_env.reset(TaskSpec(id="down", instruction="x", platform="web", url="http://127.0.0.1:9/"))


def test_the_observation_after_a_click_is_the_screen_it_rendered(web_env: BrowserEnv,
                                                                 sandbox_server: SandboxServer) -> None:
    # the mail app renders a message on `hashchange`, a task the click only queues: the text and the pixels of
    # the step's observation must both show the message, as a capture taken once everything has run does
    web_env.reset(get_task("mail/archive_newsletter").spec(sandbox_server.base_url, "web"))
    messages = [m for m in web_env.app_state()["messages"] if m["folder"] == "inbox"]
    for rounds in range(2):
        for message in messages:
            result = web_env.step(Click(point=at(web_env, tid("message-row", id=message["id"]))))
            assert result.executed and result.observation.url.endswith(f"#/message/{message['id']}")
            assert message["body"] in result.observation.text, (rounds, message["id"])
            web_env.observe()  # the step's own capture, handed out once
            later = web_env.observe()
            assert later.text == result.observation.text
            assert ImageChops.difference(later.screenshot.convert("RGB"),
                                         result.observation.screenshot.convert("RGB")).getbbox() is None


def test_a_point_is_read_once_per_screen_and_its_click_records_that_read(web_env: BrowserEnv,
                                                                          pages_server: SandboxServer) -> None:
    # the guard reads the element under a click before it runs; the step records that same read as what the click
    # hit instead of asking the page again. The page relabels its button by itself, so each text tells which read
    # an answer came from.
    web_env.reset(page_task(pages_server, page="relabel.html"))
    point = at(web_env, "#b")
    assert web_env.element_at(point)["text"] == "Keep"
    deadline = time.monotonic() + 20
    while web_env.text("#b") != "Delete":
        assert time.monotonic() < deadline, "the page never relabelled its button"
        time.sleep(0.1)
    assert web_env.element_at(point)["text"] == "Keep"  # the same screen: the page is not asked again
    result = web_env.step(Click(point=point))
    assert result.executed and result.info[HIT_ELEMENT]["text"] == "Keep"  # the read the action was judged on
    assert web_env.element_at(point)["text"] == "Delete"  # the step's new screen is read afresh
    web_env.observe()  # the step's own capture
    assert web_env.step(Click(point=point)).info[HIT_ELEMENT]["text"] == "Delete"  # unread point: read before it runs
    assert web_env.element_at(None)["tag"] == "button" and web_env.element_at((600, 600)) is None


def test_dom_queries(web: BrowserEnv) -> None:
    assert web.center("#btn") == (100, 45)
    assert web.center("#far") is None and web.exists("#far")  # in the DOM, below the viewport
    assert not web.exists("#nothing") and web.center("#nothing") is None
    assert web.text("#para") == "alpha beta gamma delta"


def test_wrong_platform_and_off_screen_actions_are_refused(web: BrowserEnv, phone: BrowserEnv,
                                                          pages_server: SandboxServer) -> None:
    with pytest.raises(PlatformMismatchError):
        web.step(PressRecent())
    with pytest.raises(PlatformMismatchError):
        phone.step(Scroll(direction="down"))
    with pytest.raises(OffScreenError):
        web.step(Click(point=(1280, 10)))
    with pytest.raises(OffScreenError):
        phone.step(Click(point=(100, 2000)))
    with pytest.raises(PlatformMismatchError, match="mode='phone'"):
        web.reset(page_task(pages_server, platform="mobile"))


def test_config_is_validated() -> None:
    with pytest.raises(BrowserConfigError, match="mode"):
        BrowserConfig(mode="tablet")
    assert BrowserConfig(mode="phone").screen_size == (412, 915)
    assert playwright_key("ctrl") == "Control" and playwright_key("cmd") == "Meta" and playwright_key("f5") == "F5"
    with pytest.raises(BrowserActionError, match="fn"):
        playwright_key("fn")


# --- pointer actions -----------------------------------------------------------------------------

def test_web_clicks(web: BrowserEnv) -> None:
    result = web.step(Click(point=at(web, "#btn")))
    assert result.executed and result.error is None
    assert len(events(web, "click", "btn")) == 1 and not events(web, "dblclick")
    web.step(DoubleClick(point=at(web, "#btn")))
    assert len(events(web, "dblclick", "btn")) == 1
    web.step(TripleClick(point=at(web, "#para")))
    assert web.app_state()["selection"].strip() == "alpha beta gamma delta"
    web.step(RightClick(point=at(web, "#btn")))
    assert len(events(web, "contextmenu", "btn")) == 1


def test_web_hover_and_long_press(web: BrowserEnv) -> None:
    web.step(Hover(point=at(web, "#para")))
    assert events(web, "mouseover", "para") and not events(web, "click")
    web.step(LongPress(point=at(web, "#btn"), duration=0.6))
    down, up = events(web, "mousedown", "btn")[-1], events(web, "mouseup", "btn")[-1]
    assert up["t"] - down["t"] >= 500


def test_phone_taps_are_touches(phone: BrowserEnv) -> None:
    phone.step(Click(point=at(phone, "#btn")))
    assert len(events(phone, "touchstart", "btn")) == 1 and len(events(phone, "click", "btn")) == 1
    phone.step(Click(point=at(phone, "#btn")))  # right after a tap: still a single tap, not a double tap
    assert len(events(phone, "click", "btn")) == 2 and not events(phone, "dblclick")
    phone.step(DoubleClick(point=at(phone, "#btn")))
    assert len(events(phone, "dblclick", "btn")) == 1


def test_phone_long_press_holds_the_touch(phone: BrowserEnv) -> None:
    phone.step(LongPress(point=at(phone, "#btn"), duration=0.6))
    start, end = events(phone, "touchstart", "btn")[-1], events(phone, "touchend", "btn")[-1]
    assert end["t"] - start["t"] >= 500


@pytest.mark.parametrize("env_name", ["web", "phone"])
def test_drag_moves_the_element(env_name: str, request: pytest.FixtureRequest) -> None:
    env: BrowserEnv = request.getfixturevalue(env_name)
    before = env.app_state()["knob"]
    x, y = at(env, "#knob")
    assert env.step(Drag(start=(x, y), end=(x + 150, y + 100))).executed
    after = env.app_state()["knob"]
    assert abs(after["x"] - before["x"] - 150) <= 3 and abs(after["y"] - before["y"] - 100) <= 3
    env.step(Drag(end=(x + 50, y + 100)))  # no start: from where the pointer is
    assert abs(env.app_state()["knob"]["x"] - before["x"] - 50) <= 3


def test_phone_swipe_scrolls_the_page(phone: BrowserEnv) -> None:
    result = phone.step(Swipe(start=(200, 800), end=(200, 300)))
    assert result.executed
    assert 400 <= phone.app_state()["scrollY"] <= 600  # follows the finger; a fling would run on past 1000
    phone.step(Swipe(start=(200, 300), end=(200, 800)))
    assert phone.app_state()["scrollY"] == 0


def test_web_scroll_wheel(web: BrowserEnv) -> None:
    web.step(Scroll(direction="down", point=(600, 400)))
    assert web.app_state()["scrollY"] == 300  # default: 3 notches of 100 px
    web.step(Scroll(direction="up", amount=1))
    assert web.app_state()["scrollY"] == 200
    web.step(Scroll(direction="right", amount=2))
    assert web.app_state()["scrollX"] == 200
    web.step(Scroll(direction="left", amount=2))
    assert web.app_state()["scrollX"] == 0


def test_sideways_wheel_at_the_edge_stays_on_the_page(web: BrowserEnv, pages_server: SandboxServer) -> None:
    url = web.state()["url"]
    web.step(Launch(url=f"{pages_server.base_url}/second.html"))
    assert web.state()["url"] != url
    second = web.state()["url"]
    for _ in range(3):  # Chromium's overscroll navigation would go back in history here
        web.step(Scroll(direction="left", amount=10))
    assert web.state()["url"] == second


# --- keyboard ------------------------------------------------------------------------------------

@pytest.mark.parametrize("env_name", ["web", "phone"])
def test_type_unicode_and_newlines(env_name: str, request: pytest.FixtureRequest) -> None:
    env: BrowserEnv = request.getfixturevalue(env_name)
    env.step(Click(point=at(env, "#field")))
    env.step(Type(content="héllo 世界 🙂"))
    assert env.app_state()["field"] == "héllo 世界 🙂"
    env.step(Click(point=at(env, "#area")))
    env.step(Type(content="ab\ncd"))
    assert env.app_state()["area"] == "ab\ncd"
    assert any(e["key"] == "Enter" for e in events(env, "keydown", "area"))


def test_a_still_screen_with_a_focused_field_captures_the_same_every_time(web: BrowserEnv) -> None:
    """Chromium blinks the caret (every 500 ms): shown, captures of a screen where nothing happened would differ."""
    web.step(Click(point=at(web, "#field")))
    captures = []
    for _ in range(4):
        captures.append(web.observe().png)
        time.sleep(0.3)
    assert all(png == captures[0] for png in captures)


def test_hotkeys(web: BrowserEnv) -> None:
    web.step(Click(point=at(web, "#field")))
    web.step(Type(content="hello"))
    web.step(Hotkey(keys=("ctrl", "a")))
    web.step(Type(content="bye"))
    assert web.app_state()["field"] == "bye"
    web.step(Hotkey(keys=("backspace",), repeat=2))
    assert web.app_state()["field"] == "b"
    web.step(Hotkey(keys=("tab",)))
    assert web.app_state()["focused"] == "area"
    result = web.step(Hotkey(keys=("fn", "f1")))
    assert not result.executed and "no browser equivalent" in result.error


def test_select_option(web: BrowserEnv) -> None:
    result = web.step(SelectOption(index=2, point=at(web, "#pick")))
    assert result.executed and result.info["selected"] == {"value": "blue", "text": "blue"}
    assert web.app_state()["pick"] == "blue" and events(web, "change", "pick")
    web.step(Click(point=at(web, "#area")))
    web.step(Hotkey(keys=("tab",)))  # the focus moves on to the <select>
    assert web.step(SelectOption(index=1)).executed and web.app_state()["pick"] == "green"
    missed = web.step(SelectOption(index=0, point=at(web, "#para")))
    assert not missed.executed and "no <select>" in missed.error
    beyond = web.step(SelectOption(index=7, point=at(web, "#pick")))
    assert not beyond.executed and "out of range" in beyond.error


# --- navigation ----------------------------------------------------------------------------------

def test_web_navigation(web: BrowserEnv, pages_server: SandboxServer) -> None:
    base = pages_server.base_url
    result = web.step(Click(point=at(web, "#next")))
    assert result.observation.url == f"{base}/second.html"  # the settle wait saw the link's navigation
    assert web.step(PressBack()).observation.url == f"{base}/events.html"
    assert web.step(PressHome()).observation.url == f"{base}/home.html"
    assert web.step(Launch(url=f"{base}/second.html")).observation.info["title"] == "second"
    assert web.step(GetUrl()).info == {"url": f"{base}/second.html"}
    refused = web.step(Launch(url="javascript:alert(1)"))
    assert not refused.executed and "only http, https" in refused.error
    assert refused.observation.url == f"{base}/second.html"


BLANK = TaskSpec(id="test/blank", instruction="open a page", platform="web")  # about:blank: not a local task


def test_launch_refuses_local_hosts_the_task_is_not_on(web_env: BrowserEnv, pages_server: SandboxServer,
                                                       sandbox_server: SandboxServer) -> None:
    web_env.reset(BLANK)
    port = urlsplit(pages_server.base_url).port
    for url in (f"{pages_server.base_url}/second.html", f"http://localhost:{port}/second.html",
                f"http://2130706433:{port}/second.html", f"http://0x7f.1:{port}/second.html", f"http://[::1]:{port}/",
                f"http://0.0.0.0:{port}/", "http://10.0.0.1/", "http://192.168.1.1/admin",
                "http://169.254.169.254/latest/meta-data/", f"127.0.0.1:{port}/second.html"):
        refused = web_env.step(Launch(url=url))
        assert not refused.executed and refused.error.startswith("HostRefusedError"), (url, refused.error)
        assert "nothing was opened" in refused.error and "BrowserConfig.hosts.allowed" in refused.error
        assert refused.observation.url == "about:blank"
    # a task on a local server may go anywhere on its own host and port, and nowhere else local
    web_env.reset(page_task(pages_server))
    assert web_env.step(Launch(url=f"{pages_server.base_url}/second.html")).observation.info["title"] == "second"
    elsewhere = web_env.step(Launch(url=f"{sandbox_server.base_url}/notes/index.html"))
    assert not elsewhere.executed and "local address" in elsewhere.error
    assert elsewhere.observation.url == f"{pages_server.base_url}/second.html"


def test_host_policy_settings_allow_and_deny(pages_server: SandboxServer, sandbox_server: SandboxServer) -> None:
    policy = HostPolicy(allowed=(urlsplit(sandbox_server.base_url).netloc, "example.org"), denied=("ads.example.org",))
    with BrowserEnv(BrowserConfig(hosts=policy)) as env:
        env.reset(BLANK)
        opened = env.step(Launch(url=f"{sandbox_server.base_url}/notes/index.html"))  # local, but allow-listed
        assert opened.executed and opened.observation.app == "notes"
        for url, why in ((f"{pages_server.base_url}/second.html", "not on the allow-list"),
                         ("https://example.com/", "not on the allow-list"), ("https://ads.example.org/", "deny-list")):
            refused = env.step(Launch(url=url))
            assert not refused.executed and why in refused.error, url
            assert refused.observation.app == "notes"
    with pytest.raises(HostPolicyError, match="host or host:port"):
        HostPolicy(allowed=("http://example.org/path",))


#: Reports how this process's BrowserEnv launched Chromium: the detected blocker, whether --no-sandbox was
#: passed, the seccomp mode of each renderer (2: a seccomp-bpf filter, the sandbox's) and the page's text.
_SANDBOX_PROBE = """
import json, psutil
from uivenus.envs.browser import BrowserEnv
from uivenus.envs.chromium import sandbox_blocker
from uivenus.records import TaskSpec
with BrowserEnv() as env:
    page = "data:text/html,<p>sandboxed</p>"
    observation = env.reset(TaskSpec(id="probe", instruction="-", platform="web", url=page))
    main = psutil.Process(env.browser_pid)
    renderers = [p for p in main.children(recursive=True) if "--type=renderer" in p.cmdline()]
    seccomp = [open(f"/proc/{p.pid}/status").read().split("Seccomp:")[1].split()[0] for p in renderers]
    print(json.dumps({"blocker": sandbox_blocker(), "no_sandbox": "--no-sandbox" in main.cmdline(),
                      "seccomp": seccomp, "text": observation.text}))
"""


def test_chromium_runs_sandboxed_unless_the_sandbox_cannot_work(web_env: BrowserEnv) -> None:
    blocker = sandbox_blocker()
    assert ("--no-sandbox" in psutil.Process(web_env.browser_pid).cmdline()) == (blocker is not None)
    if os.geteuid() == 0:
        assert blocker is not None and "root" in blocker
    # as a user who is not root: here, through a user namespace that maps uid 1000 onto ours
    as_user = ["unshare", "--user", "--map-user=1000", "--map-group=1000"] if os.geteuid() == 0 else []
    if as_user and subprocess.run([*as_user, "true"], capture_output=True).returncode != 0:
        pytest.skip("no user namespaces here: cannot run as a non-root user")
    run = subprocess.run([*as_user, sys.executable, "-c", _SANDBOX_PROBE], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["text"] == "sandboxed" and report["seccomp"]
    if report["blocker"] is None:
        assert not report["no_sandbox"] and set(report["seccomp"]) == {"2"}, report
    else:
        assert report["no_sandbox"], report


@pytest.mark.parametrize("env_name", ["web", "phone"])
def test_a_link_to_a_new_tab_is_followed_and_back_returns(env_name: str, request: pytest.FixtureRequest,
                                                          pages_server: SandboxServer) -> None:
    env: BrowserEnv = request.getfixturevalue(env_name)
    env.step(Click(point=at(env, "#field")))
    env.step(Type(content="kept"))
    opened = env.step(Click(point=at(env, "#tab")))
    assert opened.executed and opened.observation.url == f"{pages_server.base_url}/second.html"
    assert env.text("#heading") == "Second page"
    back = env.step(PressBack())
    assert back.executed and back.error is None and back.observation.url == f"{pages_server.base_url}/events.html"
    assert env.app_state()["field"] == "kept"  # the opener tab itself, not a reload


def test_press_enter_submits_keys(web: BrowserEnv) -> None:
    web.step(Click(point=at(web, "#field")))
    assert web.step(PressEnter()).executed
    assert events(web, "keydown", "field")[-1]["key"] == "Enter"


def test_phone_navigation_and_apps(phone: BrowserEnv, pages_server: SandboxServer) -> None:
    base = pages_server.base_url
    assert phone.step(LaunchApp(app="second")).observation.url == f"{base}/second.html"  # case-insensitive
    assert phone.step(PressBack()).observation.url == f"{base}/events.html"
    assert phone.step(PressRecent()).observation.url == f"{base}/home.html"  # documented: Recent goes home
    phone.step(LaunchApp(app="Second"))
    assert phone.step(PressHome()).observation.url == f"{base}/home.html"
    unknown = phone.step(LaunchApp(app="Mail"))
    assert not unknown.executed and "known apps: second" in unknown.error
    assert phone.step(GetScreenshot()).observation.screenshot.size == (412, 915)


def test_sequence_and_wait(web: BrowserEnv) -> None:
    result = web.step(ActionSequence(actions=(Click(point=at(web, "#field")), Type(content="abc"), GetUrl())))
    assert result.executed and web.app_state()["field"] == "abc" and result.info["url"].endswith("/events.html")
    waited = web.step(Wait(seconds=0.2))
    assert waited.executed and waited.timings["execute_s"] >= 0.2


# --- crashes and hangs ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fragile_env() -> Iterator[BrowserEnv]:
    """Its own browser with short deadlines, so killing or hanging it costs a few seconds."""
    config = BrowserConfig(mode="desktop", action_timeout_s=1.0, navigation_timeout_s=3.0, settle_timeout_s=0.5)
    with BrowserEnv(config) as env:
        yield env


def test_killed_browser_is_recovered_and_replayed(fragile_env: BrowserEnv, pages_server: SandboxServer) -> None:
    env = fragile_env
    env.reset(page_task(pages_server))
    env.step(Click(point=at(env, "#field")))
    env.step(Type(content="abc"))
    old_pid = env.browser_pid
    psutil.Process(old_pid).kill()
    psutil.Process(old_pid).wait(timeout=5)
    result = env.step(Type(content="d"))
    assert not result.executed and result.error.startswith("EnvCrashedError")
    assert result.info["recovered"] is True and env.browser_pid not in (None, old_pid)
    assert result.observation.screenshot.size == (1280, 720)
    assert env.app_state()["field"] == "abc"  # reset + replay of the episode's actions
    assert env.step(Type(content="d")).executed and env.app_state()["field"] == "abcd"
    assert env.observe().url.endswith("/events.html")


def test_hung_page_times_out_and_recovers(fragile_env: BrowserEnv, pages_server: SandboxServer) -> None:
    env = fragile_env
    env.reset(page_task(pages_server))
    result = env.step(Click(point=at(env, "#hang")))  # onclick: while (true) {}
    assert not result.executed and "EnvCrashedError" in result.error
    assert result.info["recovered"] is True
    assert env.step(Click(point=at(env, "#btn"))).executed
    assert len(events(env, "click", "btn")) == 1


def test_reset_relaunches_a_dead_browser_and_close_is_idempotent(fragile_env: BrowserEnv,
                                                                   pages_server: SandboxServer) -> None:
    env = fragile_env
    env.reset(page_task(pages_server))
    psutil.Process(env.browser_pid).kill()
    assert env.reset(page_task(pages_server)).url.endswith("/events.html")
    with pytest.raises(SetupError, match="window.uivenus"):
        env.reset(page_task(pages_server, page="home.html", app_state={"x": 1}))
    pid = env.browser_pid
    env.close()
    env.close()
    assert env.browser_pid is None
    with pytest.raises(psutil.NoSuchProcess):
        psutil.Process(pid).wait(timeout=5)  # reaped by the Playwright driver, or gone already
