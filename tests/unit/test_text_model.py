"""The shared learned-text features and linear models (bot.topics.text_model)."""

from __future__ import annotations

import math

import pytest

from bot.topics.document import Document
from bot.topics.text_model import (
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
