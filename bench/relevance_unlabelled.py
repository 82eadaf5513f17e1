"""Papers the current rule tags that no estimate covers: its hits in stratum C, unread.

The weighted figures cover strata R and S of a pool (bench/relevance_catalog.py). When a
rule is rewritten after its pool was made, it may tag papers of C (neither tagged by the
rule of then nor matched by the screen). The controls read from C give a few labels
there; the other C papers it tags are unlabelled hits: nobody knows whether they are
right, so a maintainer should read them (and the pool be widened if there are many).

C is rebuilt from the split: the papers the screen does not match, minus R. R is what
the topic's rule tagged when the pool was made, so the rule of then is looked for in
the catalog now, at HEAD, and at the last and the first commit of the pool file; the first whose
hits have the pool's R size and hold every R paper read (and no S paper read) is taken.
When none fits, the count is reported as unknown, with the reason.
"""

from __future__ import annotations

import logging
import re
import subprocess
import tempfile
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path

from bench.fixtures import ROOT
from bench.relevance_catalog import CATALOG_DIR, Labelled, Pool
from bot.domain import Paper
from bot.topics.catalog import Catalog, CatalogError, load_catalog
from bot.topics.document import Document
from bot.topics.query import parse_query
from bot.topics.query_tree import CATALOG_LIMITS, QueryError
from bot.topics.tagger import Tagger

log = logging.getLogger(__name__)
CATALOG_FILE = "bot/topics/catalog.toml"


def screen_of(slug: str, root: Path = CATALOG_DIR) -> re.Pattern[str]:
    spec = tomllib.loads((root / "topics" / f"{slug}.toml").read_text(encoding="utf-8"))
    return re.compile(spec["screen"], re.IGNORECASE)


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout


@cache
def _catalog_at(revision: str) -> Catalog | None:
    text = _git("show", f"{revision}:{CATALOG_FILE}")
    if text is None:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".toml", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        try:
            return load_catalog(f.name)
        except CatalogError:
            return None


def _catalogs_then(slug: str, split: str, now: Catalog) -> Iterator[Catalog | None]:
    """The catalogs the pool may have been made with, most likely first (lazily: git is
    asked only when the catalog of now does not fit)."""
    yield now
    yield _catalog_at((_git("rev-parse", "HEAD") or "").strip() or "HEAD")
    pool_file = f"tests/fixtures/relevance/catalog/pools/{split}/{slug}.json"
    last = (_git("log", "-1", "--format=%H", "--", pool_file) or "").split()
    added = (_git("log", "--diff-filter=A", "--format=%H", "--", pool_file) or "").split()
    for commit in (*last, *added[-1:]):  # the pool file's last commit, then its first
        yield _catalog_at(commit)


def _hits(rule: str, docs: Mapping[str, Document]) -> set[str]:
    tagger = Tagger([("t", parse_query(rule, CATALOG_LIMITS))])
    return {arxiv_id for arxiv_id, doc in docs.items() if tagger.tag(doc)}


def rule_then(
    topic: Labelled, docs: Mapping[str, Document], now: Catalog
) -> tuple[set[str] | None, str]:
    """Stratum R of `topic`'s pool rebuilt (None when no candidate rule fits), and why."""
    pool = topic.pool.strata
    tried: set[str] = set()
    for catalog in _catalogs_then(topic.slug, topic.split, now):
        found = catalog.by_slug(topic.slug) if catalog else None
        if found is None or not found.rule or found.rule in tried:
            continue
        tried.add(found.rule)
        try:
            then = _hits(found.rule, docs)
        except QueryError:
            continue
        fits = len(then) == pool["rule"].size and pool["rule"].read <= then
        if fits and not screen_read(topic.pool) & then:
            return then, "ok"
    return None, "the rule the pool was made with is not found (catalog, HEAD, pool commits)"


def screen_read(pool: Pool) -> frozenset[str]:
    """The papers read from S, in one stratum or divided into F and the rest of S."""
    parts = (pool.strata[name].read for name in ("focus", "screen") if name in pool.strata)
    return frozenset().union(*parts)


def _text(paper: Paper) -> str:
    return paper.title + "\n" + paper.abstract  # what the pool script's screen reads


def unlabelled_hits(
    topics: Iterable[Labelled], papers: Mapping[str, Paper], now: Catalog, tagger: Tagger
) -> dict[str, dict[str, object]]:
    """Per topic: the C papers outside the controls that `tagger` (the current rule) tags.

    C is "not in R, and the screen does not match", so the screen (slow on a whole split)
    is only run on the current hits outside R, and on the S and C papers read to check
    that it is still the screen the pool was made with.
    """
    docs = {arxiv_id: Document.from_paper(paper) for arxiv_id, paper in papers.items()}
    tags = {arxiv_id: tagger.tag(doc) for arxiv_id, doc in docs.items()}
    out: dict[str, dict[str, object]] = {}
    for topic in topics:
        screen, strata = screen_of(topic.slug), topic.pool.strata
        then, why = rule_then(topic, docs, now)
        if any(not screen.search(_text(papers[i])) for i in screen_read(topic.pool)) or any(
            screen.search(_text(papers[i])) for i in strata["control"].read
        ):
            then, why = None, "the screen in topics/ changed since the pool was made"
        if then is None:
            log.warning("unlabelled hits unknown topic=%s reason=%s", topic.slug, why)
            out[topic.slug] = {"count": None, "ids": [], "reason": why}
            continue
        outside = {i for i, t in tags.items() if topic.slug in t} - then - strata["control"].read
        ids = sorted(i for i in outside if not screen.search(_text(papers[i])))
        out[topic.slug] = {"count": len(ids), "ids": ids, "reason": why}
    return out
