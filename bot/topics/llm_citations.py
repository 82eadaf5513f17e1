"""A language model's answer, kept to what was retrieved: citations checked before sending.

The model was given passages numbered [1]..[n] (`bot.topics.llm_prompt`). Its answer may cite
them, and it may also cite what it was not given. `checked` rewrites the answer so that
only given passages are cited:

- a citation group "[2]", "[1, 3]", "[2-4]", "[1][5]" keeps the numbers from 1 to n and drops
  the rest ("[2, 9]" -> "[2]"); a group left empty goes; groups side by side become one;
- an arXiv reference (new-style "2501.12345v2", old-style "hep-th/9901001", with or without
  "arXiv:", in a link to arxiv.org, in brackets or not) becomes "[k]" when it is passage
  k's paper, and goes when it is not among the passages.

A sentence that cited something and is left citing nothing goes too: its claim came from
no passage given. Sentences that cite nothing at all (a connecting sentence, "The passages
do not say.") stay. The text is made one plain line (invisible characters out, white space
collapsed), and cut to `MAX_CHARS` at a word boundary. `Checked.cited` lists the passages
still cited, in order of first citation: empty means the answer supports nothing, and /ask
shows the extractive one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.topics.answer import shown_text
from bot.topics.llm_prompt import Passage
from bot.topics.passages import split_sentences

MAX_CHARS = 1_800
MAX_RANGE = 20  # "[1-3]" is three citations; a range wider than this cites its ends only

_ID = r"(?:\d{4}\.\d{4,5}|[a-z][a-z-]*(?:\.[a-z]{2})?/\d{7})(?:v\d+)?"
_ARXIV_REF = re.compile(
    r"[\[(]?\s*(?:https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/|arxiv\s*:\s*|(?<![\w./-]))"
    rf"({_ID})(?![\w/-])(?:\.pdf)?\s*[\])]?",
    re.IGNORECASE,
)
_GROUP = re.compile(r"\[\s*(\d{1,12}(?:\s*(?:,|;|-|–|and)\s*\d{1,12})*)\s*\]")
_ADJACENT = re.compile(r"\[([\d, ]+)\]\s*\[([\d, ]+)\]")
_NUMBER_OR_RANGE = re.compile(r"(\d+)\s*(?:(?:-|–)\s*(\d+))?")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?)])")
_EMPTY_BRACKETS = re.compile(r"\(\s*[,;]?\s*\)|\[\s*[,;]?\s*\]")


@dataclass(frozen=True, slots=True)
class Checked:
    """The answer as it may be sent, and the passages it cites (numbers, first cited first)."""

    text: str
    cited: tuple[int, ...]


def checked(text: str, given: Sequence[Passage]) -> Checked:
    """`text` with every citation of something not in `given` removed (module doc)."""
    by_id = {_bare(p.paper.arxiv_id): p.number for p in given}
    kept: list[str] = []
    for sentence in split_sentences(shown_text(text, 4 * MAX_CHARS)):
        line = _cleaned(sentence, by_id, len(given))
        cited_before = _GROUP.search(sentence) or _ARXIV_REF.search(sentence)
        if cited_before and not _GROUP.search(line):
            continue  # a claim that only cited what was not given: unsupported, dropped
        if line:
            kept.append(line)
    line = shown_text(" ".join(kept), MAX_CHARS)
    cited: list[int] = []
    for match in _GROUP.finditer(line):
        for number in _numbers(match.group(1), len(given)):
            if number not in cited:
                cited.append(number)
    return Checked(line, tuple(cited))


def _cleaned(sentence: str, by_id: dict[str, int], count: int) -> str:
    line = _ARXIV_REF.sub(lambda m: _known(m, by_id), sentence)
    line = _GROUP.sub(lambda m: _kept(m.group(1), count), line)
    line = _EMPTY_BRACKETS.sub("", line)
    while _ADJACENT.search(line):  # "[2] [2]", "[1][3]" -> "[2]", "[1, 3]"
        line = _ADJACENT.sub(lambda m: _kept(f"{m.group(1)}, {m.group(2)}", count), line)
    return _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join(line.split()))


def _bare(arxiv_id: str) -> str:
    """The id without its version, lower case: what a citation is compared on."""
    return re.sub(r"v\d+$", "", arxiv_id.strip().lower())


def _known(match: re.Match[str], by_id: dict[str, int]) -> str:
    number = by_id.get(_bare(match.group(1)))
    return f" [{number}] " if number is not None else " "


def _kept(body: str, count: int) -> str:
    numbers = _numbers(body, count)
    return "[" + ", ".join(str(n) for n in numbers) + "]" if numbers else ""


def _numbers(body: str, count: int) -> list[int]:
    """The passage numbers a citation group names that are among 1..count, in order."""
    found: list[int] = []
    for match in _NUMBER_OR_RANGE.finditer(body):
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        span = range(first, last + 1) if 0 <= last - first <= MAX_RANGE else (first, last)
        found += [n for n in span if 1 <= n <= count and n not in found]
    return found
