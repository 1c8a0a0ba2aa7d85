"""HTML metrics on page files: same tree, changed text or attributes, LibreOffice's sdnum attribute, style rules."""

from __future__ import annotations

from pathlib import Path

from uivenus.envs.osworld.metrics import metric_for

PAGE = """<html><head><title>Prices</title><style>body {{ background-image: url('{image}'); }}</style></head>
<body><table><tr><td sdnum="{sdnum}">{price}</td><td>EUR</td></tr></table><p class="note">Updated</p></body></html>"""


def _page(path: Path, *, price: str = "4.20", sdnum: str = "1033;0;0.00", image: str = "bg.png") -> Path:
    path.write_text(PAGE.format(price=price, sdnum=sdnum, image=image))
    return path


def test_compare_htmls(tmp_path: Path) -> None:
    gold = _page(tmp_path / "gold.html")
    compare = metric_for("compare_htmls")
    assert compare(_page(tmp_path / "same.html"), gold) == 1.0
    assert compare(_page(tmp_path / "price.html", price="5.00"), gold) == 0.0
    other_format = _page(tmp_path / "format.html", sdnum="1031;0;0,00")
    assert compare(other_format, gold) == 0.0
    assert compare(other_format, gold, ignore_sdnum=True) == 1.0
    (tmp_path / "empty.html").write_text("")
    assert compare(tmp_path / "empty.html", gold) == 0.0
    assert compare(None, gold) == 0.0


def test_check_html_background_image(tmp_path: Path) -> None:
    check = metric_for("check_html_background_image")
    assert check(_page(tmp_path / "a.html", image="sky.jpg"), {"value": "sky.jpg"}) == 1.0
    assert check(_page(tmp_path / "b.html", image="sea.jpg"), {"value": "sky.jpg"}) == 0.0
    assert check(tmp_path / "absent.html", {"value": "sky.jpg"}) == 0.0
