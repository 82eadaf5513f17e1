"""A compiled query gives what a plain reading of its syntax tree gives.

`programs.any_of` narrows a long OR to the parts whose word the paper has (`query_tree._gate`). That
shortcut must never change a match or its "why" (the labels and their order), so random
queries mixing every kind of term are compared with a slow evaluator written from the
language's meaning alone.
"""

from __future__ import annotations

import random

import pytest

from bot.topics import document, programs
from bot.topics.document import Document
from bot.topics.query import parse_query
from bot.topics.query_tree import CATALOG_LIMITS, And, Node, Not, Or, Scope, Term

WORDS = ["agent", "agents", "search", "deep", "research", "memory", "tool", "reward", "web"]
TERMS = [
    *WORDS,
    '"deep research"',
    '"search agent"',
    '"tool use"',
    "agent*",
    "rese*",
    "ti:agent",
    "ti:age*",
    "ti:rese*",
    'ti:"deep research"',
    "abs:memory",
    "cat:cs.AI",
    "cat:cs.*",
    "au:smith",
]
FIELDS = {Scope.TEXT: document.TEXT, Scope.TITLE: document.TITLE}
FIELDS |= {Scope.ABSTRACT: document.ABSTRACT, Scope.AUTHOR: document.AUTHORS}


def reference(node: Node, doc: Document, why: list[str]) -> bool:
    """The meaning of `node`: every OR part runs, AND stops at the first failure and then
    forgets what its parts recorded, NOT records nothing."""
    if isinstance(node, Term):
        field = None if node.scope is Scope.CATEGORY else FIELDS[node.scope]
        if programs.term_test(field, node.keys, node.prefix)(doc):
            why.append(node.label)
            return True
        return False
    if isinstance(node, Not):
        return not reference(node.child, doc, [])
    if isinstance(node, And):
        mark = len(why)
        if all(reference(child, doc, why) for child in node.children):
            return True
        del why[mark:]
        return False
    assert isinstance(node, Or)
    found = False
    for child in node.children:
        found = reference(child, doc, why) or found
    return found


def random_query(rng: random.Random, depth: int = 0) -> str:
    if depth >= 2 or rng.random() < 0.3:
        return rng.choice(TERMS)
    parts = [random_query(rng, depth + 1) for _ in range(rng.randint(2, 7))]
    if rng.random() < 0.2:
        parts[-1] = "NOT " + parts[-1]
    joined = (" OR " if rng.random() < 0.7 else " AND ").join(parts)
    return f"({joined})" if depth else joined


def random_doc(rng: random.Random) -> Document:
    def text(n: int) -> str:
        return " ".join(rng.choice([*WORDS, "the", "of", "llm"]) for _ in range(n))

    authors = rng.sample(["Ann Smith", "Bo Li", "Smith Jones"], rng.randint(0, 2))
    return Document(text(5), text(30), authors, rng.sample(["cs.AI", "cs.CL", "math.OC"], 1))


@pytest.mark.parametrize("seed", range(20))
def test_compiled_queries_match_and_explain_like_the_plain_reading(seed: int) -> None:
    rng = random.Random(seed)
    docs = [random_doc(rng) for _ in range(40)]
    for _ in range(15):
        text = random_query(rng)
        if "OR" not in text or text.startswith("NOT"):
            continue
        try:
            query = parse_query(text, CATALOG_LIMITS)
        except ValueError:
            continue  # e.g. a query made only of negations
        for doc in docs:
            why: list[str] = []
            expected = tuple(dict.fromkeys(why)) if reference(query.root, doc, why) else None
            assert query.match(doc) == expected, (text, doc.tokens)


def test_a_long_or_runs_only_the_parts_whose_word_the_paper_has() -> None:
    ran: list[int] = []

    def part(i: int) -> programs.Program:
        def run(doc: Document, why: list[str]) -> bool:
            ran.append(i)
            return False

        return run

    gates = (
        (document.TEXT, "agent", None),
        None,
        (document.TITLE, "memory", None),
        (document.TEXT, "web", None),
    )
    program = programs.any_of(tuple(part(i) for i in range(4)), gates)
    program(Document("memory for agents", "no such words"), [])
    assert ran == [0, 1, 2]  # part 3 needs "web"; part 1 has no gate and always runs
