"""The checks a topic catalog must pass, each giving `Problem`s rather than stopping.

The rules a catalog must follow, checked here for `bot.topics.catalog.load_catalog` (which
refuses the file with every problem found, not only the first) and printed by
`paperwatch topics --check`:

- it is valid TOML with only a `[glossary]` table and at least one `[[topic]]` (and, in a
  catalog of one's own, `extends = "bundled"`: see `load_catalog`);
- a topic has a name, only the fields of the format (`FIELDS`; see `bot.topics.catalog`),
  each of its type, and a `rule` that compiles within the query language's limits
  (`bot.topics.query`);
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

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.domain import Topic, slugify
from bot.topics.query import compiled_query
from bot.topics.query_tree import CATALOG_LIMITS, QueryError

if TYPE_CHECKING:
    from bot.topics.catalog import Locator

# The fields a [[topic]] may have.
FIELDS = ("name", "slug", "aliases", "description", "parent", "rule")


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


def read_glossary(table: object) -> tuple[dict[str, str], list[Problem]]:
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


def read_topic(entry: object, line: int | None) -> tuple[Topic | None, list[Problem]]:
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


def rule_problems(topic: Topic, where: Locator, index: int) -> list[Problem]:
    if not topic.rule:
        return []  # already reported by _topic
    try:
        compiled_query(topic.rule, CATALOG_LIMITS)
    except QueryError as error:
        message = f"rule: {error.message} at position {error.position} of the rule"
        message += f": {error.hint}" if error.hint else ""
        line, column = where.in_rule(index, topic.rule, error.position)
        return [Problem(message, topic.name, topic.slug, line, column)]
    return []


def parent_problems(topics: Sequence[Topic], lines: dict[str, int | None]) -> Iterator[Problem]:
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


def name_clashes(
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
