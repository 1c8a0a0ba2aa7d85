"""Programmatic training data: GUI grounding screens rendered in Chromium (and CAPTCHA instances)."""


class SynthError(RuntimeError):
    """Data synthesis failed; the message says what to fix (a browser, a setting, an output folder)."""
