"""An extractive answer to a question about a topic: the abstract sentences that answer it best.

`answer(question, papers, scores=None, given="")` takes the papers a search index retrieved
for the question, best first (up to about 30), and the name of the topic they were asked
within if any (`given`), and returns an `Answer`: up to `MAX_SENTENCES`
sentences (at least `MIN_SENTENCES` when that many pass the relevance floor), at most
`PER_PAPER` from one paper, grouped by paper in the order of each paper's best sentence (a
group's sentences keep their abstract order), and the question's key words.

How sentences are scored (all pure, no I/O; deterministic, ties broken by arXiv id):

- The question's *terms* and their weights (inverse document frequency among arXiv abstracts)
  come from `bot.topics.ask_terms`: stop-words, question-words and generic words do not count.
- A question's term is also found in another form of its word that the light stemmer of
  `bot.topics.passages` leaves apart: a word of the candidates' abstracts or titles whose stem
  begins with the term's stem, or begins it, the shorter having at least `MIN_SHARED` letters
  ("predictors" finds "prediction", "computation" finds "compute").
- A sentence scores BM25 over its terms (term-frequency saturation `K1`, length normalisation
  `B` against the candidate sentences' mean length), plus bonuses: `TITLE_WEIGHT` times the
  weight of the terms in its paper's title, `PAPER_WEIGHT` times the weight of the terms
  anywhere in its paper, and, as shares of the question's whole weight, `RANK_WEIGHT` times its
  paper's retrieval standing (its score scaled to 0..1 when scores are given, else by rank) and
  `CONTRIBUTION_WEIGHT` when it says what the paper does ("we propose", "this paper presents");
  and `PHRASE_WEIGHT` times the lesser weight of each two terms the question puts in a row that
  the sentence has in a row too ("process reward model", "web agents").
- The relevance floor, on the paper and then on the sentence: a paper may be quoted only when
  its title and abstract together carry at least `MIN_COVERAGE` of the question's weight, and
  one of its sentences only when it holds a term itself and its terms and its title's together
  carry at least `SENTENCE_COVERAGE`; each time, among the terms is a rare one (in at most
  `ask_terms.RARE_SHARE` of abstracts) or two uncommon ones (`ask_terms.UNCOMMON_SHARE`),
  and those must be of the question's own subject: not words of the topic it is asked
  within (`given`), which every paper asked shares ("... for speech recognition" within
  Speech Recognition), unless the question has no other words. A word the question typed
  as part of a hyphenated compound counts only where the paper (or the sentence and its
  title) holds the whole compound: "mixture" alone is not "mixture-of-experts". A
  long question in other words than the paper's is rarely echoed by one sentence: the paper
  as a whole must answer it, the sentence quoted must carry a good part of it. Both shares
  are of the weight of the question's `FLOOR_TERMS` heaviest terms, not of all of them: the
  more words a question has, the more of them are its own paraphrase, which no paper shares.
  "which papers show state-of-the-art performance on benchmarks?" leaves only common terms and
  is never answered; an off-subject question's rare words are in no sentence. When no sentence
  passes, the answer is not found (`found` False) and carries the key words for the reply
  ("none of the 412 papers ... since 2026-06-01 talks about X"); no key words at all means
  the question named nothing to look for ("which papers use a method?").
- After the best sentence, others are kept while they score at least `KEEP_SHARE` of it (the
  first `MIN_SENTENCES` are kept whenever they pass the floor); a sentence whose text was
  already chosen (a paper listed twice) is skipped.

Sentences are shown as plain text: LaTeX converted (`bot.topics.latex.display`), invisible
characters removed, cut at a word boundary to `MAX_CHARS` with an ellipsis. `<` and `&` stay as
they are: renderers escape. `bot.topics.answer_layout` lays an answer out within a message limit.
The floor and the weights were calibrated on questions written from real abstracts
(`tests/unit/test_answer.py`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from bot.domain import Paper
from bot.topics.ask_terms import Question, QuestionTerm
from bot.topics.latex import display
from bot.topics.passages import INVISIBLE, split_sentences, stems
from bot.topics.tldr import is_fragment, shorten_words

MAX_SENTENCES = 5
MIN_SENTENCES = 3
PER_PAPER = 2
MAX_CHARS = 400
MAX_TITLE_CHARS = 200
K1, B = 1.2, 0.75
TITLE_WEIGHT = 0.3
PAPER_WEIGHT = 0.3
RANK_WEIGHT = 0.2
MIN_COVERAGE = 0.55
SENTENCE_COVERAGE = 0.35
KEEP_SHARE = 0.5
CONTRIBUTION_WEIGHT = 0.1
PHRASE_WEIGHT = 0.5
MIN_SHARED = 6
FLOOR_TERMS = 7  # the shares of the floor are of the weight of this many terms at most

# A sentence saying what the paper itself does: a "which papers ..." question's best answer.
_CONTRIBUTION = re.compile(
    r"\b(we|this (paper|work|study|article)|here,? we|our (method|approach|framework|model|"
    r"system))\s+(\w+\s+)?(propose|introduce|present|develop|design|build|study|show|train|"
    r"release|demonstrate|find|investigate|construct|describe|report|explore|analy[sz]e|offer)",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Group:
    """One cited paper and the sentences quoted from it (plain text, display form)."""

    paper: Paper
    title: str  # the paper's title for display: LaTeX converted, one line, cut short
    sentences: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Answer:
    """The extractive answer; `found` False means nothing passed the relevance floor (then
    `groups` is empty), and empty `key_terms` that the question had no informative word."""

    groups: tuple[Group, ...]
    key_terms: tuple[str, ...]  # the question's informative words, as typed, in its order
    found: bool


@dataclass(frozen=True, slots=True)
class _Scored:
    score: float
    arxiv_id: str
    position: int  # the sentence's index in its abstract
    paper: int  # the paper's index among the candidates
    text: str


def answer(
    question: str,
    papers: Sequence[Paper],
    scores: Sequence[float] | None = None,
    *,
    given: str = "",
) -> Answer:
    """The best sentences of `papers` (retrieved and ranked for `question`, best first) that
    answer it, with the question's key words; see the module doc. `scores` are the papers'
    retrieval scores, higher is better, one per paper; `given` names what every paper asked
    is about (the topic the question is asked within), whose words the floor leaves out."""
    if scores is not None and len(scores) != len(papers):
        raise ValueError(f"{len(scores)} scores for {len(papers)} papers")
    asked = Question.of(question)
    key_terms = tuple(term.shown for term in asked.terms)
    if not asked.terms:
        return Answer((), key_terms, found=False)
    candidates = _distinct(papers)
    kept = [papers[i] for i in candidates]
    subject = _subject(asked, given)
    chosen = _choose(_score_all(asked, subject, kept, _standing(candidates, scores)))
    if not chosen:
        return Answer((), key_terms, found=False)
    return Answer(_groups(chosen, kept), key_terms, found=True)


def _distinct(papers: Sequence[Paper]) -> list[int]:
    """Indexes of the papers, a paper listed twice kept at its first place."""
    seen: set[str] = set()
    kept = []
    for index, paper in enumerate(papers):
        if paper.arxiv_id not in seen:
            seen.add(paper.arxiv_id)
            kept.append(index)
    return kept


def _standing(candidates: list[int], scores: Sequence[float] | None) -> list[float]:
    """Each kept paper's retrieval standing in 0..1 (1: the best)."""
    if scores is None:
        count = len(candidates)
        return [1 - rank / count for rank in range(count)]
    values = [float(scores[i]) if math.isfinite(scores[i]) else 0.0 for i in candidates]
    low, high = min(values, default=0.0), max(values, default=0.0)
    return [(v - low) / (high - low) if high > low else 1.0 for v in values]


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str
    counts: Counter[str]  # stem -> how often
    pairs: frozenset[tuple[str, str]]  # stems in a row
    length: int  # in words
    contribution: bool  # whether it says what the paper does


@lru_cache(maxsize=8192)
def _sentences(abstract: str) -> tuple[_Sentence, ...]:
    """The whole sentences of `abstract` (fragments left out), ready to be scored."""
    found = []
    for text in split_sentences(abstract):
        if is_fragment(text):
            continue
        words = stems(text)
        pairs = frozenset(pairwise(words))
        contribution = bool(_CONTRIBUTION.search(text))
        found.append(_Sentence(text, Counter(words), pairs, len(words), contribution))
    return tuple(found)


def _subject(asked: Question, given: str) -> frozenset[str]:
    """The stems of the question's own subject: its terms but for the words of `given`
    (the topic asked within), unless the question has no others."""
    known = set(stems(given))
    own = frozenset(term.stem for term in asked.terms if term.stem not in known)
    return own or frozenset(term.stem for term in asked.terms)


def _score_all(
    asked: Question, subject: frozenset[str], papers: list[Paper], standing: list[float]
) -> list[_Scored]:
    per_paper = [_sentences(paper.abstract) for paper in papers]
    lengths = [sentence.length for sentences in per_paper for sentence in sentences]
    mean = sum(lengths) / len(lengths) if lengths else 1.0
    titles = [stems(paper.title) for paper in papers]
    vocabulary = set().union(*titles, *(s.counts for ss in per_paper for s in ss))
    alias = _aliases(asked, vocabulary)
    if alias:
        per_paper = [tuple(_aliased(s, alias) for s in ss) for ss in per_paper]
        titles = [tuple(alias.get(word, word) for word in title) for title in titles]
    floor = sum(sorted((term.weight for term in asked.terms), reverse=True)[:FLOOR_TERMS])
    scored: list[_Scored] = []
    for index, (paper, sentences) in enumerate(zip(papers, per_paper, strict=True)):
        title = set(titles[index])
        in_title = [term for term in asked.terms if term.stem in title]
        anywhere = title.union(*(sentence.counts for sentence in sentences))
        held = _whole(asked, anywhere)
        if not _passes([t for t in asked.terms if t.stem in held], floor, MIN_COVERAGE, subject):
            continue
        bonus = (
            TITLE_WEIGHT * sum(term.weight for term in in_title)
            + PAPER_WEIGHT * sum(term.weight for term in asked.terms if term.stem in anywhere)
            + RANK_WEIGHT * standing[index] * asked.total
        )
        for position, sentence in enumerate(sentences):
            matched = [term for term in asked.terms if term.stem in sentence.counts]
            if not matched:
                continue
            own = _whole(asked, title.union(sentence.counts))
            both = [t for t in asked.terms if t.stem in own]
            if _passes(both, floor, SENTENCE_COVERAGE, subject):
                own = _sentence_score(asked, matched, sentence, mean)
                scored.append(_Scored(own + bonus, paper.arxiv_id, position, index, sentence.text))
    return scored


def _whole(asked: Question, words: set[str]) -> set[str]:
    """`words` less the parts of a compound the question typed in one ("mixture-of-experts")
    that they do not hold whole: "mixture" alone is another subject."""
    broken = [c for c in asked.compounds if not c <= words]
    return words.difference(*broken) if broken else words


def _aliases(asked: Question, vocabulary: set[str]) -> dict[str, str]:
    """Stems of the papers' words that are a question term's stem in another form: one of
    the two begins the other and the shorter has `MIN_SHARED` letters ("predictor" and
    "predict", "ownership" and "owner"); each maps to the term's stem."""
    found: dict[str, str] = {}
    for term in asked.terms:
        mine = term.stem
        if len(mine) < MIN_SHARED or not mine.isalpha():
            continue
        for word in vocabulary:
            if word != mine and (
                word.startswith(mine) or (len(word) >= MIN_SHARED and mine.startswith(word))
            ):
                found.setdefault(word, mine)
    return found


def _aliased(sentence: _Sentence, alias: dict[str, str]) -> _Sentence:
    if not any(word in alias for word in sentence.counts):
        return sentence
    counts: Counter[str] = Counter()
    for word, count in sentence.counts.items():
        counts[alias.get(word, word)] += count
    return _Sentence(sentence.text, counts, sentence.pairs, sentence.length, sentence.contribution)


def _sentence_score(
    asked: Question, matched: list[QuestionTerm], sentence: _Sentence, mean_length: float
) -> float:
    """BM25 over the matched terms, plus the phrase and contribution bonuses."""
    norm = K1 * (1 - B + B * sentence.length / mean_length)
    counts = sentence.counts
    score = sum(t.weight * counts[t.stem] * (K1 + 1) / (counts[t.stem] + norm) for t in matched)
    score += PHRASE_WEIGHT * sum(w for pair, w in asked.pairs if pair in sentence.pairs)
    return score + (CONTRIBUTION_WEIGHT * asked.total if sentence.contribution else 0.0)


def _passes(terms: list[QuestionTerm], total: float, share: float, subject: frozenset[str]) -> bool:
    """The relevance floor (module doc): `terms` (of a paper, or of a sentence and its title)
    carry `share` of the question's weight `total`, and, of the question's own `subject`, a
    rare term or two uncommon ones."""
    if sum(term.weight for term in terms) < share * total:
        return False
    own = [term for term in terms if term.stem in subject]
    return any(term.rare for term in own) or sum(term.uncommon for term in own) >= 2


def _choose(scored: list[_Scored]) -> list[_Scored]:
    ordered = sorted(scored, key=lambda s: (-s.score, s.arxiv_id, s.position))
    chosen: list[_Scored] = []
    per_paper: Counter[int] = Counter()
    seen: set[str] = set()
    for candidate in ordered:
        if len(chosen) == MAX_SENTENCES:
            break
        if len(chosen) >= MIN_SENTENCES and candidate.score < KEEP_SHARE * chosen[0].score:
            break
        text = " ".join(candidate.text.casefold().split())
        if per_paper[candidate.paper] == PER_PAPER or text in seen:
            continue
        chosen.append(candidate)
        per_paper[candidate.paper] += 1
        seen.add(text)
    return chosen


def _groups(chosen: list[_Scored], papers: list[Paper]) -> tuple[Group, ...]:
    order: list[int] = []
    for sentence in chosen:
        if sentence.paper not in order:
            order.append(sentence.paper)
    groups = []
    for index in order:
        mine = sorted((s for s in chosen if s.paper == index), key=lambda s: s.position)
        paper = papers[index]
        title = shown_text(paper.title, MAX_TITLE_CHARS)
        groups.append(Group(paper, title, tuple(shown_text(s.text, MAX_CHARS) for s in mine)))
    return tuple(groups)


def shown_text(text: str, limit: int) -> str:
    """`text` as plain text for display: LaTeX converted, invisible characters removed, one
    line, at most `limit` characters cut at a word boundary with an ellipsis."""
    if len(text) > 2 * limit:  # hostile length: cut before converting (display skips long text)
        text = shorten_words(" ".join(text.split()), 2 * limit)
    plain = " ".join(INVISIBLE.sub("", display(text)).split())
    return shorten_words(plain, limit)
