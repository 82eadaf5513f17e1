"""What a parsed topic query is: its syntax tree, the compiled `Query`, limits and errors.

`bot.topics.query` parses text into these (the grammar is written out there); this
module holds what the parser builds and what callers use: the nodes (`Term`, `Not`,
`And`, `Or`), `render` (the canonical text of a tree), `compile_node` (the closure that
matches a document), the size `Limits` and `QueryError` with its position and hint.
"""

from __future__ import annotations

import enum
import unicodedata
from dataclasses import dataclass, field
from typing import NamedTuple

from bot.domain import Paper
from bot.topics import document, programs
from bot.topics.document import Document
from bot.topics.programs import Program

__all__ = [
    "CATALOG_LIMITS",
    "MAX_DEPTH",
    "MAX_QUERY_CHARS",
    "MAX_TERMS",
    "MIN_PREFIX",
    "TYPED_LIMITS",
    "And",
    "Limits",
    "Node",
    "Not",
    "Or",
    "Query",
    "QueryError",
    "Scope",
    "Term",
    "compile_node",
    "render",
    "unanchored",
]


class Limits(NamedTuple):
    """How large a query may be: characters, terms (words and phrases), nested parentheses."""

    chars: int
    terms: int
    depth: int


TYPED_LIMITS = Limits(chars=1000, terms=64, depth=16)
"""A query a person follows (and the stored, canonical form of it)."""

CATALOG_LIMITS = Limits(chars=4000, terms=256, depth=16)
"""A catalog topic's rule. Maintainers write it and `paperwatch topics --check` checks it;
it names a topic's vocabulary (synonyms, acronyms, established method and benchmark
names), which needs more room than a typed query if the topic is to be found on papers
that word it differently. Matching stays linear in the paper's length."""

MAX_QUERY_CHARS, MAX_TERMS, MAX_DEPTH = TYPED_LIMITS
MIN_PREFIX = document.HEAD


class QueryError(ValueError):
    """A query that cannot be parsed: what is wrong, where (0-based) and how to fix it."""

    def __init__(self, message: str, position: int, hint: str = "") -> None:
        super().__init__(message, position, hint)
        self.message, self.position, self.hint = message, position, hint

    def __str__(self) -> str:
        text = f"{self.message} at position {self.position}"
        return f"{text}: {self.hint}" if self.hint else text

    def pretty(self, query: str, width: int = 60) -> str:
        """This error, then (a window of) the query with a caret under the position."""
        start = max(0, min(self.position - width // 2, len(query) - width))
        shown = "".join(" " if ch.isspace() else ch for ch in query[start : start + width])
        lead, tail = "…" * (start > 0), "…" * (start + width < len(query))
        offset = len(lead) + sum(map(_char_width, shown[: self.position - start]))
        return f"{self}\n  {lead}{shown}{tail}\n  {' ' * offset}^"


def _char_width(ch: str) -> int:
    if unicodedata.combining(ch) or unicodedata.category(ch) == "Cf":
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


class Scope(enum.Enum):
    TEXT = ""
    TITLE = "ti"
    ABSTRACT = "abs"
    AUTHOR = "au"
    CATEGORY = "cat"


_FIELDS = {
    Scope.TEXT: document.TEXT,
    Scope.TITLE: document.TITLE,
    Scope.ABSTRACT: document.ABSTRACT,
}
_FIELDS[Scope.AUTHOR] = document.AUTHORS


@dataclass(frozen=True, slots=True)
class Term:
    """A word, phrase, prefix or category. `words` is what was written, normalised;
    `keys` what is looked up (plural-normalised, accent-folded for authors)."""

    scope: Scope
    words: tuple[str, ...]
    keys: tuple[str, ...] = field(compare=False)
    prefix: bool = False
    pos: int = field(default=0, compare=False)

    @property
    def label(self) -> str:
        """How the term is shown in a match's "why"."""
        return " ".join(self.words) + ("*" if self.prefix else "")

    def __str__(self) -> str:
        body = f'"{self.label}"' if len(self.words) > 1 else self.label
        return f"{self.scope.value}:{body}" if self.scope.value else body


@dataclass(frozen=True, slots=True)
class Not:
    child: Node
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class And:
    children: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Or:
    children: tuple[Node, ...]


Node = Term | Not | And | Or


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed query. Equality and hashing use the syntax tree, not the text."""

    root: Node
    text: str = field(compare=False)
    program: Program = field(compare=False, repr=False)

    def __str__(self) -> str:
        return render(self.root)

    def match(self, doc: Document | Paper) -> tuple[str, ...] | None:
        """The matched positive terms (labels, in query order, no duplicates) or None."""
        if isinstance(doc, Paper):
            doc = Document.from_paper(doc)
        why: list[str] = []
        return tuple(dict.fromkeys(why)) if self.program(doc, why) else None


def unanchored(node: Node) -> int | None:
    """Position of a part that could match with no positive term present, or None."""
    if isinstance(node, Term):
        return None
    if isinstance(node, Not):
        return node.pos
    loose = [unanchored(child) for child in node.children]
    if isinstance(node, And):
        return None if None in loose else loose[0]
    return next((pos for pos in loose if pos is not None), None)


def render(node: Node) -> str:
    """Canonical text of a syntax tree; parsing it gives an equal tree."""
    if isinstance(node, Term):
        return str(node)
    if isinstance(node, Not):
        inner = render(node.child)
        return f"NOT {inner}" if isinstance(node.child, Term) else f"NOT ({inner})"
    parts = (f"({render(c)})" if isinstance(c, And | Or) else render(c) for c in node.children)
    return (" AND " if isinstance(node, And) else " OR ").join(parts)


def compile_node(node: Node) -> Program:
    """The closure `(doc, why) -> bool` evaluating `node` (see `bot.topics.document`)."""
    if isinstance(node, Term):
        where = None if node.scope is Scope.CATEGORY else _FIELDS[node.scope]
        return programs.term_program(where, node.keys, node.prefix, node.label)
    if isinstance(node, Not):
        return programs.none_of(compile_node(node.child))
    parts = tuple(map(compile_node, node.children))
    if isinstance(node, And):
        return programs.all_of(parts, tuple(map(_need, node.children)))
    return programs.any_of(parts, tuple(map(_gate, node.children)))


def _gate(node: Node) -> programs.Gate:
    """A word `node` cannot match without (see `programs.any_of`): a plain word (which is
    then all it asks) or a phrase's longest word, in its field, or a title prefix's head;
    for AND, the first such word of a part."""
    if isinstance(node, Term):
        if node.scope is Scope.CATEGORY:
            return None
        if node.prefix:
            title = node.scope is Scope.TITLE
            return (document.TITLE_HEADS, node.keys[0][: document.HEAD], None) if title else None
        plain = node.label if len(node.keys) == 1 else None
        return _FIELDS[node.scope], max(node.keys, key=len), plain
    if isinstance(node, And):
        gate = next((g for g in map(_gate, node.children) if g is not None), None)
        return gate and (gate[0], gate[1], None)
    return None


def _need(node: Node) -> programs.Need:
    """Words one of which `node` cannot match without (see `programs.all_of`), by field:
    a term's gate; for OR, all its parts' (None when a part has none); for AND, its first
    part's that has some."""
    if isinstance(node, Term):
        gate = _gate(node)
        return gate and ((gate[0], frozenset({gate[1]})),)
    if isinstance(node, Not):
        return None
    needs = list(map(_need, node.children))
    if isinstance(node, And):
        return next((need for need in needs if need is not None), None)
    if None in needs:
        return None
    by_field: dict[int, set[str]] = {}
    for need in needs:
        for field_, keys in need or ():
            by_field.setdefault(field_, set()).update(keys)
    return tuple((f, frozenset(keys)) for f, keys in by_field.items())
