"""Full-text search over the titles and abstracts of stored papers, on either database.

The indexes are built by migrations 0013 and 0015 and kept up to date where papers are
stored, so no caller that stores, refreshes, retags or deletes papers has to remember
them (new papers join in bulk before the unit of work commits, `storage.search_index`):

- SQLite: `papers_fts`, an FTS5 table with external content (`papers`), tokenizer
  `porter unicode61 remove_diacritics 2` ("agents" finds "agent", "Schölkopf" finds
  "scholkopf"), kept in step by triggers on update of title or abstract and on delete.
  Ranked by `bm25()`, the title weighing `TITLE_WEIGHT` times the abstract.
- PostgreSQL: `papers_fts(paper_id, search_vector)`, a `tsvector` per paper ('english';
  title weight A, abstract B) with a GIN index, kept by a trigger on update of title or
  abstract and a cascading foreign key; ranked by `ts_rank_cd` (A counts 1.0, B 0.4).

What was typed is read by `bot.topics.search_text.parse_search` into a tree of terms made
of letters and digits only; `fts5_expression` and `tsquery_text` write that tree in the
database's syntax with every term quoted, and the result is passed as a bound parameter,
never spliced into SQL. Ties in score go to the newest paper (announcement date, then
arXiv id, as /latest orders). On PostgreSQL, when more than `RANKED_AT_MOST` papers match
(the commonest words), the ranking is among the `RANKED_AT_MOST` stored last (highest row
id: the newest, bar backfills); the total still counts every match.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Integer, Select, and_, bindparam, column, func, literal_column, select, table
from sqlalchemy.ext.asyncio import AsyncSession

from bot.topics.query_tree import And, Node, Not, Scope, Term
from bot.topics.search_text import SearchHit, SearchResult, parse_search
from storage.models import PaperRow
from storage.papers import PaperRepository, _tagged
from storage.search_index import index_new_papers

TITLE_WEIGHT = 10.0  # SQLite's bm25 weight of the title (the abstract's is 1)
# On PostgreSQL, when more papers match, only this many, those stored last, are ranked
# (bench_search): ranking reads every candidate's tsvector from its row, which for the
# commonest words (a quarter of 100,000 papers) took 300-400 ms; 2,000 take 35-60 ms.
# SQLite ranks from the FTS index alone, every match, in a third of that.
RANKED_AT_MOST = 2000
# The search index's objects, which the models do not describe (see `not_search_index`):
# the table on both databases (and FTS5's shadow tables), and 0013's column and index of
# `papers` on PostgreSQL, which 0015 moved to the table.
SEARCH_TABLE = "papers_fts"
SEARCH_COLUMN = "search_vector"
SEARCH_INDEX = "ix_papers_search_vector"


class SearchRepository:
    """`bot.ports.PaperSearch` on SQLite or PostgreSQL."""

    def __init__(self, session: AsyncSession) -> None:
        self._s = session

    async def search(
        self,
        text: str,
        *,
        tags: Sequence[str] | None = None,
        without: Sequence[str] = (),
        limit: int = 10,
        offset: int = 0,
    ) -> SearchResult:
        """Papers whose title or abstract matches `text` (`parse_search`; raises its
        `QueryError`), with any of `tags` if given and none of `without`: the best
        `limit` after the first `offset`, and how many match in all. Plain words that
        no paper has all of fall back to papers with any of them (`loosened`)."""
        query = parse_search(text)
        await index_new_papers(self._s)  # papers this unit of work stored are found too
        result = await self._run(query.strict, tags, without, limit, offset)
        if result.total == 0 and query.loose is not None:
            loose = await self._run(query.loose, tags, without, limit, offset)
            result = SearchResult(loose.hits, loose.total, loosened=True)
        return result

    async def index_new(self) -> int:
        """Add the papers this unit of work stored to the index now, rather than when it
        commits; how many."""
        return await index_new_papers(self._s)

    async def _run(
        self,
        node: Node,
        tags: Sequence[str] | None,
        without: Sequence[str],
        limit: int,
        offset: int,
    ) -> SearchResult:
        postgres = self._s.get_bind().dialect.name == "postgresql"
        how = _postgres(tsquery_text(node)) if postgres else _sqlite(fts5_expression(node))

        def matching(stmt: Select[Any]) -> Select[Any]:
            return _only(stmt, how.paper_id, tags, without).where(how.match)

        total = int((await self._s.execute(matching(how.counted))).scalar_one())
        ranked_at_most = RANKED_AT_MOST if postgres else total
        if total == 0 or offset >= min(total, ranked_at_most):
            return SearchResult((), total)
        stmt = matching(how.source(select(PaperRow.id, how.score)))
        if total > ranked_at_most:  # rank the papers stored last, not every match
            newest = matching(how.source(select(PaperRow.id)))
            newest = newest.order_by(PaperRow.id.desc()).limit(ranked_at_most).correlate(None)
            stmt = stmt.where(PaperRow.id.in_(newest))
        newest_first = (PaperRow.announced.desc().nulls_last(), PaperRow.arxiv_id.desc())
        stmt = stmt.order_by(how.score.desc(), *newest_first)
        stmt = stmt.limit(min(limit, ranked_at_most - offset)).offset(offset)
        ranked = (await self._s.execute(stmt)).all()
        papers = await PaperRepository(self._s).by_ids([row_id for row_id, _ in ranked])
        hits = tuple(SearchHit(papers[row_id], float(value)) for row_id, value in ranked)
        return SearchResult(hits, total)


@dataclass(frozen=True, slots=True)
class _Dialect:
    """How one database scores and matches a search: where the papers are read from (a
    function of a SELECT), the paper id that tag filters apply to, and a SELECT of the
    number of matches that reads as little as it can."""

    score: Any
    match: Any
    source: Callable[[Select[Any]], Select[Any]]
    paper_id: Any
    counted: Select[Any]


def _sqlite(expression: str) -> _Dialect:
    """The FTS table joined to the papers by rowid, which is the paper's id. Counting and
    tag filters use the FTS table's rowid alone: through the join, they took three to ten
    times as long (100,000 papers)."""
    fts = table(SEARCH_TABLE, column("rowid", Integer))
    score = literal_column(f"-bm25({SEARCH_TABLE}, {TITLE_WEIGHT}, 1.0)")
    match = literal_column(SEARCH_TABLE).op("MATCH")(bindparam("fts", expression))

    def source(stmt: Select[Any]) -> Select[Any]:
        return stmt.select_from(fts).join(PaperRow, PaperRow.id == fts.c.rowid)

    counted = select(func.count()).select_from(fts)
    # The unary plus keeps SQLite from handing the tag filter to FTS5, which then looked
    # up each tagged paper's match one by one: ten times slower than filtering the matches.
    paper_id = literal_column(f"+{SEARCH_TABLE}.rowid")
    return _Dialect(score, match, source, paper_id, counted)


def _postgres(tsquery: str) -> _Dialect:
    """The search table joined to the papers by paper id; counting and tag filters use the
    search table alone. A query left with nothing to find once 'english' drops its stop
    words (`the AND NOT agents` is `!agent`) would read every paper: `querytree` is 'T'
    for it, and the condition is false before any row is read."""
    fts = table(SEARCH_TABLE, column("paper_id", Integer), column(SEARCH_COLUMN))
    query = func.to_tsquery(literal_column("'english'::regconfig"), bindparam("tsq", tsquery))
    vector = fts.c[SEARCH_COLUMN]
    match = and_(func.querytree(query) != "T", vector.op("@@")(query))
    score = func.ts_rank_cd(vector, query)

    def source(stmt: Select[Any]) -> Select[Any]:
        return stmt.select_from(fts).join(PaperRow, PaperRow.id == fts.c.paper_id)

    counted = select(func.count()).select_from(fts)
    return _Dialect(score, match, source, fts.c.paper_id, counted)


def _only(
    stmt: Select[Any], paper_id: Any, tags: Sequence[str] | None, without: Sequence[str]
) -> Select[Any]:
    """`stmt` limited to papers with any of `tags` (if given) and none of `without`."""
    if tags is not None:
        stmt = stmt.where(paper_id.in_(_tagged(tags)))
    if without:
        stmt = stmt.where(paper_id.not_in(_tagged(without)))
    return stmt


def fts5_expression(node: Node) -> str:
    """`node` as an FTS5 MATCH expression, every term a quoted string."""
    if isinstance(node, Term):
        phrase = '"' + " ".join(node.words).replace('"', '""') + '"' + "*" * node.prefix
        column = {Scope.TITLE: "title", Scope.ABSTRACT: "abstract"}.get(node.scope)
        return f"({column} : {phrase})" if column else phrase
    if isinstance(node, Not):  # only a double negation reaches here (search_text._check)
        return fts5_expression(node.child.child)  # type: ignore[union-attr]
    if isinstance(node, And):
        found = [fts5_expression(c) for c in node.children if not _excludes(c)]
        expression = "(" + " AND ".join(found) + ")"
        for child in node.children:
            if _excludes(child):
                expression = f"({expression} NOT {fts5_expression(child.child)})"  # type: ignore[union-attr]
        return expression
    return "(" + " OR ".join(fts5_expression(c) for c in node.children) + ")"


def tsquery_text(node: Node) -> str:
    """`node` as the text of a PostgreSQL tsquery, every lexeme a quoted string."""
    if isinstance(node, Term):
        weight = {Scope.TITLE: "A", Scope.ABSTRACT: "B"}.get(node.scope, "")
        lexemes = [_lexeme(w) + (f":{weight}" if weight else "") for w in node.words]
        if node.prefix:
            lexemes[-1] = _lexeme(node.words[-1]) + ":*" + weight
        return "(" + " <-> ".join(lexemes) + ")"
    if isinstance(node, Not):
        return f"!{tsquery_text(node.child)}"
    joiner = " & " if isinstance(node, And) else " | "
    return "(" + joiner.join(tsquery_text(c) for c in node.children) + ")"


def _lexeme(word: str) -> str:
    return "'" + word.replace("\\", "\\\\").replace("'", "''") + "'"


def _excludes(node: Node) -> bool:
    return isinstance(node, Not) and not isinstance(node.child, Not)


def not_search_index(name: str | None, type_: str, parent_names: Any) -> bool:
    """Alembic `include_name`: False for the search objects of 0013 and 0015 (the search
    table, FTS5's shadow tables, 0013's generated column and its index), which no model
    describes."""
    if type_ == "table":
        return not (name or "").startswith(SEARCH_TABLE)
    return name not in (SEARCH_COLUMN, SEARCH_INDEX)
