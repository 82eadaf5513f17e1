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

The rules it must follow are checked by `load_catalog`, which refuses the file with every
problem found, each located in the file (`bot.topics.catalog_checks` lists the rules).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from bot.domain import Topic, slugify
from bot.topics.catalog_checks import (
    Problem,
    name_clashes,
    parent_problems,
    read_glossary,
    read_topic,
    rule_problems,
)

_TOP_LEVEL = ("glossary", "topic")
_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*topic[ \t]*\]\]", re.MULTILINE)
_TABLE = re.compile(r"^[ \t]*\[", re.MULTILINE)  # any table header
_RULE_KEY = re.compile(r"^[ \t]*rule[ \t]*=[ \t]*", re.MULTILINE)
_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


class CatalogError(ValueError):
    """The catalog file is not valid: every problem found, each naming its topic."""

    def __init__(self, source: str, problems: Sequence[Problem]) -> None:
        self.source, self.problems = source, tuple(problems)
        super().__init__(source, self.problems)

    def __str__(self) -> str:
        count = len(self.problems)
        head = f"{self.source}: {count} problem{'s' * (count != 1)}"
        return "\n".join((head, *(f"  {problem}" for problem in self.problems)))


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
    """Read and check a catalog file (the bundled one when `path` is None); raises
    `CatalogError` listing every problem (see the rules in this module's docstring).

    A file that says `extends = "bundled"` adds its topics to the bundled ones: a topic
    with a bundled topic's slug replaces it, the others come first, and its glossary
    entries are added to (or replace) the bundled ones. Its problems keep its own lines."""
    bundled = resources.files("bot.topics").joinpath("catalog.toml")
    source = bundled if path is None else Path(path)
    raw, data = _read(source)
    extends = data.pop("extends", None)
    located = Locator(raw, data)  # lines of this file's own topics, which come first
    if extends is not None:
        if extends != "bundled" or path is None:
            problem = Problem('extends may only be "bundled", in a catalog of your own')
            raise CatalogError(str(source), [problem])
        data = _extended(_read(bundled)[1], data)
    catalog, problems = _build(data, located)
    if problems:
        raise CatalogError(str(source), problems)
    return catalog


def _read(source: Any) -> tuple[str, dict[str, Any]]:
    """The text of a catalog file and the TOML it holds; `CatalogError` if it has none."""
    try:
        raw = source.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(str(source), [Problem(f"cannot read the catalog: {exc}")]) from exc
    try:
        return raw, tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(str(source), [_toml_problem(raw, exc)]) from exc


def _extended(base: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """`own` laid over `base`: own topics first, then the base topics they do not replace
    (by slug); glossaries merged. Malformed own parts are kept as they are, to be reported."""
    entries = own.get("topic", [])
    if not isinstance(entries, list):
        return own
    replaced = {
        e.get("slug") or slugify(str(e.get("name", ""))) for e in entries if isinstance(e, dict)
    }
    kept = [e for e in base["topic"] if (e.get("slug") or slugify(e["name"])) not in replaced]
    glossary = own.get("glossary", {})
    if isinstance(glossary, dict):
        glossary = {**base.get("glossary", {}), **glossary}
    return {**own, "glossary": glossary, "topic": [*entries, *kept]}


def _build(data: dict[str, Any], where: Locator) -> tuple[Catalog, list[Problem]]:
    """The catalog the data describes, and everything wrong with it."""
    problems = [Problem(f"unknown table {key!r}") for key in data if key not in _TOP_LEVEL]
    glossary, glossary_problems = read_glossary(data.get("glossary", {}))
    problems += glossary_problems
    entries = data.get("topic", [])
    if not isinstance(entries, list) or not entries:
        problems.append(Problem("no topics: write each one under a [[topic]] header"))
        entries = []
    topics: list[Topic] = []
    lines: dict[str, int | None] = {}  # slug -> line of the topic's [[topic]]
    for index, entry in enumerate(entries):
        topic, found = read_topic(entry, where.line(index))
        problems += found
        if topic is None:
            continue
        problems += rule_problems(topic, where, index)
        if topic.slug in lines:
            first = lines[topic.slug]
            message = f"slug {topic.slug!r} is used twice"
            message += f" (first at line {first})" if first else ""
            problems.append(Problem(message, topic.name, topic.slug, where.line(index)))
            continue
        topics.append(topic)
        lines[topic.slug] = where.line(index)
    problems += parent_problems(topics, lines)
    problems += name_clashes(topics, glossary, lines)
    problems.sort(key=lambda problem: problem.line or 0)  # file order; stable otherwise
    return Catalog(topics=tuple(topics), glossary=glossary), problems


class Locator:
    """Lines in the catalog file: of each [[topic]] header, and of a spot in a rule.

    Headers are found by a line-start pattern; when their count does not match the
    topics TOML read (a header inside a multi-line string, an inline array of tables),
    no line is given rather than a wrong one.
    """

    def __init__(self, raw: str, data: dict[str, Any]) -> None:
        self.raw = raw
        starts = [m.start() for m in _HEADER.finditer(raw)]
        topics = data.get("topic")
        self.starts = starts if isinstance(topics, list) and len(topics) == len(starts) else []
        self.lines: list[int] = []
        line, counted = 1, 0
        for start in self.starts:
            line, counted = line + raw.count("\n", counted, start), start
            self.lines.append(line)

    def line(self, index: int) -> int | None:
        return self.lines[index] if index < len(self.lines) else None

    def in_rule(self, index: int, rule: str, position: int) -> tuple[int | None, int | None]:
        """Line and column of `position` of `rule`, when the rule stands verbatim in the
        file after its topic's `rule =`; else the topic's line and no column."""
        if index >= len(self.starts):
            return None, None
        end = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.raw)
        key = _RULE_KEY.search(self.raw, self.starts[index], end)
        at = self.raw.find(rule, key.end(), end) if key else -1
        if at < 0:
            return self.line(index), None
        offset = at + min(position, len(rule))
        return _line_of(self.raw, offset), offset - self.raw.rfind("\n", 0, offset)


def _line_of(raw: str, offset: int) -> int:
    return raw.count("\n", 0, offset) + 1


def _toml_problem(raw: str, error: tomllib.TOMLDecodeError) -> Problem:
    """A TOML syntax error, with the topic it is in when the table it is in is a topic."""
    at = _TOML_AT.search(str(error))
    if not at:
        return Problem(f"not valid TOML: {error}")
    line, column = int(at.group(1)), int(at.group(2))
    message = f"not valid TOML: {_TOML_AT.sub('', str(error)).strip()}"
    offset = sum(len(text) + 1 for text in raw.split("\n")[: line - 1])
    table = None  # the last table header at or before the error
    for header in _TABLE.finditer(raw):
        if header.start() > offset:
            break
        table = header
    if table is None or not _HEADER.match(raw, table.start()):
        return Problem(message, line=line, column=column)
    following = _TABLE.search(raw, table.end())
    chunk = raw[table.start() : following.start() if following else len(raw)]
    name, slug = _string_value(chunk, "name"), _string_value(chunk, "slug")
    if not name:
        message += f" (in the [[topic]] at line {_line_of(raw, table.start())}, which has no name)"
        return Problem(message, line=line, column=column)
    return Problem(message, name, slug or slugify(name), line, column)


def _string_value(chunk: str, key: str) -> str | None:
    """The one-line string value of `key` in a piece of TOML that does not parse."""
    found = re.search(rf"""^[ \t]*{key}[ \t]*=[ \t]*(?:"([^"\n]*)"|'([^'\n]*)')""", chunk, re.M)
    return ((found.group(1) or found.group(2) or "").strip() or None) if found else None
