"""Coordinate frames: smart_resize matches ACTIONS.md's worked examples; off-screen points are errors."""

import pytest

from uivenus.actions.coords import CoordinateError, Frame, FrameKind, frame_from_options, smart_resize
from uivenus.actions.space import Click, Drag, Sequence, Type


def test_smart_resize_worked_examples():
    assert smart_resize(1080, 1920, factor=28) == (1092, 1932)
    assert smart_resize(2400, 1080, factor=28) == (2408, 1092)


def test_smart_resize_bounds():
    h, w = smart_resize(10000, 10000, factor=32, max_pixels=1024 * 1024)
    assert h % 32 == 0 and w % 32 == 0 and h * w <= 1024 * 1024
    h, w = smart_resize(20, 30, factor=28, min_pixels=4 * 28 * 28)
    assert h * w >= 4 * 28 * 28 and h % 28 == 0
    with pytest.raises(CoordinateError, match="aspect ratio"):
        smart_resize(10, 5000)


def test_relative_frame_both_ways():
    frame = Frame.relative(1280, 720)
    assert frame.to_screen((500, 500)) == (640, 360)
    assert frame.to_screen((0, 0)) == (0, 0)
    assert frame.to_screen((999, 999)) == (1279, 719)
    assert frame.to_model((640, 360)) == (500, 500)
    assert Frame.relative(1000, 1000, divisor=999).to_screen((999, 999)) == (999, 999)


def test_smart_frame_maps_resized_pixels_to_screen():
    frame = Frame.smart(1920, 1080)
    assert frame.model_size == (1932, 1092)
    assert frame.to_screen((966, 546)) == (960, 540)
    assert frame.to_model((960, 540)) == (966, 546)


def test_absolute_frame_is_identity_with_bounds():
    frame = Frame.absolute(412, 915)
    assert frame.to_screen((411, 914)) == (411, 914)
    with pytest.raises(CoordinateError, match=r"off the 412x915 screen"):
        frame.to_model((412, 10))


def test_off_screen_error_names_point_and_screen():
    with pytest.raises(CoordinateError, match=r"point \(1500, 20\) in the relative frame \(divisor 1000\) maps to .* off the 1280x720 screen"):
        Frame.relative(1280, 720).to_screen((1500, 20))


def test_action_conversion_covers_sequences():
    frame = Frame.relative(2000, 1000)
    seq = Sequence(actions=(Drag(start=(100, 100), end=(200, 300)), Click(point=(500, 500)), Type(content="a")))
    assert frame.action_to_screen(seq) == Sequence(
        actions=(Drag(start=(200, 100), end=(400, 300)), Click(point=(1000, 500)), Type(content="a"))
    )


def test_frame_from_options():
    assert frame_from_options("smart", 100, 100, factor=32).kind is FrameKind.SMART
    with pytest.raises(CoordinateError, match="unknown frame 'polar'"):
        frame_from_options("polar", 100, 100)
