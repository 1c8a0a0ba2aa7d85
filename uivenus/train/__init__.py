"""Training: tiny offline checkpoints (tiny.py), and the three stages of SYSTEM.md part 7 built on them."""
