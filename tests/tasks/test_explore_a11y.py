"""The accessibility-tree explorer on real apps: a small GTK app (with a stuck dialog, a hang and a crash) in an
isolated task root on Xvfb, an app with no accessibility tree (xterm), and datasette served locally in Chromium."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from uivenus.actions.space import Click
from uivenus.cli.tasks import app as tasks_cli
from uivenus.envs.base import HIT_ELEMENT
from uivenus.envs.browser import BrowserEnv
from uivenus.envs.desktop import DesktopConfig, DesktopEnv
from uivenus.envs.desktop_look import DesktopLook
from uivenus.envs.elements import element_at, hit_record
from uivenus.tasks.app_catalog import FailureKind, RealCatalog, WidgetKind
from uivenus.tasks.catalog import INT, Param
from uivenus.tasks.explore_a11y import ExploreLimits, explore_app
from uivenus.tasks.explore_a11y_apps import datasette
from uivenus.tasks.explore_a11y_surfaces import DesktopSurface, WebSurface
from uivenus.verify.acts import target_from_dom

#: The app's source goes on the command line: a task root hides the host's /tmp, where a checkout may lie.
FORM_APP = ("/usr/bin/python3", "-c", (Path(__file__).parent / "apps" / "gtk_form.py").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DesktopEnv]:
    config = DesktopConfig(width=1024, height=768, look=DesktopLook(icons=False),
                           sandbox_dir=tmp_path_factory.mktemp("roots"))
    with DesktopEnv(config) as env:
        yield env


def test_desktop_elements_come_from_the_roots_bus_and_clicks_record_what_they_hit(desktop: DesktopEnv) -> None:
    DesktopSurface(FORM_APP, env=desktop, settle_s=0.5).start()
    deadline = time.monotonic() + 15
    elements = desktop.elements(fresh=True)
    while not any(e.name == "Save" for e in elements) and time.monotonic() < deadline:
        time.sleep(0.2)  # the app is still starting
        elements = desktop.elements(fresh=True)
    by = {(e.role, e.name): e for e in elements}
    bold, save = by[("check box", "Bold")], by[("push button", "Save")]
    assert bold.actionable and save.actionable and by[("combo box", "Red")].visible
    assert all(0 <= v for v in save.bounds) and save.bounds[0] + save.bounds[2] <= 1024  # type: ignore[index]
    result = desktop.step(Click(point=save.center))  # type: ignore[arg-type]
    hit = result.info[HIT_ELEMENT]  # from the read above (as the guard's): the step asked the apps nothing more
    assert hit["text"] == "Save" and hit["role"] == "button" and hit["interactive"] is True
    assert hit == hit_record(element_at(elements, save.center))  # type: ignore[arg-type]
    unread = desktop.step(Click(point=save.center)).info[HIT_ELEMENT]  # nobody read this screen: asked on the bus
    assert (unread["text"], unread["role"], unread["source"]) == ("Save", "button", "a11y")
    target = target_from_dom(hit)  # the verifier's action judge reads the desktop hit as it reads a web one
    assert target.text == "Save" and target.role == "button"
    assert desktop.osworld.root.host_path("/home/user/saved.txt").read_text() == "\n"  # type: ignore[union-attr]
    assert not (Path.home() / "saved.txt").exists()  # the app wrote in its root's home, not the host's


def test_the_explorer_records_functions_effects_and_every_failure_and_goes_on(desktop: DesktopEnv,
                                                                              tmp_path: Path) -> None:
    surface = DesktopSurface(FORM_APP, env=desktop, settle_s=0.5)
    found = explore_app("form", surface, ExploreLimits(max_depth=1, time_s=180, launch_wait_s=15))
    fns = found.functions
    assert fns["bold"].kind is WidgetKind.TOGGLE and fns["bold"].params[0].values == ("true", "false")
    assert "check box 'Bold': (none) -> checked" in fns["bold"].effect.tree.changed  # type: ignore[union-attr]
    assert fns["red"].kind is WidgetKind.CHOICE and fns["red"].params[0].values == ("Red", "Green", "Blue")
    assert fns["text"].kind is WidgetKind.TEXT and fns["text"].gestures[0].text == "uivenus"
    # parameters are typed by role and name: short words for a plain entry, font names for a font box, and the
    # spin button's own range (read from AT-SPI), the explorer typing a number inside it
    assert fns["text"].params == (Param("text", "word"),)
    assert fns["font_name"].params == (Param("font_name", "font_name"),)
    assert fns["copies"].kind is WidgetKind.NUMBER and fns["copies"].params == (Param("copies", INT, low=1, high=20),)
    assert fns["copies"].gestures[0].text == "10" and fns["copies"].widget.value_range == (1.0, 20.0)
    saved = fns["save"].effect
    assert saved is not None and [(c.path, c.change) for c in saved.files] == [("saved.txt", "created")]
    assert "dialog 'Stuck'" in fns["settings"].effect.tree.added  # type: ignore[union-attr]
    # the bad cases are in the catalog, each once, and exploration went on past each (Crash is tried last)
    kinds = [f.kind for f in found.failures]
    assert sorted(kinds) == sorted([FailureKind.STUCK_DIALOG, FailureKind.HANG, FailureKind.CRASH])
    assert fns["hang"].effect.target is None and fns["crash"].effect.target is None  # type: ignore[union-attr]
    assert found.complete and found.start in found.states and len(found.states) >= 4
    dialog = found.states[fns["settings"].effect.target]  # type: ignore[union-attr, index]
    assert dialog.title == "Stuck" and [str(g) for g in dialog.route] == ["click push button 'Settings'"]
    path = tmp_path / "catalog.json"
    RealCatalog({"form": found}).save(path)
    assert RealCatalog.load(path).apps["form"] == found


def test_an_app_without_an_accessibility_tree_is_recorded_as_such_by_the_cli(tmp_path: Path) -> None:
    result = CliRunner().invoke(tasks_cli, ["explore-app", "xterm", "--out", str(tmp_path), "--time", "6"])
    assert result.exit_code == 0, result.output
    xterm = json.loads((tmp_path / "catalog.json").read_text())["apps"]["xterm"]
    assert [f["kind"] for f in xterm["failures"]] == ["no_a11y_tree"] and xterm["states"] == {}
    assert "| xterm | desktop | 0 | 0 | 1 | no_a11y_tree: 1 |" in (tmp_path / "summary.md").read_text()


def test_the_explorer_walks_a_real_web_app_through_chromiums_tree(web_env: BrowserEnv) -> None:
    with datasette() as url:  # the books table's page: its filter form's selects, links to the database and home
        found = explore_app("datasette", WebSurface(url + "library/books", env=web_env),
                            ExploreLimits(max_depth=2, time_s=12))
    start = found.states[found.start]  # type: ignore[index]
    assert "books" in start.title
    # its filter form (one function: both selects and the value, then Apply) or a select on its own
    choices = [f for f in found.functions.values() if f.kind in (WidgetKind.CHOICE, WidgetKind.FORM)
               and f.state == start.id]
    assert any({"title", "author", "year"} <= set(f.params[0].values) for f in choices)
    chosen = next(f for f in choices if "author" in f.params[0].values)
    assert chosen.gestures[0].kind.value == "select" and chosen.effect is not None and chosen.effect.target
    assert not any(f.kind is FailureKind.CRASH for f in found.failures)


ORDER_PAGE = b"""<!doctype html><title>Order</title><form aria-label="Order" action="/placed">
<label>City <input name=city></label><label>Copies <input name=copies type=number min=1 max=9 value=1></label>
<label>Paper <select name=paper><option>A4<option>Letter<option>A3</select></label>
<button>Place order</button></form>"""


class _OrderSite(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        body = ORDER_PAGE if self.path == "/" else b"<title>Placed</title><p>Order placed: " + self.path.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


def test_a_web_form_is_one_function_with_every_field_typed(web_env: BrowserEnv) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _OrderSite)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        found = explore_app("order", WebSurface(f"http://127.0.0.1:{server.server_port}/", env=web_env),
                            ExploreLimits(max_depth=1, time_s=45))
    finally:
        server.shutdown()
        server.server_close()
    form = next(f for f in found.functions.values() if f.kind is WidgetKind.FORM)
    assert form.params == (Param("city", "word"), Param("copies", INT, low=1, high=9),
                           Param("paper", "enum", values=("A4", "Letter", "A3")))
    assert [(g.kind.value, g.target.name if g.target else None, g.text) for g in form.gestures] == [
        ("type", "City", "uivenus"), ("type", "Copies", "5"), ("select", "Paper", "Letter"),
        ("click", "Place order", "")]
    assert form.effect is not None and form.effect.target != found.start  # submitted: the "Placed" page
