"""`uivenus serve` with the tiny checkpoint, as the official `openai` client sees it: `n` choices and streamed
replies must parse with the client's own types and carry the checkpoint's answers.

What must hold: `n` gives n choices indexed 0..n-1, greedy ones equal to the checkpoint's answers and sampled ones
drawn independently; a stream reassembles to the text the same request gets without streaming, with the finish
reason on each choice's last chunk and, when asked, the usage of the whole request in a final chunk.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from PIL import Image

from uivenus.agent.policies import Message, Mode, PolicyRequest, Sampling, policy_from_spec
from uivenus.agent.policies.openai_compat import image_data_url
from uivenus.agent.policies.transformers_local import TransformersPolicy
from uivenus.agent.serve import ServerThread, create_app

MAX_TOKENS = 8
GROUNDING = {"chat_template_kwargs": {"enable_thinking": False}}  # the grounding preset: no thinking


def _screen() -> Image.Image:
    image = Image.new("RGB", (320, 640), "teal")
    image.putpixel((3, 5), (1, 2, 3))
    return image


def _messages() -> list[dict[str, Any]]:
    return [{"role": "user", "content": [{"type": "text", "text": "Click the teal area"},
                                         {"type": "image_url", "image_url": {"url": image_data_url(_screen())}}]}]


def _direct(temperature: float) -> PolicyRequest:
    """The PolicyRequest the server builds from `_messages()` with the grounding switch and MAX_TOKENS."""
    return PolicyRequest((Message("user", ("Click the teal area", _screen())),), mode=Mode.GROUNDING,
                         sampling=Sampling(temperature=temperature, max_new_tokens=MAX_TOKENS, thinking=False))


@pytest.fixture(scope="module")
def tiny(tiny_qwen3_vl: Path, torch_single_thread: None) -> Iterator[TransformersPolicy]:
    with policy_from_spec(f"hf:{tiny_qwen3_vl}?device=cpu&dtype=float32") as built:
        yield built


@pytest.fixture(scope="module")
def client(tiny: TransformersPolicy) -> Iterator[openai.OpenAI]:
    with (ServerThread(create_app(tiny, "tiny-venus")) as server,
          openai.OpenAI(base_url=server.base_url, api_key="EMPTY", timeout=60, max_retries=0) as built):
        yield built


def _create(client: openai.OpenAI, **options: Any) -> Any:
    return client.chat.completions.create(model="tiny-venus", messages=_messages(), max_tokens=MAX_TOKENS,
                                          extra_body=GROUNDING, **options)


def test_n_greedy_choices_are_the_checkpoint_answers(client: openai.OpenAI, tiny: TransformersPolicy) -> None:
    completion = _create(client, n=2, temperature=0)
    direct = tiny.act_batch([_direct(0.0)] * 2)  # the server answers the n samples in one batch too
    assert completion.object == "chat.completion" and completion.model == "tiny-venus"
    assert [c.index for c in completion.choices] == [0, 1]
    assert [c.message.content for c in completion.choices] == [r.text for r in direct]
    assert [c.message.role for c in completion.choices] == ["assistant", "assistant"]
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == direct[0].usage["prompt_tokens"]
    assert completion.usage.completion_tokens == sum(r.usage["completion_tokens"] for r in direct)


def test_n_sampled_choices_are_drawn_independently(client: openai.OpenAI) -> None:
    completion = _create(client, n=3, temperature=1.0)
    texts = [c.message.content for c in completion.choices]
    assert len(texts) == 3
    assert len(set(texts)) > 1  # 8 tokens from a random model over ~1,650 tokens: equal samples would mean copies


def _reassembled(chunks: list[Any]) -> tuple[dict[int, str], dict[int, str]]:
    """Per choice index, the concatenated content and the finish reason, checking the role comes first."""
    texts: dict[int, str] = {}
    finish: dict[int, str] = {}
    for chunk in chunks:
        for choice in chunk.choices:
            if choice.index not in texts:
                assert choice.delta.role == "assistant"
            assert choice.index not in finish, "a chunk after the finish reason"
            texts[choice.index] = texts.get(choice.index, "") + (choice.delta.content or "")
            if choice.finish_reason is not None:
                finish[choice.index] = choice.finish_reason
    return texts, finish


def test_a_greedy_stream_reassembles_to_the_whole_answer(client: openai.OpenAI) -> None:
    whole = _create(client, temperature=0)
    chunks = list(_create(client, temperature=0, stream=True))
    assert {chunk.object for chunk in chunks} == {"chat.completion.chunk"}
    assert len({chunk.id for chunk in chunks}) == 1 and len(chunks) >= 2
    texts, finish = _reassembled(chunks)
    assert texts == {0: whole.choices[0].message.content}
    assert finish == {0: whole.choices[0].finish_reason}
    assert chunks[-1].choices[0].finish_reason is not None  # the finish reason closes the stream


def test_a_stream_of_n_choices_with_usage(client: openai.OpenAI) -> None:
    whole = _create(client, n=2, temperature=0)
    chunks = list(_create(client, n=2, temperature=0, stream=True, stream_options={"include_usage": True}))
    *choice_chunks, last = chunks
    assert all(chunk.usage is None for chunk in choice_chunks)
    assert last.choices == [] and last.usage == whole.usage
    texts, finish = _reassembled(choice_chunks)
    assert texts == {c.index: c.message.content for c in whole.choices}
    assert finish == {c.index: c.finish_reason for c in whole.choices}
