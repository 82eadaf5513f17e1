"""The extractive answerer of /ask (`bot.topics.answer`, `ask_terms`, `passages`,
`answer_layout`).

Real abstracts come from the relevance development catalog (`tests/fixtures/relevance/catalog/
dev.jsonl.gz`, 6,117 AI papers of 2025-26). The questions below were written for this file by
reading a paper's title and abstract and asking what a reader would ask, in other words; the
relevance floor was calibrated on them. `bench.bench_answer.KeywordIndex` stands in for the
search index: it ranks the papers sharing the question's words by the summed rarity of the words
they share.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.bench_answer import CATALOG, KeywordIndex
from bench.fixtures import read_paper_file
from bot.domain import Paper
from bot.topics import answer as answer_module
from bot.topics.answer import Answer, answer
from bot.topics.answer_layout import answer_lines, fit, lines_of, message_length
from bot.topics.ask_terms import MAX_TERMS, question_terms
from bot.topics.document import word_key
from bot.topics.passages import MAX_SENTENCES, split_sentences, stem

ROOT = Path(__file__).resolve().parents[2]

# question -> the paper a careful reader would cite (written from that paper, in other words)
ANSWERABLE = {
    "Which papers use rubric rewards against hallucination in long answers?": "2608.12337",
    "how can we compensate quantization error with low-rank truncation?": "2608.14149",
    "Is anyone detecting anomalies in banking customer data with topology?": "2508.14136",
    "log parsing with spiking neural networks": "2606.31781",
    "what do people do for causal discovery in autoregressive processes?": "2607.20696",
    "bayesian meta-learning for low-rank adaptation of LLMs": "2508.14285",
    "gaussian splatting with few input views": "2606.31556",
    "can agents search raw chat logs instead of structured memory?": "2608.12888",
    "automatic grading of programming assignments": "2601.10093",
    "serverless functions for edge computing": "2607.14489",
    "do LLM agents follow financial compliance rules?": "2608.19974",
    "designing small molecules that bind a protein target with high affinity": "2607.19237",
    "do human arithmetic strategies help explain transformers?": "2607.17166",
    "change captioning of remote sensing image pairs": "2606.31745",
    "memory retrieval for video world models": "2606.31734",
    "convergence of plug-and-play proximal gradient descent when the prior is mismatched": (
        "2601.09831"
    ),
    "is there a benchmark of LLMs using real MCP servers?": "2508.14704",
    "how to make imitation learning safe under distribution shift?": "2607.13436",
    "forecasting sewer overflow on FPGA edge devices": "2508.13905",
    "vision-language models that crop and zoom images while reasoning": "2508.12109",
    "HDR imaging for robots with multi-view exposure": "2608.16014",
    "fluctuation-response bounds at finite frequency in Markov processes": "2602.18631",
    "learning canonical object poses from videos without annotation": "2606.30058",
    "anonymizing license plates in Malaysian traffic video": "2608.14724",
    "why do scaling laws look smooth when tokens are learned in steps?": "2606.29858",
    "predicting single-cell responses to perturbations with diffusion": "2602.19685",
}
# Off-subject questions, and questions whose only words are common ones.
UNANSWERABLE = (
    "which papers use a method?",
    "what are people working on lately?",
    "what do papers propose?",
    "any good results?",
    "which papers show state-of-the-art performance on benchmarks?",
    "how do I bake sourdough bread?",
    "recipes for vegan lasagna",
    "who won the football world cup in 1998?",
    "knitting patterns for wool sweaters",
    "how to bake bread with language models",
    "medieval castle architecture in France",
    "best hiking trails near the lake",
    "what are the best papers?",
    "which models perform well on tasks?",
    "is anyone working on large language models?",
    "where can I buy cheap flights to Tokyo?",
    "treatment options for feline kidney disease",
    "how does photosynthesis work in cacti?",
    "what's the tax deadline in Germany?",
)


@pytest.fixture(scope="module")
def dev() -> KeywordIndex:
    return KeywordIndex(read_paper_file(CATALOG))


def _retrieve(dev: KeywordIndex, question: str) -> tuple[list[Paper], list[float]]:
    return dev.search(question)


def _paper(arxiv_id: str, title: str, abstract: str) -> Paper:
    return Paper(arxiv_id=arxiv_id, title=title, abstract=abstract)


def _cited(result: Answer) -> list[str]:
    return [group.paper.arxiv_id for group in result.groups]


def _all_sentences(result: Answer) -> list[str]:
    return [s for group in result.groups for s in group.sentences]


# --- sentences --------------------------------------------------------------------------


def test_sentences_are_not_cut_after_abbreviations_decimals_ids_math_or_urls():
    text = (
        "We follow Smith et al. (2023) and e.g. GPT-4 at 3.5 points, see Fig. 2 and "
        "arXiv:2401.12345v2. The cost is $O(n. M)$ per step, i.e. Linear. Code is at "
        'https://github.com/a/b.c. Next! As J. Doe showed (Eq. 3), it works? "Yes." 4 runs end.'
    )
    assert split_sentences(text) == (
        "We follow Smith et al. (2023) and e.g. GPT-4 at 3.5 points, see Fig. 2 and "
        "arXiv:2401.12345v2.",
        "The cost is $O(n. M)$ per step, i.e. Linear.",
        "Code is at https://github.com/a/b.c.",
        "Next!",
        "As J. Doe showed (Eq. 3), it works?",
        '"Yes."',
        "4 runs end.",
    )


def test_sentences_join_back_to_the_abstract_with_nothing_lost(dev):
    for paper in dev.papers[:600]:
        found = split_sentences(paper.abstract)
        assert " ".join(found) == " ".join(paper.abstract.split())


def test_sentences_of_empty_endless_and_many_stop_text():
    assert split_sentences("") == split_sentences(" \n\t ") == ()
    endless = "agents " * 700
    assert split_sentences(endless) == (endless.strip(),)
    many = "A point. " * 500
    found = split_sentences(many)
    assert len(found) == MAX_SENTENCES
    assert " ".join(found) == many.strip()


def test_stems_meet_across_plural_and_common_suffixes():
    def same(*words: str) -> bool:
        return len({stem(word_key(w)) for w in words}) == 1

    assert same("agent", "agents")
    assert same("reward", "rewards")
    assert same("train", "training", "trained")
    assert same("generate", "generated", "generation", "generative")
    assert same("optimize", "optimizing", "optimization")
    assert same("plan", "planning", "planned")
    assert same("retrieve", "retrieval")
    assert not same("agent", "agenda")
    assert stem("used") == "used"  # too short to lose a suffix


def test_question_terms_drop_stop_and_question_words_and_keep_words_as_typed():
    terms = question_terms("Which papers train search Agents with GRPO? agent, anyone?")
    assert tuple(t.shown for t in terms) == ("train", "search", "Agents", "GRPO")
    assert question_terms("which papers use a method?") == ()
    operators = question_terms('"GRPO" AND NEAR(agents, 3) OR rew* -web')
    assert tuple(t.shown for t in operators) == ("GRPO", "NEAR", "agents", "rew", "web")
    assert len(question_terms("reward " + " ".join(f"w{n}x" for n in range(3000)))) <= 12


# --- choosing sentences -------------------------------------------------------------------


@pytest.mark.parametrize("question", sorted(ANSWERABLE))
def test_the_paper_a_reader_would_cite_is_among_the_first_three(dev, question):
    papers, scores = _retrieve(dev, question)
    assert ANSWERABLE[question] in _cited(answer(question, papers, scores))[:3]
    # Still when the search ranks it last: the sentences decide, not only the ranking.
    reversed_answer = answer(question, papers[::-1])
    assert ANSWERABLE[question] in _cited(reversed_answer)[:3]


@pytest.mark.parametrize("question", UNANSWERABLE)
def test_off_subject_and_common_word_questions_are_not_found(dev, question):
    result = answer(question, *_retrieve(dev, question))
    assert not result.found
    assert result.groups == ()


def test_not_found_carries_the_questions_key_words(dev):
    question = "how do I bake sourdough bread?"
    result = answer(question, *_retrieve(dev, question))
    assert result == Answer((), ("bake", "sourdough", "bread"), found=False)


@pytest.mark.parametrize(
    ("question", "arxiv_id", "sentence"),
    [
        (
            "log parsing with spiking neural networks",
            "2606.31781",
            "This paper presents SpikeLogBERT, a spiking neural network framework for "
            "energy-efficient log parsing.",
        ),
        (
            "is anyone doing memory for GUI agents?",
            "2606.31612",
            "We propose Active Task Driving Memory (ATMem), which shifts GUI-agent memory from "
            "passive storage to an actively maintained execution state.",
        ),
        (
            "which framework lets edge applications use heterogeneous IoT resources?",
            "2607.14489",
            "This paper proposes EdgeFaaS, a novel function-based edge computing framework to "
            "enable edge applications to effectively utilize heterogeneous resources distributed "
            "across the Internet of Things (IoT), edge, and cloud for computing.",
        ),
    ],
)
def test_the_sentence_that_answers_a_paraphrased_question_is_quoted(
    dev, question, arxiv_id, sentence
):
    result = answer(question, *_retrieve(dev, question))
    assert result.groups[0].paper.arxiv_id == arxiv_id
    assert sentence in result.groups[0].sentences


def test_at_most_two_sentences_a_paper_and_three_to_five_in_all(dev):
    for question in ANSWERABLE:
        result = answer(question, *_retrieve(dev, question))
        assert len(_all_sentences(result)) <= 5
        assert all(1 <= len(group.sentences) <= 2 for group in result.groups)
        assert len(_cited(result)) == len(set(_cited(result)))
    broad = answer("serverless functions for edge computing", *_retrieve(dev, "serverless edge"))
    assert 3 <= len(_all_sentences(broad)) <= 5


def test_groups_follow_their_best_sentence_and_keep_abstract_order():
    weak = _paper(
        "2601.00001",
        "Memory for agents",
        "We study tool use in general. Web agents here earn one reward at the very end.",
    )
    strong = _paper(
        "2601.00002",
        "Web agents",
        "Web agents act in browsers and use many tools today. "
        "We train web agents with a process reward model learned from browser traces. "
        "The reward model scores each web agent step against the browser state.",
    )
    result = answer("what reward models do people use for web browser agents?", [weak, strong])
    assert _cited(result) == ["2601.00002", "2601.00001"]
    assert result.groups[0].sentences == (  # the abstract's order, not the score's
        "We train web agents with a process reward model learned from browser traces.",
        "The reward model scores each web agent step against the browser state.",
    )


def test_the_same_answer_every_time_and_ties_go_to_the_lower_arxiv_id():
    text = "We train web agents with rewards from browser traces, in 3.5 hours."
    twins = [_paper("2602.00009", "Web agents", text), _paper("2602.00001", "Web agents", text)]
    question = "rewards for web agents"
    first = answer(question, twins, [1.0, 1.0])
    assert first == answer(question, twins[::-1], [1.0, 1.0])
    assert _cited(first) == ["2602.00001"]  # the other's identical sentence is not repeated


def test_the_answer_does_not_depend_on_hash_seeds(dev):
    question = "do LLM agents follow financial compliance rules?"
    papers, scores = _retrieve(dev, question)
    script = (
        "import json, sys; from bot.domain import Paper; from bot.topics.answer import answer\n"
        "data = json.load(sys.stdin)\n"
        "papers = [Paper(arxiv_id=i, title=t, abstract=a) for i, t, a in data['papers']]\n"
        "result = answer(data['question'], papers, data['scores'])\n"
        "print(json.dumps([[g.paper.arxiv_id, g.sentences] for g in result.groups]))\n"
    )
    data = json.dumps(
        {
            "question": question,
            "papers": [(p.arxiv_id, p.title, p.abstract) for p in papers],
            "scores": scores,
        }
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            input=data,
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    expected = answer(question, papers, scores)
    assert json.loads(outputs.pop()) == [
        [g.paper.arxiv_id, list(g.sentences)] for g in expected.groups
    ]


def test_scores_must_match_the_papers():
    with pytest.raises(ValueError, match="2 scores for 1 papers"):
        answer("web agents", [_paper("2601.00001", "t", "Web agents act.")], [1.0, 2.0])


# --- hostile text -------------------------------------------------------------------------


def test_markup_characters_stay_plain_text_and_latex_shows_as_unicode():
    paper = _paper(
        "2601.00003",
        r"Rewards $\alpha$ <b>bold</b> & co",
        r"We shape web agent rewards with $\alpha \leq \beta$ and <script>x</script> & more. "
        "Unrelated closing words are here.",
    )
    result = answer("reward shaping for web agents", [paper])
    assert result.groups[0].title == "Rewards α <b>bold</b> & co"
    assert result.groups[0].sentences == (
        "We shape web agent rewards with α≤β and <script>x</script> & more.",
    )


def test_an_endless_abstract_is_quoted_cut_at_a_word_with_an_ellipsis():
    abstract = "web agents learn rewards from browser traces " * 120  # 5,400 chars, no stop
    result = answer("rewards for web agents", [_paper("2601.00004", "Web agents", abstract)])
    (sentence,) = result.groups[0].sentences
    assert len(sentence) <= answer_module.MAX_CHARS
    assert sentence.endswith("…")
    assert sentence[:-1].rstrip().split(" ")[-1] in abstract.split()


def test_rtl_emoji_zero_width_and_empty_abstracts_are_handled():
    rtl = _paper(
        "2601.00005",
        "وكلاء الويب 🤖",
        "We train web\u200b agents with browser rewards \u202eevil\u202c 🤖. "
        "Other words follow here.",
    )
    empty = _paper("2601.00006", "Web agents with rewards", "")
    result = answer("rewards for web agents", [empty, rtl])
    assert _cited(result) == ["2601.00005"]
    assert result.groups[0].title == "وكلاء الويب 🤖"
    assert result.groups[0].sentences == ("We train web agents with browser rewards evil 🤖.",)
    assert not answer("rewards for web agents", [empty]).found
    assert not answer("", [rtl]).found
    assert not answer("rewards for web agents", []).found


def test_abstracts_built_to_defeat_the_splitter_are_answered_quickly():
    hostile = ["$x. A$ " * 1400, "e.g. A " * 1400, "Web. " * 2000, "https://a.b/c. D " * 600]
    papers = [
        _paper(f"2601.001{n:02}", "Web agents", f"Web agents earn rewards. {text}")
        for n, text in enumerate(hostile * 8)
    ]
    start = time.perf_counter()
    result = answer("rewards for web agents", papers)
    assert time.perf_counter() - start < 2.0
    assert result.found


def test_a_ten_thousand_character_question_is_answered_or_refused_quickly(dev):
    question = "memory for GUI agents " + "x" * 10_000
    result = answer(question, *_retrieve(dev, "memory GUI agents"))
    assert len(result.key_terms) <= MAX_TERMS


# --- layout -------------------------------------------------------------------------------


def _long_answer(dev) -> Answer:
    question = "serverless functions for edge computing"
    return answer(question, *_retrieve(dev, question))


@pytest.mark.parametrize("limit", [4096, 3000, 700, 400, 250])
def test_lines_fit_the_limit_dropping_whole_sentences_from_the_end(dev, limit):
    full = _long_answer(dev)
    lines = answer_lines(full, limit_chars=limit)
    assert message_length("\n".join(lines)) <= limit
    kept = [line.removeprefix("• ") for line in lines if line.startswith("• ")]
    everything = _all_sentences(full)
    if limit >= 700:  # room for whole sentences: the first ones, untouched
        assert kept == everything[: len(kept)]
    assert lines[0].endswith(f"[{full.groups[0].paper.shown_id}]")


def test_a_long_answer_keeps_its_first_sentences_and_loses_its_last():
    sentences = ("🤖" * 60 + " web agents.", "web agents " * 20 + "end.")
    papers = [_paper(f"2601.0001{n}", f"Web agents {n}", " ".join(sentences)) for n in range(4)]
    full = Answer(tuple(answer_module.Group(p, p.title, sentences) for p in papers), (), True)
    fitted = fit(full, limit_chars=600)
    assert message_length("\n".join(lines_of(fitted))) <= 600
    assert fitted.groups[0].sentences == sentences
    assert len(_all_sentences(fitted)) < len(_all_sentences(full))
    assert all(set(g.sentences) <= set(sentences) for g in fitted.groups)


def test_a_tiny_limit_cuts_the_one_sentence_left_and_a_too_small_one_is_refused():
    sentence = "Web agents learn rewards " * 30
    paper = _paper("2601.00020", "A title " * 30, sentence)
    full = Answer((answer_module.Group(paper, paper.title.strip(), (sentence,)),), (), True)
    lines = answer_lines(full, limit_chars=150)
    assert message_length("\n".join(lines)) <= 150
    assert lines[0].endswith("[arXiv:2601.00020]")
    assert lines[1].endswith("…")
    with pytest.raises(ValueError):
        answer_lines(full, limit_chars=99)
    assert answer_lines(Answer((), ("bread",), False), limit_chars=4096) == ()


def test_room_for_markup_is_kept_per_group(dev):
    full = _long_answer(dev)
    plain = fit(full, limit_chars=1200)
    marked = fit(full, limit_chars=1200, extra_per_group=120)
    assert message_length("\n".join(lines_of(marked))) + 120 * len(marked.groups) <= 1200
    assert len(_all_sentences(marked)) < len(_all_sentences(plain))


SPEECH = [
    _paper(
        "2601.00011",
        "Streaming speech recognition with pseudo-labels",
        "We adapt a speech recognition model to new domains. "
        "Pseudo-labels come from a mixture of in-domain and general speech. "
        "The architecture of the recogniser is unchanged.",
    ),
    _paper(
        "2601.00012",
        "Accents in speech recognition",
        "Speech recognition errs on accented speech. "
        "We compare encoder architectures for recognition of accented speech.",
    ),
]
MOE_QUESTION = "Is anyone using mixture-of-experts architectures for speech recognition?"


def test_a_question_restating_its_topic_needs_its_own_subject_in_the_paper():
    """Asked within Speech Recognition, every paper has "speech" and "recognition": they
    are not the question's subject, so a paper with them but not the rest is not quoted,
    nor one with "mixture" but no experts ("mixture-of-experts" is one thing)."""
    assert not answer(MOE_QUESTION, SPEECH, given="Speech Recognition").found
    assert answer(MOE_QUESTION, SPEECH).found  # outside the topic, the floor is as before
    mixed = [_paper("2601.00013", "Speech corpora", "Labels come from a mixture of speech.")]
    assert not answer("mixture-of-experts for speech recognition?", mixed).found
    assert answer("a mixture of experts for speech recognition?", mixed).found
    moe = _paper(
        "2601.00014",
        "Sparse experts for speech",
        "We route each speech frame to a mixture of experts in a recognition model.",
    )
    found = answer(MOE_QUESTION, [*SPEECH, moe], given="Speech Recognition")
    assert _cited(found) == ["2601.00014"]


def test_only_the_topics_words_asked_keep_the_usual_floor():
    result = answer("what is new in speech recognition?", SPEECH, given="Speech Recognition")
    assert result.found and set(_cited(result)) <= {"2601.00011", "2601.00012"}
