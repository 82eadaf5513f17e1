"""The words of a question about papers that count, and how much each weighs.

A question's *terms* are its words minus stop-words, question-words ("which", "papers",
"anyone", "use", ...) and generic ones ("method", "good", "state of the art"), one per stem
(`bot.topics.passages.stem`: "agents" = "agent", "training" = "trained"). Each weighs its
inverse document frequency among arXiv abstracts (`word_frequencies.tsv`; a word missing from
that table of common words counts as in `UNKNOWN_SHARE` of them): "GRPO" weighs far more than
"model". At most `MAX_TERMS` count, the rarest; only the first `MAX_QUESTION_CHARS` characters
of a question are read. Operators and quotes of search syntax are not words: `"GRPO" AND
NEAR(agents, 3)` has the terms GRPO, NEAR and agents. Terms typed as one hyphenated word
("mixture-of-experts", "text-to-SQL") are one of the question's `compounds`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from itertools import pairwise

from bot.topics.document import word_key
from bot.topics.passages import stem, words_as_typed
from bot.topics.tagger import word_frequencies

MAX_TERMS = 12
MAX_QUESTION_CHARS = 2000
RARE_SHARE = 0.1
UNCOMMON_SHARE = 0.2
UNKNOWN_SHARE = 0.003  # a word missing from the frequency table (its rarest word: 0.0054)

_STOP_WORDS = """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing done during each
    either few for from further had has have having he her here hers him his how i if in
    into is it its itself just me more most my no nor not of off on once only or other our
    ours out over own same she should so some such than that the their theirs them then there
    these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours
    anyone anybody someone somebody people papers paper work works working worked use uses
    used using way ways kind kinds thing things something anything topic topics tell know
    find show shows list give get say says said talk talks talking about like lately recent
    recently new latest current currently exist existing any whats please question questions
    answer ask asking arxiv
    good best better great nice interesting important main idea ideas help helps instead
    technique techniques issue issues approach approaches method methods novel state art sota
    solve solving handle handling deal dealing well perform performs make makes look looks
    able"""
STOP_WORDS = frozenset(_STOP_WORDS.split())
_COMPOUND = re.compile(r"[^\W_]+(?:-[^\W_]+)+")


@dataclass(frozen=True, slots=True)
class QuestionTerm:
    """A word of the question that counts: its stem, weight (idf), the word as typed, and
    whether it is rare (`RARE_SHARE`) or uncommon (`UNCOMMON_SHARE`) in arXiv abstracts."""

    stem: str
    weight: float
    shown: str
    rare: bool
    uncommon: bool


def question_terms(question: str) -> tuple[QuestionTerm, ...]:
    """The informative words of `question` in its order: stop-words and question-words out,
    one per stem, the `MAX_TERMS` rarest kept."""
    frequencies = word_frequencies()
    terms: dict[str, QuestionTerm] = {}
    for item in content_words(question):
        if item is None:
            continue
        word, key = item
        share = frequencies.get(key, UNKNOWN_SHARE)
        weight = math.log(1 + (1 - share) / share)
        term = QuestionTerm(
            stem(key), weight, word[:40], share <= RARE_SHARE, share <= UNCOMMON_SHARE
        )
        terms.setdefault(term.stem, term)
    ordered = list(terms.values())
    rarest = sorted(range(len(ordered)), key=lambda i: (-ordered[i].weight, i))[:MAX_TERMS]
    return tuple(ordered[i] for i in sorted(rarest))


def content_words(question: str) -> list[tuple[str, str] | None]:
    """Each word of `question`: (the word as typed, its key), or None for a word that does
    not count (a stop-word, a letter, a short number)."""
    found: list[tuple[str, str] | None] = []
    for word in words_as_typed(question[:MAX_QUESTION_CHARS]):
        folded = word.casefold()
        key = word_key(folded)
        ignored = key in STOP_WORDS or folded in STOP_WORDS or len(key) < 2
        found.append(None if ignored or (key.isdigit() and len(key) < 3) else (word, key))
    return found


@dataclass(frozen=True, slots=True)
class Question:
    """A question's terms, the pairs of them it puts in a row, and their weight together."""

    terms: tuple[QuestionTerm, ...]
    pairs: tuple[tuple[tuple[str, str], float], ...]  # two terms in a row, the lesser weight
    total: float  # the terms' weight together
    compounds: tuple[frozenset[str], ...] = ()  # stems of terms typed as one hyphenated word

    @classmethod
    def of(cls, question: str) -> Question:
        terms = question_terms(question)
        weights = {term.stem: term.weight for term in terms}
        row = [stem(item[1]) if item else "" for item in content_words(question)]
        pairs = {
            (a, b): min(weights[a], weights[b])
            for a, b in pairwise(row)
            if a in weights and b in weights and a != b
        }
        compounds = []
        for typed in _COMPOUND.findall(question[:MAX_QUESTION_CHARS]):
            parts = frozenset(stem(item[1]) for item in content_words(typed) if item)
            if len(parts & weights.keys()) > 1:
                compounds.append(parts & weights.keys())
        return cls(terms, tuple(pairs.items()), sum(weights.values()), tuple(compounds))
