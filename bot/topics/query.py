"""The topic query language: tokenizer, parser, syntax tree and errors.

Used for catalog topic rules and for people's own topics, e.g.
`"diffusion policy" AND cat:cs.RO`. Grammar (NOT binds tighter than AND,
AND tighter than OR; two operands side by side mean AND, so `a NOT b` is
`a AND NOT b`)::

    query   := or EOF
    or      := and ("OR" and)*
    and     := unary (["AND"] unary)*
    unary   := "NOT" unary | primary
    primary := [scope] ( WORD | WORD* | "PHRASE" | "(" or ")" )
    scope   := ti: | abs: | au: | cat:      (title, abstract, authors, category)

Operators are upper-case keywords; "and", "or", "not" are ordinary words.
A scope applies to the next term or parenthesised group; without one a term
matches the title or the abstract. Words and phrases are compared as token
sequences (see `bot.topics.document`), `agent*` matches any word starting with
"agent", `cat:cs.RO` is an exact category and `cat:cs.*` a category prefix.
A query must always look for something: `NOT x` or `a OR NOT b` are refused.

Every error is a `QueryError` carrying a 0-based position and a hint. No
regular expression is ever built from a query, queries are bounded
(`MAX_QUERY_CHARS`, `MAX_TERMS`, `MAX_DEPTH`) and matching is linear in the
size of the paper.
"""

from __future__ import annotations

import enum
import re
import unicodedata
from dataclasses import dataclass, field
from typing import NamedTuple

from bot.domain import Paper
from bot.topics import document
from bot.topics.document import Document, Program

__all__ = [
    "CATALOG_LIMITS",
    "TYPED_LIMITS",
    "And",
    "Document",
    "Limits",
    "Not",
    "Or",
    "Query",
    "QueryError",
    "Scope",
    "Term",
    "canonical",
    "parse_query",
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
MIN_PREFIX = 3

_QUOTES = '"“”„'
_LEXEME = re.compile(  # fixed; every character of a query belongs to exactly one lexeme
    r"(?P<space>\s+)|(?P<paren>[()])|(?P<phrase>[\"“”„][^\"“”„]*[\"“”„]?)"
    r"|(?P<scope>[A-Za-z]+:)|(?P<word>[^\s()\"“”„]+)"
)
_KEYWORDS = ("AND", "OR", "NOT")
# Characters that mean nothing in a query and usually betray pasted markup or SQL.
_STRAY = re.compile(r"[<>;=`{}\[\]|\\]")
_CATEGORY = re.compile(r"[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)?")
_CATEGORY_PREFIX = re.compile(r"[a-z][a-z0-9.-]*")


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


_SCOPE_NAMES = {"title": "ti", "abstract": "abs", "author": "au", "category": "cat"}
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


def parse_query(text: str, limits: Limits = TYPED_LIMITS) -> Query:
    """Parse `text` into a `Query` within `limits`; raises `QueryError`."""
    if len(text) > limits.chars:
        hint = f"it has {len(text)} characters, the limit is {limits.chars}; use fewer terms"
        raise QueryError("query too long", limits.chars, hint)
    if not text.strip():
        raise QueryError("empty query", 0, 'write a word or a "quoted phrase", e.g. agent*')
    tokens = _lex(text)
    _check_structure(tokens, limits)
    root = _Parser(tokens).parse()
    loose = unanchored(root)
    if loose is not None:
        hint = "NOT only excludes: combine it with something to find, e.g. agent* AND NOT survey"
        raise QueryError("this part would match almost every paper", loose, hint)
    return Query(root, text, compile_node(root))


def canonical(query: Query) -> str:
    """The canonical text of `query`, checked to parse back to an equal query.

    This is the form a followed query is stored in and re-parsed from at every ingest,
    so it must obey the same limits as typed text. It can be longer or deeper than what
    was typed ("ß" is written "ss", `a b` becomes `a AND b`, `a OR b c` gains a pair of
    parentheses), so a query that parses may still have no storable form: then this
    raises `QueryError` (its position is in the canonical text) and nothing may be stored.
    """
    text = str(query)
    if len(text) > MAX_QUERY_CHARS:
        hint = (
            f"written out in full it has {len(text):,} characters, the limit is "
            f"{MAX_QUERY_CHARS:,}; use fewer or shorter terms"
        )
        raise QueryError("query too long once written out", MAX_QUERY_CHARS, hint)
    again = parse_query(text)
    if again != query:  # never seen; a guard so that a stored query always means the same
        raise QueryError("query has no stable written form", 0, "write it more simply")
    return text


class _Tok(NamedTuple):
    kind: str  # ( ) AND OR NOT SCOPE WORD PHRASE EOF
    value: str
    pos: int


def _lex(text: str) -> list[_Tok]:
    tokens: list[_Tok] = []
    for m in _LEXEME.finditer(text):
        kind, value, pos = m.lastgroup, m.group(), m.start()
        if kind == "phrase":
            if len(value) < 2 or value[-1] not in _QUOTES:
                raise QueryError("unterminated quote", pos, 'add a closing " after the phrase')
            tokens.append(_Tok("PHRASE", value[1:-1], pos))
        elif kind == "scope":
            tokens.append(_Tok("SCOPE", _scope_name(value[:-1], pos), pos))
        elif kind == "word" and (stray := _STRAY.search(value)):
            raise QueryError(
                f"unexpected {stray.group()!r}",
                pos + stray.start(),
                'remove it, or put the words in double quotes: "..."',
            )
        elif kind != "space":
            tokens.append(
                _Tok(value if kind == "paren" or value in _KEYWORDS else "WORD", value, pos)
            )
    tokens.append(_Tok("EOF", "", len(text)))
    return tokens


def _scope_name(name: str, pos: int) -> str:
    name = _SCOPE_NAMES.get(name.lower(), name.lower())
    if name not in ("ti", "abs", "au", "cat"):
        hint = "known scopes are ti: (title), abs: (abstract), au: (authors), cat: (category)"
        hint += f'; to look for "{name}:" itself, put it in quotes'
        raise QueryError(f"unknown scope '{name}:'", pos, hint)
    return name


def _check_structure(tokens: list[_Tok], limits: Limits) -> None:
    """Balanced and not too deep parentheses, not too many terms."""
    opened: list[int] = []
    terms = 0
    for tok in tokens:
        if tok.kind == "(":
            opened.append(tok.pos)
            if len(opened) > limits.depth:
                hint = f"at most {limits.depth} nested parentheses; flatten the query"
                raise QueryError("parentheses nested too deeply", tok.pos, hint)
        elif tok.kind == ")":
            if not opened:
                raise QueryError("unexpected ')'", tok.pos, "remove it or add a '(' before it")
            opened.pop()
        elif tok.kind in ("WORD", "PHRASE"):
            terms += 1
            if terms > limits.terms:
                hint = f"at most {limits.terms} terms; split the topic or use prefixes like agent*"
                raise QueryError("too many terms", tok.pos, hint)
    if opened:
        hint = f"add ')' to close the '(' at position {opened[-1]}"
        raise QueryError("missing ')'", tokens[-1].pos, hint)


class _Parser:
    """Recursive descent over a structurally checked token list (so depth is bounded)."""

    _STARTS = ("WORD", "PHRASE", "SCOPE", "(", "NOT")

    def __init__(self, tokens: list[_Tok]) -> None:
        self.tokens, self.i = tokens, 0

    def parse(self) -> Node:
        return self._or(Scope.TEXT)  # _check_structure leaves nothing after the last operand

    def _next(self) -> _Tok:
        self.i += 1
        return self.tokens[self.i - 1]

    def _or(self, scope: Scope) -> Node:
        parts = [self._and(scope)]
        while self.tokens[self.i].kind == "OR":
            self._operand_after(self._next())
            parts.append(self._and(scope))
        return _join(Or, parts)

    def _and(self, scope: Scope) -> Node:
        parts = [self._unary(scope)]
        while (kind := self.tokens[self.i].kind) == "AND" or kind in self._STARTS:
            if kind == "AND":
                self._operand_after(self._next())
            parts.append(self._unary(scope))
        return _join(And, parts)

    def _unary(self, scope: Scope) -> Node:
        if self.tokens[self.i].kind != "NOT":
            return self._primary(scope)
        tok = self._next()
        self._operand_after(tok)
        return Not(self._unary(scope), tok.pos)

    def _primary(self, scope: Scope) -> Node:
        tok = self._next()
        if tok.kind == "SCOPE":
            return self._scoped(tok, scope)
        if tok.kind == "(":
            if self.tokens[self.i].kind == ")":
                raise QueryError("empty parentheses", tok.pos, "put a term inside or remove them")
            node = self._or(scope)
            self._next()  # the ')': _operand_after and _check_structure guarantee it
            return node
        if tok.kind in ("WORD", "PHRASE"):
            return _term(tok, scope)
        raise QueryError(f"{tok.value} needs a term before it", tok.pos, f"remove {tok.value}")

    def _scoped(self, tok: _Tok, outer: Scope) -> Node:
        if outer is not Scope.TEXT:
            hint = f"'{tok.value}:' is inside '{outer.value}:'; use one scope per term"
            raise QueryError("scope inside a scope", tok.pos, hint)
        if self.tokens[self.i].kind not in ("WORD", "PHRASE", "(", "SCOPE"):
            hint = f'write {tok.value}:word, {tok.value}:"a phrase" or {tok.value}:(a OR b)'
            raise QueryError(f"'{tok.value}:' needs a term right after it", tok.pos, hint)
        return self._primary(Scope(tok.value))

    def _operand_after(self, op: _Tok) -> None:
        nxt = self.tokens[self.i]
        if nxt.kind in ("EOF", ")"):
            raise QueryError(f"nothing after {op.kind}", op.pos, f"add a term after {op.kind}")
        if nxt.kind in ("AND", "OR"):
            hint = f"remove one of {op.kind} and {nxt.kind}"
            raise QueryError(f"{nxt.kind} right after {op.kind}", nxt.pos, hint)


def _join(kind: type[And] | type[Or], parts: list[Node]) -> Node:
    flat: list[Node] = []
    for part in parts:
        flat.extend(part.children if isinstance(part, kind) else (part,))
    return flat[0] if len(flat) == 1 else kind(tuple(flat))


def _term(tok: _Tok, scope: Scope) -> Term:
    body, prefix = _split_star(tok)
    if scope is Scope.CATEGORY:
        return _category(body, prefix, tok.pos)
    words = tuple(document.tokenize(body))
    star = tok.pos + len(tok.value) - 1
    if prefix and len(words) > 1:
        hint = "write the words as a phrase, or put '*' on one word: tool* use"
        raise QueryError("'*' works on a single word only", star, hint)
    if prefix and (not words or len(words[0]) < MIN_PREFIX):
        hint = f"write at least {MIN_PREFIX} letters before '*', e.g. agent*"
        raise QueryError("prefix too short", star, hint)
    if not words:
        what = "empty phrase" if tok.kind == "PHRASE" else f"{tok.value!r} has no letters or digits"
        raise QueryError(what, tok.pos, "write at least one word to look for")
    if scope is Scope.AUTHOR:
        return Term(scope, words, tuple(map(document.fold_accents, words)), prefix, tok.pos)
    return Term(
        scope, words, words if prefix else tuple(map(document.word_key, words)), prefix, tok.pos
    )


def _split_star(tok: _Tok) -> tuple[str, bool]:
    star = tok.value.find("*")
    if star < 0:
        return tok.value, False
    if tok.kind == "PHRASE":
        hint = 'remove it, or write the word outside the quotes: "deep" learn*'
        raise QueryError("'*' does not work inside quotes", tok.pos + 1 + star, hint)
    if star != len(tok.value) - 1:
        raise QueryError("'*' can only end a word", tok.pos + star, "write it like agent*")
    return tok.value[:-1], True


def _category(body: str, prefix: bool, pos: int) -> Term:
    value = document.normalize(body).strip()
    if prefix and len(value) < MIN_PREFIX:
        raise QueryError("prefix too short", pos + len(body), "write it like cat:cs.*")
    if not (_CATEGORY_PREFIX if prefix else _CATEGORY).fullmatch(value):
        raise QueryError(f"'{body}' is not an arXiv category", pos, "write it like cat:cs.RO")
    archive, dot, subject = value.partition(".")
    shown = archive + dot + (subject.upper() if len(subject) == 2 else subject)  # cs.RO
    return Term(Scope.CATEGORY, (shown,), (value,), prefix, pos)


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
        return document.term_program(where, node.keys, node.prefix, node.label)
    if isinstance(node, Not):
        return document.none_of(compile_node(node.child))
    parts = tuple(map(compile_node, node.children))
    return document.all_of(parts) if isinstance(node, And) else document.any_of(parts)
