"""The alert's TL;DR: the contribution and the main result, taken from the abstract."""

from __future__ import annotations

from bot.topics.tldr import MAX_CHARS, tldr

ABSTRACT = (
    "Large language model agents struggle with long-horizon tasks. Prior work relies on"
    " hand-written rewards. We propose StepRL, a method that learns dense rewards from"
    " trajectories. On WebShop, StepRL improves the success rate by 12.5% over PPO. We"
    " release our code."
)


def test_keeps_the_contribution_and_the_result_in_order() -> None:
    assert tldr(ABSTRACT) == (
        "We propose StepRL, a method that learns dense rewards from trajectories."
        " On WebShop, StepRL improves the success rate by 12.5% over PPO."
    )


def test_falls_back_to_the_first_sentence() -> None:
    text = "A survey of the field. It covers forty papers. It ends with open questions."
    assert tldr(text) == "A survey of the field."


def test_hostile_text_is_cut_to_size_and_empty_text_gives_nothing() -> None:
    long = "We propose " + "a very long contribution " * 60 + "."
    assert len(tldr(long)) <= MAX_CHARS and tldr(long).endswith("…")
    assert tldr("") == "" and tldr("  \n ") == ""


def test_one_abstract_is_summarised_once_for_every_chat() -> None:
    tldr.cache_clear()
    for _ in range(50):
        tldr(ABSTRACT)
    assert tldr.cache_info().misses == 1 and tldr.cache_info().hits == 49


def test_prefers_the_contribution_to_the_background_and_skips_fragments() -> None:
    text = (
        "Agents have improved a lot in recent years. Existing methods achieve 90% on toy tasks."
        " The results showed: (1) agents fail on long tasks. We introduce LongAct, a planner for"
        " long tasks. LongAct outperforms ReAct by 14% on WebArena."
    )
    assert tldr(text) == (
        "We introduce LongAct, a planner for long tasks. LongAct outperforms ReAct by 14% on"
        " WebArena."
    )


def test_never_chooses_a_sentence_that_ends_in_a_colon() -> None:
    text = "Agents are useful in many settings. The results showed: (1) speed. (2) cost."
    assert not tldr(text).endswith(":") and tldr(text) == "Agents are useful in many settings."
    only = "Our findings are as follows:"
    assert tldr(only) == only  # nothing else to show
    head = "We propose " + "a long list of things " * 21  # 473 characters, then a colon
    listed = head + "namel: (1) speed and (2) cost of the rest of it all."
    assert len(head) + len("namel:") == MAX_CHARS - 1  # where a plain cut would end
    assert tldr(listed) == head.rstrip() + "…"  # not "namel:…"


def test_a_long_tldr_is_cut_at_a_word_boundary() -> None:
    long = "We propose " + "a very long contribution " * 60 + "."
    cut = tldr(long)
    assert len(cut) <= MAX_CHARS and cut.endswith("…")
    assert long.startswith(cut[:-1]) and long[len(cut) - 1] == " "  # a whole word last
