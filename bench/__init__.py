"""Benchmarks, each run as a script: ``python bench/NAME.py``."""
