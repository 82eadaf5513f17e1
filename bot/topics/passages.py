"""Abstracts cut into sentences, and words made into matching stems, for extractive answers.

`split_sentences` cuts an abstract where a sentence ends: ".", "!" or "?" (and any closing
quotes or brackets after it), then white space, then something a sentence starts with (a
capital, a digit, `$`, a backslash, an opening bracket or quote). It never cuts

- after an abbreviation ("e.g.", "i.e.", "et al.", "Fig. 2", "Eq. (3)", "cf.", "vs.") or an
  initial ("J. Smith");
- inside inline LaTeX (`$...$`, `\\(...\\)`) or a URL;
- inside decimals ("3.5") or arXiv ids ("2401.12345"): there is no white space in them.

Arbitrary text is bounded: only the first `MAX_TEXT` characters of an abstract are read, and at
most `MAX_SENTENCES` sentences come out (text past the last cut stays in the last sentence).

`stem` is the key two words meet on: the plural rule of `bot.topics.document.word_key`
(agents -> agent, rewards -> reward), then one common suffix taken off ("training" -> "train",
"generation"/"generated"/"generative" -> "generat", "optimization"/"optimize" -> "optimiz",
"retrieval"/"retrieve" -> "retriev") and a doubled final consonant made single ("planning" ->
"plan"). A stem keeps at least `MIN_STEM` letters; it is a matching key, not a word.
"""

from __future__ import annotations

import math
import re
import unicodedata
from bisect import bisect_right
from functools import lru_cache

from bot.topics.document import tokenize, word_key

MAX_TEXT = 10_000
MAX_SENTENCES = 80
MIN_STEM = 4

INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
# A possible end: the mark, closing quotes/brackets, then white space.
_END = re.compile(r"[.!?]+[\"'”’)\]]*\s+")
_OPENERS = "$\\([\"'“‘"
# Spans a cut never falls in: inline and display math, \( \) math, URLs.
_PROTECTED = re.compile(
    r"\$\$[^$]{0,2000}\$\$|\$[^$]{1,1000}\$|\\\(.{0,1000}?\\\)|(?:https?://|www\.)\S*[^\s.,;:!?)\]\"'”’]",
    re.DOTALL,
)
_ABBREVIATED = (
    "e.g i.e eg ie al cf vs viz approx resp fig figs eq eqs sec secs sect tab tabs ref "
    "refs no nos vol pp dr mr mrs ms prof st jr inc corp ltd dept univ incl wrt w.r.t a.k.a "
    "u.s ph.d thm lem def prop cor alg ch chap app appx est ca"
)
_ABBREVIATIONS = frozenset(_ABBREVIATED.split())
_SUFFIXES = ("ization", "isation", "ation", "ition", "ing", "ion", "ive", "ed", "al", "ly")
_WORD = re.compile(r"[^\W_]+")


def split_sentences(text: str) -> tuple[str, ...]:
    """The sentences of `text`, white space collapsed, in order (see module doc)."""
    flat = " ".join(text[:MAX_TEXT].split())
    if not flat:
        return ()
    protected = [m.span() for m in _PROTECTED.finditer(flat)]
    found: list[str] = []
    start = 0
    for match in _END.finditer(flat):
        end = match.end()
        if end >= len(flat) or not _starts_sentence(flat[end]):
            continue
        if _inside(match.start(), protected) or _after_abbreviation(flat, match.start()):
            continue
        found.append(flat[start : match.end()].strip())
        start = end
        if len(found) == MAX_SENTENCES - 1:
            break
    found.append(flat[start:].strip())
    return tuple(s for s in found if s)


def _starts_sentence(char: str) -> bool:
    return char.isupper() or char.isdigit() or char in _OPENERS


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    """Whether `position` falls in one of `spans` (sorted, not overlapping)."""
    at = bisect_right(spans, (position, math.inf)) - 1
    return at >= 0 and spans[at][0] <= position < spans[at][1]


def _after_abbreviation(text: str, mark: int) -> bool:
    """Whether the mark at `mark` ends an abbreviation or an initial rather than a sentence."""
    if text[mark] != ".":
        return False
    space = text.rfind(" ", 0, mark)
    word = text[space + 1 : mark].lstrip("([\"'“‘")
    if len(word) == 1 and word.isalpha() and word.isupper():
        return True  # an initial: "J. Smith"
    return word.casefold() in _ABBREVIATIONS


@lru_cache(maxsize=1 << 12)
def stem(key: str) -> str:
    """The matching stem of a word key (`word_key` output); see module doc."""
    if not (key.isascii() and key.isalpha()) or len(key) <= MIN_STEM:
        return key
    base = key
    for suffix in _SUFFIXES:
        if key.endswith(suffix) and len(key) - len(suffix) >= MIN_STEM:
            base = key[: -len(suffix)]
            if suffix in ("ization", "isation"):
                base += "iz"
            elif suffix == "ation":
                base += "at"
            elif suffix == "ition":
                base += "it"
            break
    else:
        if key.endswith(("e", "y")) and len(key) > MIN_STEM:
            base = key[:-1]
    if len(base) > MIN_STEM and base[-1] == base[-2] and base[-1] not in "aeiou":
        base = base[:-1]
    return base


class _StemCache(dict[str, str]):
    """token -> `stem(word_key(token))`, computed on first use; emptied when it reaches
    `MAX_CACHED`, so that hostile text cannot grow it without end."""

    def __missing__(self, token: str) -> str:
        if len(self) >= MAX_CACHED:
            self.clear()
        found = self[token] = stem(word_key(token))
        return found


MAX_CACHED = 1 << 16
_STEMS = _StemCache()


def stems(text: str) -> tuple[str, ...]:
    """The stems of the words of `text`, in order."""
    return tuple(map(_STEMS.__getitem__, tokenize(text)))


def words_as_typed(text: str) -> list[str]:
    """The words of `text` as written (case kept), NFKC-normalised and without invisible
    characters: how a question's key words are shown back."""
    return _WORD.findall(INVISIBLE.sub("", unicodedata.normalize("NFKC", text)))
