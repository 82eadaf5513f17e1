"""Learned text models: one way to turn a paper into features, score it and explain the score.

Three features learn from text: a chat's 👍/👎 model (it orders that chat's digests), the
"papers like these" subscriptions (similarity to a set), and a topic's second stage (a weight
over its rule's matches, trained offline from the labelled sets). All three use this module,
so a paper is described the same way everywhere and `/why` explains every score alike.

**Features** (`paper_vector`): the word keys of title and abstract (`bot.topics.document`:
NFKC, invisible characters removed, case-folded, plural-normalised) and the pairs of adjacent
keys ("reinforcement learning", "language model"), weighted by TF-IDF: ``(1 + log n)`` times
``log(1 / df)``, where `df` is the share of arXiv abstracts holding the word
(`word_frequencies.tsv`; a word missing from it counts as rare, `RARE_SHARE`). A pair's `df` is
that of its rarer word. Title words count twice: a title says what a paper is about. Words that
more than `COMMON_SHARE` of abstracts hold ("the", "we", "model"...) and keys of one character
are left out. The vector is scaled to unit length, so a dot product of two vectors is their
cosine similarity.

**Models** (`LinearModel`): a weight per feature and a bias; the score is their dot product with
a paper's vector (a logistic regression's decision value: above 0 means "more likely yes"),
and `explain` names the features that pushed it most each way. A model is a small JSON object
(`to_json` / `from_json`; weights rounded, tiny ones dropped), so it can be stored per chat in
the database or shipped in the package.

**Fitting** (`fit_linear`) is scikit-learn's L2-regularised logistic regression (Newton-CG,
deterministic), imported only when a model is fitted.
"""

from __future__ import annotations

import heapq
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from bot.topics.document import ABSTRACT, TITLE, Document
from bot.topics.tagger import word_frequencies

if TYPE_CHECKING:
    from bot.domain import Paper

#: Share of abstracts assumed for a word that `word_frequencies.tsv` does not list.
RARE_SHARE = 0.0005
#: Words held by more abstracts than this carry no meaning of their own and are left out.
COMMON_SHARE = 0.25
#: How much more a title word counts than an abstract word (a whole number: counts stay whole).
TITLE_WEIGHT = 2
#: Weights smaller than this (in absolute value) are dropped when a model is stored.
PRUNE_BELOW = 1e-3

Vector = dict[str, float]


def _idf(key: str, shares: Mapping[str, float]) -> float:
    return -math.log(shares.get(key, RARE_SHARE))


#: A key's idf at least this: the key is kept as a word of its own (its share <= COMMON_SHARE).
_WORD_MIN_IDF = -math.log(COMMON_SHARE)
#: A pair's idf (its rarer word's) below this: two common words ("of the"), left out.
_PAIR_MIN_IDF = _WORD_MIN_IDF * 0.5
#: The idf of a one-character key: below both floors, so it is never a feature nor in a pair.
_NO_IDF = -1.0
#: Keys whose idf `_IdfCache` remembers before it starts again (hostile text cannot grow it).
MAX_CACHED_IDF = 1 << 16


class _IdfCache(dict[str, float]):
    """key -> its idf (`_NO_IDF` for a key of one character), computed on first use: a
    paper's vector then costs a dict lookup per distinct key, not a logarithm."""

    def __missing__(self, key: str) -> float:
        if len(self) >= MAX_CACHED_IDF:
            self.clear()
        value = self[key] = _idf(key, word_frequencies()) if len(key) > 1 else _NO_IDF
        return value


_IDF = _IdfCache()


def paper_vector(item: Paper | Document) -> Vector:
    """The unit-length TF-IDF vector of a paper's title and abstract (see the module doc).

    Counted per distinct key and per distinct adjacent pair (`Counter` does the loop in C),
    with each key's idf remembered (`_IdfCache`): the result is the one the module doc
    defines, computed fast enough to run on every paper of a daily listing."""
    doc = item if isinstance(item, Document) else Document.from_paper(item)
    title, abstract = doc.tokens[TITLE], doc.tokens[ABSTRACT]
    # Counts are whole numbers: a title occurrence counts TITLE_WEIGHT (2), an abstract one 1.
    words = Counter(abstract)
    pairs = Counter(pairwise(abstract))
    for key, count in Counter(title).items():
        words[key] += TITLE_WEIGHT * count
    for pair, count in Counter(pairwise(title)).items():
        pairs[pair] += TITLE_WEIGHT * count
    idf, tf, small = _IDF, _TF, len(_TF)
    vector: Vector = {}
    for key, count in words.items():
        value = idf[key]
        if value >= _WORD_MIN_IDF:
            vector[key] = (tf[count] if count < small else _tf(count)) * value
    for (first, second), count in pairs.items():
        value = idf[first]
        other = idf[second]
        if other < value:
            value = other
        if value >= _PAIR_MIN_IDF:
            vector[f"{first} {second}"] = (tf[count] if count < small else _tf(count)) * value
    return normalized(vector)


_TF = tuple(1.0 + math.log(count) if count else 0.0 for count in range(64))


def _tf(count: int) -> float:
    """``1 + log(count)`` (`_TF` holds it for the small counts nearly every word has)."""
    return 1.0 + math.log(count)


def normalized(vector: Mapping[str, float]) -> Vector:
    """`vector` scaled to unit length (an empty or zero vector stays empty)."""
    length = math.sqrt(sum(value * value for value in vector.values()))
    if not length:
        return {}
    return {feature: value / length for feature, value in vector.items()}


def dot(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """The dot product of two sparse vectors (their cosine when both have unit length)."""
    if len(a) > len(b):
        a, b = b, a
    return sum(value * b.get(feature, 0.0) for feature, value in a.items())


def centroid(vectors: Iterable[Mapping[str, float]], keep: int | None = None) -> Vector:
    """The unit-length mean of `vectors`, keeping only its `keep` largest features if given."""
    total: Counter[str] = Counter()
    for vector in vectors:
        total.update(vector)
    items = sorted(total.items(), key=lambda item: (-item[1], item[0]))
    return normalized(dict(items[:keep] if keep is not None else items))


@dataclass(frozen=True, slots=True)
class Contribution:
    """One feature's share of a score: its weight times the paper's value for it."""

    feature: str
    amount: float


def _largest(items: list[tuple[str, float]], keep: int) -> list[tuple[str, float]]:
    """The `keep` items of largest absolute weight, ties going to the feature first in
    alphabetical order: what sorting them all by (-|w|, feature) and taking `keep` gives,
    without a Python key call per weight (a chat's model has thousands)."""
    floor = heapq.nlargest(keep, map(abs, (w for _, w in items)))[-1]
    above = [item for item in items if abs(item[1]) > floor]
    at_floor = sorted(item for item in items if abs(item[1]) == floor)
    return above + at_floor[: keep - len(above)]


@dataclass(frozen=True, slots=True)
class LinearModel:
    """Weights over `paper_vector` features and a bias; `score` > 0 leans towards "yes"."""

    weights: Mapping[str, float]
    bias: float = 0.0

    def score(self, vector: Mapping[str, float]) -> float:
        return self.bias + dot(vector, self.weights)

    def probability(self, vector: Mapping[str, float]) -> float:
        """The logistic of `score`: the model's estimate that the answer is yes."""
        score = self.score(vector)
        if score >= 0:
            return 1.0 / (1.0 + math.exp(-score))
        exp = math.exp(score)
        return exp / (1.0 + exp)

    def explain(
        self, vector: Mapping[str, float], top: int = 3
    ) -> tuple[tuple[Contribution, ...], tuple[Contribution, ...]]:
        """The features that raised the score most, and those that lowered it most."""
        parts = [
            Contribution(feature, value * self.weights[feature])
            for feature, value in vector.items()
            if feature in self.weights
        ]
        up = sorted((p for p in parts if p.amount > 0), key=lambda p: (-p.amount, p.feature))
        down = sorted((p for p in parts if p.amount < 0), key=lambda p: (p.amount, p.feature))
        return tuple(up[:top]), tuple(down[:top])

    def to_json(self, keep: int | None = None) -> str:
        """The model as JSON; with `keep`, only the `keep` weights largest in absolute value."""
        items = [(f, w) for f, w in self.weights.items() if abs(w) >= PRUNE_BELOW]
        if keep is not None and len(items) > keep:
            items = _largest(items, keep)
        weights = {feature: round(weight, 4) for feature, weight in sorted(items)}
        return json.dumps({"bias": round(self.bias, 4), "weights": weights}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> LinearModel:
        data: Any = json.loads(text)
        weights = {str(k): float(v) for k, v in dict(data["weights"]).items()}
        return cls(weights=weights, bias=float(data["bias"]))


def fit_linear(
    vectors: Sequence[Mapping[str, float]],
    labels: Sequence[bool],
    *,
    sample_weight: Sequence[float] | None = None,
    strength: float = 1.0,
    balanced: bool = True,
    keep: int | None = None,
) -> LinearModel:
    """An L2-regularised logistic regression of `labels` on `vectors` (scikit-learn,
    Newton-CG: on a chat's 60 votes over some 7,000 features it reaches the optimum in half
    the time L-BFGS takes, bench/bench_feedback.py).

    `strength` is the inverse regularisation (scikit-learn's C): lower trusts the data less.
    `balanced` weighs both answers equally however many of each there are. With `keep`,
    only the `keep` weights largest in absolute value are kept (chosen as `to_json(keep)`
    chooses them, in NumPy: a chat's model has thousands). Both answers must occur. The
    result is deterministic for the same input. It runs on one BLAS thread."""
    if len(vectors) != len(labels) or not vectors:
        raise ValueError("fit_linear needs one label per vector, and at least one vector")
    if len(set(labels)) != 2:
        raise ValueError("fit_linear needs both yes and no examples")
    import numpy as np
    from scipy.sparse import csr_matrix  # slow to import: only when fitting
    from sklearn.linear_model import LogisticRegression

    names = sorted(set().union(*vectors))
    column = dict(zip(names, range(len(names)), strict=True))
    indptr, indices, data = [0], [], []
    for vector in vectors:  # one sparse row per vector (what DictVectorizer does, 3x faster)
        indices.extend(map(column.__getitem__, vector))
        data.extend(vector.values())
        indptr.append(len(indices))
    matrix = csr_matrix((data, indices, indptr), shape=(len(vectors), len(names)))
    model = LogisticRegression(
        C=strength,
        solver="newton-cg",
        class_weight="balanced" if balanced else None,
        max_iter=500,
    )
    # One BLAS thread: problems this small only lose to threads fighting for the cores
    # (measured: a chat's model took 70 ms of CPU with the default threads on two busy
    # cores, 7 ms with one).
    with _blas_threads().limit(limits=1):
        model.fit(matrix, [bool(label) for label in labels], sample_weight=sample_weight)
    coef = model.coef_[0]
    kept = np.flatnonzero(np.abs(coef) >= PRUNE_BELOW)
    if keep is not None and len(kept) > keep:
        # Largest |weight| first; a stable sort leaves ties in column order, which is the
        # features' alphabetical order (`names` is sorted), as `_largest` breaks them.
        kept = np.sort(kept[np.argsort(-np.abs(coef[kept]), kind="stable")[:keep]])
    weights = dict(zip(map(names.__getitem__, kept.tolist()), coef[kept].tolist(), strict=True))
    return LinearModel(weights=weights, bias=float(model.intercept_[0]))


@cache
def _blas_threads() -> Any:
    """threadpoolctl's view of the loaded BLAS libraries, made once: finding them reads the
    process's library list, 2-3 ms a time, which `threadpool_limits` would do at every fit."""
    from threadpoolctl import ThreadpoolController  # scikit-learn's own dependency

    return ThreadpoolController()
