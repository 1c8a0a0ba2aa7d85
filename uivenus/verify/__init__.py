"""Verification: step labels, trace verdicts, judges, voting and rewards."""
