"""Papers like these: a set of arXiv papers as one profile, and whether a new paper is like it.

A set (1 to `MAX_LIKE` papers, `parse_ids`) becomes a `LikeProfile`: the centroid of its
papers' TF-IDF vectors (`bot.topics.text_model`), pruned to its `CENTROID_FEATURES` largest
features, and each paper's own vector pruned to `MEMBER_FEATURES` (for `/why`: the most
similar paper of the set). A new paper is like the set when its cosine with the centroid
is above the profile's `threshold`.

**Calibration** (`calibrate`): the threshold is the similarity that only `FIRE_SHARE` (2%)
of a background sample of papers exceed, a sample of recent papers the bot stored (or the
bundled `bot/data/background_papers.jsonl.gz`, a day's worth of real papers, when few are
stored), and never below `MIN_THRESHOLD`. So a like subscription fires on at most about 2% of
a daily listing, however broad its set is.

**Matching many sets at once** (`LikeIndex`): an inverted index from each centroid feature
to the sets holding it; a paper's score with every set is accumulated over the paper's own
features only, so a paper costs its features' postings, not one dot product per set. A
whole listing (`LikeIndex.tag_many`, what ingest runs) is one sparse matrix product of its
papers' vectors, restricted to the indexed features, with the index (scipy, which
scikit-learn brings; imported only when there are sets to match): the same sums, in C.

Pure: the caller fetches the papers, stores the profile and reads the background.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from bot.domain import Paper, split_arxiv_id
from bot.topics.latex import display
from bot.topics.text_model import Vector, centroid, dot, normalized, paper_vector

MAX_LIKE = 50  # papers in one set
CENTROID_FEATURES = 60  # features kept in a set's centroid (the index's postings)
MEMBER_FEATURES = 25  # features kept of each paper of the set (for /why)
FIRE_SHARE = 0.02  # the share of a background sample a set may match
MIN_THRESHOLD = 0.08  # never fire below this cosine, however quiet the background
MIN_BACKGROUND = 300  # fewer stored papers than this: calibrate on the bundled sample
TITLE_CHARS = 120  # a set paper's title as kept for /why and the subscription's name

_DOI = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)?10\.48550/arxiv\.", re.IGNORECASE)


class LikeInputError(ValueError):
    """Ids that cannot make a set; the message says why, in one line."""


def parse_id(token: str) -> str:
    """The version-free id of one typed token: "2401.01234v2", "arXiv:hep-th/9901001",
    an abs or pdf URL, or a 10.48550/arXiv DOI. ValueError when it is none of these."""
    text = _DOI.sub("", token.strip().strip("<>,;()[]\"'"))
    text = re.sub(r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/", "https://arxiv.org/", text)
    return split_arxiv_id(text.rstrip("/"))[0]


def parse_ids(text: str) -> list[str]:
    """Every id of `text` (space or comma separated), once each, in order; a
    `LikeInputError` naming the first token that is no arXiv id, or when none or more than
    `MAX_LIKE` are given."""
    tokens = [t for t in re.split(r"[\s,]+", text) if t]
    if not tokens:
        raise LikeInputError("Which papers? Give one or more arXiv ids, e.g. 2401.01234.")
    ids: list[str] = []
    for token in tokens:
        try:
            arxiv_id = parse_id(token)
        except ValueError:
            shown = token if len(token) <= 40 else token[:39] + "…"
            raise LikeInputError(
                f'"{shown}" is not an arXiv id (e.g. 2401.01234 or hep-th/9901001).'
            ) from None
        if arxiv_id not in ids:
            ids.append(arxiv_id)
    if len(ids) > MAX_LIKE:
        raise LikeInputError(f"That is {len(ids)} papers; a set holds at most {MAX_LIKE}.")
    return ids


def like_tag(arxiv_ids: Iterable[str]) -> str:
    """The paper tag of a set: "l:" and a hash of its sorted ids (one per set, any order)."""
    key = ",".join(sorted(set(arxiv_ids)))
    return "l:" + hashlib.sha1(key.encode()).hexdigest()[:16]


def short_title(paper: Paper) -> str:
    """A paper's title as a set keeps it: LaTeX shown, one line, cut to `TITLE_CHARS`."""
    title = " ".join(display(paper.title).split()) or paper.arxiv_id
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1] + "…"


@dataclass(frozen=True, slots=True)
class Member:
    """One paper of a set: its id, title and pruned vector."""

    arxiv_id: str
    title: str
    vector: Vector


@dataclass(frozen=True, slots=True)
class LikeProfile:
    """A set as matching needs it (module docstring); `to_json` is what is stored."""

    centroid: Vector
    members: tuple[Member, ...]
    threshold: float = MIN_THRESHOLD

    def score(self, vector: Mapping[str, float]) -> float:
        """A paper's cosine with the set's centroid."""
        return dot(vector, self.centroid)

    def closest(self, vector: Mapping[str, float]) -> tuple[Member, float]:
        """The paper of the set most similar to `vector`, and that similarity."""
        scored = [(_overlap(vector, m.vector), m) for m in self.members]
        best, member = max(scored, key=lambda item: (item[0], item[1].arxiv_id))
        return member, best

    def why(self, vector: Mapping[str, float]) -> str:
        """What `/why` says of a match: the most similar paper of the set."""
        member, similarity = self.closest(vector)
        return f"most like {member.arxiv_id} “{member.title}” (similarity {similarity:.2f})"

    def to_json(self) -> str:
        data = {
            "centroid": _rounded(self.centroid),
            "members": [[m.arxiv_id, m.title, _rounded(m.vector)] for m in self.members],
        }
        return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str, threshold: float) -> LikeProfile:
        """The profile `to_json` wrote (its JSON types are the profile's own: str keys,
        float weights, so they are taken as they are; ingest reads every set each poll)."""
        data: Any = json.loads(text)
        members = tuple(
            Member(str(arxiv_id), str(title), dict(vector))
            for arxiv_id, title, vector in data["members"]
        )
        return cls(dict(data["centroid"]), members, float(threshold))


def _overlap(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """`dot` over the shared features only, found by a set intersection (faster for `why`)."""
    return sum(a[feature] * b[feature] for feature in a.keys() & b.keys())


def _rounded(vector: Mapping[str, float]) -> dict[str, float]:
    return {feature: round(value, 4) for feature, value in sorted(vector.items())}


def _pruned(vector: Mapping[str, float], keep: int) -> Vector:
    items = sorted(vector.items(), key=lambda item: (-item[1], item[0]))[:keep]
    return normalized(dict(items))


def build_profile(papers: Sequence[Paper], keep: int = CENTROID_FEATURES) -> LikeProfile:
    """The profile of a set (not yet calibrated: `calibrate` sets its threshold)."""
    if not papers:
        raise LikeInputError("A set needs at least one paper.")
    vectors = [paper_vector(p) for p in papers]
    members = tuple(
        Member(p.arxiv_id, short_title(p), _pruned(v, MEMBER_FEATURES))
        for p, v in zip(papers, vectors, strict=True)
    )
    return LikeProfile(centroid(vectors, keep=keep), members)


def threshold_for(scores: Sequence[float], share: float = FIRE_SHARE) -> float:
    """The score that at most `share` of `scores` exceed (strictly), at least `MIN_THRESHOLD`."""
    if not scores:
        return MIN_THRESHOLD
    ranked = sorted(scores, reverse=True)
    allowed = math.floor(share * len(ranked))
    return max(ranked[min(allowed, len(ranked) - 1)], MIN_THRESHOLD)


def calibrate(
    profile: LikeProfile, background: Iterable[Mapping[str, float]], share: float = FIRE_SHARE
) -> LikeProfile:
    """`profile` with the threshold that fires on at most `share` of `background` (vectors
    of papers that are not the set's own)."""
    scores = [profile.score(vector) for vector in background]
    return LikeProfile(profile.centroid, profile.members, round(threshold_for(scores, share), 4))


def stored_profiles(sets: Iterable[tuple[str, str, float]]) -> dict[str, LikeProfile]:
    """Tag -> profile of stored sets given as (tag, profile JSON, threshold); a set whose
    JSON cannot be read is left out (it matches nothing rather than stopping ingest)."""
    profiles = {}
    for tag, text, threshold in sets:
        try:
            profiles[tag] = LikeProfile.from_json(text, threshold)
        except (ValueError, KeyError, TypeError):
            continue
    return profiles


@cache
def bundled_background() -> tuple[Paper, ...]:
    """The bundled day of real papers (`bot/data/README.md`) calibration falls back on."""
    data = resources.files("bot.data").joinpath("background_papers.jsonl.gz").read_bytes()
    rows = [json.loads(line) for line in gzip.decompress(data).decode("utf-8").splitlines()]
    return tuple(Paper(str(r["arxiv_id"]), str(r["title"]), str(r["abstract"])) for r in rows)


def background(stored: Sequence[Paper], own: Iterable[str]) -> list[Paper]:
    """What a set is calibrated against: the `stored` recent papers when there are at least
    `MIN_BACKGROUND`, else the bundled day; the set's own papers left out either way."""
    chosen = stored if len(stored) >= MIN_BACKGROUND else bundled_background()
    mine = set(own)
    return [paper for paper in chosen if paper.arxiv_id not in mine]


def calibrated_profile(papers: Sequence[Paper], stored: Sequence[Paper]) -> LikeProfile:
    """The profile of a set of `papers`, calibrated (`background`); CPU only."""
    profile = build_profile(papers)
    sample = background(stored, (p.arxiv_id for p in papers))
    return calibrate(profile, (paper_vector(p) for p in sample))


class LikeIndex:
    """Many sets matched against papers at once (module docstring): tag -> profile."""

    def __init__(self, profiles: Mapping[str, LikeProfile]) -> None:
        self._profiles = dict(profiles)
        self._tags = list(self._profiles)
        self._thresholds = [self._profiles[tag].threshold for tag in self._tags]
        postings: dict[str, list[tuple[int, float]]] = {}
        for number, tag in enumerate(self._tags):
            for feature, weight in self._profiles[tag].centroid.items():
                postings.setdefault(feature, []).append((number, weight))
        self._postings = postings

    def __len__(self) -> int:
        return len(self._tags)

    def scores(self, vector: Mapping[str, float]) -> dict[int, float]:
        """Set number -> the paper's cosine with that set's centroid, for sets sharing a feature."""
        totals: dict[int, float] = {}
        get, postings = totals.get, self._postings.get
        for feature, value in vector.items():
            found = postings(feature)
            if found is None:
                continue
            for number, weight in found:
                totals[number] = get(number, 0.0) + value * weight
        return totals

    def tag(self, paper: Paper, vector: Mapping[str, float] | None = None) -> dict[str, tuple]:
        """Tag -> (why,) for every set `paper` is like."""
        if not self._tags:
            return {}
        vector = paper_vector(paper) if vector is None else vector
        above = [n for n, total in self.scores(vector).items() if total > self._thresholds[n]]
        return self._found(paper, vector, above)

    def _found(self, paper: Paper, vector: Mapping[str, float], numbers: Iterable[int]) -> dict:
        found: dict[str, tuple[str, ...]] = {}
        for number in sorted(numbers):
            profile = self._profiles[self._tags[number]]
            if paper.arxiv_id not in {m.arxiv_id for m in profile.members}:
                found[self._tags[number]] = (profile.why(vector),)
        return found

    def tag_many(
        self, papers: Sequence[Paper], vectors: Sequence[Mapping[str, float]]
    ) -> list[dict[str, tuple]]:
        """`tag` of each paper (its vector given), all scored in one sparse product."""
        if not self._tags or not papers:
            return [{} for _ in papers]
        import numpy as np  # scikit-learn's own dependencies: loaded only with sets to match
        from scipy import sparse

        columns = self._columns()
        rows, cols, values = [], [], []
        for row, vector in enumerate(vectors):
            for feature, value in vector.items():
                col = columns.get(feature)
                if col is not None:
                    rows.append(row)
                    cols.append(col)
                    values.append(value)
        shape = (len(papers), len(columns))
        matrix = sparse.csr_matrix((values, (rows, cols)), shape=shape, dtype=np.float64)
        product = (matrix @ self._matrix()).tocoo()
        above = product.data > np.asarray(self._thresholds)[product.col]
        hits: list[list[int]] = [[] for _ in papers]
        for row, number in zip(
            product.row[above].tolist(), product.col[above].tolist(), strict=True
        ):
            hits[row].append(number)
        return [
            self._found(p, v, h) if h else {} for p, v, h in zip(papers, vectors, hits, strict=True)
        ]

    def _columns(self) -> dict[str, int]:
        return {feature: col for col, feature in enumerate(self._postings)}

    def _matrix(self):
        """Features x sets: each set's centroid weights, columns in `_columns` order."""
        from scipy import sparse

        rows, cols, values = [], [], []
        for row, found in enumerate(self._postings.values()):
            for number, weight in found:
                rows.append(row)
                cols.append(number)
                values.append(weight)
        shape = (len(self._postings), len(self._tags))
        return sparse.csr_matrix((values, (rows, cols)), shape=shape)
