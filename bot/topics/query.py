"""The topic query language: tokenizer, parser and canonical form (the tree it builds, its
limits and errors are in `bot.topics.query_tree`).

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

import re
from functools import lru_cache
from typing import NamedTuple

from bot.topics import document
from bot.topics.query_tree import (
    MAX_QUERY_CHARS,
    MIN_PREFIX,
    TYPED_LIMITS,
    And,
    Limits,
    Node,
    Not,
    Or,
    Query,
    QueryError,
    Scope,
    Term,
    compile_node,
    unanchored,
)

__all__ = ["canonical", "parse_query"]

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
_SCOPE_NAMES = {"title": "ti", "abstract": "abs", "author": "au", "category": "cat"}


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


#: Parsed queries remembered (a `Query` is immutable): followed queries are read again at every
#: ingest, and loading a catalog checks each rule that its tagger then compiles.
PARSED_CACHE = 8192


@lru_cache(maxsize=PARSED_CACHE)
def compiled_query(text: str, limits: Limits = TYPED_LIMITS) -> Query:
    """`parse_query`, remembered; a `QueryError` is raised each time (errors are not kept)."""
    return parse_query(text, limits)


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
