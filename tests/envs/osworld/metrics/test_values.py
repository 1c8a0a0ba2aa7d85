"""The metrics over plain values (general.py) and over what Chromium's getters report (web.py): pass, fail, and the
values a broken getter leaves (None, a wrong type), which score 0.0."""

from __future__ import annotations

import pytest

from uivenus.envs.osworld.metrics import METRICS, UnknownMetric, metric_for


def test_metric_for_finds_registered_metrics_and_names_the_known_ones_for_an_unknown_name() -> None:
    assert metric_for("exact_match") is METRICS["exact_match"]
    with pytest.raises(UnknownMetric) as caught:
        metric_for("compare_nothing")
    assert "compare_nothing" in str(caught.value) and "exact_match" in str(caught.value)
    with pytest.raises(UnknownMetric):
        metric_for(["exact_match"])  # a list is not a name


def test_the_registry_is_read_only() -> None:
    with pytest.raises(TypeError):
        METRICS["x"] = lambda result, rules: 1.0  # type: ignore[index]


def test_exact_match_and_the_list_variants() -> None:
    assert metric_for("exact_match")("true", {"expected": "true"}) == 1.0
    assert metric_for("exact_match")("True", {"expected": "true"}) == 0.0
    assert metric_for("match_in_list")("b", {"expected": ["a", "b"]}) == 1.0
    assert metric_for("match_in_list")("c", {"expected": ["a", "b"]}) == 0.0
    assert metric_for("is_in_list")(["a", "b"], {"expected": "b"}) == 1.0
    assert metric_for("is_in_list")(None, {"expected": "b"}) == 0.0


def test_literal_match_compares_strings_or_lists_optionally_ignoring_case() -> None:
    literal = metric_for("literal_match")
    assert literal("Hello", "hello", ignore_case=True) == 1.0
    assert literal("Hello", "hello") == 0.0
    assert literal(["A", 1], ["a", "1"], type="list", ignore_case=True) == 1.0
    assert literal(["A"], ["A", "B"], type="list") == 0.0
    assert literal("A", ["A"], type="list") == 0.0
    with pytest.raises(ValueError, match="type='set'"):
        literal("a", "a", type="set")


def test_fuzzy_match_is_a_similarity() -> None:
    assert metric_for("fuzzy_match")("kitten", {"expected": "kitten"}) == 1.0
    assert 0.5 < metric_for("fuzzy_match")("kitten", {"expected": "sitten"}) < 1.0
    assert metric_for("fuzzy_match")(None, {"expected": "kitten"}) == 0.0


def test_check_include_exclude() -> None:
    check = metric_for("check_include_exclude")
    rules = {"include": ["timezone: UTC", "ntp"], "exclude": ["error"]}
    assert check("timezone: UTC; ntp on", rules) == 1.0
    assert check("timezone: UTC; ntp on; error", rules) == 0.0
    assert check("timezone: CET; ntp on", rules) == 0.0
    assert check(None, rules) == 0.0


def test_check_direct_json_object_equal_keys_sorted_lists_and_python_repr_text() -> None:
    check = metric_for("check_direct_json_object")
    assert check({"a": 1, "b": "x", "extra": 2}, {"expected": {"a": 1, "b": "x"}}) == 1.0
    assert check({"a": 2, "b": "x"}, {"expected": {"a": 1, "b": "x"}}) == 0.0
    assert check("{'a': 1, 'b': 'x'}", {"expected": {"a": 1, "b": "x"}}) == 1.0  # a getter's printed dict
    assert check("not json", {"expected": {"a": 1}}) == 0.0
    assert check(None, {"expected": {"a": 1}}) == 0.0
    sorted_rules = {"expected": {"tags": ["b", "a"], "ignore_list_order": True}}
    assert check({"tags": ["a", "b"], "ignore_list_order": True}, sorted_rules) == 1.0
    assert check({"tags": ["a", "b"]}, {"expected": {"tags": ["b", "a"]}}) == 0.0


def test_check_direct_json_object_expect_in_result() -> None:
    check = metric_for("check_direct_json_object")
    rules = {"expect_in_result": True, "expected": {"title": "Report", "lang": ["en", "en-US"]}}
    assert check({"title": "Annual Report 2024", "lang": "en-US"}, rules) == 1.0
    assert check({"title": "Annual Report 2024", "lang": ["fr", "en"]}, rules) == 1.0
    assert check({"title": "Summary", "lang": "en"}, rules) == 0.0
    assert check({"title": "Report", "lang": "de"}, rules) == 0.0
    assert check({"lang": "en"}, rules) == 0.0  # a missing string key is a fail, not a crash


def test_url_metrics_normalise_like_the_benchmark() -> None:
    active = metric_for("is_expected_active_tab")
    rule = {"type": "url", "url": "https://www.example.org/"}
    assert active({"url": "https://example.org", "title": "x"}, rule) == 1.0
    assert active("https://EXAMPLE.org/", rule) == 1.0
    assert active({"url": "https://example.org/about"}, rule) == 0.0
    assert active(None, rule) == 0.0
    with pytest.raises(ValueError, match="rule type 'title'"):
        active({"url": "https://example.org"}, {"type": "title", "url": "x"})
    approx = metric_for("is_expected_active_tab_approximate")
    assert approx({"url": "https://a.org/p?q=1"}, {"type": "url", "url": "https://a.org/p?q=2"}) == 1.0
    assert approx({"url": "https://a.org/q?q=1"}, {"type": "url", "url": "https://a.org/p?q=1"}) == 0.0


def test_url_pattern_and_search_query() -> None:
    pattern = metric_for("is_expected_url_pattern_match")
    rules = {"expected": [r"example\.org", r"q=cats"]}
    assert pattern({"url": "https://example.org/search?q=cats"}, rules) == 1.0
    assert pattern("https://example.org/search?q=dogs", rules) == 0.0
    assert pattern({}, rules) == 0.0
    search = metric_for("is_expected_search_query")
    assert search({"url": "https://s.org/?q=osworld"}, {"expect": {"pattern": "q=osworld"}}) == 1.0
    assert search({"url": "https://s.org/?q=other"}, {"expect": {"pattern": "q=osworld"}}) == 0.0


def test_is_expected_tabs_wants_the_same_set_of_pages() -> None:
    tabs = metric_for("is_expected_tabs")
    rule = {"type": "url", "urls": ["https://a.org/", "https://b.org/x"]}
    assert tabs([{"url": "https://b.org/x"}, {"url": "https://www.a.org"}], rule) == 1.0
    assert tabs([{"url": "https://a.org/"}], rule) == 0.0
    assert tabs([{"url": "https://a.org/"}, {"url": "https://c.org/"}], rule) == 0.0
    assert tabs(None, rule) == 0.0


def test_is_expected_bookmarks_reads_the_bookmark_bar() -> None:
    check = metric_for("is_expected_bookmarks")
    roots = {"bookmark_bar": {"children": [
        {"type": "folder", "name": "Work", "children": []},
        {"type": "folder", "name": "Liked Authors", "children": [
            {"type": "url", "url": "https://a.org/1"}, {"type": "url", "url": "https://a.org/2"}]},
        {"type": "url", "name": "News", "url": "https://news.org/"}]}}
    assert check(roots, {"type": "bookmark_bar_folders_names", "names": ["Liked Authors", "Work"]}) == 1.0
    assert check(roots, {"type": "bookmark_bar_folders_names", "names": ["Work"]}) == 0.0
    assert check(roots, {"type": "bookmark_bar_websites_urls", "urls": ["https://news.org/"]}) == 1.0
    liked = {"type": "liked_authors_websites_urls", "urls": [["https://a.org/0", "https://a.org/1"], "https://a.org/2"]}
    assert check(roots, liked) == 1.0
    assert check(roots, {**liked, "urls": ["https://a.org/1"]}) == 0.0
    assert check({}, liked) == 0.0


def test_extension_metrics() -> None:
    listed = "ms-python.python@2024.1\nvscodevim.vim@1.0\n"
    assert metric_for("is_extension_installed")(listed, {"type": "contain", "expected": "vscodevim.vim"}) == 1.0
    assert metric_for("is_extension_installed")(listed, {"type": "not_contain", "expected": "vscodevim.vim"}) == 0.0
    assert metric_for("is_extension_installed")(None, {"type": "contain", "expected": "x"}) == 0.0
    installed = metric_for("is_expected_installed_extensions")
    assert installed(["Dark Reader", "uBlock"], {"expected": ["uBlock"]}) == 1.0
    assert installed(["Dark Reader"], {"expected": ["uBlock"]}) == 0.0


def test_compare_answer_wants_a_non_empty_equal_answer() -> None:
    assert metric_for("compare_answer")("42", {"expected": "42"}) == 1.0
    assert metric_for("compare_answer")("41", {"expected": "42"}) == 0.0
    assert metric_for("compare_answer")("", {"expected": ""}) == 0.0


def test_browser_profile_checks() -> None:
    cookies = [(1, ".example.org", "sid"), (2, "news.site", "x")]
    assert metric_for("is_cookie_deleted")(cookies, {"type": "domains", "domains": ["tracker.net"]}) == 1.0
    assert metric_for("is_cookie_deleted")(cookies, {"type": "domains", "domains": ["news.site"]}) == 0.0
    history = [("https://shop.example.org/cart", "Cart", 3)]
    assert metric_for("check_history_deleted")(history, {"type": "keywords", "keywords": ["bank"]}) == 1.0
    assert metric_for("check_history_deleted")(history, {"type": "keywords", "keywords": ["shop"]}) == 0.0
    flags = ["smooth-scrolling@1", "tab-groups@2"]
    assert metric_for("check_enabled_experiments")(flags, {"type": "names", "names": ["smooth-scrolling",
                                                                                     "tab-groups"]}) == 1.0
    assert metric_for("check_enabled_experiments")(flags, {"type": "names", "names": ["tab-groups"]}) == 0.0
    assert metric_for("check_font_size")({"default_font_size": 20}, {"type": "value", "value": 20}) == 1.0
    assert metric_for("check_font_size")({"default_font_size": 20}, {"type": "range", "min": 10, "max": 20}) == 0.0
    assert metric_for("check_font_size")(None, {"type": "value", "value": 20}) == 0.0
    cart = {"url": "https://store/cart", "content": "Your cart: Portal 2, Celeste"}
    assert metric_for("is_added_to_steam_cart")(cart, {"items": ["Portal 2", "Celeste"]}) == 1.0
    assert metric_for("is_added_to_steam_cart")(cart, {"items": ["Hades"]}) == 0.0


def test_is_shortcut_on_desktop() -> None:
    shortcuts = {"/home/user/Desktop/gimp.desktop": "[Desktop Entry]\nName=GIMP\nExec=gimp %U\n"}
    assert metric_for("is_shortcut_on_desktop")(shortcuts, {"type": "name", "name": "GIMP"}) == 1.0
    assert metric_for("is_shortcut_on_desktop")(shortcuts, {"type": "exec", "exec": "gimp %U"}) == 1.0
    assert metric_for("is_shortcut_on_desktop")(shortcuts, {"type": "name", "name": "GIM"}) == 0.0
    with pytest.raises(ValueError, match="'url'"):
        metric_for("is_shortcut_on_desktop")(shortcuts, {"type": "url", "url": "x"})


def test_a_metric_name_is_registered_once() -> None:
    from uivenus.envs.osworld.metrics import metric

    with pytest.raises(ValueError, match="'exact_match' is registered twice"):
        metric("exact_match")(lambda result, rules: 1.0)
    assert metric_for("exact_match")("a", {"expected": "a"}) == 1.0  # the first one still stands
