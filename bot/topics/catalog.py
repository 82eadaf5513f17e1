"""The bundled topic catalog: a TOML file a person can read and extend.

Format (see `catalog.toml` beside this module)::

    [glossary]
    RL = "Reinforcement Learning"

    [[topic]]
    name = "RL for LLM Agents"
    slug = "rl-for-llm-agents"
    aliases = ["agentic reinforcement learning"]
    description = "..."
    parent = "reinforcement-learning"
    rule = '''("reinforcement learning" OR RL) AND agent*'''
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from bot.domain import Topic, slugify


class CatalogError(ValueError):
    """The catalog file is not valid; the message names the topic at fault."""


@dataclass(frozen=True, eq=False)  # compared (and cached) by identity
class Catalog:
    topics: tuple[Topic, ...]
    glossary: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_slug", {t.slug: t for t in self.topics})

    def by_slug(self, slug: str) -> Topic | None:
        return self._by_slug.get(slug)  # type: ignore[attr-defined]

    def children(self, slug: str) -> tuple[Topic, ...]:
        return tuple(t for t in self.topics if t.parent == slug)

    def __len__(self) -> int:
        return len(self.topics)


def load_catalog(path: str | Path | None = None) -> Catalog:
    """Read and validate a catalog file (the bundled one when `path` is None)."""
    source = resources.files("bot.topics").joinpath("catalog.toml") if path is None else Path(path)
    try:
        raw = source.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"cannot read the catalog {source}: {exc}") from exc
    try:
        data = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"catalog is not valid TOML: {exc}") from exc
    glossary = {str(k): str(v) for k, v in data.get("glossary", {}).items()}
    topics = tuple(_topic(entry) for entry in data.get("topic", []))
    _validate(topics)
    return Catalog(topics=topics, glossary=glossary)


def _topic(entry: dict[str, object]) -> Topic:
    name = str(entry.get("name", "")).strip()
    if not name:
        raise CatalogError(f"a topic has no name: {entry!r}")
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list):
        raise CatalogError(f"topic {name!r}: aliases must be a list of strings")
    parent = entry.get("parent")
    return Topic(
        slug=str(entry.get("slug") or slugify(name)),
        name=name,
        description=str(entry.get("description", "")).strip(),
        aliases=tuple(str(a).strip() for a in aliases if str(a).strip()),
        parent=str(parent) if parent else None,
        rule=str(entry.get("rule", "")).strip(),
    )


def _validate(topics: Iterable[Topic]) -> None:
    seen: dict[str, Topic] = {}
    for topic in topics:
        if topic.slug != slugify(topic.slug):
            raise CatalogError(f"topic {topic.name!r}: slug {topic.slug!r} is not a valid slug")
        if topic.slug in seen:
            raise CatalogError(f"topic {topic.name!r}: slug {topic.slug!r} is used twice")
        seen[topic.slug] = topic
    for topic in seen.values():
        if topic.parent is not None and topic.parent not in seen:
            raise CatalogError(f"topic {topic.name!r}: parent {topic.parent!r} does not exist")
        _check_no_cycle(topic, seen)


def _check_no_cycle(topic: Topic, by_slug: dict[str, Topic]) -> None:
    visited = {topic.slug}
    parent = topic.parent
    while parent is not None:
        if parent in visited:
            raise CatalogError(f"topic {topic.name!r}: its parents form a cycle")
        visited.add(parent)
        parent = by_slug[parent].parent
