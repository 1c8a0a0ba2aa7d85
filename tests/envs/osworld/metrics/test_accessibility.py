"""check_accessibility_tree over an AT-SPI tree serialised the benchmark's way: XPath and CSS rules, exact and
fuzzy text, and trees that are missing or not XML."""

from __future__ import annotations

import pytest

from uivenus.envs.osworld.metrics import metric_for
from uivenus.envs.osworld.metrics.accessibility import A11Y_NAMESPACES

TREE = (f'<desktop-frame xmlns:st="{A11Y_NAMESPACES["st"]}" xmlns:attr="{A11Y_NAMESPACES["attr"]}">'
        '<application name="Calculator"><frame name="Calculator" st:active="true">'
        '<label name="result" attr:id="display">42</label><push-button name="Equals">=</push-button>'
        '</frame></application></desktop-frame>')

check = metric_for("check_accessibility_tree")


def test_xpath_and_selector_rules() -> None:
    assert check(TREE, [{"xpath": "//label[@attr:id='display']", "text": "42"}]) == 1.0
    assert check(TREE, [{"xpath": "//label[@attr:id='display']", "text": "41"}]) == 0.0
    assert check(TREE, [{"selectors": ["frame[st|active=true] push-button[name=Equals]"]}]) == 1.0
    assert check(TREE, [{"selectors": ["frame[st|active=false]"]}]) == 0.0  # selects nothing


def test_fuzzy_text_multiplies_across_rules() -> None:
    fuzzy = check(TREE, [{"xpath": "//label", "text": "421", "exact": False}, {"xpath": "//push-button"}])
    assert 0.5 < fuzzy < 1.0


def test_bad_trees_and_rules() -> None:
    assert check(None, [{"xpath": "//label"}]) == 0.0
    assert check("<not-closed>", [{"xpath": "//label"}]) == 0.0
    with pytest.raises(ValueError, match="'xpath' or 'selectors'"):
        check(TREE, [{"text": "42"}])
