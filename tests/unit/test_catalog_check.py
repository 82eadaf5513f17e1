"""Catalog edits that break a rule are refused with the topic and the place of the problem.

Each kind of break is written into a small catalog file the way a person would make it;
`load_catalog` must refuse it with every problem, each naming the topic (name and slug),
the line of its `[[topic]]` and, for a rule, the position in the rule and its line and
column in the file. `open_catalog` (bot start-up, `paperwatch retag`) refuses the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import open_catalog
from bot.config import StartupError
from bot.topics.catalog import CatalogError, load_catalog
from bot.topics.catalog_checks import Problem
from bot.topics.query import parse_query
from bot.topics.query_tree import CATALOG_LIMITS, TYPED_LIMITS, QueryError

# Lines 1-9; the topic added by each test starts on line 10.
BASE = """\
[glossary]
RL = "Reinforcement Learning"
RAG = "Retrieval-Augmented Generation"

[[topic]]
name = "Reinforcement Learning"
slug = "reinforcement-learning"
aliases = ["RL"]
rule = '"reinforcement learning" OR RL'
"""


def topic(name: str, rule: str = "'\"web agent\"'", **fields: str) -> str:
    """A [[topic]] entry; `fields` are written as given (already TOML values)."""
    lines = ["[[topic]]", f'name = "{name}"', *(f"{k} = {v}" for k, v in fields.items())]
    return "\n".join([*lines, f"rule = {rule}"]) + "\n"


def refused(tmp_path: Path, text: str) -> tuple[Problem, ...]:
    path = tmp_path / "catalog.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CatalogError) as caught:
        load_catalog(path)
    assert str(path) in str(caught.value)
    return caught.value.problems


def only(problems: tuple[Problem, ...]) -> Problem:
    assert len(problems) == 1, problems
    return problems[0]


def test_the_base_catalog_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(BASE + topic("Web Agents"), encoding="utf-8")
    assert len(load_catalog(path)) == 2


def test_the_bundled_catalog_passes_every_check() -> None:
    """A catalog edit that breaks any rule below fails this test (and CI)."""
    assert len(load_catalog()) >= 197


def test_a_toml_syntax_error_names_the_topic_it_is_in(tmp_path: Path) -> None:
    problem = only(refused(tmp_path, BASE + '\n[[topic]]\nname = "Web Agents"\nrule = "web\n'))
    assert (problem.name, problem.slug) == ("Web Agents", "web-agents")
    assert (problem.line, problem.column) == (13, 12)
    assert "not valid TOML" in str(problem) and "line 13, column 12" in str(problem)


def test_a_toml_syntax_error_before_any_topic_has_its_line(tmp_path: Path) -> None:
    problem = only(refused(tmp_path, "[glossary]\nRL = \n" + topic("Web Agents")))
    assert problem.name is None and problem.line == 2


def test_a_toml_syntax_error_after_the_topics_is_not_blamed_on_the_last_one(
    tmp_path: Path,
) -> None:
    text = topic("Web Agents") + "\n[glossary]\nRL = Reinforcement\n"
    problem = only(refused(tmp_path, text))
    assert problem.name is None and problem.line == 6


def test_a_toml_syntax_error_in_a_topic_without_a_name_says_where_it_starts(
    tmp_path: Path,
) -> None:
    problem = only(refused(tmp_path, BASE + "[[topic]]\nslug = web-agents\n"))
    assert problem.name is None and problem.line == 11
    assert "in the [[topic]] at line 10, which has no name" in problem.message


def test_an_unknown_parent(tmp_path: Path) -> None:
    problem = only(refused(tmp_path, BASE + topic("Web Agents", parent='"agents"')))
    assert (problem.name, problem.slug, problem.line) == ("Web Agents", "web-agents", 10)
    assert "parent 'agents' is not the slug of any topic" in problem.message


def test_a_duplicate_slug_names_both_places(tmp_path: Path) -> None:
    text = BASE + topic("RL Again", slug='"reinforcement-learning"')
    problem = only(refused(tmp_path, text))
    assert (problem.name, problem.line) == ("RL Again", 10)
    assert "slug 'reinforcement-learning' is used twice (first at line 5)" in problem.message


def test_a_slug_that_is_not_a_slug(tmp_path: Path) -> None:
    problem = only(refused(tmp_path, BASE + topic("Web Agents", slug='"Web Agents"')))
    assert problem.name == "Web Agents" and "write it like 'web-agents'" in problem.message


def test_a_rule_that_does_not_parse_has_its_position_and_hint(tmp_path: Path) -> None:
    text = BASE + topic("Web Agents", rule="'(\"web agent\" OR browser*'")
    problem = only(refused(tmp_path, text))
    assert (problem.name, problem.slug) == ("Web Agents", "web-agents")
    assert "missing ')' at position 24 of the rule" in problem.message
    assert "add ')' to close the '(' at position 0" in problem.message  # the hint
    # rule = '...' on line 12: the rule's text starts at column 9, position 24 is column 33.
    assert (problem.line, problem.column) == (12, 33)


def test_a_multi_line_rule_error_points_at_its_line_in_the_file(tmp_path: Path) -> None:
    rule = "'''\n(\"web agent\" OR browser*)\n  AND NOT survey:\n'''"
    problem = only(refused(tmp_path, BASE + topic("Web Agents", rule=rule)))
    assert "unknown scope 'survey:'" in problem.message
    assert "position 36 of the rule" in problem.message
    assert (problem.line, problem.column) == (14, 11)


def test_a_rule_written_with_escapes_is_placed_at_its_topic_not_at_a_wrong_column(
    tmp_path: Path,
) -> None:
    """The rule's text is not in the file as written ("\\u0022" is a quote), so the file
    position of its error is unknown: the topic's line is given, and no column."""
    problem = only(
        refused(tmp_path, BASE + topic("Web Agents", rule='"\\u0022web agent\\u0022 OR"'))
    )
    assert "nothing after OR at position 12 of the rule" in problem.message
    assert (problem.line, problem.column) == (10, None)


@pytest.mark.parametrize(
    ("rule", "what"),
    [
        ("'" + " OR ".join(["web"] * (CATALOG_LIMITS.terms + 1)) + "'", "too many terms"),
        (
            "'" + "(" * (CATALOG_LIMITS.depth + 1) + "web" + ")" * (CATALOG_LIMITS.depth + 1) + "'",
            "nested too deeply",
        ),
        ("'" + "web " * (CATALOG_LIMITS.chars // 4 + 1) + "'", "query too long"),
    ],
    ids=["terms", "depth", "length"],
)
def test_a_rule_over_the_limits(tmp_path: Path, rule: str, what: str) -> None:
    problem = only(refused(tmp_path, BASE + topic("Web Agents", rule=rule)))
    assert problem.name == "Web Agents" and what in problem.message
    assert "of the rule" in problem.message and problem.line == 12


@pytest.mark.parametrize("rule", ["''", "'   '"])
def test_an_empty_rule(tmp_path: Path, rule: str) -> None:
    problem = only(refused(tmp_path, BASE + topic("Web Agents", rule=rule)))
    assert problem.name == "Web Agents" and problem.message.startswith("no rule")


def test_a_misspelt_field_is_not_silently_dropped(tmp_path: Path) -> None:
    text = BASE + '[[topic]]\nname = "Web Agents"\nrules = "web"\n'
    messages = [p.message for p in refused(tmp_path, text)]
    assert "unknown field 'rules'" in messages and any(m.startswith("no rule") for m in messages)


def test_fields_of_the_wrong_type(tmp_path: Path) -> None:
    text = BASE + topic("Web Agents", rule="7", aliases='"web agent"', parent="3")
    messages = {p.message for p in refused(tmp_path, text)}
    expected = {"aliases must be a list of strings", "parent must be a string"}
    assert messages == expected | {"rule must be a string"}


def test_a_cycle_of_parents_is_reported_once(tmp_path: Path) -> None:
    text = BASE + topic("Alpha", parent='"beta"') + topic("Beta", parent='"alpha"')
    problem = only(refused(tmp_path, text))
    assert (problem.name, problem.line) == ("Alpha", 10)
    assert "its parents form a cycle: alpha -> beta -> alpha" in problem.message


def test_a_topic_that_is_its_own_parent(tmp_path: Path) -> None:
    problem = only(refused(tmp_path, BASE + topic("Alpha", parent='"alpha"')))
    assert "cycle: alpha -> alpha" in problem.message


def test_an_alias_that_is_another_topics_name(tmp_path: Path) -> None:
    text = BASE + topic("Web Agents", aliases='["reinforcement-learning"]')
    problem = only(refused(tmp_path, text))
    assert (problem.name, problem.slug, problem.line) == ("Web Agents", "web-agents", 10)
    assert "alias 'reinforcement-learning' clashes with the name" in problem.message
    assert "'Reinforcement Learning' [reinforcement-learning]" in problem.message


def test_an_alias_that_clashes_only_through_the_glossary(tmp_path: Path) -> None:
    """RAG is the glossary's abbreviation of the other topic's name: /follow RAG would
    find that topic, never this one."""
    text = BASE + topic("Retrieval-Augmented Generation") + topic("Graph RAG", aliases='["RAG"]')
    problem = only(refused(tmp_path, text))
    assert problem.name == "Graph RAG" and "alias 'RAG' clashes" in problem.message


def test_two_topics_with_one_name(tmp_path: Path) -> None:
    text = BASE + topic("Reinforcement learning", slug='"rl-2"')
    problem = only(refused(tmp_path, text))
    assert (problem.name, problem.slug) == ("Reinforcement learning", "rl-2")
    assert "name 'Reinforcement learning' clashes" in problem.message


def test_a_name_without_words(tmp_path: Path) -> None:
    problem = only(refused(tmp_path, BASE + topic("???", slug='"q"')))
    assert problem.message == "name '???' has no letters or digits"


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ('Rl = "Robot Learning"', "glossary 'Rl' reads the same as 'RL'"),
        ('ReL = "Reinforcement learning"', "already has the abbreviation 'RL'"),
        ('X = ""', "glossary 'X': abbreviation and expansion must both have words"),
    ],
    ids=["abbreviation", "expansion", "empty"],
)
def test_a_glossary_entry_that_collides(tmp_path: Path, entry: str, said: str) -> None:
    last = 'RAG = "Retrieval-Augmented Generation"\n'
    text = BASE.replace(last, f"{last}{entry}\n", 1)
    assert said in only(refused(tmp_path, text)).message


def test_no_topics_at_all(tmp_path: Path) -> None:
    text = BASE.replace("[[topic]]", "[[topics]]")
    assert [p.message for p in refused(tmp_path, text)] == [
        "unknown table 'topics'",
        "no topics: write each one under a [[topic]] header",
    ]


def test_every_problem_is_reported_in_file_order(tmp_path: Path) -> None:
    text = (
        BASE
        + topic("Alpha", parent='"nowhere"')  # line 10
        + topic("Beta", rule="'web AND'")  # line 14
        + topic("Gamma", aliases='["alpha"]')  # line 17
    )
    problems = refused(tmp_path, text)
    assert [(p.name, p.line) for p in problems] == [("Alpha", 10), ("Beta", 16), ("Gamma", 17)]
    lines = str(CatalogError("catalog.toml", problems)).splitlines()
    assert lines[0] == "catalog.toml: 3 problems"
    assert lines[2].startswith("  line 16, column 13: topic 'Beta' [beta]: rule: nothing after AND")


def test_start_up_refuses_a_broken_catalog_with_the_same_messages(tmp_path: Path) -> None:
    path = tmp_path / "catalog.toml"
    path.write_text(BASE + topic("Web Agents", rule="'web AND'"), encoding="utf-8")
    with pytest.raises(StartupError) as caught:
        open_catalog(path)
    message = str(caught.value)
    assert message.startswith("the topic catalog is broken:")
    assert "topic 'Web Agents' [web-agents]: rule: nothing after AND at position 4" in message


def test_a_catalog_rule_may_name_more_of_a_topics_vocabulary_than_a_typed_query(
    tmp_path: Path,
) -> None:
    """Rules are written by maintainers and checked here; followed queries keep the
    typed limits (tests/unit/test_query.py)."""
    words = " OR ".join(f'"term{i} agent"' for i in range(TYPED_LIMITS.terms + 10))
    assert TYPED_LIMITS.chars < len(words) <= CATALOG_LIMITS.chars
    with pytest.raises(QueryError):
        parse_query(words)
    path = tmp_path / "catalog.toml"
    path.write_text(BASE + topic("Web Agents", rule=f"'{words}'"), encoding="utf-8")
    assert load_catalog(path).by_slug("web-agents").rule == words
