"""The tagger: many compiled queries against real papers, with inverted-index pruning."""

from __future__ import annotations

import json
import random
import sys
import threading
from pathlib import Path

import pytest

from bot.domain import Author, Paper, Topic
from bot.topics import tagger as tagger_module
from bot.topics.document import Document
from bot.topics.query import parse_query
from bot.topics.query_tree import Not, Or, Query, Scope, Term, compile_node
from bot.topics.tagger import MAX_REMEMBERED_WORDS, Tagger, anchors

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "papers_sample.jsonl"

SUBJECTS = [
    '"reinforcement learning"', "RL", '"large language model"', "LLM*", "agent*",
    '"diffusion model"', "diffusion", '"graph neural network"', "GNN*", "transformer*",
    '"vision-language"', "VLM*", '"retrieval-augmented generation"', "RAG", "MoE",
    '"knowledge graph"', '"federated learning"', '"contrastive learning"', '"self-supervised"',
    '"point cloud"', '"speech recognition"', '"question answering"', '"code generation"',
    '"time series"', '"anomaly detection"', '"autonomous driving"', "robot*", "quantum",
    '"quantum circuit"', "qubit*", "quantization", "pruning", '"knowledge distillation"',
    "benchmark*", "entanglement", "superconduct*", "au:wang", "au:zhang", "au:zha*",
]  # fmt: skip
METHODS = [
    "policy", '"reward model"', "RLHF", "GRPO", "DPO", "tool-use", '"chain of thought"',
    "reasoning", "planning", "memory", '"in-context learning"', "prompt*", "fine-tuning",
    "LoRA", '"test-time"', "scaling", "efficient", "sparse", "attention", "uncertainty",
    "robustness", "adversarial", "privacy", "interpretab*", "hallucination*", "alignment",
    "safety", "evaluation", "dataset*", "simulation", "multimodal", "multi-agent", "error*",
    "noise", "ti:novel", "abs:framework",
]  # fmt: skip
EXCLUDES = ["survey", "review", '"position paper"', "medical", "finance", "cat:cs.CR"]
CATS = ["cs.LG", "cs.CL", "cs.CV", "cs.AI", "cs.RO", "quant-ph", "stat.ML", "cs.*", "cond-mat.*"]


def make_rules(count: int, seed: int = 11) -> list[tuple[str, Query]]:
    """Realistic topic rules of 5-15 terms: subjects AND methods, some NOTs and categories."""
    rng = random.Random(seed)
    rules = []
    for number in range(count):
        subjects = " OR ".join(rng.sample(SUBJECTS, rng.randint(2, 6)))
        methods = " OR ".join(rng.sample(METHODS, rng.randint(2, 7)))
        parts = [f"({subjects})", f"({methods})"]
        if rng.random() < 0.4:
            parts.append(f"NOT {rng.choice(EXCLUDES)}")
        if rng.random() < 0.3:
            parts.append(f"cat:{rng.choice(CATS)}")
        if rng.random() < 0.15:
            parts = [f"({subjects}) OR cat:{rng.choice(CATS)}"]
        rules.append((f"rule-{number}", parse_query(" AND ".join(parts))))
    return rules


def load_sample() -> list[Paper]:
    papers = []
    with SAMPLE.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            papers.append(
                Paper(
                    arxiv_id=row["arxiv_id"],
                    title=row["title"],
                    abstract=row["abstract"],
                    authors=tuple(Author(name) for name in row["authors"]),
                    categories=tuple(row["categories"]),
                )
            )
    return papers


@pytest.fixture(scope="module")
def papers() -> list[Paper]:
    return load_sample()


@pytest.fixture(scope="module")
def rules() -> list[tuple[str, Query]]:
    return make_rules(120)


def by_each_query(rules: list[tuple[str, Query]], paper: Paper) -> dict[str, tuple[str, ...]]:
    """The reference: every query matched on its own, no index involved."""
    found, doc = {}, Document.from_paper(paper)
    for key, query in rules:
        why = query.match(doc)
        if why is not None:
            found[key] = why
    return found


def test_sample_is_real_and_sized(papers: list[Paper]) -> None:
    assert len(papers) == 300
    assert len({paper.arxiv_id for paper in papers}) == 300
    assert sum(len(paper.abstract) for paper in papers) / len(papers) > 600


def test_index_gives_the_same_tags_as_matching_every_query(
    papers: list[Paper], rules: list[tuple[str, Query]]
) -> None:
    tagger = Tagger(rules)
    tagged = tagger.tag_many(papers)
    assert tagged == [by_each_query(rules, paper) for paper in papers]
    assert tagged == [tagger.brute_force(paper) for paper in papers]
    assert sum(map(len, tagged)) > 100  # the comparison is not between empty results
    assert len({key for tags in tagged for key in tags}) > 40


def test_index_skips_most_rules(papers: list[Paper], rules: list[tuple[str, Query]]) -> None:
    tagger = Tagger(rules)
    docs = [Document.from_paper(paper) for paper in papers]
    considered = sum(len(tagger.candidates(doc)) for doc in docs) / len(docs)
    assert considered < len(rules) / 2
    for doc, tags in zip(docs, tagger.tag_many(docs), strict=True):
        assert set(tags) <= set(tagger.candidates(doc))


@pytest.mark.parametrize("count", [2, 300])
@pytest.mark.parametrize("remembered", [MAX_REMEMBERED_WORDS, 50])  # 50: forgets often
def test_prefix_rules_agree_with_brute_force(
    papers: list[Paper], count: int, remembered: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tagger_module, "MAX_REMEMBERED_WORDS", remembered)
    stems = sorted({word[:5] for paper in papers for word in paper.title.lower().split()})
    stems = [stem for stem in stems if stem.isalpha() and len(stem) >= 3][:count]
    rules = [
        (f"p-{stem}", parse_query(f"{stem}* OR au:{stem}* OR (ti:{stem[:3]}* AND model)"))
        for stem in stems
    ]
    tagger = Tagger(rules)
    for _ in range(2):  # the second time round, the words are remembered
        tagged = tagger.tag_many(papers)
        assert tagged == [by_each_query(rules, paper) for paper in papers]
    assert any(tagged)


def test_rule_without_its_anchor_is_never_evaluated() -> None:
    tagger = Tagger(
        [("rare", parse_query("zyzzyva AND (agent OR robot)")), ("rl", parse_query("RL"))]
    )
    doc = Document("RL agents and robots")
    assert tagger.candidates(doc) == ("rl",)
    assert tagger.tag(doc) == {"rl": ("rl",)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("agent", {("word", "agent")}),
        ("agents", {("word", "agent")}),
        ('"reinforcement learning"', {("word", "reinforcement")}),
        ("a AND b", {("word", "b")}),  # "a" is in most abstracts: index the rarer word
        ("model AND zyzzyva", {("word", "zyzzyva")}),
        ("(a OR b) AND c", {("word", "c")}),
        ("cat:cs.RO AND agent", {("word", "agent")}),
        ("cat:cs.RO AND (a OR b)", {("word", "a"), ("word", "b")}),
        ("cat:cs.RO AND agent*", {("prefix", "agent")}),
        ("cat:cs.RO", {("cat", "cs.ro")}),
        ("cat:cs.*", {("cat*", "cs.")}),
        ("agent* OR au:Hinton", {("prefix", "agent"), ("author", "hinton")}),
        ("au:Schölkopf*", {("author*", "scholkopf")}),
        ("ti:agent NOT survey", {("title", "agent")}),
        ("ti:(agent* OR robot)", {("title*", "agent"), ("title", "robot")}),
        # a title word is rarer than the same word anywhere: "neural" in the title wins
        ("zyzzyva* AND ti:neural", {("title", "neural")}),
        # a prefix is as common as the words it starts: "learn*" loses to a plain word
        ("learn* AND policy", {("word", "policy")}),
    ],
)
def test_anchors(text: str, expected: set[tuple[str, str]]) -> None:
    assert anchors(parse_query(text).root) == expected


def test_a_rule_that_cannot_be_pruned_is_always_evaluated() -> None:
    # parse_query refuses such queries; a hand-built one must still be tagged correctly.
    root = Or((Term(Scope.TEXT, ("agent",), ("agent",)), Not(Term(Scope.TEXT, ("x",), ("x",)))))
    loose = Query(root, "agent OR NOT x", compile_node(root))
    tagger = Tagger([("loose", loose), ("rl", parse_query("RL"))])
    assert anchors(root) == frozenset()
    assert tagger.tag(Document("nothing relevant")) == {"loose": ()}
    assert tagger.tag(Document("x marks")) == {}
    assert tagger.tag(Document("agent x")) == {"loose": ("agent",)}  # no negated term in why


def test_tags_are_in_rule_order_with_their_why() -> None:
    tagger = Tagger(
        [
            ("rl-agents", parse_query('("reinforcement learning" OR RL) AND agent*')),
            ("robots", parse_query("robot* AND NOT survey")),
            ("surveys", parse_query("survey")),
        ]
    )
    paper = Paper(arxiv_id="2401.00001", title="A survey of RL for agentic robots")
    assert list(tagger.tag(paper).items()) == [
        ("rl-agents", ("rl", "agent*")),
        ("surveys", ("survey",)),
    ]
    assert tagger.tag(paper) == tagger.tag(Document.from_paper(paper))


def test_url_does_not_tag_rl() -> None:
    tagger = Tagger([("rl", parse_query('RL OR "reinforcement learning"'))])
    assert tagger.tag(Document("Fetching a URL with cURL")) == {}
    assert tagger.tag(Document("Offline RL")) == {"rl": ("rl",)}


def test_duplicate_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate rule key 'a'"):
        Tagger([("a", parse_query("x")), ("a", parse_query("y"))])


def test_from_topics_uses_slugs_and_skips_topics_without_rules() -> None:
    topics = [
        Topic(slug="rl", name="RL", rule='RL OR "reinforcement learning"'),
        Topic(slug="umbrella", name="Umbrella"),
        Topic(slug="robots", name="Robots", rule="robot* AND cat:cs.RO"),
    ]
    tagger = Tagger.from_topics(topics)
    assert tagger.keys == ("rl", "robots")
    assert len(tagger) == 2
    doc = Document("Robot RL", categories=["cs.RO"])
    assert tagger.tag(doc) == {"rl": ("rl",), "robots": ("robot*", "cs.RO")}


def test_threads_sharing_a_tagger_that_keeps_forgetting_get_every_tag(
    papers: list[Paper], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ingest tags in a worker thread; a tagger shared by threads must stay exact while its
    word memory is replaced under them (switching threads as often as Python allows)."""
    monkeypatch.setattr(tagger_module, "MAX_REMEMBERED_WORDS", 40)
    interval = sys.getswitchinterval()
    stems = sorted({w[:4] for p in papers for w in p.title.lower().split() if w.isalpha()})
    rules = [(f"p-{stem}", parse_query(f"{stem}*")) for stem in stems if len(stem) >= 3]
    tagger = Tagger(rules)
    docs = [Document.from_paper(paper) for paper in papers]
    expected = [tagger.brute_force(doc) for doc in docs]
    wrong: list[int] = []

    def tag_all(offset: int) -> None:
        try:
            for i in range(len(docs)):
                at = (i + offset * 37) % len(docs)
                if tagger.tag(docs[at]) != expected[at]:
                    wrong.append(at)
        except Exception:  # a failure in a thread must fail the test, not just warn
            wrong.append(-1)
            raise

    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=tag_all, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not wrong
