"""Finding the catalog topic a person meant ("rl for llm agents", "RL-for-LLM-agents").

Pure functions over a `Catalog`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz, process, utils

from bot.domain import Topic, slugify
from bot.topics.catalog import Catalog

# Fuzzy scores (0-100) below this are not offered as suggestions.
SUGGEST_CUTOFF = 70.0


@dataclass(frozen=True, slots=True)
class Resolution:
    """`topic` when the text names one topic; otherwise up to three `suggestions`."""

    topic: Topic | None
    suggestions: tuple[Topic, ...] = ()


def _keys(topic: Topic) -> tuple[str, ...]:
    return (topic.name, topic.slug, *topic.aliases)


def resolve_topic(text: str, catalog: Catalog) -> Resolution:
    """Exact name, slug or alias (case, spacing and punctuation ignored), else suggestions."""
    wanted = slugify(text)
    if not wanted:
        return Resolution(None)
    for topic in catalog.topics:
        if any(slugify(key) == wanted for key in _keys(topic)):
            return Resolution(topic)
    return Resolution(None, suggest(text, catalog))


def suggest(text: str, catalog: Catalog, limit: int = 3) -> tuple[Topic, ...]:
    """The closest topics by fuzzy match over names and aliases, best first."""
    choices: dict[int, str] = {}
    owners: list[Topic] = []
    for topic in catalog.topics:
        for key in _keys(topic):
            choices[len(owners)] = key
            owners.append(topic)
    found: list[Topic] = []
    for _key, _score, index in process.extract(
        text,
        choices,
        scorer=fuzz.WRatio,
        processor=utils.default_process,
        score_cutoff=SUGGEST_CUTOFF,
        limit=limit * 4,
    ):
        topic = owners[index]
        if topic not in found:
            found.append(topic)
        if len(found) == limit:
            break
    return tuple(found)
