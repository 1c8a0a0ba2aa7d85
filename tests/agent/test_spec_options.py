"""One parser for the `?key=value&...` options of SPEC strings: URL-decoded, every key once, unknown keys named."""

import pytest

from uivenus.agent.policies.base import PolicySpecError, spec_options, spec_pairs
from uivenus.agent.policies.openai_compat import OpenAIOptions
from uivenus.agent.policies.transformers_local import HFOptions


class JudgeSpecError(RuntimeError):
    pass


def test_values_are_url_decoded_in_order() -> None:
    assert spec_pairs("a=x%2Fy&b=two%20words&c=one+two&d=&e=100%25&f=%E2%9C%93", "test") == [
        ("a", "x/y"), ("b", "two words"), ("c", "one two"), ("d", ""), ("e", "100%"), ("f", "✓")]
    assert spec_pairs("", "test") == []
    assert spec_pairs("q=a%26b%3Dc%23d", "test") == [("q", "a&b=c#d")]  # the separators themselves, encoded


@pytest.mark.parametrize(("query", "says"), [
    ("timeout", "not key=value pairs"),
    ("a=1&&b=2", "not key=value pairs"),
    ("=1", "not key=value pairs"),
    ("a=%FF", "not key=value pairs"),  # not UTF-8
    ("a=1&a=2", "'a' is given twice"),
    ("a=1&a%3D=2&a=3", "'a' is given twice"),
])
def test_malformed_queries_raise_the_callers_error(query: str, says: str) -> None:
    with pytest.raises(PolicySpecError, match=says):
        spec_pairs(query, "test")
    with pytest.raises(JudgeSpecError, match="test option|test options"):
        spec_pairs(query, "test", JudgeSpecError)


def test_options_are_converted_and_unknown_keys_named() -> None:
    parsers = {"n": lambda key, text: int(text), "name": lambda key, text: text}
    assert spec_options("n=%33&name=a+b", parsers, "test") == {"n": 3, "name": "a b"}
    with pytest.raises(JudgeSpecError, match="unknown test option 'colour'; known: n, name"):
        spec_options("colour=red", parsers, "test", JudgeSpecError)


def test_openai_options_are_decoded_and_may_not_repeat_across_url_and_model() -> None:
    options = OpenAIOptions.parse("http://h:8000/v1?timeout=1%2E5&api_key_env=MY%5FKEY#org/venus?retries=2")
    assert (options.timeout, options.api_key_env, options.retries, options.model) == (1.5, "MY_KEY", 2, "org/venus")
    with pytest.raises(PolicySpecError, match="openai option 'retries' is given twice"):
        OpenAIOptions.parse("http://h:8000/v1?retries=1#m?retries=2")
    with pytest.raises(PolicySpecError, match="must name an environment variable, got 'MY KEY'"):
        OpenAIOptions.parse("http://h:8000/v1?api_key_env=MY+KEY#m")


def test_hf_options_are_decoded() -> None:
    options = HFOptions.parse("./ckpt?device=cuda%3A1&attn=flash%5Fattention%5F2&max_pixels=%31%30%30%30")
    assert options == HFOptions(path="./ckpt", device="cuda:1", attn="flash_attention_2", max_pixels=1000)
    with pytest.raises(PolicySpecError, match="hf option 'dtype' is given twice"):
        HFOptions.parse("./ckpt?dtype=float32&dtype=bfloat16")
    with pytest.raises(PolicySpecError, match="device must be auto, cpu, mps, cuda or cuda:N, got 'cuda 1'"):
        HFOptions.parse("./ckpt?device=cuda%201")
