"""A topic's second stage: a learned check of its rule's matches.

A catalog rule says which words must occur; some topics' rules also tag papers that use
the words without being about the topic. For those topics a linear model over the paper's
text (`bot.topics.text_model.paper_vector`, plus one feature saying the rule matched)
scores each paper the rule matched, and the tag is kept only when the score reaches the
topic's threshold. Papers the rule does not match are never tagged by the stage.

The models are trained offline from the labelled dev split
(tests/fixtures/relevance/catalog/) by `scripts/train_second_stage.py`, which chooses each
topic's regularisation and threshold by cross-validation over announcement days and ships a
topic's model only when that cross-validation says it helps. They are read from
`second_stage.json` in this package: no network, no training at run time, and the same paper
always gets the same answer.

A kept tag's "why" ends with the stage's verdict, e.g. ``stage 0.84 ≥ 0.25 (for: agent,
repository; against: survey)``, which `/why` shows; `Decision` explains a dropped one too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from bot.topics.document import Document
from bot.topics.text_model import Contribution, LinearModel, Vector, paper_vector

STAGE_FILE = "second_stage.json"
#: The feature that says the topic's rule matched the paper (always 1 where the stage runs).
RULE_FEATURE = "[rule matched]"
#: How many features `Decision.words` names each way.
EXPLAINED = 3

Tags = dict[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Decision:
    """What a topic's stage said about one paper its rule matched."""

    slug: str
    score: float
    threshold: float
    up: tuple[Contribution, ...]
    down: tuple[Contribution, ...]

    @property
    def kept(self) -> bool:
        return self.score >= self.threshold

    def words(self) -> str:
        """The verdict in a line: score against threshold, and the words for and against."""
        sign = "≥" if self.kept else "<"
        text = f"stage {self.score:.2f} {sign} {self.threshold:.2f}"
        parts = [
            f"{name}: {', '.join(c.feature for c in found)}"
            for name, found in (("for", self.up), ("against", self.down))
            if found
        ]
        return f"{text} ({'; '.join(parts)})" if parts else text


@dataclass(frozen=True, slots=True)
class TopicStage:
    """One topic's model and threshold: `decide` keeps the tag when score >= threshold."""

    slug: str
    model: LinearModel
    threshold: float

    def score(self, vector: Mapping[str, float]) -> float:
        """The model's score of a paper its rule matched (`RULE_FEATURE` is 1)."""
        return self.model.score(vector) + self.model.weights.get(RULE_FEATURE, 0.0)

    def decide(self, vector: Mapping[str, float]) -> Decision:
        features = dict(vector)
        features[RULE_FEATURE] = 1.0
        up, down = self.model.explain(features, top=EXPLAINED)
        return Decision(self.slug, self.model.score(features), self.threshold, up, down)


class SecondStage:
    """The second stages of the topics that have one; `review` applies them to rule tags."""

    def __init__(self, stages: Mapping[str, TopicStage]) -> None:
        self._stages = dict(stages)

    @classmethod
    def from_json(cls, text: str | bytes) -> SecondStage:
        """Stages from the shipped file's JSON (its `topics`: slug -> model and threshold)."""
        data: Any = json.loads(text)
        stages = {}
        for slug, entry in dict(data["topics"]).items():
            model = LinearModel.from_json(json.dumps(entry["model"]))
            stages[str(slug)] = TopicStage(str(slug), model, float(entry["threshold"]))
        return cls(stages)

    @property
    def slugs(self) -> frozenset[str]:
        return frozenset(self._stages)

    def __len__(self) -> int:
        return len(self._stages)

    def decide(self, slug: str, item: Document | Vector) -> Decision | None:
        """What `slug`'s stage says of a paper its rule matched (None: the topic has none)."""
        stage = self._stages.get(slug)
        if stage is None:
            return None
        return stage.decide(item if isinstance(item, dict) else paper_vector(item))

    def review(self, doc: Document, tags: Tags) -> Tags:
        """`tags` (rule tags of `doc`, in order) minus those a stage drops; a kept tag's why
        gains the stage's verdict. The paper is vectorised once, only when a stage runs."""
        staged = [slug for slug in tags if slug in self._stages]
        if not staged:
            return tags
        vector = paper_vector(doc)
        reviewed = dict(tags)
        for slug in staged:
            stage = self._stages[slug]
            if stage.score(vector) < stage.threshold:
                del reviewed[slug]  # explained on demand (`decide`, `/why`), not stored
            else:
                reviewed[slug] = (*tags[slug], stage.decide(vector).words())
        return reviewed


@cache
def bundled_stage() -> SecondStage:
    """The second stages shipped in the package (`second_stage.json`), read once."""
    text = resources.files("bot.topics").joinpath(STAGE_FILE).read_text("utf-8")
    return SecondStage.from_json(text)
