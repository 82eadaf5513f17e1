"""Full-text search (`storage.paper_search`, migrations 0013 and 0015) on SQLite and PostgreSQL:
ranking, ties, tag filters, an index that follows every change to the papers, and typed
text that never becomes FTS syntax."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy import delete, func, select, text, update

from bot.domain import Paper
from bot.services.ingest import store
from bot.topics.catalog import Catalog
from bot.topics.query_tree import QueryError
from bot.topics.search_text import SearchResult
from storage.database import Database
from storage.models import PaperRow


def _paper(arxiv_id: str, title: str, abstract: str, day: int = 1, version: int = 1) -> Paper:
    return Paper(
        arxiv_id=arxiv_id,
        version=version,
        title=title,
        abstract=abstract,
        announced=date(2026, 11, day),
    )


FILLER = [
    _paper(f"2611.0{n:04d}", f"Protein folding study {n}", "We fold proteins with care.", day=2)
    for n in range(20)
]


async def _store(db: Database, *papers: Paper, sample: bool = False) -> None:
    async with db.uow() as uow:
        await uow.papers.upsert(papers, sample=sample)
        await uow.commit()


async def _search(db: Database, typed: str, **options: object) -> SearchResult:
    async with db.uow() as uow:
        return await uow.search.search(typed, **options)  # type: ignore[arg-type]


def _ids(result: SearchResult) -> list[str]:
    return [hit.paper.arxiv_id for hit in result.hits]


async def test_a_title_match_ranks_above_an_abstract_only_one(db: Database) -> None:
    await _store(
        db,
        *FILLER,
        _paper("2611.10001", "Memory for web agents", "We study recall in long tasks.", day=3),
        _paper("2611.10002", "Planning in robots", "Our robots keep a memory of maps.", day=9),
    )
    result = await _search(db, "memory")
    assert _ids(result) == ["2611.10001", "2611.10002"]
    assert result.total == 2
    assert result.hits[0].score > result.hits[1].score > 0
    # "agents" finds "agent" and the other way round (the porter / english stemmer)
    assert _ids(await _search(db, "agent")) == ["2611.10001"]


async def test_equal_scores_list_the_newest_first_and_pages_follow(db: Database) -> None:
    same = [_paper(f"2611.2000{n}", "Reward hacking", "A study of it.", day=n) for n in (4, 8, 6)]
    await _store(db, *FILLER, *same)
    result = await _search(db, "reward hacking")
    assert _ids(result) == ["2611.20008", "2611.20006", "2611.20004"]
    assert len({hit.score for hit in result.hits}) == 1
    page = await _search(db, "reward hacking", limit=1, offset=1)
    assert (_ids(page), page.total) == (["2611.20006"], 3)
    assert (await _search(db, "reward hacking", limit=5, offset=5)).hits == ()


async def test_tags_and_mutes_filter_the_matches(db: Database) -> None:
    await _store(
        db,
        *FILLER,
        _paper("2611.30001", "Diffusion policy for robots", "Robots learn."),
        _paper("2611.30002", "Diffusion models for images", "Images are made."),
    )
    async with db.uow() as uow:
        await uow.papers.add_tags([("2611.30001", "robotics", ("robot",))])
        await uow.papers.add_tags([("2611.30002", "generative", ("diffusion",))])
        await uow.commit()
    assert _ids(await _search(db, "diffusion", tags=["robotics"])) == ["2611.30001"]
    assert _ids(await _search(db, "diffusion", without=["robotics"])) == ["2611.30002"]
    assert (await _search(db, "diffusion", tags=["nothing"])).total == 0
    hit = (await _search(db, "diffusion", tags=["generative"])).hits[0]
    assert hit.paper.tags == ("generative",)


async def test_the_index_follows_new_versions_retags_and_deletes(db: Database) -> None:
    await _store(db, *FILLER, _paper("2611.40001", "Sparse attention", "Old abstract on kernels."))
    assert _ids(await _search(db, "kernels")) == ["2611.40001"]
    newer = _paper("2611.40001", "Sparse attention v2", "Now about routers.", version=2)
    await _store(db, newer)
    assert (await _search(db, "kernels")).total == 0
    assert _ids(await _search(db, "routers")) == ["2611.40001"]
    async with db.uow() as uow:
        await uow.papers.add_tags([("2611.40001", "old-topic", ())])
        await uow.papers.replace_rule_tags(["2611.40001"], [("2611.40001", "new-topic", ())])
        await uow.commit()
    assert (await _search(db, "routers", tags=["old-topic"])).total == 0
    assert _ids(await _search(db, "routers", tags=["new-topic"])) == ["2611.40001"]
    async with db.uow() as uow:
        await uow.session.execute(delete(PaperRow).where(PaperRow.arxiv_id == "2611.40001"))
        await uow.commit()
    assert (await _search(db, "routers")).total == 0
    assert (await _search(db, "protein")).total == len(FILLER)


async def test_sample_papers_are_found_as_latest_shows_them(db: Database) -> None:
    await _store(db, _paper("sample:0001", "Tool use by agents", "A sample."), sample=True)
    assert _ids(await _search(db, "tool use")) == ["sample:0001"]


async def test_plain_words_fall_back_to_any_of_them(db: Database) -> None:
    await _store(
        db,
        *FILLER,
        _paper("2611.50001", "Curriculum learning", "Easy first.", day=5),
        _paper("2611.50002", "Curriculum learning for agents", "Easy first.", day=4),
    )
    both = await _search(db, "curriculum agents")
    assert (_ids(both), both.loosened) == (["2611.50002"], False)
    loose = await _search(db, "curriculum zeppelin")
    assert loose.loosened and loose.total == 2
    assert (await _search(db, '"curriculum zeppelin"')).total == 0  # a query: no fallback


async def test_the_query_language_scopes_phrases_prefixes_and_not(db: Database) -> None:
    await _store(
        db,
        *FILLER,
        _paper("2611.60001", "Agentic search", "Learning to browse the web."),
        _paper("2611.60002", "Web browsing", "Agentic systems that search."),
    )
    assert _ids(await _search(db, "ti:agentic")) == ["2611.60001"]
    assert _ids(await _search(db, "abs:agentic")) == ["2611.60002"]
    assert _ids(await _search(db, '"browse the web"')) == ["2611.60001"]
    assert _ids(await _search(db, "agent* AND NOT learning")) == ["2611.60002"]
    assert (await _search(db, "(web OR search) AND NOT agentic")).total == 0
    with pytest.raises(QueryError, match="au:"):
        await _search(db, "au:turing")


HOSTILE = [
    "NEAR(",
    '"',
    "*",
    ":",
    "^",
    "-",
    "AND OR",
    "title:x",
    "'; DROP TABLE papers; --",
    "abstract : NEAR(a b, 2)",
    "{title abstract}: x",
    "x OR y NOT z AND",
    "the AND NOT protein",  # PostgreSQL drops "the": nothing left to find, nothing read
    'agent" OR "1"="1',
    "papers_fts MATCH 'x'",
    "'\\' & ! | <-> :* :A",
    "🚀🚀",
    "עברית ערבית",
    "ze\u200bro\u200dwidth",
    "\u202eevil",
    "a" * 10_000,
    "word " * 2_000,
]


@pytest.mark.parametrize("typed", HOSTILE, ids=range(len(HOSTILE)))
async def test_typed_text_never_becomes_fts_syntax(db: Database, typed: str) -> None:
    """Each either searches its words or is refused with a QueryError; the database
    answers no error and keeps every paper."""
    await _store(db, *FILLER)
    try:
        result = await _search(db, typed)
    except QueryError:
        pass
    else:
        assert result.total == 0
    async with db.uow() as uow:
        count = await uow.session.scalar(select(func.count()).select_from(PaperRow))
    assert count == len(FILLER)


@pytest.mark.parametrize(
    ("typed", "found"),
    [
        ("NEAR(near words)", "2611.70001"),
        ("'; DROP TABLE papers; --", "2611.70002"),
        ("title:column", "2611.70003"),
        ("🚀 עברית", "2611.70004"),
        ("zero\u200bwidth", "2611.70005"),
    ],
)
async def test_operators_and_quotes_are_searched_as_words(
    db: Database, typed: str, found: str
) -> None:
    await _store(
        db,
        *FILLER,
        _paper("2611.70001", "Words near words", "Near duplicates."),
        _paper("2611.70002", "Drop the table", "Papers on tables we drop."),
        _paper("2611.70003", "A column store", "Nothing else."),
        _paper("2611.70004", "Rockets 🚀 in עברית text", "Hebrew."),
        _paper("2611.70005", "Zerowidth jokes", "Invisible."),
    )
    assert _ids(await _search(db, typed)) == [found]


async def test_the_migration_indexes_papers_stored_before_it(db: Database) -> None:
    await _store(db, *FILLER)
    await db.downgrade("0012")  # no trigger is left to fail an older paperwatch's writes
    async with db.uow() as uow:
        await uow.session.execute(
            PaperRow.__table__.insert(),
            {"arxiv_id": "2611.80001", "title": "Stored before", "abstract": "Older database."},
        )
        await uow.session.execute(update(PaperRow).values(title=PaperRow.title + " search"))
        await uow.commit()
    await db.upgrade()
    assert _ids(await _search(db, "older database")) == ["2611.80001"]
    assert (await _search(db, "protein")).total == len(FILLER)


async def test_with_many_matches_postgresql_ranks_the_papers_stored_last(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite ranks every match; PostgreSQL the `RANKED_AT_MOST` stored last."""
    monkeypatch.setattr("storage.paper_search.RANKED_AT_MOST", 3)
    best = _paper("2611.90001", "Memory memory memory", "Memory.", day=1)
    later = [_paper(f"2611.9001{n}", f"Study {n}", "Some memory.", day=2) for n in range(4)]
    await _store(db, best)
    await _store(db, *later)
    result = await _search(db, "memory", limit=10)
    assert result.total == 5  # every match is counted
    if db.dialect == "sqlite":
        assert _ids(result) == [
            "2611.90001",
            "2611.90013",
            "2611.90012",
            "2611.90011",
            "2611.90010",
        ]
        return
    assert _ids(result) == ["2611.90013", "2611.90012", "2611.90011"]  # the last 3 stored
    assert (await _search(db, "memory", limit=10, offset=3)).hits == ()
    assert _ids(await _search(db, "memory", limit=1, offset=2)) == ["2611.90011"]
    monkeypatch.setattr("storage.paper_search.RANKED_AT_MOST", 5)
    assert _ids(await _search(db, "memory", limit=1)) == ["2611.90001"]


async def test_papers_are_found_before_commit_and_gone_after_rollback(db: Database) -> None:
    """New papers join the index in bulk before the commit (`storage.search_index`): a
    search in the same unit of work finds them already, a rollback leaves none behind."""
    async with db.uow() as uow:
        await uow.papers.upsert([_paper("2611.95001", "Uncommitted ideas", "Pending.")])
        assert _ids(await uow.search.search("uncommitted")) == ["2611.95001"]
    async with db.uow() as uow:
        await uow.papers.upsert([_paper("2611.95002", "Rolled back ideas", "Gone.")])
        await uow.rollback()
        await uow.papers.upsert([_paper("2611.95003", "Kept ideas", "Stored.")])
        await uow.commit()
    assert (await _search(db, "ideas")).total == 1
    assert _ids(await _search(db, "kept")) == ["2611.95003"]


async def test_a_paper_inserted_and_replaced_in_one_transaction_is_indexed_once(
    db: Database,
) -> None:
    async with db.uow() as uow:
        await uow.papers.upsert([_paper("2611.96001", "First words", "Old text.")])
        await uow.papers.upsert([_paper("2611.96001", "Second words", "New text.", version=2)])
        await uow.commit()
    assert (await _search(db, "first")).total == 0
    assert _ids(await _search(db, "second words")) == ["2611.96001"]
    async with db.uow() as uow:
        assert await uow.search.index_new() == 0  # nothing left over


async def test_ingest_indexes_while_it_tags(db: Database, small_catalog: Catalog) -> None:
    """`store` has the new papers indexed by the time it returns (it ran the index beside
    the tagger), before any commit."""
    papers = [_paper("2611.97001", "Web agent with memory", "A web agent remembers.")]
    async with db.uow() as uow:
        await store(uow, papers, small_catalog)
        assert await uow.search.index_new() == 0
        found = await uow.search.search("remembers", tags=["web-agents"])
    assert _ids(found) == ["2611.97001"]


async def test_postgresql_moves_the_index_to_its_table_and_back(db: Database) -> None:
    """0015 takes 0013's generated column out of `papers` into `papers_fts`; its downgrade
    puts the column back, computed for every paper, and upgrading again indexes papers
    stored meanwhile."""
    if db.dialect != "postgresql":
        pytest.skip("SQLite's index is the same at 0014 and 0015")
    await _store(db, *FILLER)
    await db.downgrade("0014")
    matching = text("SELECT count(*) FROM papers WHERE search_vector @@ to_tsquery('protein')")
    async with db.uow() as uow:
        assert (await uow.session.execute(matching)).scalar_one() == len(FILLER)
        await uow.session.execute(
            PaperRow.__table__.insert(),
            {"arxiv_id": "2611.98001", "title": "Stored at 0014", "abstract": "Generated."},
        )
        await uow.commit()
    await db.upgrade()
    assert _ids(await _search(db, "generated")) == ["2611.98001"]
    assert (await _search(db, "protein")).total == len(FILLER)
    async with db.uow() as uow:
        columns = text(
            "SELECT count(*) FROM information_schema.columns "
            "WHERE table_name = 'papers' AND column_name = 'search_vector'"
        )
        assert (await uow.session.execute(columns)).scalar_one() == 0


async def test_a_tagger_that_fails_leaves_nothing_stored_nor_indexed(
    db: Database, small_catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("tagger broke")

    monkeypatch.setattr("bot.services.ingest.rule_tags", broken)
    with pytest.raises(RuntimeError, match="tagger broke"):
        async with db.uow() as uow:
            await store(uow, [_paper("2611.99001", "Web agent lost", "Never kept.")], small_catalog)
    async with db.uow() as uow:
        assert await uow.papers.count() == 0
    assert (await _search(db, "lost")).total == 0
