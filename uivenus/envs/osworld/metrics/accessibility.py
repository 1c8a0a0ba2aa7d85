"""`check_accessibility_tree`: rules (an XPath or CSS selectors, optionally the text wanted) over an accessibility
tree serialised as XML the way the benchmark does it (roles as tags, namespaced state/attribute/... attributes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import lxml.etree
from lxml.cssselect import CSSSelector
from rapidfuzz import fuzz

from uivenus.envs.osworld.metrics.registry import metric

__all__ = ["A11Y_NAMESPACES", "check_accessibility_tree"]

#: The benchmark's namespace prefixes for an Ubuntu (AT-SPI) tree, used by task XPaths and selectors.
A11Y_NAMESPACES: Mapping[str, str] = {
    prefix: f"https://accessibility.ubuntu.example.org/ns/{path}" for prefix, path in (
        ("st", "state"), ("attr", "attributes"), ("cp", "component"), ("doc", "document"),
        ("docattr", "document/attributes"), ("txt", "text"), ("val", "value"), ("act", "action"))
}


def _elements(tree: Any, rule: Mapping[str, Any]) -> list[Any]:
    if "xpath" in rule:
        return list(tree.xpath(rule["xpath"], namespaces=dict(A11Y_NAMESPACES)))
    if "selectors" in rule:
        return CSSSelector(", ".join(rule["selectors"]), namespaces=dict(A11Y_NAMESPACES))(tree)
    raise ValueError(f"check_accessibility_tree: a rule needs 'xpath' or 'selectors', got {dict(rule)}")


@metric("check_accessibility_tree")
def check_accessibility_tree(result: Any, rules: Sequence[Mapping[str, Any]]) -> float:
    """The product over rules of how well the selected elements match: 0 when a rule selects nothing; with
    `text`, the best element's match (equality, or rapidfuzz similarity when `exact` is false); else 1."""
    if not isinstance(result, str | bytes) or not result:
        return 0.0
    try:
        tree = lxml.etree.fromstring(result.encode() if isinstance(result, str) else result)
    except lxml.etree.XMLSyntaxError:
        return 0.0
    score = 1.0
    for rule in rules:
        found = _elements(tree, rule)
        if not found:
            return 0.0
        if "text" in rule:
            exact = rule.get("exact", True)
            score *= max(float(e.text == rule["text"]) if exact else fuzz.ratio(e.text or "", rule["text"]) / 100.0
                         for e in found)
    return score
