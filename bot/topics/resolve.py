"""Finding the catalog topic a person meant.

"/follow rl for llm agents", "RL-for-LLM-Agents", "reinforcement learning for large
language model agents" and "RL for LLM Agnets" all mean the topic "RL for LLM Agents":
names, slugs and aliases are compared as word keys (case, punctuation and plurals
ignored) after glossary expansions are contracted to their abbreviations; typos are
caught with rapidfuzz. Pure functions over a `Catalog`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from rapidfuzz import fuzz, process

from bot.domain import Topic
from bot.topics.catalog import Catalog
from bot.topics.document import tokenize, word_key
from bot.topics.tagger import word_frequencies

# A typo-tolerant match is taken as meant when it scores this high (0-100) and clearly
# beats the next topic; below that, the closest topics are offered instead.
ACCEPT_SCORE = 88.0
ACCEPT_MARGIN = 6.0
SUGGEST_SCORE = 60.0

_QUERY_SYNTAX = re.compile(
    r"""["“”„()]|\b(?:AND|OR|NOT)\b|\b(?:ti|abs|au|cat|title|abstract|author|category):"""
)


@dataclass(frozen=True, slots=True)
class Resolution:
    """`topic` when the text names one topic (`exact` False when read through a typo);
    otherwise up to three `suggestions`, best first."""

    topic: Topic | None
    suggestions: tuple[Topic, ...] = ()
    exact: bool = True


def looks_like_query(text: str) -> bool:
    """Quotes, parentheses, upper-case operators or field scopes: a query, not a name."""
    return _QUERY_SYNTAX.search(text) is not None


def topic_key(text: str, glossary: tuple[tuple[str, str], ...] = ()) -> str:
    """Word keys, with every glossary expansion contracted to its abbreviation."""
    key = " ".join(word_key(token) for token in tokenize(text))
    for abbreviation, expansion in glossary:
        key = re.sub(rf"(?<!\S){re.escape(expansion)}(?!\S)", abbreviation, key)
    return key


@dataclass(frozen=True)
class _Index:
    glossary: tuple[tuple[str, str], ...]  # (abbreviation key, expansion key), longest first
    exact: dict[str, Topic]  # contracted key -> topic
    fuzzy: dict[str, Topic]  # contracted, plain and expanded keys -> topic


@cache
def _index(catalog: Catalog) -> _Index:
    """Keys for every name, slug and alias; computed once per catalog."""
    pairs = ((topic_key(a), topic_key(e)) for a, e in catalog.glossary.items())
    glossary = tuple(sorted(pairs, key=lambda pair: -len(pair[1])))
    expand = dict(glossary)
    exact: dict[str, Topic] = {}
    fuzzy: dict[str, Topic] = {}
    for topic in catalog.topics:
        for name in (topic.name, topic.slug, *topic.aliases):
            contracted, plain = topic_key(name, glossary), topic_key(name)
            expanded = " ".join(expand.get(word, word) for word in plain.split())
            exact.setdefault(contracted, topic)
            for key in (contracted, plain, expanded):
                fuzzy.setdefault(key, topic)
    return _Index(glossary, exact, fuzzy)


def resolve_topic(text: str, catalog: Catalog) -> Resolution:
    index = _index(catalog)
    wanted = topic_key(text, index.glossary)
    if not wanted:
        return Resolution(None)
    if wanted in index.exact:
        return Resolution(index.exact[wanted])
    ranked = _rank(topic_key(text), index, fuzz.ratio)
    if ranked and ranked[0][1] >= ACCEPT_SCORE and _typo_of(topic_key(text), ranked[0][0], index):
        runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
        if ranked[0][1] - runner_up >= ACCEPT_MARGIN:
            return Resolution(ranked[0][0], exact=False)
    return Resolution(None, suggest(text, catalog))


def _typo_of(typed: str, topic: Topic, index: _Index) -> bool:
    """Whether the words typed that are not the topic's are typos, not words of their own:
    "agnets" is a typo of "agents", but "learning" is a word, never a typo of "unlearning"
    (a word is one arXiv abstracts use, `word_frequencies`)."""
    own = {word for key, t in index.fuzzy.items() if t is topic for word in key.split()}
    known = word_frequencies()
    return not any(word in known for word in typed.split() if word not in own)


def suggest(text: str, catalog: Catalog, limit: int = 3) -> tuple[Topic, ...]:
    """The closest topics by fuzzy match over names and aliases, best first."""
    wanted = topic_key(text)
    if not wanted:
        return ()
    ranked = _rank(wanted, _index(catalog), _suggestion_score)
    return tuple(topic for topic, score in ranked[:limit] if score >= SUGGEST_SCORE)


def _suggestion_score(typed: str, key: str, **kwargs: Any) -> float:
    """Whole-name likeness (token_sort_ratio) averaged with WRatio, which also credits a
    typed word found inside a longer name: "difusion" suggests Diffusion Models, not
    "3D Vision", which token_sort_ratio alone ranked beside it."""
    return (fuzz.token_sort_ratio(typed, key, **kwargs) + fuzz.WRatio(typed, key, **kwargs)) / 2


def _rank(wanted: str, index: _Index, scorer: Any) -> list[tuple[Topic, float]]:
    """Best score per topic, best first."""
    best: dict[str, tuple[Topic, float]] = {}
    for key, score, _ in process.extract(wanted, list(index.fuzzy), scorer=scorer, limit=24):
        topic = index.fuzzy[key]
        if topic.slug not in best or best[topic.slug][1] < score:
            best[topic.slug] = (topic, score)
    return sorted(best.values(), key=lambda pair: -pair[1])


def search(words: str, catalog: Catalog, limit: int = 10) -> tuple[Topic, ...]:
    """Catalog topics for /topics: every word in name, alias or description, else fuzzy.
    Topics whose name or aliases hold every word come first ("/topics agents" starts with
    the topics called "... Agents"), each group in catalog order."""
    glossary = _index(catalog).glossary
    wanted = set(topic_key(words, glossary).split())
    if not wanted:
        return catalog.topics[:limit]
    hits = [topic for topic in catalog.topics if wanted <= _search_words(topic, glossary)]
    hits.sort(key=lambda topic: not wanted <= _search_words(topic, glossary, named=True))
    return tuple(hits[:limit]) or suggest(words, catalog, limit=min(limit, 5))


def _search_words(
    topic: Topic, glossary: tuple[tuple[str, str], ...], *, named: bool = False
) -> set[str]:
    """The words /topics finds a topic by: of its name, aliases and (unless `named`)
    description, both as written and with the glossary's abbreviations ("reinforcement"
    and "rl" both find Reinforcement Learning, whose key contracts the phrase to "rl")."""
    text = " ".join((topic.name, *topic.aliases, *(() if named else (topic.description,))))
    return set(topic_key(text, glossary).split()) | set(topic_key(text).split())
