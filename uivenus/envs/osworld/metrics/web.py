"""Metrics over what the Chromium getters report: the active tab (a mapping with "url" and "title", or a bare URL),
the list of open tabs, the bookmarks tree, a profile's extensions."""

from __future__ import annotations

import re
from collections.abc import Mapping
from itertools import product
from typing import Any
from urllib.parse import urlparse, urlunparse

from uivenus.envs.osworld.metrics.matching import rule_type
from uivenus.envs.osworld.metrics.registry import metric

__all__ = [
    "check_enabled_experiments", "check_font_size", "check_history_deleted", "is_added_to_steam_cart",
    "is_cookie_deleted", "is_expected_active_tab", "is_expected_active_tab_approximate", "is_expected_bookmarks",
    "is_expected_installed_extensions", "is_expected_search_query", "is_expected_tabs",
    "is_expected_url_pattern_match", "is_extension_installed", "same_url",
]


def _url_of(tab: Any) -> str | None:
    url = tab.get("url") if isinstance(tab, Mapping) else tab
    return url if isinstance(url, str) else None


def _normal_url(url: str) -> str:
    """OSWorld's URL equality: the scheme defaults to http, host lowercased without "www.", a bare "/" path dropped."""
    parts = urlparse(url)
    path = "" if parts.path == "/" else parts.path
    return urlunparse(parts._replace(scheme=(parts.scheme or "http").lower(),
                                     netloc=parts.netloc.lower().replace("www.", ""), path=path))


def same_url(a: str | None, b: str | None) -> bool:
    """Two URLs name the same page under OSWorld's normalisation (None only equals None)."""
    return a == b if a is None or b is None else _normal_url(a) == _normal_url(b)


@metric("is_expected_active_tab")
def is_expected_active_tab(active_tab: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when the active tab shows `rule["url"]` (`rule["type"]` must be "url")."""
    rule_type(rule, "is_expected_active_tab", ("url",))
    return float(bool(active_tab) and same_url(rule["url"], _url_of(active_tab)))


@metric("is_expected_active_tab_approximate")
def is_expected_active_tab_approximate(active_tab: Any, rule: Mapping[str, Any]) -> float:
    """Like `is_expected_active_tab`, ignoring the URLs' query strings."""
    rule_type(rule, "is_expected_active_tab_approximate", ("url",))
    url = _url_of(active_tab)
    if not url:
        return 0.0
    return float(urlparse(url)._replace(query="") == urlparse(rule["url"])._replace(query=""))


@metric("is_expected_url_pattern_match")
def is_expected_url_pattern_match(result: Any, rules: Mapping[str, Any]) -> float:
    """1.0 when the URL (a tab mapping or a string) matches every regular expression in `rules["expected"]`."""
    url = _url_of(result)
    return float(bool(url) and all(re.search(pattern, url) for pattern in rules["expected"]))


@metric("is_expected_search_query")
def is_expected_search_query(active_tab: Any, rules: Mapping[str, Any]) -> float:
    """1.0 when the active tab's URL matches `rules["expect"]["pattern"]`."""
    url = _url_of(active_tab)
    return float(bool(url) and re.search(rules["expect"]["pattern"], url) is not None)


@metric("is_expected_tabs")
def is_expected_tabs(open_tabs: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when the open tabs' URLs are `rule["urls"]` (same count, each expected URL among them, any order)."""
    rule_type(rule, "is_expected_tabs", ("url",))
    if not isinstance(open_tabs, list):
        return 0.0
    have = [_url_of(tab) for tab in open_tabs]
    want = list(rule["urls"])
    return float(len(have) == len(want) and all(any(same_url(w, h) for h in have) for w in want))


def _bar_children(bookmarks: Any) -> list[Mapping[str, Any]]:
    return list(bookmarks.get("bookmark_bar", {}).get("children", [])) if isinstance(bookmarks, Mapping) else []


@metric("is_expected_bookmarks")
def is_expected_bookmarks(bookmarks: Any, rule: Mapping[str, Any]) -> float:
    """Check the bookmarks bar (Chromium's `Bookmarks` roots): its folder names (`bookmark_bar_folders_names`), its
    site URLs (`bookmark_bar_websites_urls`), or the URLs in its "Liked Authors" folder (`liked_authors_websites_urls`,
    where an entry may list alternatives)."""
    kind = rule_type(rule, "is_expected_bookmarks",
                      ("bookmark_bar_folders_names", "bookmark_bar_websites_urls", "liked_authors_websites_urls"))
    children = _bar_children(bookmarks)
    if not children:
        return 0.0
    if kind == "bookmark_bar_folders_names":
        return float({c.get("name") for c in children if c.get("type") == "folder"} == set(rule["names"]))
    if kind == "bookmark_bar_websites_urls":
        return float({c.get("url") for c in children if c.get("type") == "url"} == set(rule["urls"]))
    folder = next((c for c in children if c.get("type") == "folder" and c.get("name") == "Liked Authors"), None)
    if folder is None:
        return 0.0
    have = {c.get("url") for c in folder.get("children", []) if c.get("type") == "url"}
    choices = [[u] if isinstance(u, str) else list(u) for u in rule["urls"]]
    return float(any(set(pick) == have for pick in product(*choices)))


@metric("is_expected_installed_extensions")
def is_expected_installed_extensions(installed: Any, expected: Mapping[str, Any]) -> float:
    """1.0 when every name in `expected["expected"]` is among the installed extensions."""
    return float(isinstance(installed, list | tuple) and set(expected["expected"]) <= set(installed))


@metric("is_extension_installed")
def is_extension_installed(result: Any, rules: Mapping[str, Any]) -> float:
    """Over a command's output listing extensions: `rules["type"]` "contain" wants `rules["expected"]` in it,
    "not_contain" wants it absent."""
    kind = rule_type(rules, "is_extension_installed", ("contain", "not_contain"))
    if not isinstance(result, str):
        return 0.0
    return float((rules["expected"] in result) == (kind == "contain"))


@metric("is_cookie_deleted")
def is_cookie_deleted(cookies: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when no row of Chromium's cookie table (host at column 1) is for one of `rule["domains"]`."""
    rule_type(rule, "is_cookie_deleted", ("domains",))
    if not isinstance(cookies, list):
        return 0.0
    hosts = [row[1] for row in cookies if isinstance(row, list | tuple) and len(row) > 1]
    return float(not any(same_url(domain, host) for domain in rule["domains"] for host in hosts))


@metric("check_history_deleted")
def check_history_deleted(history: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when no visited URL (column 0 of the history rows) contains one of `rule["keywords"]`."""
    rule_type(rule, "check_history_deleted", ("keywords",))
    if not isinstance(history, list):
        return 0.0
    urls = [str(row[0]) for row in history if isinstance(row, list | tuple) and row]
    return float(not any(keyword in url for keyword in rule["keywords"] for url in urls))


@metric("check_enabled_experiments")
def check_enabled_experiments(enabled: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when the enabled chrome://flags experiments (names before "@") are exactly `rule["names"]`, in order."""
    rule_type(rule, "check_enabled_experiments", ("names",))
    if not isinstance(enabled, list):
        return 0.0
    return float([str(item).split("@")[0] for item in enabled] == list(rule["names"]))


@metric("check_font_size")
def check_font_size(font_size: Any, rule: Mapping[str, Any]) -> float:
    """Over the browser's `default_font_size`: equal to `rule["value"]` ("value"), or strictly between
    `rule["min"]` and `rule["max"]` ("range")."""
    kind = rule_type(rule, "check_font_size", ("value", "range"))
    size = font_size.get("default_font_size") if isinstance(font_size, Mapping) else None
    if not isinstance(size, int | float):
        return 0.0
    return float(size == rule["value"] if kind == "value" else rule["min"] < size < rule["max"])


@metric("is_added_to_steam_cart")
def is_added_to_steam_cart(active_tab: Any, rule: Mapping[str, Any]) -> float:
    """1.0 when the active tab's page content names every item of `rule["items"]`."""
    content = active_tab.get("content") if isinstance(active_tab, Mapping) else None
    return float(isinstance(content, str) and all(item in content for item in rule["items"]))
