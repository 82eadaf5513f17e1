"""Storing papers: the one path every source (feeds, files, the bundled sample) goes through.

Papers, their tags, and (later) the alerts they cause are written in ONE transaction.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from importlib import resources

from bot.domain import Author, Paper, slugify
from storage.uow import UnitOfWork

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IngestResult:
    new: int
    updated: int
    unchanged: int

    @property
    def total(self) -> int:
        return self.new + self.updated + self.unchanged


async def store_papers(
    uow_factory: Callable[[], UnitOfWork], papers: Sequence[Paper]
) -> IngestResult:
    """Upsert papers and their curated tags in one transaction; idempotent."""
    async with uow_factory() as uow:
        result = await uow.papers.upsert(papers)
        curated = [(p.arxiv_id, slugify(tag), ("curated",)) for p in papers for tag in p.tags]
        if curated:
            await uow.papers.add_tags(curated, source="curated")
        await uow.commit()
    log.info(
        "stored papers new=%d updated=%d unchanged=%d",
        len(result.new),
        len(result.updated),
        len(result.unchanged),
    )
    return IngestResult(len(result.new), len(result.updated), len(result.unchanged))


def paper_from_json(record: dict[str, object]) -> Paper:
    """A paper from one JSON-lines record (`arxiv_id`, `title`, `abstract`, `authors`, ...)."""
    authors = record.get("authors") or []
    categories = record.get("categories") or []
    announced = record.get("announced") or record.get("date")
    if not isinstance(authors, list) or not isinstance(categories, list):
        raise ValueError("authors and categories must be lists")
    return Paper(
        arxiv_id=str(record["arxiv_id"]),
        title=str(record.get("title") or ""),
        abstract=str(record.get("abstract") or ""),
        authors=tuple(Author(str(a)) for a in authors),
        categories=tuple(str(c) for c in categories),
        announced=date.fromisoformat(str(announced)) if announced else None,
        tags=tuple(str(t) for t in record.get("tags") or ()),  # type: ignore[union-attr]
    )


def read_json_lines(lines: Iterable[str]) -> list[Paper]:
    return [paper_from_json(json.loads(line)) for line in lines if line.strip()]


def sample_papers() -> list[Paper]:
    """The bundled sample (see bot/data/README.md)."""
    text = resources.files("bot.data").joinpath("sample_papers.jsonl").read_text("utf-8")
    return read_json_lines(text.splitlines())


async def load_sample_if_empty(uow_factory: Callable[[], UnitOfWork]) -> IngestResult | None:
    """Give a brand-new database something to show, offline."""
    async with uow_factory() as uow:
        if await uow.papers.count():
            return None
    result = await store_papers(uow_factory, sample_papers())
    log.info("loaded %d bundled sample papers into the empty database", result.new)
    return result
