"""Benchmarks that print figures and end with one JSON line, and the relevance evaluation.

Each is a module run from the repository root, such as `.venv/bin/python -m
bench.bench_ingest` (README.md, "Figures", lists them); they import the product and the
test support (`tests.support`) as packages.
"""
