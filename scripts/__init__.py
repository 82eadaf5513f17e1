"""Programs that regenerate shipped data (word frequencies, the README's chart) and draw,
widen and audit the relevance labels; each runs from the repository root as a module, such
as `.venv/bin/python -m scripts.momentum_example`."""
