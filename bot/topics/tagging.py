"""Which topics a paper gets: the catalog's rules plus the queries people follow.

Catalog topics tag papers under their slug; a followed query tags them under a key
derived from its canonical text (`q:` + hash), so that two people typing the same
query share one tag.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import cache

from bot.topics.catalog import Catalog
from bot.topics.query import Query, parse_query
from bot.topics.tagger import Tagger


def query_key(query: Query) -> str:
    return "q:" + hashlib.sha1(str(query).encode()).hexdigest()[:16]


@cache
def catalog_rules(catalog: Catalog) -> tuple[tuple[str, Query], ...]:
    """Every catalog topic with a rule, compiled once per catalog."""
    return tuple((t.slug, parse_query(t.rule)) for t in catalog.topics if t.rule)


def build_tagger(catalog: Catalog, queries: Iterable[str] = ()) -> Tagger:
    """A tagger for the catalog and the given (canonical) followed queries."""
    rules = dict(catalog_rules(catalog))
    for text in queries:
        query = parse_query(text)
        rules.setdefault(query_key(query), query)
    return Tagger(rules.items())
