"""Regenerate bot/topics/topic_rates.tsv: the share of papers each catalog topic tags.

    .venv/bin/python -m scripts.topic_rates

Reads the dev split of the labelled relevance data (tests/fixtures/relevance/catalog/
dev.jsonl.gz: 31 real announcement days) and tags it with the bundled catalog. The tag
line (bot/topics/tagline.py) shows a paper's rarest specific topics first: on a phone,
"Agentic Search" says more about a paper than "Agentic RL", which most agent-RL papers
carry. The file records the catalog's sha256; a test fails when the catalog changed
since, so the rates never silently describe other rules.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

from bench.relevance_catalog import load_split, rule_tagger
from bot.topics.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "bot" / "topics" / "catalog.toml"
OUT = ROOT / "bot" / "topics" / "topic_rates.tsv"


def catalog_sha256() -> str:
    return hashlib.sha256(CATALOG.read_bytes()).hexdigest()


def rates() -> tuple[int, dict[str, float]]:
    """(papers, slug -> share of them tagged) over the dev split, every catalog topic."""
    catalog = load_catalog()
    papers = load_split("dev")
    tagger = rule_tagger(catalog)
    counts: Counter[str] = Counter()
    for paper in papers.values():
        counts.update(tagger.tag(paper).keys())
    return len(papers), {t.slug: counts[t.slug] / len(papers) for t in catalog.topics}


def main() -> None:
    total, shares = rates()
    with OUT.open("w", encoding="utf-8") as handle:
        handle.write(
            f"# share of the {total} dev-split papers each topic tags; catalog sha256 "
            f"{catalog_sha256()}; made by `python -m scripts.topic_rates`\n"
        )
        for slug, share in sorted(shares.items(), key=lambda item: (item[1], item[0])):
            handle.write(f"{slug}\t{share:.5f}\n")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(shares)} topics over {total} papers")


if __name__ == "__main__":
    main()
