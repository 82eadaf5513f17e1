"""One paper card (`bot.topics.card`), three renderers: the same fields in the same order on
Telegram, Slack and the terminal, every limit set in one place, hostile text cut before it is
escaped."""

from __future__ import annotations

import html
import re
from dataclasses import replace
from datetime import date

import pytest

from bot.adapters import console
from bot.adapters.slack import render as slack_render
from bot.adapters.telegram import render as telegram_render
from bot.domain import Author, Paper, PaperItem, Reply
from bot.topics import card as card_module
from bot.topics.card import (
    LIMITS,
    Affiliations,
    Byline,
    Links,
    Summary,
    Tags,
    Title,
    card,
)
from tests.support.slack_blocks import check_blocks
from tests.support.telegram_html import check_telegram_html, parse_telegram_html, utf16_len

# Hostile but unambiguous in every markup: no "*", "_" or "|", which Slack's mrkdwn reads.
TITLE = "Agents <script> & $\\mathcal{O}(n^2)$ $<$ bounds: عربي עברית 🚀"
TLDR = "We propose <b>x</b> & y. It improves results by 12% over $\\alpha$."
# What chats are shown of them: the LaTeX as Unicode, the rest as it came.
SHOWN_TITLE = "Agents <script> & 𝒪(n^2) < bounds: عربي עברית 🚀"
SHOWN_TLDR = "We propose <b>x</b> & y. It improves results by 12% over α."
FOLLOWED = "RL for LLM Agents"


def paper(arxiv_id: str = "2610.00001", title: str = TITLE, **changes: object) -> Paper:
    authors = (
        Author("Ada Lovelace", ("Analytical Engines Ltd",)),
        Author("عربي مؤلف", ("Université <Paris> & Co", "Analytical Engines Ltd")),
        Author("Alan Turing"),
        Author("Grace Hopper"),
    )
    fields = {"authors": authors, "categories": ("cs.LG", "cs.AI"), "announced": date(2026, 10, 1)}
    return Paper(arxiv_id, title, **{**fields, **changes})


def item(arxiv_id: str = "2610.00001", **changes: object) -> PaperItem:
    tags = (FOLLOWED, "Web Agents <x> & co", "Tool Use")
    return PaperItem(paper(arxiv_id, **changes), tags, (FOLLOWED,), more_tags=2, tldr=TLDR)


def telegram_lines(shown: PaperItem) -> list[str]:
    (message,) = telegram_render.render(Reply(papers=(shown,)))
    assert check_telegram_html(message) is None
    return parse_telegram_html(message).text.splitlines()


def slack_lines(shown: PaperItem) -> list[str]:
    (message,) = slack_render.render(Reply(papers=(shown,)))
    assert check_blocks(message["blocks"]) == []
    text = "\n".join(b["text"]["text"] for b in message["blocks"])
    text = re.sub(r"<[^<>|]*\|([^<>]*)>", r"\1", text)  # a link shows its label
    text = text.replace("*", "").replace("_", "").replace("`", "").replace(":label: ", "🏷 ")
    return html.unescape(text).splitlines()


def console_lines(shown: PaperItem) -> list[str]:
    lines = console.render_paper(shown).splitlines()
    lines = [line.removeprefix("• ").removeprefix("  ") for line in lines]
    return [line.replace("tags: ", "🏷 ").replace(" ★", "") for line in lines]


def test_the_card_holds_its_fields_in_order() -> None:
    fields = card(item()).fields
    assert [type(f) for f in fields] == [Title, Byline, Affiliations, Tags, Summary, Links]
    title, byline, affiliations, tags, summary, links = fields
    assert title == Title(SHOWN_TITLE, "https://arxiv.org/abs/2610.00001")
    assert byline == Byline(
        "arXiv:2610.00001", "Ada Lovelace, عربي مؤلف, Alan Turing +1 · cs.LG · 2026-10-01"
    )
    assert affiliations == Affiliations("Analytical Engines Ltd · Université <Paris> & Co")
    assert [(t.name, t.followed) for t in tags.tags] == [
        (FOLLOWED, True),
        ("Web Agents <x> & co", False),
        ("Tool Use", False),
    ]
    assert tags.more == 2 and summary == Summary(SHOWN_TLDR)
    assert links == Links("https://arxiv.org/abs/2610.00001", "https://arxiv.org/pdf/2610.00001v1")


def test_a_compact_item_leaves_out_what_it_lacks() -> None:
    bare = PaperItem(Paper("2610.00002", ""))
    assert card(bare).fields == (
        Title("arXiv:2610.00002", "https://arxiv.org/abs/2610.00002"),
        Byline("arXiv:2610.00002", ""),  # the id, always: what /why takes
        Links("https://arxiv.org/abs/2610.00002", None),  # no TL;DR: no PDF offered
    )


def test_the_three_renderers_show_the_same_fields_in_the_same_order() -> None:
    shown = item()
    expected = [
        SHOWN_TITLE,
        "arXiv:2610.00001 · Ada Lovelace, عربي مؤلف, Alan Turing +1 · cs.LG · 2026-10-01",
        "Analytical Engines Ltd · Université <Paris> & Co",
        f"🏷 {FOLLOWED}, Web Agents <x> & co, Tool Use +2",
        f"TL;DR: {SHOWN_TLDR}",
    ]
    telegram, slack, terminal = telegram_lines(shown), slack_lines(shown), console_lines(shown)
    assert telegram[:-1] == slack[:-1] == terminal[:-1] == expected
    # The links come last: Telegram and Slack link the title, so their line offers the PDF.
    assert telegram[-1] == slack[-1] == "abs · PDF"
    assert (
        terminal[-1] == "https://arxiv.org/abs/2610.00001  PDF https://arxiv.org/pdf/2610.00001v1"
    )


def test_the_three_renderers_mark_the_same_followed_tags() -> None:
    shown = item()
    (message,) = telegram_render.render(Reply(papers=(shown,)))
    (slack,) = slack_render.render(Reply(papers=(shown,)))
    assert f"🏷 <b>{FOLLOWED}</b>, Web Agents &lt;x&gt; &amp; co, Tool Use +2" in message
    assert f":label: *{FOLLOWED}*, Web Agents &lt;x&gt; &amp; co, Tool Use +2" in str(slack)
    assert f"  tags: {FOLLOWED} ★, Web Agents <x> & co, Tool Use +2" in console.render_paper(shown)


def test_a_limit_changed_in_one_place_changes_every_platform(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    limits = replace(LIMITS, title=20, authors=1, tags=2, tag=8, tldr=30)
    monkeypatch.setattr(card_module, "LIMITS", limits)
    shown = item("2610.00003")  # not one the Telegram renderer has cached
    expected = [
        "Agents <script> & 𝒪…",
        "arXiv:2610.00003 · Ada Lovelace +3 · cs.LG · 2026-10-01",
        "Analytical Engines Ltd · Université <Paris> & Co",
        "🏷 RL for…, Web Age… +3",
        "TL;DR: We propose <b>x</b> & y. It…",  # cut at a word boundary
    ]
    for lines in (telegram_lines(shown), slack_lines(shown), console_lines(shown)):
        assert lines[:-1] == expected
    assert len(expected[0]) == limits.title and len(expected[-1]) <= len("TL;DR: ") + limits.tldr


def test_hostile_text_is_cut_before_it_is_escaped() -> None:
    huge = "&<" * 2500  # 5,000 characters, each escaped to four or five
    many = tuple(Author(huge, (f"{huge}{n}",)) for n in range(10))
    hostile = PaperItem(
        paper("2610.00004", title=huge, authors=many, categories=(huge,)),
        tags=tuple(f"{huge}{n}" for n in range(12)),
        followed_tags=(f"{huge}0",),
        tldr=huge,
    )
    fields = card(hostile).fields
    assert len(fields[0].text) == LIMITS.title
    for message in telegram_render.render(Reply(papers=(hostile,))):
        assert check_telegram_html(message) is None  # whole entities, within 4,096
    (message,) = telegram_render.render(Reply(papers=(hostile,)))  # still one message
    assert utf16_len(parse_telegram_html(message).text) < 2500
    (slack,) = slack_render.render(Reply(papers=(hostile,)))
    assert check_blocks(slack["blocks"]) == []  # whole entities, each section within 3,000
    texts = [b["text"]["text"] for b in slack["blocks"]]
    assert len(texts) > 1 and not any(t.endswith("&…") or t.endswith("&amp…") for t in texts)
    assert len(console.render_paper(hostile).splitlines()[0]) == len("• ") + LIMITS.title


def test_invisible_and_right_to_left_characters_reach_chats_but_not_the_terminal() -> None:
    marks = "zero\u200bwidth \u200fRTL\u200e mark"
    shown = PaperItem(paper("2610.00005", title=marks))
    (message,) = telegram_render.render(Reply(papers=(shown,)))
    (slack,) = slack_render.render(Reply(papers=(shown,)))
    assert marks in message and marks in slack["blocks"][0]["text"]["text"]
    terminal = console.render_reply(Reply(papers=(shown,)))
    assert "zero width  RTL  mark" in terminal  # a terminal gets no invisible controls


@pytest.mark.parametrize(
    ("arxiv_id", "version", "shown"),
    [
        ("2610.00006", 1, "arXiv:2610.00006"),
        ("2610.00007", 3, "arXiv:2610.00007v3"),  # a replacement: its version
        ("cond-mat/0412498", 2, "arXiv:cond-mat/0412498v2"),
        ("sample:a-bundled-paper", 1, "sample:a-bundled-paper"),  # what /why takes for it
    ],
)
def test_every_platform_shows_the_papers_id(arxiv_id: str, version: int, shown: str) -> None:
    item_ = replace(item(), paper=paper(arxiv_id, version=version))
    for lines in (telegram_lines(item_), slack_lines(item_), console_lines(item_)):
        assert lines[1].startswith(f"{shown} · Ada Lovelace")
    (message,) = telegram_render.render(Reply(papers=(item_,)))
    assert f"<code>{shown}</code>" in message  # tap to copy
    (slack,) = slack_render.render(Reply(papers=(item_,)))
    assert f"`{shown}`" in str(slack)


def test_latex_in_titles_names_and_tldrs_is_shown_as_unicode() -> None:
    shown = PaperItem(
        paper(
            "2610.00008",
            title="\\textbf{Fast} $\\omega$-regular games, 50% faster",
            authors=(Author(r"Andr\'e M\"uller", (r"Universit\'e de Paris",)),),
        ),
        tldr="We propose $\\alpha$-nets: \\emph{up} to 50% faster.",
    )
    expected = [
        "Fast ω-regular games, 50% faster",
        "arXiv:2610.00008 · André Müller · cs.LG · 2026-10-01",
        "Université de Paris",
        "TL;DR: We propose α-nets: up to 50% faster.",
    ]
    for lines in (telegram_lines(shown), slack_lines(shown), console_lines(shown)):
        assert lines[:-1] == expected


def test_a_hostile_latex_title_renders_valid() -> None:
    for huge in ("{" * 5000, "\\textbf{" * 625, "$\\" * 2500, "\\'" * 2500, "}%~&$" * 1000):
        shown = PaperItem(paper("2610.00009", title=huge), tldr=huge)
        (message,) = telegram_render.render(Reply(papers=(shown,)))
        (slack,) = slack_render.render(Reply(papers=(shown,)))
        terminal = console.render_paper(shown)
        assert check_telegram_html(message) is None and check_blocks(slack["blocks"]) == []
        assert terminal.splitlines()[0] == "• " + huge[: LIMITS.title - 1] + "…"  # as it came
