"""HTML file metrics (pages LibreOffice or an editor saved): the element trees compared node by node, and a style
rule looked up; parsed with lxml, whose HTML parser is forgiving the way browsers are."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import lxml.html
from lxml.etree import ParserError

from uivenus.envs.osworld.metrics.readers import read_or_none
from uivenus.envs.osworld.metrics.registry import metric

__all__ = ["check_html_background_image", "compare_htmls"]


def _page(path: Any) -> Any:
    def parse(p: Any) -> Any:
        try:
            return lxml.html.fromstring(p.read_bytes())
        except ParserError:  # an empty document
            return None
    return read_or_none(path, parse)


@metric("compare_htmls")
def compare_htmls(result: Any, expected: Any, *, ignore_sdnum: bool = False) -> float:
    """1.0 when both pages have the same elements in document order: same tags, same stripped text, same
    attributes (`ignore_sdnum` leaves out LibreOffice's number-format attribute `sdnum`)."""
    first, second = _page(result), _page(expected)
    if first is None or second is None:
        return 0.0

    def attributes(element: Any) -> dict[str, str]:
        return {k: v for k, v in element.attrib.items() if not (ignore_sdnum and k == "sdnum")}

    nodes_a, nodes_b = list(first.iter()), list(second.iter())
    return float(len(nodes_a) == len(nodes_b) and all(
        a.tag == b.tag and a.text_content().strip() == b.text_content().strip() and attributes(a) == attributes(b)
        for a, b in zip(nodes_a, nodes_b, strict=True)))


@metric("check_html_background_image")
def check_html_background_image(result: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when a <style> block of the page sets `background-image: url('<rule["value"]>')`."""
    page = _page(result)
    wanted = f"background-image: url('{rule['value']}')"
    return float(page is not None and any(wanted in (style.text or "") for style in page.iter("style")))
