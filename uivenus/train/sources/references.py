"""The answer a sample is scored against: an action in the model frame with a target box around each of its
points (`verify.rewards.ReferenceAction`).

Trajectory steps and CAPTCHA solutions both come as actions on the screen; one builder turns either into the
reference Stage II rewards read, so a point's tolerance means the same in every source.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from uivenus.actions.coords import Frame
from uivenus.actions.points import POINT_FIELDS
from uivenus.actions.space import Action, ActionSequence
from uivenus.verify.rewards import Box, ReferenceAction

__all__ = ["reference_for", "single_action"]


def _point_paths(action: Action) -> Iterator[tuple[str, tuple[float, float]]]:
    """(path, point) of every point, paths as `ReferenceAction.boxes` keys them ("point", "0.start", ...)."""
    members = action.actions if isinstance(action, ActionSequence) else (action,)
    prefix = len(members) > 1 or isinstance(action, ActionSequence)
    for i, member in enumerate(members):
        for name in POINT_FIELDS:
            point = getattr(member, name, None)
            if point is not None:
                yield (f"{i}.{name}" if prefix else name), point


def single_action(actions: Sequence[Action]) -> Action:
    """The one action of a list, or a Sequence of them (how a multi-action answer is scored)."""
    return actions[0] if len(actions) == 1 else ActionSequence(actions=tuple(actions))


def reference_for(screen_action: Action, frame: Frame, radius: tuple[float, float]) -> ReferenceAction:
    """The action in the model frame, with a target box of ±`radius` screen pixels around each of its points."""
    boxes: dict[str, Box] = {}
    for path, (x, y) in _point_paths(screen_action):
        top_left = frame.to_model((max(0.0, x - radius[0]), max(0.0, y - radius[1])))
        bottom_right = frame.to_model((min(frame.width - 1.0, x + radius[0]), min(frame.height - 1.0, y + radius[1])))
        boxes[path] = (*top_left, *bottom_right)
    return ReferenceAction(frame.action_to_model(screen_action), boxes=boxes)
