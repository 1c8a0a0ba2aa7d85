"""The metrics over text, settings, media, image and PDF files and over the OS getters' printed values: each on a
real file made here (PDFs by LibreOffice headless, one conversion), passing, failing, and scoring 0.0 on a file
that is missing or not what its name says."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from mutagen.easyid3 import EasyID3
from mutagen.mp3 import MP3
from PIL import Image, ImageDraw

from uivenus.envs.osworld.metrics import metric_for
from uivenus.envs.osworld.metrics.images import ssim


def test_text_file_metrics(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha  beta\nGamma\n")
    (tmp_path / "b.txt").write_text("alpha beta gamma")
    (tmp_path / "c.txt").write_text("alpha  beta\nGamma\ndelta\n")
    compare = metric_for("compare_text_file")
    assert compare(tmp_path / "a.txt", tmp_path / "a.txt") == 1.0
    assert compare(tmp_path / "a.txt", tmp_path / "b.txt") == 0.0
    assert compare(tmp_path / "a.txt", tmp_path / "b.txt", ignore_blanks=True, ignore_case=True) == 1.0
    assert compare(tmp_path / "absent.txt", tmp_path / "b.txt") == 0.0
    diff = metric_for("diff_text_file")
    assert diff(tmp_path / "a.txt", tmp_path / "a.txt") == 1.0
    assert diff(tmp_path / "a.txt", tmp_path / "c.txt") == pytest.approx(0.8)  # 2 of 2+3 lines shared: 2*2/5
    assert diff(None, tmp_path / "c.txt") == 0.0
    check = metric_for("check_list")
    assert check(tmp_path / "c.txt", {"expect": [r"^Gamma$", "del"], "unexpect": ["epsilon"]}) == 1.0
    assert check(tmp_path / "c.txt", {"expect": ["epsilon"]}) == 0.0
    assert check(tmp_path / "c.txt", {"unexpect": ["^delta"]}) == 0.0
    assert metric_for("file_contains")(tmp_path / "c.txt", {"expected": ["beta", "delta"]}) == 1.0
    assert metric_for("compare_config")(tmp_path / "b.txt", {"expected": "alpha beta gamma"}) == 1.0


def test_check_csv_matches_partial_records(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("name,city\nAnn,Oslo\nBob,Rome\n")
    check = metric_for("check_csv")
    assert check(tmp_path / "t.csv",
                 {"expect": [{"name": "Bob", "city": "Rome"}], "unexpect": [{"city": "Paris"}]}) == 1.0
    assert check(tmp_path / "t.csv", {"expect": [{"name": "Bob", "city": "Oslo"}]}) == 0.0
    assert check(tmp_path / "t.csv", {"unexpect": [{"name": "Ann"}]}) == 0.0


def test_json_settings_and_rules(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"editor.fontSize": 14, "files.autoSave": "afterDelay", "nested": {"a": [1, 2]}}))
    assert metric_for("check_json_settings")(settings, {"expected": {"editor.fontSize": 14}}) == 1.0
    assert metric_for("check_json_settings")(settings, {"expected": {"editor.fontSize": 12}}) == 0.0
    check = metric_for("check_json")
    assert check(settings, {"expect": [{"key": ["nested", "a", 1], "method": "eq", "ref": 2}]}) == 1.0
    assert check(settings, {"expect": [{"key": ["missing"], "method": "eq", "ref": 2}]}) == 0.0
    assert check(settings, {"unexpect": [{"key": ["files.autoSave"], "method": "re", "ref": "after"}]}) == 0.0
    keys = tmp_path / "keybindings.json"
    keys.write_text('// Place your key bindings in this file\n[{"key": "ctrl+j", "command": "x"}]')
    assert metric_for("check_json_keybindings")(keys, {"expected": {"key": "ctrl+j", "command": "x"}}) == 1.0
    assert metric_for("check_json_keybindings")(keys, {"expected": {"key": "ctrl+k", "command": "x"}}) == 0.0
    settings.write_text("{broken")
    assert metric_for("check_json_settings")(settings, {"expected": {"editor.fontSize": 14}}) == 0.0


def test_thunderbird_prefs_and_filters(tmp_path: Path) -> None:
    prefs = tmp_path / "prefs.js"
    prefs.write_text('// Mozilla User Preferences\nuser_pref("mail.spellcheck.inline", false);\n'
                     'user_pref("mailnews.default_sort_order", 2);\nuser_pref("mail.identity.id1.fullName", "Ann");\n')
    check = metric_for("check_thunderbird_prefs")
    assert check(prefs, {"expect": {"mail.spellcheck.inline": {"method": "eq", "ref": False},
                                    "mailnews.default_sort_order": {"method": "ge", "ref": 2}}}) == 1.0
    assert check(prefs, {"expect": {"mail.absent": {"method": "eq", "ref": 1}}}) == 0.0
    assert check(prefs, {"unexpect": {"mail.identity.id1.fullName": {"method": "re", "ref": "^A"}}}) == 0.0
    assert check(None, {"expect": {}}) == 0.0
    rules = tmp_path / "msgFilterRules.dat"
    rules.write_text('version="9"\nlogging="no"\nname="Invoices"\nenabled="yes"\ntype="17"\n'
                     'action="Move to folder"\nactionValue="mailbox://nobody@Local%20Folders/Invoices"\n'
                     'condition="AND (subject,contains,invoice)"\n')
    flt = metric_for("check_thunderbird_filter")
    assert flt(rules, {"expect": [{"name": "Invoices", "action": "Move to folder",
                                   "condition": ["AND (subject,contains,invoice)"]}]}) == 1.0
    assert flt(rules, {"expect": [{"name": "Receipts"}]}) == 0.0
    assert flt(rules, {"unexpect": [{"enabled": "yes"}]}) == 0.0


def test_gimp_and_vlc_configs(tmp_path: Path) -> None:
    gimprc = tmp_path / "sessionrc"
    gimprc.write_text("# GIMP sessionrc\n(hide-docks yes)\n(show-tabs no)\n(session-info \"toolbox\" 1)\n")
    status = metric_for("check_config_status")
    assert status(gimprc, {"key": "hide-docks", "value": "yes"}) == 1.0
    assert status(gimprc, {"key": "show-tabs", "value": "yes"}) == 0.0
    assert status(gimprc, {"key": ["session-info", '"toolbox"'], "value": "1"}) == 1.0
    vlcrc = tmp_path / "vlcrc"
    vlcrc.write_text("[core]\n#input-record-path=\ninput-record-path=/home/user/Desktop\n")
    assert metric_for("is_vlc_recordings_folder")(vlcrc, {"recording_file_path": "/home/user/Desktop"}) == 1.0
    assert metric_for("is_vlc_recordings_folder")(vlcrc, {"recording_file_path": "/tmp"}) == 0.0


def _mp3(path: Path, **tags: str) -> Path:
    """A short real MPEG-1 Layer III stream (silent 128 kb/s frames) with ID3 tags written by mutagen."""
    frame = b"\xff\xfb\x90\x64" + bytes(413)  # 417-byte frame at 44.1 kHz
    path.write_bytes(frame * 40)
    id3 = EasyID3()
    for name, value in tags.items():
        id3[name] = value
    id3.save(str(path))
    return path


def test_check_mp3_meta(tmp_path: Path) -> None:
    song = _mp3(tmp_path / "song.mp3", title="Blue Monday", artist="New Order")
    assert MP3(str(song)).info.length > 0.5  # a stream mutagen reads as audio, not just a tag
    check = metric_for("check_mp3_meta")
    assert check(song, {"title": {"method": "eq", "ref": "Blue Monday"},
                        "artist": {"method": "re", "ref": "Order"}}) == 1.0
    assert check(song, {"title": {"method": "eq", "ref": "Ceremony"}}) == 0.0
    assert check(song, {"album": {"method": "eq", "ref": ""}}) == 1.0  # a missing tag reads as ""
    (tmp_path / "noise.mp3").write_bytes(b"not audio")
    assert check(tmp_path / "noise.mp3", {"title": {"method": "eq", "ref": ""}}) == 0.0


def test_os_value_metrics() -> None:
    timedatectl = ("               Local time: Thu 2024-01-25 12:56:06 UTC\n           Universal time: Thu 2024-01-25 "
                   "12:56:06 UTC\n                 RTC time: Thu 2024-01-25 12:56:05\n                Time zone: "
                   "Etc/UTC (UTC, +0000)\n")
    assert metric_for("is_utc_0")(timedatectl) == 1.0
    assert metric_for("is_utc_0")(timedatectl.replace("+0000", "+0100")) == 0.0
    favourites = metric_for("check_gnome_favorite_apps")
    assert favourites("['vim.desktop', 'firefox.desktop']", {"expected": ["firefox.desktop", "vim.desktop"]}) == 1.0
    assert favourites("__import__('os').system('true')", {"expected": []}) == 0.0  # a literal, never evaluated
    tree = {"name": "photos", "children": [{"name": "a.jpg"}, {"name": "b.jpg"}]}
    assert metric_for("check_moved_jpgs")(tree, {"expected": ["b.jpg", "a.jpg"]}) == 1.0
    assert metric_for("check_moved_jpgs")(tree, {"expected": ["a.jpg"]}) == 0.0
    assert metric_for("is_in_vm_clickboard")({"expected": ["one", "two"]}, "one two three") == 1.0
    assert metric_for("is_in_vm_clickboard")({"expected": "four"}, "one two three") == 0.0
    assert metric_for("check_text_enlarged")("1.25") == 1.0
    assert metric_for("check_text_enlarged")("1.0") == 0.0


def _picture(path: Path, *, shift: int = 0, noise: float = 0.0, size: tuple[int, int] = (96, 64)) -> Path:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((10 + shift, 10, 50 + shift, 40), fill="navy")
    draw.ellipse((55, 20, 85, 50), fill="orange")
    pixels = np.asarray(image, dtype=np.float64)
    pixels += np.random.default_rng(0).normal(0, noise, pixels.shape)
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(path)
    return path


def _windowed_ssim(x: np.ndarray, y: np.ndarray) -> float:
    """SSIM from its definition, window by window: 7x7 windows wholly inside the image, sample (co)variances."""
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    scores = []
    for i in range(3, x.shape[0] - 3):
        for j in range(3, x.shape[1] - 3):
            a, b = x[i - 3:i + 4, j - 3:j + 4].ravel(), y[i - 3:i + 4, j - 3:j + 4].ravel()
            cov = np.cov(a, b)  # ddof=1
            scores.append((2 * a.mean() * b.mean() + c1) * (2 * cov[0, 1] + c2)
                          / ((a.mean() ** 2 + b.mean() ** 2 + c1) * (cov[0, 0] + cov[1, 1] + c2)))
    return float(np.mean(scores))


def test_ssim_agrees_with_the_definition() -> None:
    rng = np.random.default_rng(1)
    image = rng.integers(0, 256, (24, 20)).astype(np.float64)
    noisy = np.clip(image + rng.normal(0, 40, image.shape), 0, 255)
    assert ssim(image, image) == pytest.approx(1.0)
    assert ssim(image, noisy) == pytest.approx(_windowed_ssim(image, noisy), rel=1e-9)
    assert ssim(image, 255 - image) == pytest.approx(_windowed_ssim(image, 255 - image), rel=1e-9)
    assert ssim(image, 255 - image) < 0.0  # an inverted image correlates negatively


def test_image_metrics(tmp_path: Path) -> None:
    gold = _picture(tmp_path / "gold.png")
    close = _picture(tmp_path / "close.png", noise=2.0)
    moved = _picture(tmp_path / "moved.png", shift=30)
    small = _picture(tmp_path / "small.png", size=(48, 32))
    (tmp_path / "bad.png").write_bytes(b"\x89PNG broken")
    structure = metric_for("check_structure_sim")
    assert structure(close, gold) == 1.0
    assert structure(moved, gold) == 0.0
    assert structure(small, gold) == 0.0  # sizes differ
    compare = metric_for("compare_images")
    assert compare(gold, gold) == pytest.approx(1.0)
    assert compare(close, gold) > compare(moved, gold)
    assert compare(close, gold, reference_base_result=0.999) == 0.0  # no improvement over the base
    assert metric_for("check_image_size")(small, {"width": 48, "height": 32}) == 1.0
    assert metric_for("check_image_size")(small, {"width": 96}) == 0.0
    for name in ("check_structure_sim", "compare_images"):
        assert metric_for(name)(tmp_path / "bad.png", gold) == 0.0
        assert metric_for(name)(None, gold) == 0.0


@pytest.fixture(scope="module")
def pdfs(tmp_path_factory: pytest.TempPathFactory,
         soffice_convert: Callable[[Sequence[Path], str], list[Path]]) -> dict[str, Path]:
    raw = tmp_path_factory.mktemp("pdf-src")
    texts = {"gold": "Invoice 2024-117\nTotal due: 420 EUR\n", "same": "Invoice 2024-117\nTotal due: 420 EUR\n",
             "other": "Meeting notes\nNothing was decided.\n"}
    sources = []
    for name, text in texts.items():
        (raw / f"{name}.txt").write_text(text)
        sources.append(raw / f"{name}.txt")
    return {p.stem: p for p in soffice_convert(sources, "pdf")}


def test_compare_pdfs_on_libreoffice_pdfs(tmp_path: Path, pdfs: dict[str, Path]) -> None:
    compare = metric_for("compare_pdfs")
    assert compare(pdfs["same"], pdfs["gold"]) == 1.0
    assert compare(pdfs["other"], pdfs["gold"]) < 0.6
    assert compare([pdfs["same"], pdfs["other"]], [pdfs["gold"], pdfs["gold"]]) < 1.0
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4 truncated")
    assert compare(tmp_path / "bad.pdf", pdfs["gold"]) == 0.0
    assert compare(None, pdfs["gold"]) == 0.0
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"number": "2024-117", "total": "420 EUR"}))
    assert metric_for("is_gold_text_included_in_pdf")(pdfs["gold"], gold) == 1.0
    assert metric_for("is_gold_text_included_in_pdf")(pdfs["other"], gold) == 0.0
    assert metric_for("is_gold_text_included_in_pdf")(tmp_path / "bad.pdf", gold) == 0.0


def test_vlcrc_setting_checks_fall_back_to_vlc_defaults(tmp_path: Path) -> None:
    vlcrc = tmp_path / "vlcrc"
    vlcrc.write_text("[qt]\n#qt-bgcone=1\nqt-bgcone=0\n#qt-max-volume=125\n[hotkeys]\nglobal-key-play-pause=Ctrl+p\n")
    assert metric_for("check_qt_bgcone")(vlcrc, {"expected_qt_bgcone": 0}) == 1.0
    assert metric_for("check_qt_bgcone")(vlcrc, {"expected_qt_bgcone": 1}) == 0.0
    assert metric_for("check_qt_max_volume")(vlcrc, {"expected_qt_max_volume": "125"}) == 1.0  # unset: the default
    assert metric_for("check_global_key_play_pause")(vlcrc, {"expected_global_key_play_pause": 1}) == 1.0
    assert metric_for("check_play_and_exit")(None, {"expected_play_and_exit": 0}) == 0.0


def test_is_vlc_playing_reads_the_status_xml(tmp_path: Path) -> None:
    status = tmp_path / "status.xml"
    body = ('<root><state>{}</state><information><category name="meta"><info name="filename">{}</info>'
            '</category></information></root>')
    status.write_text(body.format("playing", "/home/user/Music/song.mp3"))
    playing = metric_for("is_vlc_playing")
    assert playing(status, {"type": "file_name", "file_name": "song.mp3"}) == 1.0
    assert playing(status, {"type": "file_name", "file_name": "other.mp3"}) == 0.0
    status.write_text(body.format("paused", "/home/user/Music/song.mp3"))
    assert playing(status, {"type": "file_name", "file_name": "song.mp3"}) == 0.0
    status.write_text(body.format("playing", "https://radio.example.org/live.m3u8"))
    assert playing(status, {"type": "url", "url": "https://radio.example.org/live.m3u8"}) == 1.0
    status.write_text("<root><state>")
    assert playing(status, {"type": "file_name", "file_name": "song.mp3"}) == 0.0


def test_yaml_json_inclusion_and_script_texts(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("server:\n  port: 8080\n  hosts: [a, b]\n")
    assert metric_for("check_json")(config, {"expect": [{"key": ["server", "port"], "method": "eq", "ref": 8080}]},
                                    is_yaml=True) == 1.0
    assert metric_for("check_json")(config, {"expect": [{"key": ["server", "port"], "method": "eq", "ref": 8080}]}) \
        == 0.0  # not JSON
    gold, result = tmp_path / "gold.json", tmp_path / "result.json"
    gold.write_text('{"a": 1, "b": [2]}')
    result.write_text('{"a": 1, "b": [2], "c": 3}')
    assert metric_for("is_included_all_json_objects")(gold, result) == 1.0
    assert metric_for("is_included_all_json_objects")(result, gold) == 0.0
    log = tmp_path / "log.txt"
    log.write_text("12:00:01 start\nno time here\n23:59:59 end\n")
    assert metric_for("check_line_number")(log, {"expected": "2"}) == 1.0
    assert metric_for("check_line_number")(log, {"expected": 3}) == 0.0
    assert metric_for("compare_terminal_and_txt")(log, log.read_text()) == 1.0
    assert metric_for("compare_terminal_and_txt")(log, "12:00:01 start") == 0.0
    (tmp_path / "a.py").write_text("#!/usr/bin/env python3\nimport os\n\n\tprint(os.sep)   \n")
    (tmp_path / "b.py").write_text("import os\n    print(os.sep)\n")
    (tmp_path / "c.py").write_text("import sys\n    print(sys.path)\n")
    assert metric_for("compare_python_pure_text")(tmp_path / "a.py", tmp_path / "b.py") == 1.0
    assert metric_for("compare_python_pure_text")(tmp_path / "c.py", tmp_path / "b.py") == 0.0


def test_vlc_slider_colours_and_fullscreen(tmp_path: Path) -> None:
    vlcrc = tmp_path / "vlcrc"
    vlcrc.write_text("[qt]\nqt-slider-colours=10;10;10;20;20;20;30;30;30;40;40;40\n")
    colours = metric_for("check_qt_slider_colours")
    assert colours(vlcrc, {"type": "blackish"}) == 1.0
    assert colours(vlcrc, {"type": "match", "expected_qt_slider_colours": "10;10;10;20;20;20;30;30;30;40;40;40"}) == 1.0
    vlcrc.write_text("[qt]\n")
    assert colours(vlcrc, {"type": "blackish"}) == 0.0  # VLC's default greens and reds
    fullscreen = metric_for("is_vlc_fullscreen")
    assert fullscreen({"width": 1280, "height": 800}, {"width": 1280, "height": 800}) == 1.0
    assert fullscreen({"width": 640, "height": 800}, {"width": 1280, "height": 800}) == 0.0
    assert fullscreen(None, {"width": 1280, "height": 800}) == 0.0


def test_conference_cities_in_order(tmp_path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    cities = ["Vienna, Austria"] + ["Paris, France"] * 20
    for row, city in enumerate(cities, start=2):
        book.active.cell(row=row, column=3, value=city)
    book.save(tmp_path / "cities.xlsx")
    check = metric_for("compare_conference_city_in_order")
    assert check(tmp_path / "cities.xlsx", {"expected": [["Wien", "Vienna"]] + ["Paris"] * 20}) == 1.0
    assert check(tmp_path / "cities.xlsx", {"expected": ["Paris"] * 21}) == 0.0
    assert check(tmp_path / "cities.xlsx", {"expected": ["Vienna"]}) == 0.0  # fewer answers than rows
