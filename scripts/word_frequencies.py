"""Regenerate bot/topics/word_frequencies.tsv: how often each word key occurs in abstracts.

    .venv/bin/python -m scripts.word_frequencies ../shared/fixtures/arxiv/daily/*/*.jsonl

The tagger uses these document frequencies only to pick, for each rule, the rarest
terms to index it by (so fewer rules run per paper); matching results never depend
on them. Keeps the most common words, with the share of papers containing each.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from bench.fixtures import ROOT, read_paper_file
from bot.topics.document import tokenize, word_key

KEEP = 3000


def main(paths: list[str]) -> None:
    counts: Counter[str] = Counter()
    papers = 0
    for path in paths:
        for paper in read_paper_file(Path(path)):
            text = f"{paper.title} {paper.abstract}"
            counts.update({word_key(token) for token in tokenize(text)})
            papers += 1
    out = ROOT / "bot/topics/word_frequencies.tsv"
    with out.open("w", encoding="utf-8") as handle:
        handle.write(
            f"# share of {papers} arXiv abstracts (2025-26, cs/stat) containing each word key\n"
        )
        for word, count in counts.most_common(KEEP):
            handle.write(f"{word}\t{count / papers:.4f}\n")
    print(f"wrote {out} from {papers} papers")


if __name__ == "__main__":
    main(sys.argv[1:])
