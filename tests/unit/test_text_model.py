"""The shared learned-text features and linear models (bot.topics.text_model)."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import pytest

from bench.fixtures import daily_listing
from bot.topics import text_model
from bot.topics.document import ABSTRACT, TITLE, Document
from bot.topics.tagger import word_frequencies
from bot.topics.text_model import (
    COMMON_SHARE,
    RARE_SHARE,
    TITLE_WEIGHT,
    LinearModel,
    centroid,
    dot,
    fit_linear,
    normalized,
    paper_vector,
)


def vector(title: str, abstract: str = "") -> dict[str, float]:
    return paper_vector(Document(title, abstract))


def test_vector_has_unit_length_and_leaves_out_common_words() -> None:
    v = vector("Reinforcement learning for web agents", "We train the agents with rewards.")
    assert math.isclose(math.sqrt(sum(x * x for x in v.values())), 1.0)
    assert "the" not in v and "we" not in v
    assert "agent" in v and "reinforcement learning" in v  # plural-normalised, adjacent pairs


def test_title_words_weigh_more_than_the_same_words_in_the_abstract() -> None:
    v = vector("Protein folding", "A study of graphs.")
    w = vector("A study of graphs", "Protein folding.")
    assert v["protein"] > w["protein"]


def test_hostile_text_is_normalised_not_fatal() -> None:
    clean = vector("Agentic search", "")
    hostile = vector("Agent\u200bic search &amp; \u202e <b>x</b>", "")
    assert set(clean) <= set(hostile)
    assert vector("", "") == {}
    assert vector("😀 ∑ $\\alpha$ " * 500, "")  # long, emoji and LaTeX: still a vector


def test_dot_of_unit_vectors_is_cosine() -> None:
    a = vector("Graph neural networks for molecules")
    assert math.isclose(dot(a, a), 1.0)
    assert dot(a, vector("Quantum error correction codes")) < 0.1
    assert normalized({}) == {}


def test_centroid_keeps_the_largest_features() -> None:
    c = centroid([{"a": 1.0, "b": 0.1}, {"a": 1.0, "c": 0.5}], keep=2)
    assert set(c) == {"a", "c"}
    assert math.isclose(sum(x * x for x in c.values()), 1.0)


def _examples() -> tuple[list[dict[str, float]], list[bool]]:
    yes = [vector(f"Web agent trained with reinforcement learning, part {i}") for i in range(6)]
    no = [vector(f"Protein structure prediction with diffusion, part {i}") for i in range(6)]
    return yes + no, [True] * 6 + [False] * 6


def test_fit_separates_and_explains() -> None:
    vectors, labels = _examples()
    model = fit_linear(vectors, labels)
    assert all((model.score(v) > 0) == label for v, label in zip(vectors, labels, strict=True))
    up, down = model.explain(vector("A web agent", "reinforcement learning of web agents"))
    assert up and up[0].feature in {"web", "agent", "web agent", "reinforcement learning"}
    assert all(c.amount > 0 for c in up) and all(c.amount < 0 for c in down)
    assert 0.5 < model.probability(vectors[0]) < 1.0


def test_fit_is_deterministic_and_survives_json() -> None:
    vectors, labels = _examples()
    first, second = fit_linear(vectors, labels), fit_linear(vectors, labels)
    assert first.to_json() == second.to_json()
    again = LinearModel.from_json(first.to_json())
    assert math.isclose(again.score(vectors[0]), first.score(vectors[0]), abs_tol=1e-2)
    small = LinearModel.from_json(first.to_json(keep=3))
    assert len(small.weights) == 3


def test_fit_refuses_one_sided_or_mismatched_examples() -> None:
    vectors, labels = _examples()
    with pytest.raises(ValueError, match="both"):
        fit_linear(vectors[:6], labels[:6])
    with pytest.raises(ValueError, match="one label per vector"):
        fit_linear(vectors, labels[:3])


def _reference_vector(doc: Document) -> dict[str, float]:
    """paper_vector as the module doc defines it, one token at a time (the first, slow
    version): the fast one must give the same vector."""
    shares = word_frequencies()

    def idf(key: str) -> float:
        return -math.log(shares.get(key, RARE_SHARE))

    counts: Counter[str] = Counter()
    for field, weight in ((TITLE, TITLE_WEIGHT), (ABSTRACT, 1.0)):
        keys = doc.tokens[field]
        for index, key in enumerate(keys):
            if len(key) > 1 and shares.get(key, 0.0) <= COMMON_SHARE:
                counts[key] += weight
            if index and len(key) > 1 and len(keys[index - 1]) > 1:
                counts[f"{keys[index - 1]} {key}"] += weight
    vector = {}
    for feature, count in counts.items():
        first, _, second = feature.partition(" ")
        value = min(idf(first), idf(second)) if second else idf(first)
        if second and value < -math.log(COMMON_SHARE) * 0.5:
            continue
        vector[feature] = (1.0 + math.log(count)) * value
    return normalized(vector)


def test_fast_vector_equals_the_definition_on_a_real_listing() -> None:
    hostile = Document("Agent\u200bic  a a of the of the ∑ $x$", "I I a b c " * 50 + "x y")
    for doc in [hostile] + [Document.from_paper(p) for p in daily_listing()[:400]]:
        fast, slow = paper_vector(doc), _reference_vector(doc)
        assert fast.keys() == slow.keys()
        assert all(math.isclose(fast[f], slow[f], rel_tol=1e-12) for f in fast)


def test_the_idf_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_model, "MAX_CACHED_IDF", 50)
    paper_vector(Document(" ".join(f"word{i}" for i in range(500)), ""))
    assert len(text_model._IDF) <= 50


@pytest.mark.parametrize("seed", range(5))
def test_a_stored_model_keeps_the_largest_weights_ties_by_feature(seed: int) -> None:
    rng = random.Random(seed)
    # Rounded weights: many ties in absolute value, some across signs.
    weights = {f"f{i:04d}": round(rng.gauss(0, 1), 1) for i in range(rng.randint(50, 2000))}
    kept = json.loads(LinearModel(weights).to_json(keep=40))["weights"]
    ranked = sorted(
        ((f, w) for f, w in weights.items() if abs(w) >= text_model.PRUNE_BELOW),
        key=lambda item: (-abs(item[1]), item[0]),
    )
    assert kept == dict(sorted(ranked[:40]))


def test_fitting_with_keep_chooses_the_weights_a_stored_model_keeps() -> None:
    """`fit_linear(keep=k)` picks its weights in NumPy; what it keeps must be what the full
    model's `to_json(keep=k)` keeps, so a chat's stored model is the same either way."""
    papers = daily_listing()[:60]
    vectors = [paper_vector(paper) for paper in papers]
    labels = [n % 2 == 0 for n in range(len(papers))]
    full = fit_linear(vectors, labels, strength=10.0)
    assert len(full.weights) > 200
    for keep in (1, 7, 200):
        pruned = fit_linear(vectors, labels, strength=10.0, keep=keep)
        assert len(pruned.weights) == keep
        assert pruned.to_json() == full.to_json(keep=keep)
