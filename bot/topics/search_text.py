"""What a person typed after /search, read as a full-text search, and what a search finds.

Two readings, chosen by `bot.topics.resolve.looks_like_query`:

- **Plain words** (`reward hacking in web agents`): every word must be in the paper
  (`SearchQuery.strict`); when no paper has them all, any of them will do
  (`SearchQuery.loose`). A word ending in `*` (at least three letters before it) is a
  prefix; a run of letters joined by punctuation (`GPT-4o`, `state-of-the-art`) is one
  phrase. Every other character is a separator, so nothing typed can become syntax:
  `'; DROP TABLE papers; --` searches the words "drop", "table" and "papers".
- **The query language** (`bot.topics.query`): quotes, parentheses, AND/OR/NOT or a scope
  (`ti:`, `abs:`) make the text a query, parsed with the same rules and limits as
  /follow; `NEAR(a b)` is then the words NEAR, a and b. Search looks in titles and
  abstracts only, so `au:` and `cat:` are refused, and so is a NOT that a full-text
  index cannot express (one inside an OR: `a OR (b AND NOT c)` is fine, `(a OR NOT b)`
  is refused by the parser already).

Either way the result is a tree of `bot.topics.query_tree` nodes over title and
abstract, whose terms are normalised tokens (letters and digits only); storage
(`storage.paper_search`) turns it into an FTS5 MATCH expression or a PostgreSQL tsquery,
quoting every term. Errors are `QueryError`s with a position and a hint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.domain import Paper
from bot.topics import document
from bot.topics.query import parse_query
from bot.topics.query_tree import (
    MAX_QUERY_CHARS,
    MAX_TERMS,
    MIN_PREFIX,
    And,
    Node,
    Not,
    Or,
    QueryError,
    Scope,
    Term,
)
from bot.topics.resolve import looks_like_query

__all__ = ["MAX_SEARCH_CHARS", "SearchHit", "SearchQuery", "SearchResult", "parse_search"]

MAX_SEARCH_CHARS = MAX_QUERY_CHARS
_PREFIX = re.compile(rf"[^\W_]{{{MIN_PREFIX},}}\*")


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """The tree to search for first, and the looser one to try when it finds nothing."""

    strict: Node
    loose: Node | None = None


@dataclass(frozen=True, slots=True)
class SearchHit:
    paper: Paper
    score: float  # higher is better; comparable only within one search


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The hits of one page, best first (newest first among equal scores), how many
    papers match in all, and whether only the looser reading (any word) found them."""

    hits: tuple[SearchHit, ...]
    total: int
    loosened: bool = False


def parse_search(text: str) -> SearchQuery:
    """Read `text` as a search (rules in the module docstring); raises `QueryError`."""
    if len(text) > MAX_SEARCH_CHARS:
        hint = f"it has {len(text):,} characters, the limit is {MAX_SEARCH_CHARS:,}"
        raise QueryError("search too long", MAX_SEARCH_CHARS, hint)
    if not text.strip():
        raise QueryError("nothing to search for", 0, "write a few words, e.g. web agents")
    if looks_like_query(text):
        root = parse_query(text).root
        _check(root)
        return SearchQuery(root)
    terms = _plain_terms(text)
    if len(terms) == 1:
        return SearchQuery(terms[0])
    return SearchQuery(And(terms), Or(terms))


def _plain_terms(text: str) -> tuple[Term, ...]:
    terms: dict[tuple[tuple[str, ...], bool], Term] = {}  # a repeated word counts once
    pos = 0
    for chunk in text.split():
        pos = text.index(chunk, pos)
        prefix = _PREFIX.fullmatch(chunk) is not None
        words = tuple(document.tokenize(chunk[:-1] if prefix else chunk))
        if words:
            keys = words if prefix else tuple(map(document.word_key, words))
            terms.setdefault((words, prefix), Term(Scope.TEXT, words, keys, prefix, pos))
        pos += len(chunk)
    if not terms:
        hint = "write at least one word of letters or digits, e.g. web agents"
        raise QueryError("nothing to search for", 0, hint)
    if len(terms) > MAX_TERMS:
        hint = f"at most {MAX_TERMS} different words; keep the ones that matter"
        raise QueryError("too many words", list(terms.values())[MAX_TERMS].pos, hint)
    return tuple(terms.values())


def _check(node: Node) -> None:
    """Refuse what a title-and-abstract index cannot answer (module docstring)."""
    if isinstance(node, Term):
        if node.scope in (Scope.AUTHOR, Scope.CATEGORY):
            hint = f"search looks in titles and abstracts; {node.scope.value}: works in /follow"
            raise QueryError(f"'{node.scope.value}:' does not work in a search", node.pos, hint)
        return
    if isinstance(node, Not):
        _check(node.child)
        return
    for child in node.children:
        if isinstance(node, Or) and isinstance(child, Not):
            hint = "put NOT beside what it excludes: a AND NOT b"
            raise QueryError("NOT inside OR does not work in a search", child.pos, hint)
        _check(child)
    if isinstance(node, And) and all(_negative(c) for c in node.children):
        pos = next(c.pos for c in node.children if isinstance(c, Not))
        hint = "NOT only excludes: combine it with something to find"
        raise QueryError("this part looks for nothing", pos, hint)


def _negative(node: Node) -> bool:
    return isinstance(node, Not) and not isinstance(node.child, Not)


def positive_terms(node: Node) -> list[Term]:
    """The terms a paper is found by (not those under a NOT), in query order."""
    if isinstance(node, Term):
        return [node]
    if isinstance(node, Not):
        return positive_terms(node.child.child) if isinstance(node.child, Not) else []
    return [t for child in node.children for t in positive_terms(child)]
