"""The message layout of UI-Venus-2, built here and nowhere else: the agent loop and training data both use it.

A navigation step is a chat: the navigation prompt as the system message; for every past step a user turn
(its screenshot for the last `images_in_history` steps, a one-line placeholder before that) followed by the
assistant turn holding the model's raw reply, reasoning included (thinking history is fed back); then the
current user turn with the task, the notes taken so far (TakeNote contents), the accessibility tree's listing when
the loop observes it, and the current screenshot last.

Every screenshot passes through `prepare_image`, which sizes it for the model's coordinate frame so that the
pixels the model sees and the coordinates it answers agree; it sizes each screenshot once, so a history image is
the same object on every step (and a backend encodes it once).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from uivenus.actions.coords import Frame, FrameKind
from uivenus.agent.policies.base import Message
from uivenus.agent.prompts import grounding_prompt
from uivenus.images import PerImage

__all__ = [
    "DEFAULT_IMAGES_IN_HISTORY", "Turn", "build_messages", "grounding_messages", "prepare_image",
]

#: Past steps whose screenshots stay in the context (older ones become a text placeholder).
DEFAULT_IMAGES_IN_HISTORY = 2
_RESAMPLE = Image.Resampling.BICUBIC  # what the Qwen-VL image processors use


@dataclass(frozen=True)
class Turn:
    """One past step: the screenshot the model saw (None if not kept) and its raw reply."""

    screenshot: Image.Image | None
    response: str


def _resized(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    return image if image.size == size else image.resize(size, _RESAMPLE)


def _fit_pixels(image: Image.Image, max_pixels: int | None) -> Image.Image:
    width, height = image.size
    if max_pixels is None or width * height <= max_pixels:
        return image
    scale = (max_pixels / (width * height)) ** 0.5
    return image.resize((max(1, int(width * scale)), max(1, int(height * scale))), _RESAMPLE)


#: Per frame kind: how a screenshot is sized so the model's pixels match its coordinates.
_PREPARE: Mapping[FrameKind, Callable[[Image.Image, Frame, int | None], Image.Image]] = {
    # smart: the model answers pixels of the smart-resized image, so show exactly that image
    FrameKind.SMART: lambda image, frame, _: _resized(image, frame.model_size),
    # absolute: the model answers logical screen pixels, so show the screen at its logical size
    FrameKind.ABSOLUTE: lambda image, frame, _: _resized(image, (frame.width, frame.height)),
    # relative: any size works; only cap the pixel count
    FrameKind.RELATIVE: lambda image, frame, max_pixels: _fit_pixels(image, max_pixels),
}


#: Each screenshot's prepared copy per (frame, max_pixels), made once (an image that needs no change is not kept:
#: it is its own prepared copy).
_PREPARED: PerImage[Image.Image] = PerImage()


def prepare_image(image: Image.Image, frame: Frame, *, max_pixels: int | None = None) -> Image.Image:
    """The screenshot as the model should see it in `frame` (RGB); `max_pixels` caps relative frames only.
    The same image asked for again gets the same prepared object."""
    prepared = _PREPARED.get(image, (frame, max_pixels))
    if prepared is None:
        rgb = image if image.mode == "RGB" else image.convert("RGB")
        prepared = _PREPARE[frame.kind](rgb, frame, max_pixels)
        if prepared is not image:
            _PREPARED.put(image, prepared, (frame, max_pixels))
    return prepared


def _current_turn(instruction: str, notes: Sequence[str], step: int, screenshot: Image.Image,
                  feedback: str | None, elements: str | None) -> Message:
    text = f"Result of your previous action: {feedback}\n" if feedback else ""
    text += f"Task: {instruction}\n"
    if notes:
        text += "Your notes:\n" + "".join(f"- {note}\n" for note in notes)
    if elements is not None:
        text += f"Accessibility tree of the current screen (centres in your coordinates):\n{elements}\n"
    return Message("user", (f"{text}Step {step} screenshot (current):", screenshot))


def build_messages(
    system_prompt: str,
    instruction: str,
    history: Sequence[Turn],
    screenshot: Image.Image,
    *,
    frame: Frame,
    images_in_history: int = DEFAULT_IMAGES_IN_HISTORY,
    notes: Sequence[str] = (),
    max_pixels: int | None = None,
    feedback: str | None = None,
    elements: str | None = None,
) -> tuple[Message, ...]:
    """The chat for the next step; step k (1-based) is `history[k-1]`, the current step is len(history)+1.

    `feedback` tells the model what became of its previous action (an error, a URL it asked for); `elements` is the
    current screen's accessibility listing (`uivenus.agent.element_listing`), shown only for the current step.
    """
    if images_in_history < 0:
        raise ValueError(f"images_in_history must be >= 0, got {images_in_history}")
    messages = [Message("system", (system_prompt,))]
    first_with_image = len(history) - images_in_history
    for index, turn in enumerate(history):
        step = index + 1
        if index >= first_with_image and turn.screenshot is not None:
            user = (f"Step {step} screenshot:", prepare_image(turn.screenshot, frame, max_pixels=max_pixels))
        else:
            user = (f"Step {step} screenshot omitted.",)
        messages += [Message("user", user), Message("assistant", (turn.response,))]
    current = prepare_image(screenshot, frame, max_pixels=max_pixels)
    messages.append(_current_turn(instruction, tuple(notes), len(history) + 1, current, feedback, elements))
    return tuple(messages)


def grounding_messages(image: Image.Image, instruction: str, frame: Frame, *, template: Path | None = None,
                       max_pixels: int | None = None) -> tuple[Message, ...]:
    """One user turn: the screenshot, then the grounding prompt for `instruction`."""
    prepared = prepare_image(image, frame, max_pixels=max_pixels)
    return (Message("user", (prepared, grounding_prompt(instruction, frame, template=template))),)
