"""Tagging papers with many compiled queries at once.

A `Tagger` holds rules `(key, Query)` (key: a topic slug or a custom-query
key). Tagging a paper tokenises it once into a `Document`, asks an inverted
index which rules could possibly match, and runs only those rules' compiled
closures. The answer maps each matching key to its "why": the positive terms
that matched.

Pruning is exact, never approximate: every query that parses has a set of
*anchors*, terms at least one of which is present in any paper it matches:

- a term anchors itself (a phrase by its rarest word, a prefix by the prefix), in the
  title alone when the term is scoped to it (`ti:`), since titles are short;
- `a OR b` is anchored by the anchors of a and of b together;
- `a AND b` is anchored by the anchors of one of its parts (the one judged most
  selective: words before prefixes before categories, then the fewest papers
  expected to contain an anchor, by the word frequencies in
  `word_frequencies.tsv`: a prefix as often as the words it starts together, a
  title word `TITLE_SHARE` as often as the same word in the abstract);
- `NOT a` has none, which is why queries made only of negations are refused.

A rule is evaluated only when one of its anchors occurs in the paper, so the
result always equals running every rule (see `brute_force`).

A tagger may hold a second stage (`bot.topics.second_stage`): the rule tags of the topics
that have one are then kept only when the stage agrees, in `tag` and `brute_force` alike,
so everything that tags through a `Tagger` (ingest, retag, the benches) tags the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from bot.domain import Paper, Topic
from bot.topics.document import AUTHORS, TEXT, TITLE, Document
from bot.topics.programs import Program
from bot.topics.query import compiled_query
from bot.topics.query_tree import CATALOG_LIMITS, MIN_PREFIX, And, Node, Not, Query, Scope, Term

if TYPE_CHECKING:
    from bot.topics.second_stage import SecondStage

Anchor = tuple[str, str]  # (kind, key); kinds are the keys of _COST
Tags = dict[str, tuple[str, ...]]

# How unselective an anchor kind is: arXiv categories match whole daily listings.
_COST = {
    "word": 1,
    "title": 1,
    "author": 1,
    "prefix": 3,
    "title*": 3,
    "author*": 3,
    "cat": 50,
    "cat*": 100,
}
_PREFIX_KINDS = ("prefix", "title*", "author*")
_EXACT_KINDS = ("word", "title", "author", "cat")
_FIELD_OF = {"word": TEXT, "prefix": TEXT, "title": TITLE, "title*": TITLE}
_FIELD_OF |= {"author": AUTHORS, "author*": AUTHORS}

#: How much rarer a word is in titles than in abstracts, roughly (a title has a tenth of
#: an abstract's words); it only steers which anchors are chosen, never what matches.
TITLE_SHARE = 0.15


def anchors(node: Node) -> frozenset[Anchor]:
    """The anchors of `node`; empty when it cannot be pruned (it must always run)."""
    if isinstance(node, Term):
        return frozenset({_anchor(node)})
    if isinstance(node, Not):
        return frozenset()
    found = [anchors(child) for child in node.children]
    if isinstance(node, And):
        usable = [option for option in found if option]
        return min(usable, key=_cost) if usable else frozenset()
    return frozenset().union(*found) if all(found) else frozenset()


def _anchor(term: Term) -> Anchor:
    star = "*" if term.prefix else ""
    if term.scope is Scope.CATEGORY:
        return "cat" + star, term.keys[0]
    rarest = min(term.keys, key=lambda key: (_frequency(key), -len(key)))
    if term.scope is Scope.AUTHOR:
        return "author" + star, rarest
    if term.scope is Scope.TITLE:
        return "title" + star, rarest
    return ("prefix" if term.prefix else "word"), rarest


def _cost(option: frozenset[Anchor]) -> tuple[int, float]:
    """(how unselective the worst kind is, expected share of papers with an anchor)."""
    return max(_COST[kind] for kind, _ in option), sum(map(_share, option))


def _share(anchor: Anchor) -> float:
    """Expected share of papers that have `anchor` (categories: see `_COST` instead)."""
    kind, key = anchor
    share = _prefix_frequency(key) if kind in _PREFIX_KINDS else _frequency(key)
    return share * TITLE_SHARE if kind in ("title", "title*") else share


@cache
def word_frequencies() -> dict[str, float]:
    """Word key -> share of abstracts containing it (`word_frequencies.tsv`): the common
    words of arXiv's writing."""
    text = resources.files("bot.topics").joinpath("word_frequencies.tsv").read_text("utf-8")
    rows = (line.split("\t") for line in text.splitlines() if line and not line.startswith("#"))
    return {word: float(share) for word, share in rows}


def _frequency(word: str) -> float:
    """Share of abstracts containing `word`; rare words (not in the table) count as 0.001."""
    return word_frequencies().get(word, 0.001)


@cache
def _prefix_frequency(prefix: str) -> float:
    """Share of abstracts containing a word that starts with `prefix`, at most: the shares
    of the table's words that do, summed (capped at 1); 0.001 when none does."""
    total = sum(share for word, share in word_frequencies().items() if word.startswith(prefix))
    return min(total, 1.0) or 0.001


class Tagger:
    """Matches many rules against papers; see the module docstring."""

    def __init__(
        self, rules: Iterable[tuple[str, Query]], stage: SecondStage | None = None
    ) -> None:
        self._stage = stage
        self._keys: list[str] = []
        self._seen: set[str] = set()
        self._programs: list[Program] = []
        self._always: list[int] = []
        self._index: dict[str, dict[str, list[int]]] = {kind: {} for kind in _COST}
        for key, query in rules:
            self._add(key, query)
        self._by_word = {kind: _PrefixedBy(self._index[kind]) for kind in _PREFIX_KINDS}
        self._exact = {
            kind: (self._index[kind], frozenset(self._index[kind])) for kind in _EXACT_KINDS
        }

    @classmethod
    def from_topics(cls, topics: Iterable[Topic]) -> Tagger:
        """Rules from catalog topics that have one; raises `QueryError` on a bad rule."""
        rules = (t for t in topics if t.rule)
        return cls((t.slug, compiled_query(t.rule, CATALOG_LIMITS)) for t in rules)

    def _add(self, key: str, query: Query) -> None:
        if key in self._seen:
            raise ValueError(f"duplicate rule key {key!r}")
        self._seen.add(key)
        rule = len(self._keys)
        self._keys.append(key)
        self._programs.append(query.program)
        found = anchors(query.root)
        if not found:
            self._always.append(rule)
        for kind, value in found:
            self._index[kind].setdefault(value, []).append(rule)

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self._keys)

    def tag(self, item: Paper | Document) -> Tags:
        """Key -> why, for every rule matching `item`, in rule order."""
        doc = _document(item)
        tags: Tags = {}
        for rule in self._candidates(doc):
            why: list[str] = []
            if self._programs[rule](doc, why):
                tags[self._keys[rule]] = tuple(dict.fromkeys(why))
        return self._stage.review(doc, tags) if self._stage else tags

    def tag_many(self, items: Iterable[Paper | Document]) -> list[Tags]:
        """`tag` for each item, in order."""
        return [self.tag(item) for item in items]

    def brute_force(self, item: Paper | Document) -> Tags:
        """What `tag` returns, computed by running every rule (for tests and checks)."""
        doc = _document(item)
        tags: Tags = {}
        for key, program in zip(self._keys, self._programs, strict=True):
            why: list[str] = []
            if program(doc, why):
                tags[key] = tuple(dict.fromkeys(why))
        return self._stage.review(doc, tags) if self._stage else tags

    def candidates(self, item: Paper | Document) -> tuple[str, ...]:
        """Keys of the rules the index lets through for `item` (they may still not match)."""
        return tuple(self._keys[rule] for rule in self._candidates(_document(item)))

    def _candidates(self, doc: Document) -> list[int]:
        hits = set(self._always)
        exact = self._exact
        for kind in ("word", "title", "author"):
            _exact(hits, exact[kind], doc.words[_FIELD_OF[kind]])
        _exact(hits, exact["cat"], doc.categories)
        for kind in _PREFIX_KINDS:
            self._prefixed(hits, kind, doc, _FIELD_OF[kind])
        for prefix, rules in self._index["cat*"].items():
            if doc.has_category_prefix(prefix):
                hits.update(rules)
        return sorted(hits)

    def _prefixed(self, hits: set[int], kind: str, doc: Document, field: int) -> None:
        by_word = self._by_word[kind]
        if by_word.heads:
            by_word.add_hits(hits, doc.raw(field))


def _document(item: Paper | Document) -> Document:
    return item if isinstance(item, Document) else Document.from_paper(item)


class _PrefixedBy:
    """Which rules a paper's words reach through prefix anchors of one kind.

    Each word met is checked once against the prefixes (grouped by their first MIN_PREFIX
    characters, which every prefix has) and remembered, with the rules it reaches when it
    reaches any (few do). A paper then costs two set operations done in C: its words not
    met before, and its words that reach rules. Everything is forgotten when
    `MAX_REMEMBERED_WORDS` words are known, so hostile text cannot grow it without end."""

    def __init__(self, prefixes: dict[str, list[int]]) -> None:
        self.heads: dict[str, list[tuple[str, list[int]]]] = {}
        for prefix, rules in prefixes.items():
            self.heads.setdefault(prefix[:MIN_PREFIX], []).append((prefix, rules))
        self._known: set[str] = set()
        self._reaching: set[str] = set()
        self._rules: dict[str, tuple[int, ...]] = {}

    def add_hits(self, hits: set[int], words: frozenset[str]) -> None:
        # Local references: a thread that starts afresh replaces the memory instead of
        # emptying it, so a paper tagged meanwhile in another thread keeps a whole view.
        known, reaching, rules = self._known, self._reaching, self._rules
        new = words.difference(known)
        if new:
            if len(known) + len(new) > MAX_REMEMBERED_WORDS:
                known, reaching, rules = set(), set(), {}
                self._known, self._reaching, self._rules = known, reaching, rules
                new = set(words)  # forget all, then learn this paper's words afresh
            self._learn(new, known, reaching, rules)
        for word in words.intersection(reaching):
            hits.update(rules[word])

    def _learn(
        self,
        words: set[str],
        known: set[str],
        reaching: set[str],
        rules: dict[str, tuple[int, ...]],
    ) -> None:
        """Remember `words`: a word is marked known only after its rules are stored."""
        for word in words:
            heads = self.heads.get(word[:MIN_PREFIX], ())
            found = tuple(r for p, group in heads if word.startswith(p) for r in group)
            if found:
                rules[word] = found
                reaching.add(word)
        known.update(words)


MAX_REMEMBERED_WORDS = 1 << 16
_Exact = tuple[dict[str, list[int]], frozenset[str]]  # value -> rules, and the values


def _exact(hits: set[int], index: _Exact, present: frozenset[str]) -> None:
    rules, values = index
    for value in present.intersection(values):  # two sets: the smaller one is walked
        hits.update(rules[value])
