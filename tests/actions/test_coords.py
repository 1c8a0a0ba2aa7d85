"""Coordinate frames: smart_resize matches ACTIONS.md's worked examples and transformers' own image processors;
off-screen points are errors."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uivenus.actions.coords import CoordinateError, Frame, FrameKind, frame_from_options, smart_resize
from uivenus.actions.space import ActionSequence, Click, Drag, Type


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
    with pytest.raises(CoordinateError, match=r"point \(1500, 20\) in the relative frame \(divisor 1000\) maps to "
                                              r".* off the 1280x720 screen"):
        Frame.relative(1280, 720).to_screen((1500, 20))


def test_action_conversion_covers_sequences():
    frame = Frame.relative(2000, 1000)
    seq = ActionSequence(actions=(Drag(start=(100, 100), end=(200, 300)), Click(point=(500, 500)), Type(content="a")))
    assert frame.action_to_screen(seq) == ActionSequence(
        actions=(Drag(start=(200, 100), end=(400, 300)), Click(point=(1000, 500)), Type(content="a"))
    )


def test_frame_from_options():
    assert frame_from_options("smart", 100, 100, factor=32).kind is FrameKind.SMART
    with pytest.raises(CoordinateError, match="unknown frame 'polar'"):
        frame_from_options("polar", 100, 100)


# --- smart_resize against transformers' own image processors ----------------------------------

QWEN2_VL, QWEN3_VL = "qwen2_vl", "qwen3_vl"
#: (min_pixels, max_pixels): ours, the Qwen2-VL processor's defaults, Qwen3-VL checkpoints' preprocessor configs,
#: and bounds tight enough that one side of a long strip is clamped.
BOUNDS = [(4 * 28 * 28, 16384 * 28 * 28), (56 * 56, 28 * 28 * 1280), (65536, 16777216), (32 * 32, 224 * 224),
          (1, 28 * 28), (256 * 28 * 28, 256 * 28 * 28)]


def family_factor(model_type: str) -> int:
    """patch size x spatial merge of the family's vision tower, from transformers' own config."""
    from transformers import Qwen2VLConfig, Qwen3VLConfig

    vision = {QWEN2_VL: Qwen2VLConfig, QWEN3_VL: Qwen3VLConfig}[model_type]().vision_config
    return vision.patch_size * vision.spatial_merge_size


def resized(resize, height: int, width: int, factor: int, bounds: tuple[int, int]) -> tuple[int, int] | str:
    try:
        return resize(height, width, factor=factor, min_pixels=bounds[0], max_pixels=bounds[1])
    except ValueError as exc:  # CoordinateError is one
        return "too elongated" if "aspect ratio" in str(exc) else repr(exc)


def transformers_smart_resize():
    # the PIL processor module's copy of transformers.models.qwen2_vl.image_processing_qwen2_vl.smart_resize
    # (that module needs torchvision); Qwen3-VL's image processor is the same class with factor 32
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import smart_resize as theirs

    return theirs


def test_the_factors_are_the_families_own():
    assert (family_factor(QWEN2_VL), family_factor(QWEN3_VL)) == (28, 32)


@settings(max_examples=1000, deadline=None, derandomize=True)
@given(height=st.integers(1, 20000), width=st.integers(1, 20000), factor=st.sampled_from([28, 32]),
       bounds=st.one_of(st.sampled_from(BOUNDS),
                        st.tuples(st.integers(1, 1 << 22), st.integers(1, 1 << 26)).map(lambda b: tuple(sorted(b)))))
def test_smart_resize_agrees_with_transformers_everywhere(height, width, factor, bounds):
    theirs = transformers_smart_resize()
    assert resized(smart_resize, height, width, factor, bounds) == resized(theirs, height, width, factor, bounds)


@pytest.mark.parametrize("factor", [28, 32])
@pytest.mark.parametrize("bounds", BOUNDS)
def test_smart_resize_agrees_with_transformers_on_strips_and_slivers(factor, bounds):
    theirs = transformers_smart_resize()
    short_sides = [1, 2, 7, 13, 14, 15, 16, 17, 27, 28, 29, 31, 32, 33, 50, 100, 1080]
    ratios = [1, 1.5, 3.7, 50, 150, 199, 199.99, 200, 200.01, 250]
    for short in short_sides:
        for ratio in ratios:
            long = round(short * ratio)
            for height, width in ((short, long), (long, short)):
                assert resized(smart_resize, height, width, factor, bounds) == \
                    resized(theirs, height, width, factor, bounds), (height, width)


def test_a_sliver_scales_up_whole_as_transformers_does():
    # 13 px is under half of 32: the short side rounds to 0, so the whole image is scaled up to min_pixels
    assert smart_resize(13, 2600, factor=32, min_pixels=3136, max_pixels=100000) == (32, 800)
    with pytest.raises(CoordinateError, match="min_pixels"):
        smart_resize(100, 100, min_pixels=0)


@pytest.mark.parametrize("model_type", [QWEN2_VL, QWEN3_VL])
def test_smart_frame_matches_the_image_grid_of_the_families_processor(model_type):
    """The processor class transformers picks for the family, configured as its checkpoints are, on real images."""
    import transformers
    from PIL import Image
    from transformers.models.auto.image_processing_auto import IMAGE_PROCESSOR_MAPPING_NAMES

    factor = family_factor(model_type)
    processor_class = getattr(transformers, IMAGE_PROCESSOR_MAPPING_NAMES[model_type]["pil"])
    min_pixels, max_pixels = 56 * 56, 28 * 28 * 1280
    processor = processor_class(patch_size=factor // 2, merge_size=2, temporal_patch_size=2,
                                size={"shortest_edge": min_pixels, "longest_edge": max_pixels})
    sizes = [(1920, 1080), (1080, 2400), (2600, 13), (150, 1), (30, 20), (4000, 3000), (1280, 720), (19999, 100),
             (5, 5), (100, 3)]
    for width, height in sizes:
        grid = processor(images=[Image.new("RGB", (width, height))], return_tensors="np")["image_grid_thw"][0]
        frame = Frame.smart(width, height, factor=factor, min_pixels=min_pixels, max_pixels=max_pixels)
        assert frame.model_size == (int(grid[2]) * factor // 2, int(grid[1]) * factor // 2), (width, height)
