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

The rules a catalog must follow, all checked by `load_catalog` (which refuses the file
with every problem found, not only the first) and printed by `paperwatch topics --check`:

- it is valid TOML with only a `[glossary]` table and at least one `[[topic]]` (and, in a
  catalog of one's own, `extends = "bundled"`: see `load_catalog`);
- a topic has a name, only the fields above, each of its type, and a `rule` that
  compiles within the query language's limits (`bot.topics.query`);
- a slug (by default `slugify(name)`) is lower-case words joined by hyphens and unique;
  it may differ from `slugify(name)`, so that a topic can be renamed while the
  subscriptions stored under its slug keep working;
- a parent is the slug of another topic, and following parents never comes back;
- names, slugs and aliases each mean one topic as `/follow` reads them
  (`bot.topics.resolve.topic_key`: case, punctuation, plurals and glossary
  abbreviations ignored), so no topic hides another;
- every glossary abbreviation and expansion has words, and no two abbreviations read
  alike or stand for the same expansion.

Each problem names the topic (name and slug) and where it is: the line of its
`[[topic]]` in the file, and for a rule the position in the rule, its line and column
in the file when the rule is written there verbatim, and the query language's hint.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from bot.domain import Topic, slugify
from bot.topics.query import parse_query
from bot.topics.query_tree import CATALOG_LIMITS, QueryError

FIELDS = ("name", "slug", "aliases", "description", "parent", "rule")
_TOP_LEVEL = ("glossary", "topic")
_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*topic[ \t]*\]\]", re.MULTILINE)
_TABLE = re.compile(r"^[ \t]*\[", re.MULTILINE)  # any table header
_RULE_KEY = re.compile(r"^[ \t]*rule[ \t]*=[ \t]*", re.MULTILINE)
_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)")


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a catalog: what, which topic, and where in the file."""

    message: str
    name: str | None = None  # the topic's name, when the problem belongs to a topic
    slug: str | None = None
    line: int | None = None  # 1-based, in the catalog file
    column: int | None = None

    def __str__(self) -> str:
        where = "" if self.line is None else f"line {self.line}"
        if where and self.column is not None:
            where += f", column {self.column}"
        who = "" if self.name is None else f"topic {self.name!r}"
        if who and self.slug:
            who += f" [{self.slug}]"
        return ": ".join(part for part in (where, who, self.message) if part)


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
    located = _Locator(raw, data)  # lines of this file's own topics, which come first
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


def _build(data: dict[str, Any], where: _Locator) -> tuple[Catalog, list[Problem]]:
    """The catalog the data describes, and everything wrong with it."""
    problems = [Problem(f"unknown table {key!r}") for key in data if key not in _TOP_LEVEL]
    glossary, glossary_problems = _glossary(data.get("glossary", {}))
    problems += glossary_problems
    entries = data.get("topic", [])
    if not isinstance(entries, list) or not entries:
        problems.append(Problem("no topics: write each one under a [[topic]] header"))
        entries = []
    topics: list[Topic] = []
    lines: dict[str, int | None] = {}  # slug -> line of the topic's [[topic]]
    for index, entry in enumerate(entries):
        topic, found = _topic(entry, where.line(index))
        problems += found
        if topic is None:
            continue
        problems += _rule_problems(topic, where, index)
        if topic.slug in lines:
            first = lines[topic.slug]
            message = f"slug {topic.slug!r} is used twice"
            message += f" (first at line {first})" if first else ""
            problems.append(Problem(message, topic.name, topic.slug, where.line(index)))
            continue
        topics.append(topic)
        lines[topic.slug] = where.line(index)
    problems += _parent_problems(topics, lines)
    problems += _name_clashes(topics, glossary, lines)
    problems.sort(key=lambda problem: problem.line or 0)  # file order; stable otherwise
    return Catalog(topics=tuple(topics), glossary=glossary), problems


def _glossary(table: object) -> tuple[dict[str, str], list[Problem]]:
    """Abbreviation -> expansion; each must have words and mean one thing."""
    from bot.topics.resolve import topic_key  # not at the top: resolve imports this module

    if not isinstance(table, dict):
        return {}, [Problem('[glossary] must be a table of abbreviation = "expansion"')]
    glossary: dict[str, str] = {}
    problems: list[Problem] = []
    abbreviations: dict[str, str] = {}  # key -> abbreviation
    expansions: dict[str, str] = {}  # key -> abbreviation
    for abbreviation, expansion in table.items():
        what = f"glossary {abbreviation!r}"
        short = topic_key(abbreviation)
        long = topic_key(expansion) if isinstance(expansion, str) else ""
        if not short or not long:
            problems.append(Problem(f"{what}: abbreviation and expansion must both have words"))
            continue
        if short in abbreviations:
            problems.append(Problem(f"{what} reads the same as {abbreviations[short]!r}"))
        elif long in expansions:
            problems.append(
                Problem(f"{what}: {expansion!r} already has the abbreviation {expansions[long]!r}")
            )
        else:
            abbreviations[short], expansions[long] = abbreviation, abbreviation
            glossary[abbreviation] = expansion
    return glossary, problems


def _topic(entry: object, line: int | None) -> tuple[Topic | None, list[Problem]]:
    """The topic an entry describes (None without a usable name) and its problems."""
    if not isinstance(entry, dict):
        return None, [Problem("a [[topic]] must be a table", line=line)]
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        shown = f" (slug {entry['slug']!r})" if isinstance(entry.get("slug"), str) else ""
        return None, [Problem(f"a topic has no name{shown}", line=line)]
    name = name.strip()
    slug = entry.get("slug") or slugify(name)
    problems: list[str] = []
    problems += [f"unknown field {key!r}" for key in entry if key not in FIELDS]
    for key in ("slug", "description", "parent", "rule"):
        if key in entry and not isinstance(entry[key], str):
            problems.append(f"{key} must be a string")
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        problems.append("aliases must be a list of strings")
        aliases = []
    slug = slug if isinstance(slug, str) else slugify(name)
    if slug != slugify(slug):
        problems.append(f"slug {slug!r} is not a valid slug (write it like {slugify(slug)!r})")
    rule = entry.get("rule", "")
    if isinstance(rule, str) and not rule.strip():  # not a string: reported above
        problems.append("no rule: write one in the query language, e.g. rule = '\"web agent\"'")
    parent = entry.get("parent")
    topic = Topic(
        slug=slug,
        name=name,
        description=str(entry.get("description", "")).strip(),
        aliases=tuple(a.strip() for a in aliases if a.strip()),
        parent=parent if isinstance(parent, str) and parent else None,
        rule=rule.strip() if isinstance(rule, str) else "",
    )
    return topic, [Problem(message, name, slug, line) for message in problems]


def _rule_problems(topic: Topic, where: _Locator, index: int) -> list[Problem]:
    if not topic.rule:
        return []  # already reported by _topic
    try:
        parse_query(topic.rule, CATALOG_LIMITS)
    except QueryError as error:
        message = f"rule: {error.message} at position {error.position} of the rule"
        message += f": {error.hint}" if error.hint else ""
        line, column = where.in_rule(index, topic.rule, error.position)
        return [Problem(message, topic.name, topic.slug, line, column)]
    return []


def _parent_problems(topics: Sequence[Topic], lines: dict[str, int | None]) -> Iterator[Problem]:
    """Unknown parents, and each cycle of parents once (at its first topic)."""
    by_slug = {topic.slug: topic for topic in topics}
    reported: set[str] = set()
    for topic in topics:
        if topic.parent is None:
            continue
        if topic.parent not in by_slug:
            message = f"parent {topic.parent!r} is not the slug of any topic"
            yield Problem(message, topic.name, topic.slug, lines[topic.slug])
            continue
        cycle = _cycle_from(topic, by_slug)
        if cycle and topic.slug not in reported:
            reported.update(cycle)
            message = "its parents form a cycle: " + " -> ".join((*cycle, cycle[0]))
            yield Problem(message, topic.name, topic.slug, lines[topic.slug])


def _cycle_from(topic: Topic, by_slug: dict[str, Topic]) -> tuple[str, ...]:
    """The slugs of the cycle `topic` is on (starting with it), or () if it is on none."""
    path = [topic.slug]
    parent = topic.parent
    while parent is not None and parent in by_slug:
        if parent == topic.slug:
            return tuple(path)
        if parent in path:
            return ()  # a cycle above this topic: reported at a topic on it
        path.append(parent)
        parent = by_slug[parent].parent
    return ()


def _name_clashes(
    topics: Sequence[Topic], glossary: dict[str, str], lines: dict[str, int | None]
) -> Iterator[Problem]:
    """Names, slugs and aliases that /follow would read as another topic's."""
    follow_key = _follow_key(glossary)
    owner: dict[str, tuple[Topic, str, str]] = {}  # key -> (topic, kind, text) it came from
    for topic in topics:
        for kind, text in (("name", topic.name), ("slug", topic.slug), *_aliases(topic)):
            key = follow_key(text)
            if not key:
                yield _at(topic, f"{kind} {text!r} has no letters or digits", lines)
                continue
            first, first_kind, first_text = owner.setdefault(key, (topic, kind, text))
            if first is not topic:
                message = (
                    f"{kind} {text!r} clashes with the {first_kind} {first_text!r} of topic "
                    f"{first.name!r} [{first.slug}]: /follow reads them alike"
                )
                yield _at(topic, message, lines)


def _follow_key(glossary: dict[str, str]) -> Callable[[str], str]:
    """`text -> topic_key(text, glossary)` as `bot.topics.resolve` computes it, fast.

    topic_key tries every glossary pair with a regular expression; here a pair is left
    out when it cannot match: its expansion is not in the text's plain key, and shares no
    word with any abbreviation (only a contraction can make an expansion appear that the
    plain key lacks, and then the expansion contains a word of that abbreviation).
    """
    from bot.topics.resolve import topic_key  # not at the top: resolve imports this module

    pairs = ((topic_key(a), topic_key(e)) for a, e in glossary.items())
    contract = tuple(sorted(pairs, key=lambda pair: -len(pair[1])))  # as resolve does
    short_words = {word for short, _ in contract for word in short.split()}
    always = {pair for pair in contract if short_words & set(pair[1].split())}

    def key(text: str) -> str:
        plain = topic_key(text)
        return topic_key(text, tuple(p for p in contract if p in always or p[1] in plain))

    return key


def _aliases(topic: Topic) -> Iterator[tuple[str, str]]:
    return (("alias", alias) for alias in topic.aliases)


def _at(topic: Topic, message: str, lines: dict[str, int | None]) -> Problem:
    return Problem(message, topic.name, topic.slug, lines.get(topic.slug))


class _Locator:
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
