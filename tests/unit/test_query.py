"""The topic query language: parsing, canonical form, matching and errors."""

from __future__ import annotations

import dataclasses

import pytest

from bot.domain import Author, Paper
from bot.topics.document import EXCEPTIONS, Document, tokenize, word_key
from bot.topics.query import parse_query
from bot.topics.query_tree import (
    MAX_DEPTH,
    MAX_QUERY_CHARS,
    MAX_TERMS,
    And,
    Not,
    Or,
    QueryError,
    Scope,
    Term,
)


def doc(title: str = "", abstract: str = "", authors=(), categories=()) -> Document:
    return Document(title, abstract, authors, categories)


def word(text: str, scope: Scope = Scope.TEXT) -> Term:
    return Term(scope, (text,), (word_key(text),))


# --- parsing -----------------------------------------------------------------------------

CANONICAL = [
    ("agent", "agent"),
    ("Agent", "agent"),
    ("a b", "a AND b"),
    ("a AND b", "a AND b"),
    ("a b OR c", "(a AND b) OR c"),
    ("a OR b c", "a OR (b AND c)"),
    ("a OR b AND c", "a OR (b AND c)"),
    ("(a OR b) c", "(a OR b) AND c"),
    ("a OR (b OR c)", "a OR b OR c"),
    ("((a))", "a"),
    ("NOT a b", "NOT a AND b"),
    ("a NOT b", "a AND NOT b"),
    ("a AND NOT (b OR c)", "a AND NOT (b OR c)"),
    ("a NOT NOT b", "a AND NOT (NOT b)"),
    ("a and b or not c", "a AND and AND b AND or AND not AND c"),
    ("ti:(agent OR agents)", "ti:agent OR ti:agents"),
    ('ti:"Reinforcement   Learning"', 'ti:"reinforcement learning"'),
    ("abs:agent", "abs:agent"),
    ("Title:agent AUTHOR:hinton", "ti:agent AND au:hinton"),
    ("tool-use", '"tool use"'),
    ("GPT-4o", '"gpt 4o"'),
    ("agent*", "agent*"),
    ("AGENT*", "agent*"),
    ("cat:cs.ro", "cat:cs.RO"),
    ("cat:CS.*", "cat:cs.*"),
    ("cat:hep-th", "cat:hep-th"),
    ("cat:cond-mat.str-el", "cat:cond-mat.str-el"),
    ("cat:physics.optics", "cat:physics.optics"),
    ("au:Hinton", "au:hinton"),
    ("“smart quotes”", '"smart quotes"'),
    ("ＬＬＭ", "llm"),
    ('"diffusion policy" AND cat:cs.RO', '"diffusion policy" AND cat:cs.RO'),
    ('"[a-z]+ (x|y)"', '"a z x y"'),  # regex syntax in quotes is just words
]


@pytest.mark.parametrize(("text", "canonical"), CANONICAL)
def test_canonical_form(text: str, canonical: str) -> None:
    query = parse_query(text)
    assert str(query) == canonical
    assert query.text == text


@pytest.mark.parametrize(("text", "canonical"), CANONICAL)
def test_canonical_form_parses_back_to_an_equal_query(text: str, canonical: str) -> None:
    query = parse_query(text)
    again = parse_query(canonical)
    assert again == query
    assert hash(again) == hash(query)


PRECEDENCE = [
    ("a OR b AND NOT c", Or((word("a"), And((word("b"), Not(word("c"))))))),
    ("a b OR c", Or((And((word("a"), word("b"))), word("c")))),
    ("(a OR b) AND c", And((Or((word("a"), word("b"))), word("c")))),
    ("NOT a AND b", And((Not(word("a")), word("b")))),
    ("a AND b AND c", And((word("a"), word("b"), word("c")))),
    ("ti:(a OR b) c", And((Or((word("a", Scope.TITLE), word("b", Scope.TITLE))), word("c")))),
]


@pytest.mark.parametrize(("text", "tree"), PRECEDENCE)
def test_precedence_and_scopes_build_the_expected_tree(text: str, tree: object) -> None:
    assert parse_query(text).root == tree


@pytest.mark.parametrize(
    ("text", "scope", "words", "keys", "prefix"),
    [
        ("agents", Scope.TEXT, ("agents",), ("agent",), False),
        ('"Policies Learned"', Scope.TEXT, ("policies", "learned"), ("policy", "learned"), False),
        ("agent*", Scope.TEXT, ("agent",), ("agent",), True),
        ("agents*", Scope.TEXT, ("agents",), ("agents",), True),
        ("au:Schölkopf", Scope.AUTHOR, ("schölkopf",), ("scholkopf",), False),
        ("au:Williams", Scope.AUTHOR, ("williams",), ("williams",), False),
        ("cat:cs.LG", Scope.CATEGORY, ("cs.LG",), ("cs.lg",), False),
        ("cat:math.*", Scope.CATEGORY, ("math.",), ("math.",), True),
    ],
)
def test_terms_keep_what_was_written_and_what_is_looked_up(
    text: str, scope: Scope, words: tuple[str, ...], keys: tuple[str, ...], prefix: bool
) -> None:
    term = parse_query(text).root
    assert isinstance(term, Term)
    assert (term.scope, term.words, term.keys, term.prefix) == (scope, words, keys, prefix)


def test_equal_queries_compare_and_hash_by_tree_not_text() -> None:
    first, second = parse_query("a  AND  b"), parse_query("a b")
    assert first == second and hash(first) == hash(second)
    assert first.text != second.text
    assert parse_query("tool-use") == parse_query('"tool use"')
    assert parse_query("a b") != parse_query("a OR b")
    assert len({parse_query("x OR y"), parse_query("x  OR y"), parse_query("y OR x")}) == 2


def test_query_is_immutable() -> None:
    query = parse_query("agent")
    with pytest.raises(dataclasses.FrozenInstanceError):
        query.text = "other"  # type: ignore[misc]


# --- text normalisation ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "key"),
    [
        ("agents", "agent"),
        ("policies", "policy"),
        ("searches", "search"),
        ("boxes", "box"),
        ("classes", "class"),
        ("processes", "process"),
        ("caches", "cach"),
        ("cache", "cach"),
        ("sizes", "siz"),
        ("llms", "llm"),
        ("gpus", "gpu"),
        ("apis", "api"),
        ("ties", "tie"),
        ("bias", "bias"),
        ("biases", "bias"),
        ("process", "process"),
        ("analysis", "analysis"),
        ("analyses", "analysis"),
        ("class", "class"),
        ("gas", "gas"),
        ("gases", "gas"),
        ("corpus", "corpus"),
        ("status", "status"),
        ("news", "news"),
        ("series", "series"),
        ("its", "its"),
        ("1990s", "1990s"),
        ("países", "países"),
        ("learning", "learning"),
    ],
)
def test_plural_normaliser(token: str, key: str) -> None:
    assert word_key(token) == key


@pytest.mark.parametrize("value", sorted(set(EXCEPTIONS.values())))
def test_exception_targets_are_their_own_keys(value: str) -> None:
    assert word_key(value) == value


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Tool-Use, RL & CURL!", ["tool", "use", "rl", "curl"]),
        ("snake_case x2", ["snake", "case", "x2"]),
        ("ﬁne-tuning ＬＬＭ", ["fine", "tuning", "llm"]),
        ("agent\u200bic so\u00adlution", ["agentic", "solution"]),
        ("Straße", ["strasse"]),
        ("🤖agent🚀", ["agent"]),
        ("\u202bשלום עולם\u202c", ["שלום", "עולם"]),
        (r"$\mathcal{O}(n^2)$", ["mathcal", "o", "n", "2"]),
    ],
)
def test_tokenize(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


# --- matching ----------------------------------------------------------------------------

MATCHING = [
    # word boundaries
    ("RL", doc("Parsing URL strings with CURL"), None),
    ("RL", doc("RL-based agents"), ("rl",)),
    ("url", doc("Parsing URLs"), ("url",)),
    # hyphens and phrases
    ("tool-use", doc(abstract="improves tool use in agents"), ("tool use",)),
    ('"tool use"', doc(abstract="Tool-Use benchmarks"), ("tool use",)),
    ("tool-use", doc(abstract="a tool for use"), None),
    (
        '"reinforcement learning"',
        doc(abstract="deep reinforcement-learning"),
        ("reinforcement learning",),
    ),
    (
        '"reinforcement learning"',
        doc(abstract="Reinforcement\n  Learning"),
        ("reinforcement learning",),
    ),
    ('"reinforcement learning"', doc(abstract="reinforcement of learning"), None),
    ('"reinforcement learning"', doc(abstract="learning reinforcement"), None),
    ('"alpha beta"', doc("the alpha", "beta decay"), None),
    ('"large language models"', doc(abstract="a large language model"), ("large language models",)),
    # plurals, both ways
    ("agent", doc("Multi-Agents"), ("agent",)),
    ("agents", doc("an agent"), ("agents",)),
    ("policy", doc(abstract="learned policies"), ("policy",)),
    ("searches", doc(abstract="tree search"), ("searches",)),
    ("LLMs", doc(abstract="an LLM"), ("llms",)),
    ("cache", doc(abstract="KV caches"), ("cache",)),
    ("bias", doc(abstract="biases"), ("bias",)),
    ("news", doc(abstract="new results"), None),
    # prefixes
    ("agent*", doc("Agentic workflows"), ("agent*",)),
    ("agent*", doc("a reagent"), None),
    ("polic*", doc(abstract="policies"), ("polic*",)),
    ("agents*", doc(abstract="agents"), ("agents*",)),
    # scopes
    ("ti:agent", doc("cats", "agents"), None),
    ("abs:agent", doc("cats", "agents"), ("agent",)),
    ("ti:(cat OR dog)", doc("Dogs"), ("dog",)),
    ("agent", doc(authors=["Agent Smith"]), None),
    ("au:hinton", doc("Hinton diagrams"), None),
    ("au:hinton", doc(authors=["Geoffrey E. Hinton"]), ("hinton",)),
    ("au:scholkopf", doc(authors=["Bernhard Schölkopf"]), ("scholkopf",)),
    ("au:Schölkopf", doc(authors=["Bernhard Scholkopf"]), ("schölkopf",)),
    ("au:william", doc(authors=["Sam Williams"]), None),
    ('au:"jane smith"', doc(authors=["Jane Smith", "John Doe"]), ("jane smith",)),
    ('au:"smith john"', doc(authors=["Jane Smith", "John Doe"]), None),
    ("au:hint*", doc(authors=["G. Hinton"]), ("hint*",)),
    # categories
    ("cat:cs.RO", doc(categories=["cs.RO", "cs.LG"]), ("cs.RO",)),
    ("cat:cs.ro", doc(categories=["CS.RO"]), ("cs.RO",)),
    ("cat:cs.R", doc(categories=["cs.RO"]), None),
    ("cat:cs.RO", doc("cs.RO"), None),
    ("cat:cs.*", doc(categories=["cs.LG"]), ("cs.*",)),
    ("cat:cs.*", doc(categories=["physics.optics"]), None),
    ("cat:hep-th", doc(categories=["hep-th"]), ("hep-th",)),
    # negation and the why
    ("agent NOT survey", doc("An agent survey"), None),
    ("agent NOT survey", doc("An agent study"), ("agent",)),
    ("agent AND NOT (survey AND robot)", doc("agent robot"), ("agent",)),
    ("(a AND b) OR c", doc("a c"), ("c",)),
    ("ti:agent OR abs:agent", doc("agent", "agent"), ("agent",)),
    (
        '("reinforcement learning" OR RL) AND (agent* OR LLM)',
        doc(abstract="RL for LLM agents trained with reinforcement learning"),
        ("reinforcement learning", "rl", "agent*", "llm"),
    ),
    # case, unicode, emoji, RTL, zero-width, LaTeX
    ("GRPO", doc("grpo"), ("grpo",)),
    ("grpo", doc("GRPO"), ("grpo",)),
    ("café", doc("CAFÉ society"), ("café",)),
    ("fine-tuning", doc("ﬁne-tuning"), ("fine tuning",)),
    ("llm", doc("ＬＬＭｓ"), ("llm",)),
    ("agentic", doc("agent\u200bic systems"), ("agentic",)),
    ('"language model"', doc("language\u200b \u200dmodel"), ("language model",)),
    ("agent", doc("🤖agent🚀 ✨"), ("agent",)),
    ("שלום", doc("\u200fטקסט שלום עולם"), ("שלום",)),
    ("مرحبا", doc(abstract="\u202bمرحبا بالعالم\u202c"), ("مرحبا",)),
    ("transformer", doc(abstract=r"$\mathcal{O}(n^2)$ \textbf{Transformer}"), ("transformer",)),
    ("strasse", doc("Straße"), ("strasse",)),
]


@pytest.mark.parametrize(("text", "document", "why"), MATCHING)
def test_match(text: str, document: Document, why: tuple[str, ...] | None) -> None:
    assert parse_query(text).match(document) == why


def test_match_accepts_a_paper() -> None:
    paper = Paper(
        arxiv_id="2401.00001",
        title="Tool-use agents",
        abstract="We study RL.",
        authors=(Author("Ada Lovelace"),),
        categories=("cs.AI",),
    )
    query = parse_query("(tool-use OR rl) AND au:lovelace AND cat:cs.AI")
    assert query.match(paper) == ("tool use", "rl", "lovelace", "cs.AI")


def test_five_thousand_character_titles() -> None:
    long_title = "lorem ipsum " * 420 + "needle"
    assert len(long_title) > 5000
    document = doc(long_title, "x" * 5000)
    assert parse_query("needle AND NOT haystack").match(document) == ("needle",)
    assert parse_query('"ipsum needle"').match(document) == ("ipsum needle",)
    assert parse_query('"needle ipsum"').match(document) is None
    assert parse_query("xxx*").match(document) == ("xxx*",)


# --- errors ------------------------------------------------------------------------------

SIXTY_FIVE = " OR ".join(f"t{i}" for i in range(MAX_TERMS + 1))
ERRORS = [
    ("", "empty query", 0),
    ("   ", "empty query", 0),
    ("(agent AND", "missing ')'", 10),
    ("(a OR (b)", "missing ')'", 9),
    ("agent)", "unexpected ')'", 5),
    ('"reinforcement learning', "unterminated quote", 0),
    ('agent "x', "unterminated quote", 6),
    ("agent AND", "nothing after AND", 6),
    ("agent OR", "nothing after OR", 6),
    ("(a AND) b", "nothing after AND", 3),
    ("OR agent", "OR needs a term before it", 0),
    ("AND agent", "AND needs a term before it", 0),
    ("a AND OR b", "OR right after AND", 6),
    ("NOT", "nothing after NOT", 0),
    ("NOT x", "would match almost every paper", 0),
    ("NOT x NOT y", "would match almost every paper", 0),
    ("a OR NOT b", "would match almost every paper", 5),
    ("NOT a OR b", "would match almost every paper", 0),
    ("xx:foo", "unknown scope 'xx:'", 0),
    ("agent XX:foo", "unknown scope 'xx:'", 6),
    ('""', "empty phrase", 0),
    ('a "  "', "empty phrase", 2),
    ("+++", "has no letters or digits", 0),
    ("ag*", "prefix too short", 2),
    ("*", "prefix too short", 0),
    ("cat:cs*", "prefix too short", 6),
    ("a*b", "'*' can only end a word", 1),
    ('"agent*"', "'*' does not work inside quotes", 6),
    ("tool-use*", "'*' works on a single word only", 8),
    ("()", "empty parentheses", 0),
    ("ti:", "'ti:' needs a term right after it", 0),
    ("ti:NOT x", "'ti:' needs a term right after it", 0),
    ("ti:abs:x", "scope inside a scope", 3),
    ("ti:(a OR abs:x)", "scope inside a scope", 9),
    ('cat:"cs RO"', "is not an arXiv category", 4),
    ("a " * 600, "query too long", MAX_QUERY_CHARS),
    (" OR ".join(["agent"] * 500), "query too long", MAX_QUERY_CHARS),
    (SIXTY_FIVE, "too many terms", SIXTY_FIVE.index(f"t{MAX_TERMS}")),
    ("(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1), "nested too deeply", MAX_DEPTH),
    (r".*+?[]{}|\^$", "unexpected '['", 4),
    ("[a-z]+ (x|y)", "unexpected '['", 0),
    ("<script>alert(1)</script>", "unexpected '<'", 0),
    ("agents'; DROP TABLE chats;--", "unexpected ';'", 7),
    ("tool=use", "unexpected '='", 4),
]


@pytest.mark.parametrize(("text", "message", "position"), ERRORS)
def test_errors_say_what_and_where(text: str, message: str, position: int) -> None:
    with pytest.raises(QueryError) as caught:
        parse_query(text)
    error = caught.value
    assert message in error.message
    assert error.position == position
    assert error.hint
    assert str(error).startswith(f"{error.message} at position {position}: ")


@pytest.mark.parametrize(
    "text",
    [
        " OR ".join(f"t{i}" for i in range(MAX_TERMS)),
        "(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH,
        "a" * MAX_QUERY_CHARS,
        "agent AND NOT NOT survey",
        "ti:agent abs:agent au:smith cat:cs.AI",
    ],
)
def test_queries_at_the_limits_parse(text: str) -> None:
    assert parse_query(text).text == text


def test_error_message_and_pretty_rendering() -> None:
    query = "(agent AND"
    with pytest.raises(QueryError) as caught:
        parse_query(query)
    assert str(caught.value) == "missing ')' at position 10: add ')' to close the '(' at position 0"
    assert caught.value.pretty(query) == (
        "missing ')' at position 10: add ')' to close the '(' at position 0\n"
        "  (agent AND\n"
        "            ^"
    )


@pytest.mark.parametrize(
    "query",
    ["数据 AND", "a\tb AND", SIXTY_FIVE, "x" * 2000, "agent AND (b OR c) " * 40 + "OR"],
)
def test_pretty_puts_the_caret_under_the_position(query: str) -> None:
    with pytest.raises(QueryError) as caught:
        parse_query(query)
    error = caught.value
    _, shown, caret = error.pretty(query).split("\n")
    column = caret.index("^")
    wide = sum(1 for ch in shown[:column] if "\u4e00" <= ch <= "\u9fff")  # two columns each
    at = min(error.position, len(query) - 1)
    assert shown[column - wide] == query[at]
    assert caret.strip() == "^"
