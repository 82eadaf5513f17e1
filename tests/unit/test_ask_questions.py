"""The evaluation sets for "Ask about this topic" (tests/fixtures/ask/, issue 19).

All five files (questions.jsonl, the set /ask was tuned on; fresh.jsonl, fresh2.jsonl,
fresh3.jsonl and fresh4.jsonl, each written later by someone who had not seen /ask), their
shape, not any answerer: ids unique, every cited paper is in the corpus the sets were written
from, enough answerable and unanswerable questions, topics that exist in the bundled catalog,
questions that fit a chat message, no fresh question repeating an old one, and the corpus
unchanged since the sets were written (its sha256 is recorded in the README).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from functools import cache
from pathlib import Path

import pytest

from bot.domain import Paper
from bot.topics.catalog import Catalog, load_catalog
from bot.topics.tagger import Tagger

FIXTURES = Path(__file__).parents[1] / "fixtures"
ASK_DIR = FIXTURES / "ask"
QUESTIONS = ASK_DIR / "questions.jsonl"
FRESH = ASK_DIR / "fresh.jsonl"
FRESH2 = ASK_DIR / "fresh2.jsonl"
FRESH3 = ASK_DIR / "fresh3.jsonl"
FRESH4 = ASK_DIR / "fresh4.jsonl"

# Per file: id prefix, at least this many answerable and unanswerable questions.
SETS = {
    QUESTIONS.name: ("q", 40, 10),
    FRESH.name: ("f", 20, 5),
    FRESH2.name: ("g", 30, 8),
    FRESH3.name: ("h", 30, 8),
    FRESH4.name: ("k", 30, 10),
}
CORPUS = FIXTURES / "relevance" / "catalog" / "dev.jsonl.gz"
FIELDS = {"id", "topic", "question", "answers", "note"}
MAX_QUESTION = 300
MAX_ANSWERS = 8


@cache
def questions(name: str = QUESTIONS.name) -> tuple[dict, ...]:
    lines = (ASK_DIR / name).read_text(encoding="utf-8").splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())


@cache
def corpus() -> dict[str, dict]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as f:
        return {rec["arxiv_id"]: rec for rec in map(json.loads, f)}


@cache
def catalog() -> Catalog:
    return load_catalog()


def answerable(name: str = QUESTIONS.name) -> list[dict]:
    return [q for q in questions(name) if q["answers"]]


each_set = pytest.mark.parametrize("name", list(SETS))


@each_set
def test_every_line_has_exactly_the_documented_fields(name: str) -> None:
    for q in questions(name):
        assert set(q) == FIELDS, q.get("id")
        prefix = SETS[name][0]
        assert isinstance(q["id"], str) and re.fullmatch(prefix + r"\d{2,}", q["id"]), q["id"]
        assert q["topic"] is None or isinstance(q["topic"], str), q["id"]
        assert isinstance(q["answers"], list), q["id"]
        assert all(isinstance(a, str) for a in q["answers"]), q["id"]
        assert isinstance(q["note"], str) and q["note"].strip(), q["id"]


@each_set
def test_ids_and_questions_are_unique(name: str) -> None:
    ids = [q["id"] for q in questions(name)]
    assert len(ids) == len(set(ids))
    texts = [q["question"].strip().lower() for q in questions(name)]
    assert len(texts) == len(set(texts))


@each_set
def test_counts_meet_the_issue(name: str) -> None:
    unanswerable = [q for q in questions(name) if not q["answers"]]
    _, at_least_answerable, at_least_unanswerable = SETS[name]
    assert len(answerable(name)) >= at_least_answerable
    assert len(unanswerable) >= at_least_unanswerable


@each_set
def test_questions_are_chat_sized(name: str) -> None:
    for q in questions(name):
        text = q["question"].strip()
        assert text, q["id"]
        assert len(q["question"]) <= MAX_QUESTION, q["id"]


@each_set
def test_every_answer_is_a_corpus_paper_cited_once(name: str) -> None:
    papers = corpus()
    for q in answerable(name):
        assert len(q["answers"]) <= MAX_ANSWERS, q["id"]
        assert len(set(q["answers"])) == len(q["answers"]), q["id"]
        missing = [a for a in q["answers"] if a not in papers]
        assert not missing, (q["id"], missing)


@each_set
def test_topics_exist_in_the_bundled_catalog(name: str) -> None:
    names = {t.name for t in catalog().topics}
    unknown = {q["id"]: q["topic"] for q in questions(name) if q["topic"] not in names | {None}}
    assert not unknown


@each_set
def test_both_scopes_are_asked(name: str) -> None:
    scoped = [q for q in answerable(name) if q["topic"] is not None]
    assert len(scoped) >= len(answerable(name)) // 3
    assert len(answerable(name)) - len(scoped) >= len(answerable(name)) // 3


@each_set
def test_questions_do_not_quote_an_answer_title(name: str) -> None:
    papers = corpus()
    for q in answerable(name):
        asked = " ".join(q["question"].lower().split())
        for a in q["answers"]:
            title = " ".join(papers[a]["title"].lower().split())
            assert title not in asked, (q["id"], a)


def _descendants(slug: str) -> set[str]:
    found = {slug}
    for child in catalog().children(slug):
        found |= _descendants(child.slug)
    return found


@each_set
def test_a_topic_question_has_an_answer_among_the_topics_papers(name: str) -> None:
    """Asked within a topic, the answerer sees that topic's papers (its rule and its
    sub-topics'); at least one cited paper must be among them or hit@3 is out of reach."""
    tagger = Tagger.from_topics(catalog().topics)
    by_name = {t.name: t for t in catalog().topics}
    papers = corpus()
    unreachable = []
    for q in answerable(name):
        if q["topic"] is None:
            continue
        wanted = _descendants(by_name[q["topic"]].slug)
        tagged = []
        for a in q["answers"]:
            rec = papers[a]
            paper = Paper(a, rec["title"], rec["abstract"], categories=tuple(rec["categories"]))
            tagged.append(bool(set(tagger.tag(paper)) & wanted))
        if not any(tagged):
            unreachable.append(q["id"])
    assert not unreachable


def test_the_fresh_sets_ask_new_questions() -> None:
    """The fresh files were written to measure /ask on questions it was not tuned on: none of
    their questions repeats one of an earlier file, and no id is used twice across the files."""
    seen_questions: set[str] = set()
    seen_ids: set[str] = set()
    for name in SETS:  # in the order the files were written
        for q in questions(name):
            assert q["question"].strip().lower() not in seen_questions, q["id"]
            assert q["id"] not in seen_ids, q["id"]
        seen_questions |= {q["question"].strip().lower() for q in questions(name)}
        seen_ids |= {q["id"] for q in questions(name)}


def test_readme_records_the_corpus_sha256() -> None:
    digest = hashlib.sha256(CORPUS.read_bytes()).hexdigest()
    readme = (ASK_DIR / "README.md").read_text(encoding="utf-8")
    recorded = re.findall(r"\b[0-9a-f]{64}\b", readme)
    assert recorded, "README.md must record the corpus sha256"
    assert digest in recorded, f"corpus changed since the set was written: {digest}"


@each_set
def test_unanswerable_questions_say_why(name: str) -> None:
    for q in questions(name):
        if not q["answers"]:
            assert len(q["note"].strip()) > 40, q["id"]
