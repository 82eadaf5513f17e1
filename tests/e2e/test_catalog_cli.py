"""`paperwatch topics --check` and `paperwatch retag` on a broken catalog, as a person runs them.

The broken catalogs are the bundled one (or the small test one) with the kind of edit a
person makes by mistake; the check names each topic at fault and where, and retag
refuses before it touches the database.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.topics.catalog import load_catalog
from tests.e2e.test_cli import SMALL_RSS, paperwatch

BUNDLED = Path(__file__).parents[2] / "bot" / "topics" / "catalog.toml"
SMALL = Path(__file__).parents[1] / "fixtures" / "catalog_small.toml"


def broken_bundled(tmp_path: Path) -> Path:
    """The bundled catalog with two mistakes: a misspelt parent in "RL for LLM Agents" and
    an opening parenthesis never closed in the rule of "Agentic RAG"."""
    text = BUNDLED.read_text(encoding="utf-8")
    start = text.index('name = "RL for LLM Agents"')
    parent = text.index('parent = "reinforcement-learning"', start)
    text = text[:parent] + 'parent = "reinforcment-learning"' + text[parent + 33 :]
    rule = text.index("rule = '''", text.index('name = "Agentic RAG"')) + len("rule = '''")
    text = text[:rule] + "(" + text[rule:]
    path = tmp_path / "broken.toml"
    path.write_text(text, encoding="utf-8")
    return path


def stored_tags(tmp_path: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(tmp_path / "paperwatch.db") as conn:
        return conn.execute("SELECT * FROM paper_tags ORDER BY paper_id, tag").fetchall()


def test_the_bundled_catalog_passes_the_check(tmp_path: Path) -> None:
    result = paperwatch("topics", "--check", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == f"catalog OK: {len(load_catalog())} topics\n"


def test_check_lists_every_problem_with_its_topic_and_place(tmp_path: Path) -> None:
    result = paperwatch(
        "topics", "--check", "--catalog", str(broken_bundled(tmp_path)), cwd=tmp_path
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    head, *problems = result.stdout.splitlines()
    assert head.endswith("broken.toml: 2 problems")
    assert (
        "topic 'RL for LLM Agents' [rl-for-llm-agents]: parent 'reinforcment-learning'"
        in (problems[0])
    )
    assert "topic 'Agentic RAG' [agentic-rag]: rule: missing ')' at position" in problems[1]
    assert "of the rule: add ')' to close the '(' at position 0" in problems[1]
    assert problems[1].lstrip().startswith("line ") and ", column " in problems[1]


def test_listing_a_broken_catalog_is_refused_in_a_few_lines(tmp_path: Path) -> None:
    result = paperwatch("topics", "--catalog", str(broken_bundled(tmp_path)), cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("paperwatch: the topic catalog is broken:")
    assert "topic 'Agentic RAG' [agentic-rag]" in result.stderr


def test_retag_refuses_a_broken_catalog_and_changes_no_stored_tag(tmp_path: Path) -> None:
    assert paperwatch("ingest", "--file", str(SMALL_RSS), cwd=tmp_path).returncode == 0
    before = stored_tags(tmp_path)
    assert before  # the bundled catalog tagged the papers
    # A catalog that would tag these papers quite differently, but for one broken rule.
    broken = tmp_path / "small.toml"
    broken.write_text(
        SMALL.read_text(encoding="utf-8") + "\n[[topic]]\nname = \"Graph RAG\"\nrule = 'RAG AND'\n",
        encoding="utf-8",
    )
    result = paperwatch("retag", "--catalog", str(broken), cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "topic 'Graph RAG' [graph-rag]: rule: nothing after AND at position 4" in result.stderr
    assert "Retagged" not in result.stdout
    assert stored_tags(tmp_path) == before
    # The same catalog mended is taken, and does change the tags (so the above could fail).
    mended = paperwatch("retag", "--catalog", str(SMALL), cwd=tmp_path)
    assert mended.returncode == 0, mended.stderr
    assert "Retagged 4 papers with 4 rules" in mended.stdout
    assert stored_tags(tmp_path) != before
