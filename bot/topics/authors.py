"""Followed authors: a name as a person types it, and whether a paper's author is that person.

`parse_author("Sergey Levine @Berkeley")` gives an `AuthorPattern`; `AuthorPattern.matches`
compares it with one name as a paper gives it. Both sides are read the same way
(`_read_name`): LaTeX shown as Unicode, zero-width characters dropped, diacritics folded
("Pérez" = "Perez"), case ignored, apostrophes dropped inside a word ("O'Brien" = "OBrien"),
hyphens and spaces both separating ("Pérez-García" = "Pérez García"), a "Last, First" order
read as such, and "Jr."/"III" left out. The family name is the last word with the particles
before it ("van der Waals"), unless a comma says otherwise.

Two names are the same person when the followed family name occurs in the paper's name,
the given name before it agrees, and nothing but a hyphen-joined second family name follows
it. Given names agree word by word: the first must be present on both sides, an initial
agrees with any word of that letter ("S." = "Sergey"), two words must be equal (after a
small transliteration fold: "Jürgen" = "Juergen", "Sergey" = "Sergei"); a middle name on
one side only is fine ("Sergey V. Levine" = "Sergey Levine"), a different one is not
("Sergey A. Levine"), and the second half of a hyphenated given name is part of it
("Chen-Yu Wei" is not "Chen Wei"). So "Sergey Levine" never matches "Yoav Levine" or
"Semyon Levine", and "S. Levine" never matches "Yoav Levine".

`@affiliation` narrows a pattern to papers whose matched author's affiliation contains it
(fuzzily, rapidfuzz); an author given without affiliation still matches. Pure.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz

from bot.domain import Author, Paper
from bot.topics.latex import display

MAX_AUTHOR_CHARS = 200
MAX_NAME_WORDS = 10
AFFILIATION_SCORE = 85  # rapidfuzz partial_ratio, 0-100, for "@Berkeley" in an affiliation

_INVISIBLE = dict.fromkeys(
    map(ord, "\u00ad\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u202a\u202b\u202c\u202d\u202e"),
    None,
) | dict.fromkeys(range(0x2066, 0x206A), None)  # soft hyphen, zero-width and direction marks
_ASIDE = re.compile(r"\([^)]*\)")  # "Sergey Levine (UC Berkeley)": not part of the name
_APOSTROPHES = re.compile(r"(?<=\w)['’`´ʼ](?=\w)")
_SPLIT = re.compile(r"[^\w.-]+|_")
_PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "del", "della", "di", "da", "dos", "das", "du"}
    | {"le", "la", "ten", "ter", "bin", "ibn", "al", "el", "zu"}
)
_VOWELS = frozenset("AEIOUY")  # "JP" is two initials, "AI" or "LI" a name
_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
_ENDINGS = (("iy", "i"), ("ey", "ei"), ("y", "i"))  # "Dmitriy" = "Dmitri", "Sergey" = "Sergei"
_UMLAUTS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue"})


class AuthorNameError(ValueError):
    """A followed name that cannot be a person's name; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class Word:
    key: str  # folded: lowercase ASCII letters and digits
    initial: bool  # "S." or "S"
    joined: bool = False  # hyphen-joined to the word before it ("Chen-Yu": "yu")
    text: str = ""  # lowercase, diacritics kept: what the canonical form writes
    alt: str = ""  # the German spelling of a word with an umlaut ("jürgen": "juergen")


@dataclass(frozen=True, slots=True)
class Name:
    given: tuple[Word, ...]
    family: tuple[Word, ...]  # empty when no comma said where it starts
    words: tuple[Word, ...]  # every word in "First Last" order


def fold(text: str) -> str:
    """Lowercase ASCII: LaTeX shown, diacritics and invisible characters gone."""
    if "\\" in text or "{" in text:
        text = display(text)
    text = unicodedata.normalize("NFKD", text.translate(_INVISIBLE))
    text = "".join(c for c in text if not unicodedata.combining(c))
    return text.replace("ł", "l").replace("Ł", "L").replace("ø", "o").replace("ı", "i").casefold()


def _words(part: str, original: str) -> list[Word]:
    """The words of one part of a name, initials marked ("J.P." and "JP" are two)."""
    words: list[Word] = []
    raw_parts = _SPLIT.split(_APOSTROPHES.sub("", original))
    for raw in (r for r in raw_parts if r.strip(".-")):
        joined = False
        for piece in raw.split("-"):
            text = piece.strip(".")
            if not text:
                continue
            letters = fold(text)
            glued = text.isupper() and 1 < len(text) <= 3 and not _VOWELS & set(text)
            if glued or "." in text:  # "JP", "J.P."
                bits = [fold(b) for b in re.split(r"[.]|(?<=[A-Z])(?=[A-Z])", text) if b]
                words += [Word(b, len(b) == 1, joined and i == 0) for i, b in enumerate(bits)]
            elif letters.isalnum():
                words.append(_word(text, letters, piece.endswith("."), joined))
            joined = True
    return [w for w in words if w.key not in _SUFFIXES]


def _word(text: str, key: str, abbreviated: bool, joined: bool) -> Word:
    """One written-out word ("Jürgen", or "Ch." when `abbreviated`)."""
    kept = unicodedata.normalize("NFC", text).casefold()
    alt = fold(kept.translate(_UMLAUTS)) if kept.translate(_UMLAUTS) != kept else ""
    return Word(key, len(key) == 1 or abbreviated, joined, kept, alt)


@lru_cache(maxsize=1 << 16)  # names recur: the same people write many papers
def _read_name(text: str) -> Name:
    """A name in "First Middle Last" or "Last, First Middle" order."""
    if "\\" in text or "{" in text:
        text = display(text)
    text = " ".join(_ASIDE.sub(" ", text.translate(_INVISIBLE)).split())
    if "," in text:
        family_text, _, given_text = text.partition(",")
        family = tuple(_words(family_text, family_text))
        given = tuple(_words(given_text, given_text))
        if family and given:
            return Name(given, family, given + family)
        text = family_text + " " + given_text
    words = tuple(_words(text, text))
    return Name((), (), words)


def _split_family(name: Name) -> tuple[tuple[Word, ...], tuple[Word, ...]]:
    """(given, family) of a followed name: a comma's split, else the last word (with the
    words hyphen-joined to it) and the particles before it."""
    if name.family:
        return name.given, name.family
    words = name.words
    start = len(words) - 1
    while start > 1 and words[start].joined:  # "Rodríguez-Muñoz"
        start -= 1
    while start > 1 and words[start - 1].key in _PARTICLES and not words[start - 1].initial:
        start -= 1
    return words[:start], words[start:]


def _translit(key: str) -> str:
    """A Russian name's transliterations alike: "Alexey" and "Aleksei" give "aleksei"."""
    key = key.replace("x", "ks")
    for old, new in _ENDINGS:
        if key.endswith(old):
            return key[: -len(old)] + new
    return key


def _same_word(a: Word, b: Word) -> bool:
    if a.initial or b.initial:
        return a.key[0] == b.key[0]
    if {a.key, a.alt} & {b.key, b.alt} - {""}:
        return True  # "Jürgen" = "Juergen" = "Jurgen", but "Yue" is not "Yu"
    return _translit(a.key) == _translit(b.key)


def _required(words: tuple[Word, ...], k: int, other: tuple[Word, ...]) -> bool:
    """Must word k be present on the other side? The second half of a hyphenated given
    name must, unless the other side gave that name as one initial ("C." for "Chen-Yu")."""
    beside = k - 1 < len(other) and not other[k - 1].initial
    return words[k].joined and not words[k - 1].initial and beside


def given_agree(mine: tuple[Word, ...], theirs: tuple[Word, ...]) -> bool:
    """Do two given names (first, middles) belong to one person? (module docstring)"""
    if not mine or not theirs:
        return False
    spelled = "".join(w.key for w in mine) == "".join(w.key for w in theirs)
    if spelled and not any(w.initial for w in mine + theirs):
        return True  # "Chenyu" = "Chen-Yu"
    named = [w for w in mine if not w.initial], [w for w in theirs if not w.initial]
    if all(named) and not any(_same_word(a, b) for a in named[0] for b in named[1]):
        return False  # "Z. George Xue" goes by George: he is not "Zack Xue"
    shared = min(len(mine), len(theirs))
    if not all(_same_word(a, b) for a, b in zip(mine, theirs, strict=False)):
        return False
    longer, shorter = (mine, theirs) if len(mine) > len(theirs) else (theirs, mine)
    return not any(_required(longer, k, shorter) for k in range(shared, len(longer)))


def _spelled(words: tuple[Word, ...]) -> str:
    """Words as `_words` reads them back: "chen-yu", "s. v.", "ch." for an abbreviation."""
    text = ""
    for word in words:
        text += ("-" if word.joined else " ") if text else ""
        text += (word.text or word.key) + ("." if word.initial else "")
    return text


@dataclass(frozen=True, slots=True)
class AuthorPattern:
    """A followed author: the given and family name words, and an affiliation or ""."""

    given: tuple[Word, ...]
    family: tuple[Word, ...]
    affiliation: str = ""

    @property
    def canonical(self) -> str:
        """The stored form, "levine, sergey v @berkeley": one per person, whatever the
        spelling typed, and `parse_author` reads it back to this same pattern."""
        text = f"{_spelled(self.family)}, {_spelled(self.given)}"
        return text + (f" @{self.affiliation}" if self.affiliation else "")

    @property
    def tag(self) -> str:
        """The paper tag of this pattern: "a:" and a hash of the canonical form."""
        return "a:" + hashlib.sha1(self.canonical.encode()).hexdigest()[:16]

    @property
    def anchor(self) -> str:
        """The family name's first word: a paper's author is compared only when one of
        its words is this (`AuthorIndex`)."""
        return self.family[0].key

    def matches(self, author: Author | str) -> bool:
        """Is `author` (a paper's author, or just a name) this person?"""
        name = author if isinstance(author, str) else author.name
        if not self._name_matches(_read_name(name)):
            return False
        if not self.affiliation or isinstance(author, str) or not author.affiliations:
            return True
        return any(self._at(place) for place in author.affiliations)

    def _at(self, place: str) -> bool:
        return fuzz.partial_ratio(self.affiliation, fold(place)) >= AFFILIATION_SCORE

    def _name_matches(self, name: Name) -> bool:
        size = len(self.family)
        keys = [w.key for w in self.family]
        if name.family:  # "Last, First": the followed family name within the family part
            family = [w.key for w in name.family]
            runs = range(len(family) - size + 1)
            return any(family[i : i + size] == keys for i in runs) and given_agree(
                self.given, name.given
            )
        words = name.words
        for start in range(1, len(words) - size + 1):
            if [w.key for w in words[start : start + size]] != keys:
                continue
            after = words[start + size :]
            if all(w.joined and not w.initial for w in after) and given_agree(
                self.given, words[:start]
            ):
                return True
        return False


def parse_author(text: str) -> AuthorPattern:
    """The pattern of a followed name, "First Last" or "Last, First", with an optional
    "@affiliation"; `AuthorNameError` (one line) when it cannot be a person's name."""
    name_text, at, affiliation = text.partition("@")
    name_text = name_text.translate(_INVISIBLE).strip().strip("\"'“”")
    if len(text) > MAX_AUTHOR_CHARS:
        raise AuthorNameError(f"That name is too long: at most {MAX_AUTHOR_CHARS} characters.")
    if not name_text.strip():
        raise AuthorNameError("Which author? Give a name, e.g. Sergey Levine.")
    affiliation = " ".join(fold(affiliation).split())
    if at and not any(c.isalnum() for c in affiliation):
        raise AuthorNameError("After @ give an affiliation, e.g. @Berkeley.")
    name = _read_name(name_text)
    if len(name.words) > MAX_NAME_WORDS:
        raise AuthorNameError(f"That is not a name: at most {MAX_NAME_WORDS} words.")
    given, family = _split_family(name)
    if not family or family[-1].initial or len("".join(w.key for w in family)) < 2:
        raise AuthorNameError("Give the author's family name in full, e.g. S. Levine.")
    if not given:
        raise AuthorNameError("Give a first name or initial too, e.g. Sergey Levine or S. Levine.")
    return AuthorPattern(given, family, affiliation)


def _letters(word: Word) -> frozenset[str]:
    """The first letters a word agrees on: its own, and its transliteration's ("x": "k")."""
    return frozenset({word.key[0], _translit(word.key)[0]})


class AuthorIndex:
    """Many followed authors matched against papers at once: a paper's author is compared
    only with the patterns whose family name's first word is one of the author's words and
    whose first given name can agree with the author's (same first letter, `_letters`)."""

    def __init__(self, patterns: Iterable[AuthorPattern]) -> None:
        self._by_anchor: dict[str, dict[str, dict[str, AuthorPattern]]] = {}
        self._tags: set[str] = set()
        for pattern in patterns:
            self._tags.add(pattern.tag)
            by_letter = self._by_anchor.setdefault(pattern.anchor, {})
            for letter in _letters(pattern.given[0]):
                by_letter.setdefault(letter, {}).setdefault(pattern.tag, pattern)

    def __len__(self) -> int:
        return len(self._tags)

    def tag(self, paper: Paper) -> dict[str, tuple[str, ...]]:
        """Tag -> (the author's name as the paper gives it,) for every pattern matched."""
        found: dict[str, tuple[str, ...]] = {}
        for author in paper.authors:
            name = _read_name(author.name)
            anchors = {w.key for w in name.words} & self._by_anchor.keys()
            if not anchors:
                continue
            letters = _letters((name.given or name.words)[0])
            for anchor in anchors:
                for letter in letters & self._by_anchor[anchor].keys():
                    for tag, pattern in self._by_anchor[anchor][letter].items():
                        if tag not in found and pattern.matches(author):
                            found[tag] = (_shown(author.name),)
        return found


def _shown(name: str) -> str:
    """A paper's author name as `/why` quotes it: tidied, and cut if it is very long."""
    return " ".join(name.translate(_INVISIBLE).split())[:MAX_AUTHOR_CHARS]


def author_patterns(targets: Iterable[str]) -> list[AuthorPattern]:
    """The patterns of stored (canonical) names; one no longer readable is left out."""
    patterns = []
    for target in targets:
        try:
            patterns.append(parse_author(target))
        except AuthorNameError:
            continue
    return patterns
