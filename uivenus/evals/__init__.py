"""Evaluation harnesses: each runs any Policy on a benchmark and writes per-item records, tables and plots."""
