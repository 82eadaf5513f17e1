"""Which topics a paper gets: the rules a `Tagger` (`bot.topics.tagger`) is built from,
the catalog's plus the queries people follow.

Catalog topics tag papers under their slug; a followed query tags them under a key
derived from its canonical text (`q:` + hash), so that two people typing the same
query share one tag, and the query is compiled and matched once however many chats
follow it.

Catalog topics with a shipped second stage (`bot.topics.second_stage`) keep a rule tag only
when their stage agrees; `catalog_tagger` is the one place that wires the stage in, for
ingest and the relevance bench alike. Followed queries have no stage.

A stored query that no longer compiles (stored by an older version, or edited by hand)
is skipped with a warning naming its subscription: one broken row never stops the
tagging of everyone else's papers.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

from bot.topics.catalog import Catalog
from bot.topics.document import Document
from bot.topics.query import compiled_query
from bot.topics.query_tree import CATALOG_LIMITS, Query, QueryError
from bot.topics.second_stage import Decision, SecondStage, bundled_stage
from bot.topics.tagger import Tagger

if TYPE_CHECKING:
    from bot.domain import Paper

log = logging.getLogger(__name__)

# A followed query as storage gives it: its canonical text, or (text, subscription id).
FollowedText = str | tuple[str, int]


def query_key(query: Query) -> str:
    return "q:" + hashlib.sha1(str(query).encode()).hexdigest()[:16]


@cache
def catalog_rules(catalog: Catalog) -> tuple[tuple[str, Query], ...]:
    """Every catalog topic with a rule, compiled once per catalog."""
    return tuple((t.slug, compiled_query(t.rule, CATALOG_LIMITS)) for t in catalog.topics if t.rule)


def followed_rules(queries: Iterable[FollowedText]) -> dict[str, Query]:
    """Key -> query for the followed queries that compile, one per canonical form.

    A query that does not compile is logged (with its subscription id when known) and
    left out; the others are unaffected.
    """
    rules: dict[str, Query] = {}
    for item in queries:
        text, subscription = (item, None) if isinstance(item, str) else item
        try:
            query = compiled_query(text)
        except QueryError as error:
            log.warning(
                "followed query skipped, it does not compile subscription=%s chars=%d error=%s",
                subscription,
                len(text),
                error,
            )
            continue
        rules.setdefault(query_key(query), query)
    return rules


def catalog_tagger(
    catalog: Catalog,
    slugs: Iterable[str] | None = None,
    extra: Iterable[tuple[str, Query]] = (),
    stage: SecondStage | None = None,
) -> Tagger:
    """The tagger of the catalog's rules (only `slugs`' when given: each rule matches on
    its own, so a subset tags exactly alike) plus `extra` rules, with the second stage
    (the shipped one unless `stage` is given) checking the catalog topics that have one."""
    wanted = None if slugs is None else set(slugs)
    rules = {k: q for k, q in catalog_rules(catalog) if wanted is None or k in wanted}
    for key, query in extra:
        rules.setdefault(key, query)
    return Tagger(rules.items(), stage=bundled_stage() if stage is None else stage)


def build_tagger(catalog: Catalog, queries: Iterable[FollowedText] = ()) -> Tagger:
    """A tagger for the catalog (with its second stage) and the given (canonical) followed
    queries; the ones that do not compile are skipped (see `followed_rules`)."""
    return catalog_tagger(catalog, extra=followed_rules(queries).items())


def stage_refusals(
    catalog: Catalog, paper: Paper, stage: SecondStage | None = None
) -> list[Decision]:
    """The second stage's decisions against `paper` (the shipped stage unless `stage` is
    given): topics whose rule matches it but whose stage dropped the tag (for `/why`)."""
    stage = bundled_stage() if stage is None else stage
    if not len(stage):
        return []
    doc = Document.from_paper(paper)
    rules = Tagger([(k, q) for k, q in catalog_rules(catalog) if k in stage.slugs]).tag(doc)
    decisions = [stage.decide(slug, doc) for slug in rules]
    return [d for d in decisions if d is not None and not d.kept]
