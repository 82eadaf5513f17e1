"""/ask with a language model: the same retrieval, the answer written, its citations checked.

When the composition root gives the context an `AnswerWriter` (PAPERWATCH_LLM_URL, _API_KEY
and _MODEL set) and the search retrieved papers, `written_reply`:

1. numbers the candidate papers as passages (`bot.topics.llm_prompt.passages`: the papers
   the extractive answer quotes first, then the others as retrieved);
2. reserves the call's estimated tokens from the day's budget (`TokenBudgetStore`, committed
   before the call, so every process sharing the database counts them), then calls the
   model outside any transaction, then settles the reservation with the tokens the model
   reported (or keeps the estimate after a timeout: the model may have spent them; a
   refused call spends none);
3. keeps only the citations of passages it was given (`bot.topics.llm_citations`), and
   answers with the text and, under it, each cited passage's paper: title, `[arXiv:id]`
   and the link to its abstract.

When the model cannot be used (budget spent, timeout, HTTP error, a body that is not a
chat completion) or its answer cites none of the passages, the reply is the extractive one
with one line first saying why. When the extractive answer had found nothing either, that
"None of the N papers ..." reply is given as it is: the model's "the passages do not answer"
agrees with it, and a model that could not be asked changes nothing it says.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from datetime import UTC

from bot.domain import Paper, Reply, Section
from bot.ports import AnswerWriter, BudgetExhausted, WriterError, WriterTimeout, WrittenAnswer
from bot.topics.answer import MAX_TITLE_CHARS, shown_text
from bot.topics.answer_layout import drawn_from
from bot.topics.llm_citations import Checked, checked
from bot.topics.llm_prompt import Passage, estimate_tokens, passages
from handlers.base import Context

log = logging.getLogger(__name__)

CITED_NOTHING = (
    "The language model's answer cited none of the papers found; here are the abstracts' own words."
)


async def written_reply(
    ctx: Context,
    writer: AnswerWriter,
    question: str,
    quoted: Sequence[Paper],
    candidates: Sequence[Paper],
    extractive: Reply,
    asked_of: tuple[int, str],
) -> Reply:
    """The model's answer to `question` from `candidates`, or `extractive` and why not.

    `quoted` are the papers the extractive answer cites (none when it found nothing: then
    `extractive` is its "None of the N papers" reply); `asked_of` how many papers the
    question was asked of and which (e.g. `(412, "on RL for LLM Agents")`)."""
    given = passages(quoted, candidates)
    if not given:  # nothing retrieved: nothing the model could cite
        return extractive
    try:
        written = await write_within_budget(ctx, writer, question, given)
    except WriterError as exc:
        log.info("ask: extractive answer instead of the model's: %s", type(exc).__name__)
        return noted(extractive, exc.reason) if quoted else extractive
    result = checked(written.text, given)
    if not result.cited:
        log.info("ask: the model's answer cited no passage given")
        return noted(extractive, CITED_NOTHING) if quoted else extractive
    log.info(
        "ask: the model answered passages=%d cited=%d tokens=%s",
        len(given),
        len(result.cited),
        written.total_tokens,
    )
    return cited_reply(result, given, asked_of)


async def write_within_budget(
    ctx: Context, writer: AnswerWriter, question: str, given: Sequence[Passage]
) -> WrittenAnswer:
    """The model's answer, its tokens reserved before and settled after (module doc);
    `BudgetExhausted` without calling it when the reservation would pass the day's limit."""
    day = ctx.clock().astimezone(UTC).date()
    estimate = estimate_tokens(question, given)
    async with ctx.uow() as uow:
        if not await uow.llm_budget.reserve(day, estimate, ctx.llm_daily_tokens):
            raise BudgetExhausted()
        await uow.commit()
    used = 0
    try:
        written = await writer.write(question, given)
        reported = written.total_tokens
        # Counted as reported, but never past the day's whole budget (a stored count).
        used = estimate if reported is None else min(reported, ctx.llm_daily_tokens)
        return written
    except WriterTimeout:
        used = estimate
        raise
    finally:
        async with ctx.uow() as uow:
            await uow.llm_budget.settle(day, estimate, used)
            await uow.commit()


def noted(reply: Reply, note: str) -> Reply:
    """`reply` with `note` as its first line."""
    return dataclasses.replace(reply, lines=(note, *reply.lines))


def cited_reply(result: Checked, given: Sequence[Passage], asked_of: tuple[int, str]) -> Reply:
    """The checked answer, then each cited passage's paper under its number."""
    by_number = {p.number: p.paper for p in given}
    sections = tuple(
        Section(
            heading=f"[{number}] {shown_text(by_number[number].title, MAX_TITLE_CHARS)}",
            lines=(f"[{by_number[number].shown_id}] {by_number[number].abs_url}",),
        )
        for number in result.cited
    )
    papers, scope = asked_of
    intro = f"{drawn_from(len(sections), papers, scope)}, written by a language model:"
    return Reply(lines=(intro, result.text), sections=sections)
