"""A second stage trained in the tests from real labels, for the stage's unit and /why tests
(the shipped file may hold no topic: these tests must not depend on it)."""

from __future__ import annotations

from functools import cache

from bench.relevance_catalog import labelled_topics
from bench.relevance_stage import Example, examples, fit
from bot.topics.catalog import load_catalog
from bot.topics.second_stage import RULE_FEATURE, SecondStage, TopicStage
from bot.topics.text_model import LinearModel

TOPIC = "hallucination"
# Real dev papers the Hallucination rule matches, read and labelled against its definition:
OFF_TOPIC = "2607.17164"  # Whisper ASR for Assamese; a hallucination rate is a side metric
ON_TOPIC = "2508.14496"  # "Semantic Energy: Detecting LLM Hallucination Beyond Entropy"


@cache
def stage_rows() -> tuple[Example, ...]:
    topics = [t for t in labelled_topics("dev")[0] if t.slug == TOPIC]
    return tuple(examples(topics, load_catalog())[TOPIC])


@cache
def stage_model() -> LinearModel:
    """A Hallucination model fitted on all its dev labels, as the trainer fits one."""
    model = fit(stage_rows(), 30.0)
    assert model is not None
    return model


@cache
def trained_stage() -> SecondStage:
    """A Hallucination stage fitted on its dev labels, threshold between the two papers."""
    model = stage_model()
    stage = TopicStage(TOPIC, model, 0.0)
    off, on = (stage.decide(text_vector(i)).score for i in (OFF_TOPIC, ON_TOPIC))
    assert off < on
    return SecondStage({TOPIC: TopicStage(TOPIC, model, (off + on) / 2)})


def text_vector(arxiv_id: str) -> dict[str, float]:
    row = next(r for r in stage_rows() if r.arxiv_id == arxiv_id)
    return {f: v for f, v in row.vector.items() if f != RULE_FEATURE}
