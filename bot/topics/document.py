"""Text normalisation shared by paper documents and topic queries.

Papers and queries go through the same steps, so a query word and a paper word
are equal exactly when a reader would expect them to be:

1. NFKC normalisation: full-width letters, ligatures ("ﬁ") and compatibility
   forms become their plain equivalents;
2. invisible characters are removed: zero-width spaces and joiners, soft
   hyphens, byte-order marks and bidirectional controls ("agent\\u200bic" is
   "agentic");
3. case folding ("LLM" = "llm", "Straße" = "strasse");
4. splitting into word tokens on every character that is not a letter or a
   digit: "tool-use" is the two tokens "tool" "use", and "RL" never matches
   inside "URL". LaTeX markup and emoji simply fall apart into tokens or vanish.

Plural normalisation (`word_key`) is a small, deterministic rule applied to
both sides, on lower-case ASCII alphabetic tokens of at least 4 letters (so
"gas", "has" and "its" are never touched), after a short exception table
(`EXCEPTIONS`, e.g. bias/biases, lens, news, series, analyses -> analysis):

- words ending in "ss" (class, process), "sis"/"xis" (analysis, axis) or,
  when 5+ letters long, "us" (corpus, status) are kept as they are;
- "-ies" becomes "-y" in words of 5+ letters (policies -> policy; ties -> tie);
- "-sses", "-shes", "-ches", "-xes", "-zes" lose "es" (searches -> search);
- any other final "s" is dropped (agents -> agent, llms -> llm, apis -> api);
- finally a silent "e" after ch/sh/x/z is dropped, so that singular and plural
  meet: "cache" and "caches" both become "cach", "size"/"sizes" "siz".

The result is a matching key, not necessarily an English word. Author names are
never plural-normalised; they are accent-folded instead ("Schölkopf" =
"Scholkopf").

A `Document` is a paper tokenised once; the closures a compiled query is made
of match it (`bot.topics.programs`). Everything here is linear in the size of
the text.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.domain import Paper

# Field numbers: token tuples exist for the first three, word sets for all four.
TITLE, ABSTRACT, AUTHORS, TEXT = 0, 1, 2, 3
# Not a field: the heads of the title's words (`Document.words[TITLE_HEADS]`).
TITLE_HEADS = 4
# Letters of a word's head: the shortest prefix a query may look for (`agent*`: "age").
HEAD = 3

_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_WORD = re.compile(r"[^\W_]+")
# ASCII bytes -> themselves lower-cased when a letter or digit, else a space.
_ASCII_WORDS = bytes(ord(chr(c).lower()) if chr(c).isalnum() else 32 for c in range(128)) + bytes(
    range(128, 256)
)
_SEPARATOR = ""  # placed between two authors' tokens so that phrases never span them

EXCEPTIONS: dict[str, str] = {
    "news": "news",
    "lens": "lens",
    "lenses": "lens",
    "series": "series",
    "species": "species",
    "bias": "bias",
    "biases": "bias",
    "alias": "alias",
    "aliases": "alias",
    "atlas": "atlas",
    "atlases": "atlas",
    "canvas": "canvas",
    "canvases": "canvas",
    "gases": "gas",
    "analyses": "analysis",
    "hypotheses": "hypothesis",
    "syntheses": "synthesis",
    "theses": "thesis",
    "axes": "axis",
    "viruses": "virus",
    "focuses": "focus",
    "statuses": "status",
    "menus": "menu",
    "movies": "movie",
    "cookies": "cookie",
    "indices": "index",
    "matrices": "matrix",
    "vertices": "vertex",
}
_KEEP_ENDINGS = ("ss", "sis", "xis")
_SIBILANT_PLURALS = ("sses", "shes", "ches", "xes", "zes")
_SILENT_E = ("che", "she", "xe", "ze")


def normalize(text: str) -> str:
    """NFKC-normalise, drop invisible characters and case-fold `text`."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).casefold()


def tokenize(text: str) -> list[str]:
    """Split normalised `text` into word tokens (runs of letters and digits)."""
    if text.isascii():  # fast path, same result: ASCII is already NFKC and has no invisibles
        return text.encode().translate(_ASCII_WORDS).decode().split()
    return _WORD.findall(normalize(text))


def fold_accents(token: str) -> str:
    """Strip combining marks ("schölkopf" -> "scholkopf"); used for author names."""
    if token.isascii():
        return token
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


class _KeyCache(dict[str, str]):
    """token -> `word_key(token)`, computed on first use. A dict's own lookup, mapped over a
    paper's tokens, costs less than a cached function call per token; the cache is emptied
    when it reaches `MAX_CACHED_KEYS`, so hostile text cannot grow it without end."""

    def __missing__(self, token: str) -> str:
        if len(self) >= MAX_CACHED_KEYS:
            self.clear()
        key = self[token] = _word_key(token)
        return key


MAX_CACHED_KEYS = 1 << 16
_KEYS = _KeyCache()


def word_key(token: str) -> str:
    """The plural-normalised matching key of a lower-case token (see module doc)."""
    return _KEYS[token]


def _word_key(token: str) -> str:
    known = EXCEPTIONS.get(token)
    if known is not None:
        return known
    if len(token) < 4 or not (token.isascii() and token.isalpha()):
        return token
    key = _singular(token) if token.endswith("s") else token
    if key.endswith(_SILENT_E) and len(key) >= 4:
        key = key[:-1]
    return key


def _singular(token: str) -> str:
    if token.endswith(_KEEP_ENDINGS) or (token.endswith("us") and len(token) >= 5):
        return token
    if token.endswith("ies") and len(token) >= 5:
        return token[:-3] + "y"
    if token.endswith(_SIBILANT_PLURALS):
        return token[:-2]
    return token[:-1]


def author_keys(name: str) -> tuple[str, ...]:
    """Matching keys of an author name: accent-folded tokens, no plural rule."""
    if name.isascii():
        return tuple(tokenize(name))
    return tuple(fold_accents(token) for token in tokenize(name))


class Document:
    """A paper tokenised once, ready to be matched by many queries.

    `tokens[f]` is the key sequence of field f (TITLE, ABSTRACT, AUTHORS; the
    author sequence separates authors with ""), `words[f]` its set (with TEXT =
    title + abstract, and TITLE_HEADS the first HEAD letters of the title's tokens,
    which a title prefix cannot match without), `raw(f)` the set of tokens before
    plural normalisation (used for `agent*` prefixes) and `categories` the lower-cased
    categories.
    """

    __slots__ = ("_raw", "_raw_tokens", "_sorted", "categories", "tokens", "words")

    def __init__(
        self,
        title: str = "",
        abstract: str = "",
        authors: Iterable[str] = (),
        categories: Iterable[str] = (),
    ) -> None:
        raw_title, raw_abstract = tokenize(title), tokenize(abstract)
        author_tokens = _join_authors(authors)
        title_keys = tuple(map(_KEYS.__getitem__, raw_title))
        abstract_keys = tuple(map(_KEYS.__getitem__, raw_abstract))
        self.tokens = (title_keys, abstract_keys, author_tokens)
        title_set, abstract_set = frozenset(title_keys), frozenset(abstract_keys)
        author_set = frozenset(author_tokens) - {_SEPARATOR}
        heads = frozenset([token[:HEAD] for token in raw_title])
        self.words = (title_set, abstract_set, author_set, title_set | abstract_set, heads)
        # Title and abstract apart are needed only by ti:/abs: prefixes: made on first use.
        self._raw: list[frozenset[str] | None] = [None, None, author_set, None]
        self._raw_tokens = (raw_title, raw_abstract)
        self.categories = frozenset(c.strip().lower() for c in categories)
        self._sorted: list[list[str] | None] = [None, None, None, None]

    @classmethod
    def from_paper(cls, paper: Paper) -> Document:
        return cls(paper.title, paper.abstract, paper.author_names, paper.categories)

    def has_phrase(self, field: int, keys: tuple[str, ...]) -> bool:
        """Whether `keys` occur as consecutive tokens in `field` (TEXT: title or abstract)."""
        if field == TEXT:
            return self._has_phrase_in(TITLE, keys) or self._has_phrase_in(ABSTRACT, keys)
        return self._has_phrase_in(field, keys)

    def has_prefix(self, field: int, prefix: str) -> bool:
        """Whether some token of `field`, before plural normalisation, starts with `prefix`."""
        words = self._sorted[field]
        if words is None:
            words = self._sorted[field] = sorted(self.raw(field))
        at = bisect_left(words, prefix)  # the first word >= prefix starts with it, if any does
        return at < len(words) and words[at].startswith(prefix)

    def raw(self, field: int) -> frozenset[str]:
        """The tokens of `field` before plural normalisation (for prefixes)."""
        words = self._raw[field]
        if words is None:
            title, abstract = self._raw_tokens
            tokens = title + abstract if field == TEXT else self._raw_tokens[field]
            words = self._raw[field] = frozenset(tokens)
        return words

    def has_category_prefix(self, prefix: str) -> bool:
        return any(category.startswith(prefix) for category in self.categories)

    def _has_phrase_in(self, field: int, keys: tuple[str, ...]) -> bool:
        if not self.words[field].issuperset(keys):
            return False
        tokens, first, size = self.tokens[field], keys[0], len(keys)
        start = -1
        while True:  # tuple.index scans in C: cheaper than building a position index
            try:
                start = tokens.index(first, start + 1)
            except ValueError:
                return False
            if tokens[start : start + size] == keys:
                return True


def _join_authors(names: Iterable[str]) -> tuple[str, ...]:
    tokens: list[str] = []
    for name in names:
        if tokens:
            tokens.append(_SEPARATOR)
        tokens.extend(author_keys(name))
    return tuple(tokens)
