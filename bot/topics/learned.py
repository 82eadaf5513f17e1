"""A chat's 👍/👎: what it has taught per topic, the model trained from it, and what that model
may do. Pure: storage keeps the votes and the model (`bot.ports.FeedbackStore`), the worker
trains (`bot.services.model_training`), digests and alerts ask `ChatModel` (`bot.topics.content`).

The rules:

- A vote is +1 (👍, /more) or -1 (👎, /less) by a chat on a paper the chat was sent; a new vote
  on the same paper replaces the old one.
- A vote counts for every topic the chat follows that the paper carries. A topic is *taught*
  once it has at least `MIN_UP` 👍 and `MIN_DOWN` 👎 (the issue's threshold, per topic).
- One model per chat, not one per topic: once any topic is taught, a logistic regression
  (`bot.topics.text_model.fit_linear`) is fitted on the chat's votes (its newest `FIT_VOTES`),
  which gives it more examples than any one topic has, and stored as one small JSON object
  (`KEEP` weights, about 4 KB). It acts only within taught topics: a topic with fewer votes
  keeps the rule's order, and its alerts are never held back.
- Digests: within a taught topic's section, papers go by the model's score, highest first
  (the rule's order breaks ties).
- `/filter learned on`: an instant alert is held back (not sent; `/latest` still lists it)
  when every followed topic that brought it is taught and the model gives it a probability
  under `FILTER_BELOW`, unless its title holds the name of a followed topic the paper carries:
  such a paper is never hidden.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.domain import Paper
from bot.topics.document import TITLE, Document, tokenize, word_key
from bot.topics.text_model import LinearModel, fit_linear, paper_vector

MIN_UP = 5
MIN_DOWN = 3
#: Weights a stored model keeps (the largest in absolute value): about 4 KB of JSON.
KEEP = 200
#: The inverse regularisation of the fit (scikit-learn's C); see bench/bench_feedback.py.
STRENGTH = 10.0
#: Held back below this probability with /filter learned on: the model leans clearly to 👎.
FILTER_BELOW = 0.3
#: The newest votes a model is fitted on: training time grows with them (bench_feedback).
FIT_VOTES = 60
UP, DOWN = 1, -1


@dataclass(frozen=True, slots=True)
class Vote:
    """One chat's vote on a paper (with its tags): `value` is `UP` or `DOWN`."""

    paper: Paper
    value: int
    at: datetime


@dataclass(frozen=True, slots=True)
class ChatModel:
    """What is stored of a chat's model: the model (None while no topic is taught), when it
    was trained, the newest vote it saw, its vote counts, and the topics it acts on."""

    model: str | None
    trained_at: datetime
    last_vote_at: datetime
    up: int
    down: int
    taught: tuple[str, ...] = ()

    def linear(self) -> LinearModel | None:
        return LinearModel.from_json(self.model) if self.model else None

    def orders(self, tag: str) -> bool:
        return self.model is not None and tag in self.taught


def topic_counts(
    votes: Iterable[tuple[int, Collection[str]]], followed: Collection[str]
) -> dict[str, tuple[int, int]]:
    """(👍, 👎) per followed tag, from (vote value, the voted paper's tags) pairs."""
    counts: dict[str, list[int]] = {}
    for value, tags in votes:
        for tag in set(tags) & set(followed):
            pair = counts.setdefault(tag, [0, 0])
            pair[0 if value > 0 else 1] += 1
    return {tag: (up, down) for tag, (up, down) in sorted(counts.items())}


def taught(counts: dict[str, tuple[int, int]]) -> tuple[str, ...]:
    """The tags with enough votes of both kinds for the model to act on."""
    return tuple(t for t, (up, down) in counts.items() if up >= MIN_UP and down >= MIN_DOWN)


def fit(examples: Sequence[tuple[Paper, int]]) -> LinearModel:
    """The model of (paper, vote) examples; both kinds of vote must occur. CPU-bound: the
    worker calls it in a thread."""
    vectors = [paper_vector(paper) for paper, _ in examples]
    labels = [value > 0 for _, value in examples]
    return fit_linear(vectors, labels, strength=STRENGTH, keep=KEEP)


def build(votes: Sequence[Vote], followed: Collection[str], trained_at: datetime) -> ChatModel:
    """A chat's model from its votes and the tags it follows (trained only once a topic is
    taught); `trained_at` is now. CPU-bound once it fits: call it in a thread."""
    counts = topic_counts(((v.value, v.paper.tags) for v in votes), followed)
    tags = taught(counts)
    up = sum(1 for v in votes if v.value > 0)
    recent = sorted(votes, key=lambda v: v.at)[-FIT_VOTES:]
    if len({v.value for v in recent}) < 2:  # the newest all say the same: fit on every vote
        recent = list(votes)
    model = fit([(v.paper, v.value) for v in recent]).to_json(keep=KEEP) if tags else None
    last = max((v.at for v in votes), default=trained_at)
    return ChatModel(model, trained_at, last, up, len(votes) - up, tags)


def order(papers: Sequence[Paper], model: LinearModel) -> list[Paper]:
    """`papers` by the model's score, highest first; a stable sort keeps the given order
    among equal scores."""
    scores = {p.arxiv_id: model.score(paper_vector(p)) for p in papers}
    return sorted(papers, key=lambda p: -scores[p.arxiv_id])


def names_in_title(paper: Paper, names: Iterable[str]) -> bool:
    """Does the title hold one of `names` as words (case, plurals, accents and invisible
    characters aside)?"""
    doc = Document.from_paper(paper)
    for name in names:
        keys = tuple(word_key(t) for t in tokenize(name))
        if keys and doc.has_phrase(TITLE, keys):
            return True
    return False


def holds_back(
    chat_model: ChatModel | None,
    paper: Paper,
    reasons: Collection[str],
    protected_names: Iterable[str],
) -> bool:
    """Whether the learned filter holds back an alert of `paper` brought by the followed tags
    `reasons`; `protected_names` are the names of those topics (a title holding one is never
    hidden)."""
    if chat_model is None or not reasons or not all(chat_model.orders(t) for t in reasons):
        return False
    model = chat_model.linear()
    if model is None:
        return False
    if model.probability(paper_vector(paper)) >= FILTER_BELOW:
        return False
    return not names_in_title(paper, protected_names)
