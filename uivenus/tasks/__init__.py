"""Task generation: the capability catalog, exploration, task synthesis and the validity gate (SYSTEM.md part 4)."""
