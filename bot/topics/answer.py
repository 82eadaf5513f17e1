"""An extractive answer to a question about a topic: the abstract sentences that answer it best.

`answer(question, papers, scores=None)` takes the papers a search index retrieved for the
question, best first (up to about 30), and returns an `Answer`: up to `MAX_SENTENCES`
sentences (at least `MIN_SENTENCES` when that many pass the relevance floor), at most
`PER_PAPER` from one paper, grouped by paper in the order of each paper's best sentence (a
group's sentences keep their abstract order), and the question's key words.

How sentences are scored (all pure, no I/O; deterministic, ties broken by arXiv id):

- The question's *terms* are its words minus stop-words, question-words ("which", "papers",
  "anyone", "use", ...) and generic ones ("method", "good", "state of the art"), met on stems
  (`bot.topics.passages.stem`: "agents" = "agent", "training" = "trained"). Each term weighs
  its inverse document frequency among arXiv abstracts (`word_frequencies.tsv`; a word missing
  from that table of common words counts as in `UNKNOWN_SHARE` of them): "GRPO" weighs far
  more than "model". At most `MAX_TERMS` terms count, the rarest.
- A sentence scores BM25 over its terms (term-frequency saturation `K1`, length normalisation
  `B` against the candidate sentences' mean length), plus bonuses: `TITLE_WEIGHT` times the
  weight of the terms in its paper's title, `PAPER_WEIGHT` times the weight of the terms
  anywhere in its paper, and, as shares of the question's whole weight, `RANK_WEIGHT` times its
  paper's retrieval standing (its score scaled to 0..1 when scores are given, else by rank) and
  `CONTRIBUTION_WEIGHT` when it says what the paper does ("we propose", "this paper presents").
- The relevance floor: a sentence may be cited only when it holds a term itself, its terms and
  its title's together carry at least `MIN_COVERAGE` of the question's weight, and among them is
  a rare term (in at most `RARE_SHARE` of abstracts) or two uncommon ones (`UNCOMMON_SHARE`).
  "which papers show state-of-the-art performance on benchmarks?" leaves only common terms and
  is never answered; an off-subject question's rare words are in no sentence. When no sentence
  passes, the answer is not found (`found` False) and carries the key words for the reply
  ("none of the 412 papers ... talks about X"); no key words at all means the question named
  nothing to look for ("which papers use a method?").
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

from bot.domain import Paper
from bot.topics.document import word_key
from bot.topics.latex import display
from bot.topics.passages import INVISIBLE, split_sentences, stem, stems, words_as_typed
from bot.topics.tagger import word_frequencies
from bot.topics.tldr import is_fragment, shorten_words

MAX_SENTENCES = 5
MIN_SENTENCES = 3
PER_PAPER = 2
MAX_CHARS = 400
MAX_TITLE_CHARS = 200
MAX_TERMS = 12
MAX_QUESTION_CHARS = 2000
K1, B = 1.2, 0.75
TITLE_WEIGHT = 0.3
PAPER_WEIGHT = 0.3
RANK_WEIGHT = 0.2
MIN_COVERAGE = 0.5
RARE_SHARE = 0.1
UNCOMMON_SHARE = 0.2
KEEP_SHARE = 0.5
CONTRIBUTION_WEIGHT = 0.1
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
    solve solving handle handling deal dealing"""
STOP_WORDS = frozenset(_STOP_WORDS.split())
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
class QuestionTerm:
    """A word of the question that counts: its stem, weight (idf), the word as typed, and
    whether it is rare (`RARE_SHARE`) or uncommon (`UNCOMMON_SHARE`) in arXiv abstracts."""

    stem: str
    weight: float
    shown: str
    rare: bool
    uncommon: bool


@dataclass(frozen=True, slots=True)
class _Scored:
    score: float
    arxiv_id: str
    position: int  # the sentence's index in its abstract
    paper: int  # the paper's index among the candidates
    text: str


def answer(question: str, papers: Sequence[Paper], scores: Sequence[float] | None = None) -> Answer:
    """The best sentences of `papers` (retrieved and ranked for `question`, best first) that
    answer it, with the question's key words; see the module doc. `scores` are the papers'
    retrieval scores, higher is better, one per paper."""
    if scores is not None and len(scores) != len(papers):
        raise ValueError(f"{len(scores)} scores for {len(papers)} papers")
    terms = question_terms(question)
    key_terms = tuple(term.shown for term in terms)
    if not terms:
        return Answer((), key_terms, found=False)
    candidates = _distinct(papers)
    scored = _score_all(terms, [papers[i] for i in candidates], _standing(candidates, scores))
    chosen = _choose(scored)
    if not chosen:
        return Answer((), key_terms, found=False)
    kept = [papers[i] for i in candidates]
    return Answer(_groups(chosen, kept), key_terms, found=True)


def question_terms(question: str) -> tuple[QuestionTerm, ...]:
    """The informative words of `question` in its order: stop-words and question-words out,
    one per stem, the `MAX_TERMS` rarest kept."""
    frequencies = word_frequencies()
    terms: dict[str, QuestionTerm] = {}
    for word in words_as_typed(question[:MAX_QUESTION_CHARS]):
        key = word_key(word.casefold())
        if key in STOP_WORDS or word.casefold() in STOP_WORDS or len(key) < 2:
            continue
        if key.isdigit() and len(key) < 3:
            continue
        share = frequencies.get(key, UNKNOWN_SHARE)
        weight = math.log(1 + (1 - share) / share)
        term = QuestionTerm(
            stem(key), weight, word[:40], share <= RARE_SHARE, share <= UNCOMMON_SHARE
        )
        terms.setdefault(term.stem, term)
    ordered = list(terms.values())
    rarest = sorted(range(len(ordered)), key=lambda i: (-ordered[i].weight, i))[:MAX_TERMS]
    return tuple(ordered[i] for i in sorted(rarest))


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


@lru_cache(maxsize=8192)
def _sentences(abstract: str) -> tuple[tuple[str, Counter[str], int, bool], ...]:
    """(sentence, its stem counts, its length in words, whether it states the paper's
    contribution) for each whole sentence."""
    found = []
    for text in split_sentences(abstract):
        if is_fragment(text):
            continue
        words = stems(text)
        found.append((text, Counter(words), len(words), bool(_CONTRIBUTION.search(text))))
    return tuple(found)


def _score_all(terms: tuple[QuestionTerm, ...], papers: list[Paper], standing: list[float]) -> list:
    total = sum(term.weight for term in terms)
    per_paper = [_sentences(paper.abstract) for paper in papers]
    lengths = [sentence[2] for sentences in per_paper for sentence in sentences]
    mean = sum(lengths) / len(lengths) if lengths else 1.0
    scored: list[_Scored] = []
    for index, (paper, sentences) in enumerate(zip(papers, per_paper, strict=True)):
        title = set(stems(paper.title))
        in_title = [term for term in terms if term.stem in title]
        anywhere = title.union(*(sentence[1] for sentence in sentences))
        in_paper = sum(term.weight for term in terms if term.stem in anywhere)
        bonus = (
            TITLE_WEIGHT * sum(term.weight for term in in_title)
            + PAPER_WEIGHT * in_paper
            + RANK_WEIGHT * standing[index] * total
        )
        for position, (text, counts, length, contribution) in enumerate(sentences):
            matched = [term for term in terms if term.stem in counts]
            if not matched:
                continue
            both = {term.stem: term for term in (*matched, *in_title)}.values()
            if not _passes(list(both), total):
                continue
            norm = K1 * (1 - B + B * length / mean)
            bm25 = sum(
                t.weight * counts[t.stem] * (K1 + 1) / (counts[t.stem] + norm) for t in matched
            )
            bm25 += CONTRIBUTION_WEIGHT * total if contribution else 0.0
            scored.append(_Scored(bm25 + bonus, paper.arxiv_id, position, index, text))
    return scored


def _passes(terms: list[QuestionTerm], total: float) -> bool:
    """The relevance floor (module doc), on the terms of a sentence and its title together."""
    if sum(term.weight for term in terms) < MIN_COVERAGE * total:
        return False
    return any(term.rare for term in terms) or sum(term.uncommon for term in terms) >= 2


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
