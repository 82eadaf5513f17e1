"""The evaluation set for "Ask about this topic" (tests/fixtures/ask/, issue 19).

The file's shape, not any answerer: ids unique, every cited paper is in the corpus the set
was written from, enough answerable and unanswerable questions, topics that exist in the
bundled catalog, questions that fit a chat message, and the corpus unchanged since the set
was written (its sha256 is recorded in the README).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from functools import cache
from pathlib import Path

from bot.domain import Paper
from bot.topics.catalog import Catalog, load_catalog
from bot.topics.tagger import Tagger

FIXTURES = Path(__file__).parents[1] / "fixtures"
ASK_DIR = FIXTURES / "ask"
QUESTIONS = ASK_DIR / "questions.jsonl"
CORPUS = FIXTURES / "relevance" / "catalog" / "dev.jsonl.gz"
FIELDS = {"id", "topic", "question", "answers", "note"}
MAX_QUESTION = 300
MAX_ANSWERS = 8


@cache
def questions() -> tuple[dict, ...]:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    return tuple(json.loads(line) for line in lines if line.strip())


@cache
def corpus() -> dict[str, dict]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as f:
        return {rec["arxiv_id"]: rec for rec in map(json.loads, f)}


@cache
def catalog() -> Catalog:
    return load_catalog()


def answerable() -> list[dict]:
    return [q for q in questions() if q["answers"]]


def test_every_line_has_exactly_the_documented_fields() -> None:
    for q in questions():
        assert set(q) == FIELDS, q.get("id")
        assert isinstance(q["id"], str) and re.fullmatch(r"q\d{2,}", q["id"]), q["id"]
        assert q["topic"] is None or isinstance(q["topic"], str), q["id"]
        assert isinstance(q["answers"], list), q["id"]
        assert all(isinstance(a, str) for a in q["answers"]), q["id"]
        assert isinstance(q["note"], str) and q["note"].strip(), q["id"]


def test_ids_and_questions_are_unique() -> None:
    ids = [q["id"] for q in questions()]
    assert len(ids) == len(set(ids))
    texts = [q["question"].strip().lower() for q in questions()]
    assert len(texts) == len(set(texts))


def test_counts_meet_the_issue() -> None:
    unanswerable = [q for q in questions() if not q["answers"]]
    assert len(answerable()) >= 40
    assert len(unanswerable) >= 10


def test_questions_are_chat_sized() -> None:
    for q in questions():
        text = q["question"].strip()
        assert text, q["id"]
        assert len(q["question"]) <= MAX_QUESTION, q["id"]


def test_every_answer_is_a_corpus_paper_cited_once() -> None:
    papers = corpus()
    for q in answerable():
        assert len(q["answers"]) <= MAX_ANSWERS, q["id"]
        assert len(set(q["answers"])) == len(q["answers"]), q["id"]
        missing = [a for a in q["answers"] if a not in papers]
        assert not missing, (q["id"], missing)


def test_topics_exist_in_the_bundled_catalog() -> None:
    names = {t.name for t in catalog().topics}
    unknown = {q["id"]: q["topic"] for q in questions() if q["topic"] not in names | {None}}
    assert not unknown


def test_both_scopes_are_asked() -> None:
    scoped = [q for q in answerable() if q["topic"] is not None]
    assert len(scoped) >= len(answerable()) // 3
    assert len(answerable()) - len(scoped) >= len(answerable()) // 3


def test_questions_do_not_quote_an_answer_title() -> None:
    papers = corpus()
    for q in answerable():
        asked = " ".join(q["question"].lower().split())
        for a in q["answers"]:
            title = " ".join(papers[a]["title"].lower().split())
            assert title not in asked, (q["id"], a)


def _descendants(slug: str) -> set[str]:
    found = {slug}
    for child in catalog().children(slug):
        found |= _descendants(child.slug)
    return found


def test_a_topic_question_has_an_answer_among_the_topics_papers() -> None:
    """Asked within a topic, the answerer sees that topic's papers (its rule and its
    sub-topics'); at least one cited paper must be among them or hit@3 is out of reach."""
    tagger = Tagger.from_topics(catalog().topics)
    by_name = {t.name: t for t in catalog().topics}
    papers = corpus()
    unreachable = []
    for q in answerable():
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


def test_readme_records_the_corpus_sha256() -> None:
    digest = hashlib.sha256(CORPUS.read_bytes()).hexdigest()
    readme = (ASK_DIR / "README.md").read_text(encoding="utf-8")
    recorded = re.findall(r"\b[0-9a-f]{64}\b", readme)
    assert recorded, "README.md must record the corpus sha256"
    assert digest in recorded, f"corpus changed since the set was written: {digest}"


def test_unanswerable_questions_say_why() -> None:
    for q in questions():
        if not q["answers"]:
            assert len(q["note"].strip()) > 40, q["id"]
