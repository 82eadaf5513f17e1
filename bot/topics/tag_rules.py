"""Which topics a paper gets: the rules a `Tagger` (`bot.topics.tagger`) is built from,
the catalog's plus the queries people follow.

Catalog topics tag papers under their slug; a followed query tags them under a key
derived from its canonical text (`q:` + hash), so that two people typing the same
query share one tag, and the query is compiled and matched once however many chats
follow it.

A stored query that no longer compiles (stored by an older version, or edited by hand)
is skipped with a warning naming its subscription: one broken row never stops the
tagging of everyone else's papers.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from functools import cache, lru_cache

from bot.topics.catalog import Catalog
from bot.topics.query import parse_query
from bot.topics.query_tree import CATALOG_LIMITS, Query, QueryError
from bot.topics.tagger import Tagger

log = logging.getLogger(__name__)

# Compiled followed queries kept between ingests (a query is immutable once parsed).
COMPILED_CACHE = 8192

# A followed query as storage gives it: its canonical text, or (text, subscription id).
FollowedText = str | tuple[str, int]


def query_key(query: Query) -> str:
    return "q:" + hashlib.sha1(str(query).encode()).hexdigest()[:16]


@cache
def catalog_rules(catalog: Catalog) -> tuple[tuple[str, Query], ...]:
    """Every catalog topic with a rule, compiled once per catalog."""
    return tuple((t.slug, parse_query(t.rule, CATALOG_LIMITS)) for t in catalog.topics if t.rule)


@lru_cache(maxsize=COMPILED_CACHE)
def compiled_query(text: str) -> Query:
    """`parse_query`, remembered: every ingest re-reads the same followed queries."""
    return parse_query(text)


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


def build_tagger(catalog: Catalog, queries: Iterable[FollowedText] = ()) -> Tagger:
    """A tagger for the catalog and the given (canonical) followed queries; the ones
    that do not compile are skipped (see `followed_rules`)."""
    rules = dict(catalog_rules(catalog))
    for key, query in followed_rules(queries).items():
        rules.setdefault(key, query)
    return Tagger(rules.items())
