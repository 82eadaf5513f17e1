"""Storing papers: the one path every source (feeds, files, backfill, the sample) goes through.

`store` runs inside the caller's unit of work, so papers, their tags, the alerts they
cause and the source's watermark commit together or not at all.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from importlib import resources

from bot.arxiv.parse import parse_feed
from bot.domain import Author, Paper, SubscriptionKind, slugify
from bot.metrics import Metrics
from bot.ports import UnitOfWork
from bot.topics.authors import AuthorIndex, author_patterns
from bot.topics.catalog import Catalog
from bot.topics.document import Document
from bot.topics.like import LikeProfile, stored_profiles
from bot.topics.like_index import LikeIndex
from bot.topics.tag_rules import FollowedText, build_tagger
from bot.topics.tagger import Tagger
from bot.topics.text_model import paper_vector

log = logging.getLogger(__name__)

RETAG_PAGE = 1000


@dataclass(frozen=True, slots=True)
class IngestResult:
    """What storing a batch did. Only `new` papers count (and alert) as new."""

    new: tuple[str, ...] = ()  # first seen, announced as new or cross-list
    updated: tuple[str, ...] = ()  # moved to a newer version (a replacement)
    unchanged: int = 0
    late: int = 0  # first seen through a replacement: stored, never counted as new

    @property
    def total(self) -> int:
        return len(self.new) + len(self.updated) + self.unchanged + self.late

    def __add__(self, other: IngestResult) -> IngestResult:
        """Two batches' results together (a harvest of several sets and days)."""
        return IngestResult(
            new=self.new + other.new,
            updated=self.updated + other.updated,
            unchanged=self.unchanged + other.unchanged,
            late=self.late + other.late,
        )

    def summary(self) -> str:
        """What was stored, in words (the cli prints it)."""
        text = f"{len(self.new)} new, {len(self.updated)} updated, {self.unchanged} already stored"
        if self.late:
            older = "older paper" if self.late == 1 else "older papers"
            text += f", {self.late:,} {older} first seen in a new version (stored, not alerted)"
        return text


async def store(
    uow: UnitOfWork,
    papers: Sequence[Paper],
    catalog: Catalog | None = None,
    now: datetime | None = None,
    *,
    sample: bool = False,
    metrics: Metrics | None = None,
) -> IngestResult:
    """Upsert papers, their curated tags, (given a catalog) their topic tags, and the
    alerts new papers cause, all in the caller's transaction; the caller commits.
    `sample`: the bundled sample papers, stored marked as such (never counted by momentum).
    `metrics` hears how long the tagging took.

    A replacement announcement says nothing about when the paper was first announced,
    so its listing date is dropped: a replaced paper never counts as new on that day.
    """
    normalised = [p if p.announce_type.is_new_paper else replace(p, announced=None) for p in papers]
    result = await uow.papers.upsert(normalised, sample=sample)
    curated = [(p.arxiv_id, slugify(tag), ("curated",)) for p in papers for tag in p.tags]
    if curated:
        await uow.papers.add_tags(curated, source="curated")
    touched = set(result.new) | set(result.updated)
    if catalog is not None and touched:
        queries = await uow.subscriptions.query_targets()
        authors = await uow.subscriptions.query_targets(SubscriptionKind.AUTHOR)
        likes = await _followed_sets(uow)
        fresh = [paper for paper in normalised if paper.arxiv_id in touched]
        names = [target for target, _ in authors]
        # Compiling and matching are pure CPU: a worker thread keeps the chats answered,
        # and meanwhile the database adds the new papers to the search index (which the
        # commit would do otherwise) on its own core, so that the index costs ingest a
        # fraction of its time (bench/bench_search.py). The index statement is waited
        # for whatever the tagging does, never cancelled halfway through.
        indexing = asyncio.ensure_future(uow.search.index_new())
        try:
            tags, seconds = await asyncio.to_thread(
                _timed_rule_tags, catalog, queries, fresh, names, likes
            )
        finally:
            await indexing
        if metrics is not None:
            metrics.tagging.observe(seconds)
        await uow.papers.add_tags(tags, source="rule")
    announced_new = {p.arxiv_id for p in papers if p.announce_type.is_new_paper}
    new = tuple(a for a in result.new if a in announced_new)
    if new:
        ids = await uow.papers.ids_for(new)
        await uow.outbox.enqueue_papers(list(ids.values()), now or datetime.now(UTC))
    return IngestResult(
        new=new,
        updated=result.updated,
        unchanged=len(result.unchanged),
        late=len(result.new) - len(new),
    )


async def _followed_sets(uow: UnitOfWork) -> dict[str, LikeProfile]:
    """The "papers like these" sets active chats follow, by tag (`bot.topics.like`)."""
    return stored_profiles((s.tag, s.profile, s.threshold) for s in await uow.like_sets.followed())


def rule_tags(
    catalog: Catalog,
    queries: Sequence[FollowedText],
    papers: Sequence[Paper],
    authors: Sequence[str] = (),
    likes: Mapping[str, LikeProfile] | None = None,
) -> list[tuple[str, str, tuple[str, ...]]]:
    """(arxiv id, tag, why) for every catalog rule, followed query, followed author
    (canonical name, `bot.topics.authors`) and followed set of papers (tag -> profile,
    `bot.topics.like`) each paper matches; a followed query that does not compile is
    skipped (logged by `build_tagger`)."""
    tagger = build_tagger(catalog, queries)
    index = AuthorIndex(author_patterns(authors))
    return _tags(tagger, index, LikeIndex(likes or {}), papers)


def _tags(
    tagger: Tagger, index: AuthorIndex, like: LikeIndex, papers: Sequence[Paper]
) -> list[tuple[str, str, tuple]]:
    """(arxiv id, tag, why) of the papers' rule tags: catalog topics and followed queries,
    followed authors, and the followed sets each is like (scored all at once, the paper's
    words read once for the rules and the sets; the rules' tags are what the sets' topic
    profiles are matched against, never computed twice)."""
    docs = [Document.from_paper(paper) for paper in papers]
    ruled = [tagger.tag(doc) for doc in docs]
    vectors = [paper_vector(doc) for doc in docs] if len(like) else [{} for _ in papers]
    likes = like.tag_many(papers, vectors, ruled)
    return [
        (paper.arxiv_id, key, why)
        for paper, rules, similar in zip(papers, ruled, likes, strict=True)
        for key, why in (rules | index.tag(paper) | similar).items()
    ]


def _timed_rule_tags(
    catalog: Catalog,
    queries: Sequence[FollowedText],
    papers: Sequence[Paper],
    authors: Sequence[str],
    likes: Mapping[str, LikeProfile],
) -> tuple[list[tuple[str, str, tuple[str, ...]]], float]:
    """`rule_tags`, and the seconds it took."""
    started = time.perf_counter()
    tags = rule_tags(catalog, queries, papers, authors, likes)
    return tags, time.perf_counter() - started


async def store_papers(
    uow_factory: Callable[[], UnitOfWork],
    papers: Sequence[Paper],
    catalog: Catalog | None = None,
    *,
    sample: bool = False,
) -> IngestResult:
    """`store` in a transaction of its own."""
    async with uow_factory() as uow:
        result = await store(uow, papers, catalog, sample=sample)
        await uow.commit()
    log.info(
        "stored papers new=%d updated=%d unchanged=%d late=%d",
        len(result.new),
        len(result.updated),
        result.unchanged,
        result.late,
    )
    return result


def paper_from_json(record: dict[str, object]) -> Paper:
    """A paper from one JSON-lines record (`arxiv_id`, `title`, `abstract`, `authors`, ...)."""
    authors = record.get("authors") or []
    categories = record.get("categories") or []
    tags = record.get("tags") or []
    announced = record.get("announced") or record.get("date")
    if not isinstance(authors, list) or not isinstance(categories, list):
        raise ValueError("authors and categories must be lists")
    if not isinstance(tags, list):
        raise ValueError("tags must be a list")
    return Paper(
        arxiv_id=str(record["arxiv_id"]),
        title=str(record.get("title") or ""),
        abstract=str(record.get("abstract") or ""),
        authors=tuple(Author(str(a)) for a in authors),
        categories=tuple(str(c) for c in categories),
        announced=date.fromisoformat(str(announced)) if announced else None,
        tags=tuple(str(t) for t in tags),
    )


def read_json_lines(lines: Iterable[str]) -> list[Paper]:
    """The papers of JSON lines, one `paper_from_json` record a line (blank lines skipped);
    a line that is not one raises ValueError naming its number."""
    papers = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            papers.append(paper_from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"line {number} is not a paper record: {exc}") from exc
    return papers


def read_papers(data: bytes) -> list[Paper]:
    """A saved arXiv response, or JSON lines with arxiv_id, title, abstract, ..."""
    if data.lstrip()[:1] in (b"{", b""):
        return read_json_lines(data.decode("utf-8").splitlines())
    return list(parse_feed(data).papers)


def sample_papers() -> list[Paper]:
    """The bundled sample (see bot/data/README.md)."""
    text = resources.files("bot.data").joinpath("sample_papers.jsonl").read_text("utf-8")
    return read_json_lines(text.splitlines())


async def load_sample_if_empty(
    uow_factory: Callable[[], UnitOfWork], catalog: Catalog | None = None
) -> IngestResult | None:
    """Give a brand-new database something to show, offline. The papers are stored as
    sample papers: shown by /latest and the like, never counted by momentum."""
    async with uow_factory() as uow:
        if await uow.papers.count():
            return None
    result = await store_papers(uow_factory, sample_papers(), catalog, sample=True)
    log.info("loaded %d bundled sample papers into the empty database", len(result.new))
    return result


@dataclass(frozen=True, slots=True)
class RetagResult:
    """What `retag` did: every stored paper run through `rules` rules, `tags` tags in all."""

    papers: int
    rules: int
    tags: int


async def retag(
    uow_factory: Callable[[], UnitOfWork],
    catalog: Catalog,
    *,
    on_total: Callable[[int], None] = lambda total: None,
    on_page: Callable[[int], None] = lambda done: None,
    page_size: int = RETAG_PAGE,
) -> RetagResult:
    """Re-run every catalog rule and followed query over every stored paper, a page (one
    transaction) at a time, replacing each paper's rule tags. `on_total` hears the number
    of papers before the first page, `on_page` the size of each page done."""
    async with uow_factory() as uow:
        total = await uow.papers.count()
        queries = await uow.subscriptions.query_targets()
        authors = await uow.subscriptions.query_targets(SubscriptionKind.AUTHOR)
        likes = await _followed_sets(uow)
    tagger = build_tagger(catalog, queries)
    index = AuthorIndex(author_patterns(target for target, _ in authors))
    like = LikeIndex(likes)
    on_total(total)
    after: str | None = None
    tags = 0
    while True:
        async with uow_factory() as uow:
            page = await uow.papers.page(after, page_size)
            if not page:
                break
            triples = _tags(tagger, index, like, page)
            tags += await uow.papers.replace_rule_tags([p.arxiv_id for p in page], triples)
            await uow.commit()
        after = page[-1].arxiv_id
        on_page(len(page))
    return RetagResult(papers=total, rules=len(tagger) + len(index) + len(like), tags=tags)
