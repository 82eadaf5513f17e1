"""/ask: a question answered from the stored papers' own abstracts, with citations.

`/ask RL for LLM Agents: which rewards do web agents use?` asks one topic (the text before
the first colon, read as /search reads it: `handlers.search.scope_of`); without a topic the
question goes to the papers of the topics the chat follows, or to every stored paper when
it follows none. Two steps:

1. **Retrieve** (`retrieve`): the question's informative words (`bot.topics.ask_terms`)
   searched in the full-text index (`bot.ports.PaperSearch`): papers with all of them first,
   then with two of its rarest, then (when few are found) with any of those, up to
   `CANDIDATES`, in the index's rank order.
2. **Answer** (`bot.topics.answer`): the 3-5 abstract sentences that best answer the
   question, at most two a paper, each group under its paper's title and id, with the link
   to its abstract page. Under the answerer's relevance floor the reply says plainly that
   none of the papers asked, since the first day they cover, talks about the question's
   words ("None of the 412 papers on RL for LLM Agents since 2026-06-01 talks about ..."),
   rather than quoting noise.
   Asked within one topic, the topic's name tells the floor which words every paper asked
   shares, and so are not the question's subject.

With a language model configured (`handlers.ask_llm`), step 2 is written by the model from
the same candidates, numbered, and its citations are checked against them, also when the
floor found nothing: the model reads question and abstracts together, and can tell a question
in other words than the papers' from one they do not answer, which word overlap cannot.
Without one, or when it cannot answer, the extractive answer stands.

Nothing typed becomes search syntax: only the question's words (letters and digits) reach
the index, each one quoted by `bot.topics.search_text`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from itertools import combinations

from bot.domain import Command, Paper, Reply, Section, Subscription
from bot.ports import UnitOfWork
from bot.topics.answer import Answer, answer
from bot.topics.answer_layout import BULLET, citation, drawn_from, fit
from bot.topics.ask_terms import QuestionTerm, question_terms
from bot.topics.search_text import SearchHit
from handlers.ask_llm import written_reply
from handlers.base import CommandSpec, Context
from handlers.search import Within, scope_of
from handlers.subscriptions import subscription_tag, unknown_topic, usage_error

CANDIDATES = 30  # papers the answerer reads
LOOSE_WORDS = 4  # a question's rarest words, two of which a paper may have instead of all
ANY_BELOW = 10  # papers found, under which those with any of the rarest words are added
MAX_QUESTION = 1000  # characters: a question, not a document
# Room for an answer in one message: Telegram's 4,096 less the heading and the links.
ANSWER_CHARS = 3000
LINK_CHARS = 50  # a group's abstract link, "https://arxiv.org/abs/2501.12345v2", and its line


@dataclass(frozen=True, slots=True)
class Asked:
    """A question's answer, and what it was asked of (for the reply's first line)."""

    answer: Answer
    scope: str  # after "papers": "on RL for LLM Agents", "on the 3 topics ...", "stored"
    papers: int  # how many papers the question was asked of
    candidates: tuple[Paper, ...] = ()  # the papers retrieved, best first
    since: date | None = None  # the first day those papers cover (`PaperStore.extent`)


def search_words(question: str) -> list[str]:
    """The question's informative words, as the index should look for them."""
    return [term.shown for term in question_terms(question)]


async def retrieve(
    uow: UnitOfWork, question: str, tags: Sequence[str] | None, limit: int = CANDIDATES
) -> list[SearchHit]:
    """Up to `limit` papers for `question`, from the narrowest search to the loosest (each
    adding papers not found yet while fewer than `limit` are): papers with all its words;
    with two of its `LOOSE_WORDS` rarest; and, while fewer than `ANY_BELOW` are found, with
    any of those. A long question in other words than the papers' is in no paper whole,
    and its commoner words ("learning", "models", or "generators", which the index's stemmer
    makes "gener") would match half the index: ranking all of them took most of the time
    and ranked nothing useful."""
    found: list[SearchHit] = []
    seen: set[str] = set()
    for text, below in _searches(question_terms(question), limit):
        if len(found) >= below:
            continue
        more = await uow.search.search(text, tags=tags, limit=limit)
        found += [hit for hit in more.hits if hit.paper.arxiv_id not in seen]
        seen.update(hit.paper.arxiv_id for hit in more.hits)
    return found[:limit]


def _searches(terms: Sequence[QuestionTerm], limit: int) -> list[tuple[str, int]]:
    """The searches for a question's terms, narrowest first, each with the number of papers
    found before it under which it runs. Every word is quoted, and AND or OR between them
    makes the text a query: the index does not loosen it by itself."""
    words = [f'"{term.shown}"' for term in terms]
    if not words:
        return []
    ranked = sorted(range(len(terms)), key=lambda i: (-terms[i].weight, i))
    rarest = [words[i] for i in sorted(ranked[:LOOSE_WORDS])]
    searches = [(" AND ".join(words), limit)]
    if len(rarest) > 2:
        pairs = " OR ".join(f"({a} AND {b})" for a, b in combinations(rarest, 2))
        searches.append((pairs, limit))
    if len(words) > 1:
        searches.append((" OR ".join(rarest), ANY_BELOW))
    return searches


async def ask_papers(
    uow: UnitOfWork, question: str, tags: Sequence[str] | None, scope: str, given: str = ""
) -> Asked:
    """Retrieve and answer `question` among the papers with any of `tags` (None: all);
    `given`: the name of the one topic asked, which every paper asked is about."""
    hits = await retrieve(uow, question, tags)
    papers: list[Paper] = [hit.paper for hit in hits]
    # By rank, not by the index's scores: SQLite's bm25 and PostgreSQL's ts_rank_cd are on
    # other scales (ts_rank_cd's fall off steeply), and the same papers in the same order
    # should get the same answer on either database.
    found = answer(question, papers, given=given) if papers else None
    if found is None:
        found = Answer(groups=(), key_terms=tuple(search_words(question)), found=False)
    pool, since = await uow.papers.extent(tags)
    return Asked(found, scope, pool, tuple(papers), since)


def answer_reply(asked: Asked) -> Reply:
    """The reply to a question: the answer by paper, or why there is none."""
    result = asked.answer
    if not result.found:
        return Reply.text(_not_found(asked))
    shown = fit(result, limit_chars=ANSWER_CHARS, extra_per_group=LINK_CHARS)
    sections = tuple(
        Section(
            heading=group.title,
            lines=(
                *(f"{BULLET}{sentence} {citation(group)}" for sentence in group.sentences),
                group.paper.abs_url,
            ),
        )
        for group in shown.groups
    )
    cited = len(shown.groups)
    intro = f"{drawn_from(cited, asked.papers, asked.scope)}:"
    return Reply(lines=(intro,), sections=sections)


def _not_found(asked: Asked) -> str:
    words = asked.answer.key_terms
    if not words:
        return (
            "Ask about something specific, e.g. "
            "/ask RL for LLM Agents: which rewards do web agents use?"
        )
    about = ", ".join(f'"{w}"' for w in words[:6])
    if asked.papers == 0:
        return f"No papers {asked.scope} yet, so none talks about {about}."
    since = f" since {asked.since.isoformat()}" if asked.since else ""
    if asked.papers == 1:
        return f"The one paper {asked.scope}{since} does not talk about {about}."
    return f"None of the {asked.papers:,} papers {asked.scope}{since} talks about {about}."


async def ask(cmd: Command, ctx: Context) -> Reply:
    """Answer a question from the abstracts of a topic's papers (or the followed topics')."""
    text = cmd.args.strip()
    if not text:
        return usage_error(ASK.usage, "What would you like to know? For example:")
    async with ctx.uow() as uow:
        chat = await uow.chats.get(cmd.chat)
        subs = await uow.subscriptions.for_chat(chat.id) if chat else []
        within = scope_of(text, subs, ctx)
        if isinstance(within, Within):
            question, tags, scope = within.words, [within.tag], f"on {within.name}"
            given = within.name
        elif subs:
            question, tags, scope = text, [subscription_tag(s) for s in subs], _followed(subs)
            given = subs[0].label if len(subs) == 1 else ""
        else:
            question, tags, scope, given = text, None, "stored", ""
        asked = await ask_papers(uow, question, tags, scope, given)
    name, colon, rest = text.partition(":")
    if not asked.answer.found and isinstance(within, list) and colon and rest.strip():
        # "Basket Weaving: ..." names no topic, and as a question it finds nothing either.
        return unknown_topic(name.strip(), within)
    if ctx.answer_writer is not None and asked.candidates:
        quoted = [group.paper for group in asked.answer.groups]
        return await written_reply(
            ctx,
            ctx.answer_writer,
            question,
            quoted,
            asked.candidates,
            answer_reply(asked),
            (asked.papers, asked.scope),
        )
    return answer_reply(asked)


def _followed(subs: Sequence[Subscription]) -> str:
    if len(subs) == 1:
        return f"on {subs[0].label}"
    return f"on the {len(subs)} topics this chat follows"


ASK = CommandSpec(
    "ask",
    ask,
    "ask the stored papers a question; the answer quotes their abstracts",
    "/ask [topic:] <question>, e.g. /ask RL for LLM Agents: which rewards do web agents use?",
    max_args=MAX_QUESTION,  # longer ones are refused by `Registry.dispatch`, in one line
)
