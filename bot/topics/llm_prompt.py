"""What a language model is given for /ask: numbered passages, within a prompt budget.

The passages are the retrieved papers' titles and abstracts (LaTeX shown as text, one line
each), numbered [1]..[n]: first the papers the extractive answer quotes, in its order, then
the other candidates in the index's rank order, at most `MAX_PASSAGES` of them and until
`PROMPT_CHARS` is spent (so that the sources of an answer fit in one message). An abstract
longer than `PASSAGE_CHARS` is cut. The instructions (`SYSTEM`) ask for a short answer that
cites passages as [n] and nothing else; `bot.topics.llm_citations` checks that it did.

`estimate_tokens` is the daily budget's reservation for one call: the prompt's characters
over `CHARS_PER_TOKEN` (English text runs about four characters a token) plus the most the
answer may take (`ANSWER_TOKENS`, sent as `max_tokens`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.domain import Paper
from bot.topics.answer import shown_text

PROMPT_CHARS = 12_000  # the passages together
PASSAGE_CHARS = 1_500  # one paper's title and abstract
MAX_PASSAGES = 8
MIN_PASSAGE_CHARS = 200  # no passage is cut shorter than this by the budget
ANSWER_TOKENS = 400
CHARS_PER_TOKEN = 4

SYSTEM = (
    "You answer a researcher's question using only the numbered passages given, which are "
    "titles and abstracts of arXiv papers. Answer in at most five sentences of plain text, "
    "no markup. After each claim, cite the passages it comes from as [1], [2] and so on, "
    "using only the numbers given. Do not cite or name any other paper. If the passages do "
    "not answer the question, say so in one sentence."
)


@dataclass(frozen=True, slots=True)
class Passage:
    """One numbered passage: a paper's title and abstract as the model reads them."""

    number: int  # 1-based, as cited: [number]
    paper: Paper
    text: str  # "Title. Abstract", one line


def passages(
    cited: Sequence[Paper], candidates: Sequence[Paper], limit_chars: int = PROMPT_CHARS
) -> tuple[Passage, ...]:
    """The papers as numbered passages: `cited` first, then the rest of `candidates`."""
    found: list[Passage] = []
    seen: set[str] = set()
    left = limit_chars
    for paper in (*cited, *candidates):
        if len(found) == MAX_PASSAGES:
            break
        if paper.arxiv_id in seen:
            continue
        seen.add(paper.arxiv_id)
        if left < MIN_PASSAGE_CHARS:  # what is left would cut an abstract to nothing
            break
        text = _passage_text(paper, min(left, PASSAGE_CHARS))
        found.append(Passage(len(found) + 1, paper, text))
        left -= len(text)
    return tuple(found)


def _passage_text(paper: Paper, limit: int) -> str:
    title = shown_text(paper.title, 300)
    return shown_text(f"{title}. {paper.abstract}", max(limit, 1))


def user_message(question: str, given: Sequence[Passage]) -> str:
    """The question and the passages, as the model's user message."""
    lines = [f"[{p.number}] {p.text}" for p in given]
    return "Passages:\n" + "\n".join(lines) + f"\n\nQuestion: {question.strip()}"


def estimate_tokens(question: str, given: Sequence[Passage]) -> int:
    """The tokens one call may cost, reserved from the daily budget before it is made."""
    chars = len(SYSTEM) + len(user_message(question, given))
    return chars // CHARS_PER_TOKEN + 1 + ANSWER_TOKENS
