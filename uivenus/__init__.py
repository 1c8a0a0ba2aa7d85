"""uivenus: an open implementation of the UI-Venus-2 GUI agent and its data engine."""
__version__ = "0.1.0"
