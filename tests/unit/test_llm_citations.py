"""The passages a language model gets for /ask, and its answer kept to them (pure)."""

from __future__ import annotations

from datetime import date

import pytest

from bot.domain import Paper
from bot.topics.llm_citations import MAX_CHARS, checked
from bot.topics.llm_prompt import (
    ANSWER_TOKENS,
    MAX_PASSAGES,
    PROMPT_CHARS,
    estimate_tokens,
    passages,
    user_message,
)


def paper(n: int, abstract: str = "An abstract about agents. " * 8, arxiv_id: str = "") -> Paper:
    return Paper(arxiv_id or f"2603.{n:05d}", f"Paper {n}", abstract, announced=date(2026, 3, 2))


GIVEN = passages(
    [paper(1), paper(2, arxiv_id="hep-th/9901001v2"), paper(3, arxiv_id="2603.00003v4")], []
)


@pytest.mark.parametrize(
    ("answer", "text", "cited"),
    [
        ("Agents plan [1].", "Agents plan [1].", (1,)),
        ("Agents plan [2, 9] and act [3][1].", "Agents plan [2] and act [3, 1].", (2, 3, 1)),
        ("Agents plan [1-3].", "Agents plan [1, 2, 3].", (1, 2, 3)),
        ("Agents plan [0] [4] [1].", "Agents plan [1].", (1,)),
        ("Agents plan [1; 3].", "Agents plan [1, 3].", (1, 3)),
        # An id among the passages becomes its number, with or without version or link.
        ("Shown in arXiv:2603.00003.", "Shown in [3].", (3,)),
        ("Shown in https://arxiv.org/pdf/2603.00003v1.pdf too.", "Shown in [3] too.", (3,)),
        ("Shown in (hep-th/9901001) [1].", "Shown in [2, 1].", (2, 1)),
        # A sentence that cited only what was not given goes; a plain one stays.
        ("Agents plan [1]. Mars is red [7]. So it goes.", "Agents plan [1]. So it goes.", (1,)),
        ("See arXiv:2401.99999 [9]. Nothing else.", "Nothing else.", ()),
        ("The passages do not say.", "The passages do not say.", ()),
        ("Text [1000000000] here.", "", ()),
        # Hostile text stays text: markup is not interpreted, invisible characters go.
        ("<b>Bold</b> & R&D\u200b [1]", "<b>Bold</b> & R&D [1]", (1,)),
        ("Agents [1]\n\n\nplan   [2].", "Agents [1] plan [2].", (1, 2)),
    ],
)
def test_only_the_passages_given_stay_cited(answer: str, text: str, cited: tuple) -> None:
    result = checked(answer, GIVEN)
    assert (result.text, result.cited) == (text, cited)


def test_a_long_answer_is_cut_and_a_wide_range_cites_its_ends() -> None:
    long = checked("Agents plan well [1]. " * 500, GIVEN)
    assert len(long.text) <= MAX_CHARS
    assert long.cited == (1,)
    assert checked("Agents [1-999999].", GIVEN).cited == (1,)


def test_passages_put_the_quoted_papers_first_and_stay_within_the_budget() -> None:
    quoted = [paper(7)]
    candidates = [paper(n, "word " * 1000) for n in range(1, 20)]
    given = passages(quoted, [*candidates, paper(7)])
    assert [p.paper.arxiv_id for p in given][:2] == ["2603.00007", "2603.00001"]
    assert [p.number for p in given] == list(range(1, len(given) + 1))
    assert len(given) <= MAX_PASSAGES
    assert sum(len(p.text) for p in given) <= PROMPT_CHARS
    assert len({p.paper.arxiv_id for p in given}) == len(given)  # no paper twice
    message = user_message("  what do agents do?  ", given)
    assert message.startswith("Passages:\n[1] Paper 7. An abstract")
    assert message.endswith("\n\nQuestion: what do agents do?")
    assert estimate_tokens("q", given) > ANSWER_TOKENS + len(message) // 5


def test_a_hostile_title_is_one_line_of_text_in_its_passage() -> None:
    hostile = Paper("2603.00099", "Big $\\alpha$\nTitle " + "x" * 9000, "Short.\u200b")
    (given,) = passages([], [hostile])
    assert "\n" not in given.text
    assert "\u200b" not in given.text
    assert len(given.text) <= 1500


def test_a_short_abstract_is_a_passage_and_the_budget_cuts_none_to_nothing() -> None:
    short = [Paper(f"2603.0010{n}", "T", "Short.") for n in range(3)]
    assert [p.text for p in passages([], short)] == ["T. Short."] * 3
    long = [paper(n, "word " * 1000) for n in range(1, 4)]
    given = passages([], long, limit_chars=1500 + 1500 + 150)
    assert len(given) == 2  # 150 characters left: not a third passage cut to a stub
