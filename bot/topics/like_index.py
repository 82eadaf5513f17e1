"""Papers like these at ingest: many sets (`bot.topics.like`) matched against papers at once.

**Matching many sets at once** (`LikeIndex`): an inverted index from each centroid feature
and each profile topic (the paper's catalog tags, computed once by ingest's tagger) to the
sets holding it; a paper's score with every set is accumulated over the paper's own
features only, so a paper costs its features' postings, not one dot product per set. A
whole listing (`LikeIndex.tag_many`, what ingest runs) is one sparse matrix product of its
papers' vectors, restricted to the indexed features, with the index (scipy, which
scikit-learn brings; imported only when there are sets to match): the same sums, in C.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from bot.domain import Paper
from bot.topics.like import SCORE_WHY, LikeProfile
from bot.topics.text_model import paper_vector

_TOPIC_KEY = "\x00"  # a topic's key among the index's features (no word key holds it)


class LikeIndex:
    """Many sets matched against papers at once (module docstring): tag -> profile. A paper's
    catalog tags enter as features of their own (`_TOPIC_KEY` + slug, value 1), so one
    product scores the text and the topics alike."""

    def __init__(self, profiles: Mapping[str, LikeProfile]) -> None:
        self._profiles = dict(profiles)
        self._tags = list(self._profiles)
        self._thresholds = [self._profiles[tag].threshold for tag in self._tags]
        postings: dict[str, list[tuple[int, float]]] = {}
        for number, tag in enumerate(self._tags):
            profile = self._profiles[tag]
            for feature, weight in profile.centroid.items():
                postings.setdefault(feature, []).append((number, weight))
            for topic, weight in profile.topics.items():
                postings.setdefault(_TOPIC_KEY + topic, []).append((number, weight))
        self._postings = postings
        self._own = [frozenset(m.arxiv_id for m in self._profiles[t].members) for t in self._tags]

    def __len__(self) -> int:
        return len(self._tags)

    def scores(self, vector: Mapping[str, float], tags: Iterable[str] = ()) -> dict[int, float]:
        """Set number -> the paper's score with that set, for sets sharing a feature or topic."""
        totals: dict[int, float] = {}
        get, postings = totals.get, self._postings.get
        for feature, value in _features(vector, tags):
            found = postings(feature)
            if found is None:
                continue
            for number, weight in found:
                totals[number] = get(number, 0.0) + value * weight
        return totals

    def tag(
        self,
        paper: Paper,
        vector: Mapping[str, float] | None = None,
        tags: Iterable[str] = (),
    ) -> dict[str, tuple]:
        """Tag -> (why,) for every set `paper` (with its catalog `tags`) is like."""
        if not self._tags:
            return {}
        vector = paper_vector(paper) if vector is None else vector
        scores = self.scores(vector, frozenset(tags)).items()
        above = [(n, total) for n, total in scores if total > self._thresholds[n]]
        return self._found(paper, above)

    def _found(self, paper: Paper, hits: Iterable[tuple[int, float]]) -> dict:
        """Tag -> (why,) of the sets `paper` is like (set number, score), its own sets left
        out. The why is the score: `/why` names the closest paper of the set and the topics
        shared (`LikeProfile.why`), work ingest need not do for every match."""
        found: dict[str, tuple[str, ...]] = {}
        for number, score in sorted(hits):
            if paper.arxiv_id not in self._own[number]:
                found[self._tags[number]] = (f"{SCORE_WHY} {score:.2f}",)
        return found

    def tag_many(
        self,
        papers: Sequence[Paper],
        vectors: Sequence[Mapping[str, float]],
        tags: Sequence[Iterable[str]] | None = None,
    ) -> list[dict[str, tuple]]:
        """`tag` of each paper (its vector and catalog tags given), all scored in one sparse
        product."""
        if not self._tags or not papers:
            return [{} for _ in papers]
        import numpy as np  # scikit-learn's own dependencies: loaded only with sets to match
        from scipy import sparse

        tag_sets = [frozenset(t) for t in tags] if tags is not None else [frozenset()] * len(papers)
        columns = self._columns()
        rows, cols, values = [], [], []
        for row, (vector, own) in enumerate(zip(vectors, tag_sets, strict=True)):
            for feature, value in _features(vector, own):
                col = columns.get(feature)
                if col is not None:
                    rows.append(row)
                    cols.append(col)
                    values.append(value)
        shape = (len(papers), len(columns))
        matrix = sparse.csr_matrix((values, (rows, cols)), shape=shape, dtype=np.float64)
        product = (matrix @ self._matrix()).tocoo()
        above = product.data > np.asarray(self._thresholds)[product.col]
        hits: list[list[tuple[int, float]]] = [[] for _ in papers]
        for row, number, score in zip(
            product.row[above].tolist(),
            product.col[above].tolist(),
            product.data[above].tolist(),
            strict=True,
        ):
            hits[row].append((number, score))
        return [self._found(p, h) if h else {} for p, h in zip(papers, hits, strict=True)]

    def _columns(self) -> dict[str, int]:
        return {feature: col for col, feature in enumerate(self._postings)}

    def _matrix(self):
        """Features x sets: each set's centroid and topic weights, columns in `_columns` order."""
        from scipy import sparse

        rows, cols, values = [], [], []
        for row, found in enumerate(self._postings.values()):
            for number, weight in found:
                rows.append(row)
                cols.append(number)
                values.append(weight)
        shape = (len(self._postings), len(self._tags))
        return sparse.csr_matrix((values, (rows, cols)), shape=shape)


def _features(vector: Mapping[str, float], tags: Iterable[str]) -> Iterable[tuple[str, float]]:
    """A paper's features as the index reads them: its words, then its topics (value 1)."""
    yield from vector.items()
    for tag in tags:
        yield _TOPIC_KEY + tag, 1.0
