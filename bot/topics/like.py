"""Papers like these: a set of arXiv papers as one profile, and whether a new paper is like it.

A set (1 to `MAX_LIKE` papers, `parse_ids`) becomes a `LikeProfile`: the centroid of its
papers' TF-IDF vectors (`bot.topics.text_model`), pruned to its `CENTROID_FEATURES` largest
features, each paper's own vector pruned to `MEMBER_FEATURES` (for `/why`: the most similar
paper of the set), and its **topic profile**: the catalog topics its papers carry (tagged by
the catalog tagger ingest uses), each weighted by how many of the set's papers carry it and
how rare it is in a listing::

    weight(t) = TAG_WEIGHT * share(t) ** SHARE_POWER * idf(t) ** IDF_POWER / (sum over t)

where share(t) is the share of the set's papers tagged t and idf(t) = log((N + 1) / (n + 1))
for a tag n of N background papers carry: a field every paper has ("Large Language Models")
weighs little, a narrow topic most of the set shares weighs most. A paper's score is

    score(p) = cosine(p, centroid) + sum of weight(t) over the catalog topics t of p

and it is like the set when the score is above the profile's `threshold`. A profile stored
before topic profiles existed has none: its score is the cosine alone. The constants were
chosen on the odd-numbered labelled topics of `bench/bench_like.py` and checked on the even
ones (the README gives both figures).

Calibration (the threshold) is `bot.topics.like_calibration`'s; matching many sets at
once at ingest is `bot.topics.like_index`'s.

Pure: the caller fetches the papers, stores the profile and reads the background.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.domain import Paper, split_arxiv_id
from bot.topics.latex import display
from bot.topics.text_model import Vector, centroid, dot, normalized, paper_vector

MAX_LIKE = 50  # papers in one set
CENTROID_FEATURES = 60  # features kept in a set's centroid (the index's postings)
MEMBER_FEATURES = 25  # features kept of each paper of the set (for /why)
FIRE_SHARE = 0.02  # the share of a background sample a set may match
MIN_THRESHOLD = 0.08  # never fire below this cosine, however quiet the background
TITLE_CHARS = 120  # a set paper's title as kept for /why and the subscription's name
TAG_WEIGHT = 2.0  # what the whole topic profile adds to the cosine for a paper carrying it all
SHARE_POWER = 3  # a topic half the set carries weighs an eighth of one all of it carries
IDF_POWER = 2  # how much rarer topics count than common ones
SHARED_SHOWN = 3  # topics /why names

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


#: Below this similarity (shown as 0.00: no weighted word shared) `/why` names no member.
NAMED_SIMILARITY = 0.005
#: What ingest stores as the reason of a set's tag, before its score ("like score 1.92");
#: `/why` replaces it with the closest paper of the set and the topics shared.
SCORE_WHY = "like score"


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
    """A set as matching needs it (module docstring); `to_json` is what is stored.
    `topics`: catalog slug -> weight (already times `TAG_WEIGHT`), `names` their display names;
    `own_level`: the least threshold the set's own papers call for (`like_calibration`), which
    a recalibration keeps (0 for a set of few papers, or stored before it was kept)."""

    centroid: Vector
    members: tuple[Member, ...]
    threshold: float = MIN_THRESHOLD
    topics: Mapping[str, float] = field(default_factory=dict)
    names: Mapping[str, str] = field(default_factory=dict)
    own_level: float = 0.0

    def score(self, vector: Mapping[str, float], tags: Iterable[str] = ()) -> float:
        """A paper's cosine with the set's centroid plus the weights of its catalog `tags`
        in the set's topic profile."""
        get = self.topics.get
        return dot(vector, self.centroid) + sum(get(tag, 0.0) for tag in set(tags))

    def closest(self, vector: Mapping[str, float]) -> tuple[Member, float]:
        """The paper of the set most similar to `vector`, and that similarity."""
        get = vector.get  # a member keeps 25 features: look each up (ingest runs this per match)
        best, member = -1.0, self.members[0]
        for candidate in self.members:
            total = 0.0
            for feature, weight in candidate.vector.items():
                value = get(feature)
                if value is not None:
                    total += value * weight
            if (total, candidate.arxiv_id) > (best, member.arxiv_id):
                best, member = total, candidate
        return member, best

    def shared(self, tags: Iterable[str]) -> list[str]:
        """The names of the set's topics among `tags`, weightiest first, at most `SHARED_SHOWN`."""
        mine = sorted((-self.topics[t], t) for t in set(tags) if t in self.topics)
        return [self.names.get(t, t) for _, t in mine[:SHARED_SHOWN]]

    def why(self, vector: Mapping[str, float], tags: Iterable[str] = ()) -> str:
        """What `/why` says of a match: the most similar paper of the set, and the topics
        the paper shares with the set."""
        member, similarity = self.closest(vector)
        return self.explain(member, similarity, tags)

    def explain(self, member: Member, similarity: float, tags: Iterable[str] = ()) -> str:
        """`why` for a closest `member` and its `similarity` already found; a member hardly
        like the paper (below `NAMED_SIMILARITY`: it matched by its topics) is not named."""
        parts = []
        if similarity >= NAMED_SIMILARITY:
            parts.append(
                f"most like {member.arxiv_id} “{member.title}” (similarity {similarity:.2f})"
            )
        shared = self.shared(tags)
        if shared:
            parts.append(f"shares the topics {', '.join(shared)}")
        return "; ".join(parts) or f"like the set as a whole (closest: {member.arxiv_id})"

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "centroid": _rounded(self.centroid),
            "members": [[m.arxiv_id, m.title, _rounded(m.vector)] for m in self.members],
        }
        if self.topics:
            data["topics"] = [[t, self.names.get(t, t), w] for t, w in sorted(self.topics.items())]
        if self.own_level > 0:
            data["own_level"] = self.own_level
        return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str, threshold: float) -> LikeProfile:
        """The profile `to_json` wrote (its JSON types are the profile's own: str keys,
        float weights, so they are taken as they are; ingest reads every set each poll).
        A profile stored before topic profiles has no "topics": it scores by text alone; one
        stored before own levels were kept has none (0)."""
        data: Any = json.loads(text)
        members = tuple(
            Member(str(arxiv_id), str(title), dict(vector))
            for arxiv_id, title, vector in data["members"]
        )
        rows = data.get("topics") or []
        topics = {str(slug): float(weight) for slug, _, weight in rows}
        names = {str(slug): str(name) for slug, name, _ in rows}
        own_level = float(data.get("own_level", 0.0))
        return cls(dict(data["centroid"]), members, float(threshold), topics, names, own_level)


def _rounded(vector: Mapping[str, float]) -> dict[str, float]:
    return {feature: round(value, 4) for feature, value in sorted(vector.items())}


def _pruned(vector: Mapping[str, float], keep: int) -> Vector:
    items = sorted(vector.items(), key=lambda item: (-item[1], item[0]))[:keep]
    return normalized(dict(items))


@dataclass(frozen=True, slots=True)
class TagRates:
    """How many papers of a listing carry each catalog tag, for the topics' idf."""

    papers: int
    counts: Mapping[str, int]

    @classmethod
    def of(cls, tag_sets: Sequence[Iterable[str]]) -> TagRates:
        return cls(len(tag_sets), Counter(t for tags in tag_sets for t in set(tags)))

    def idf(self, tag: str) -> float:
        """log((N + 1) / (n + 1)): 0 for a tag every paper carries, most for one none does."""
        return math.log((self.papers + 1) / (self.counts.get(tag, 0) + 1))


def topic_weights(tag_sets: Sequence[Iterable[str]], rates: TagRates) -> dict[str, float]:
    """The topic profile of a set whose papers carry `tag_sets` (module docstring): slug ->
    weight, the weights summing to `TAG_WEIGHT`; empty when no paper carries a rare tag."""
    if not tag_sets:
        return {}
    counts = Counter(t for tags in tag_sets for t in set(tags))
    raw = {
        t: (n / len(tag_sets)) ** SHARE_POWER * rates.idf(t) ** IDF_POWER for t, n in counts.items()
    }
    total = sum(raw.values())
    if total <= 0:
        return {}
    return {t: round(TAG_WEIGHT * w / total, 4) for t, w in sorted(raw.items()) if w > 0}


def build_profile(
    papers: Sequence[Paper],
    keep: int = CENTROID_FEATURES,
    tags: Sequence[Iterable[str]] | None = None,
    rates: TagRates | None = None,
    names: Mapping[str, str] | None = None,
    vectors: Sequence[Mapping[str, float]] | None = None,
) -> LikeProfile:
    """The profile of a set (not yet calibrated: `calibrate` sets its threshold). With the
    papers' catalog `tags` and the listing's `rates`, it has a topic profile (`names`: slug ->
    display name, for `/why`); without, it is text alone. `vectors`: the papers' own, if known."""
    if not papers:
        raise LikeInputError("A set needs at least one paper.")
    vectors = [paper_vector(p) for p in papers] if vectors is None else vectors
    members = tuple(
        Member(p.arxiv_id, short_title(p), _pruned(v, MEMBER_FEATURES))
        for p, v in zip(papers, vectors, strict=True)
    )
    topics = topic_weights(tags, rates) if tags is not None and rates is not None else {}
    shown = {t: (names or {}).get(t, t) for t in topics}
    return LikeProfile(centroid(vectors, keep=keep), members, MIN_THRESHOLD, topics, shown)


def match_reason(profile: str, threshold: float, paper: Paper, tags: Iterable[str]) -> str | None:
    """What `/why` says of `paper` (with its catalog `tags`) matching a stored set (its profile
    JSON and threshold): the set's closest paper and the topics shared; None when the stored
    profile cannot be read."""
    found = stored_profiles([("", profile, threshold)]).get("")
    return found.why(paper_vector(paper), tags) if found is not None else None


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
