"""An extractive answer (`bot.topics.answer`) laid out as plain text within a message limit.

Each cited paper is a group of lines: its title followed by its citation, then one line per
quoted sentence, and a blank line between groups::

    Sparse Attention across Multiple-context KV Cache [arXiv:2508.11661]
    • This paper presents SamKV, the first exploration of attention sparsification ...
    • Experiments demonstrate that our method compresses sequence length to 15% ...

Lengths are counted in UTF-16 code units (`message_length`): Telegram's 4,096 limit counts
those, and they are never fewer than characters, so Slack's per-block limit holds too. When an
answer is too long, whole sentences are dropped from the end (a group left with none goes); a
sentence is cut only when the first one alone does not fit, and then at a word boundary with
an ellipsis. `fit` returns the shortened `Answer` for renderers that add their own markup:
`extra_per_group` is the room their markup takes per group (a link's URL, say).
"""

from __future__ import annotations

from dataclasses import replace

from bot.topics.answer import Answer, Group
from bot.topics.tldr import shorten_words

BULLET = "• "
MIN_LIMIT = 100


def drawn_from(cited: int, papers: int, scope: str) -> str:
    """Where an answer comes from: "From 3 of the 412 papers on X" ("From the one paper on X"
    when the scope holds one)."""
    if papers == 1:
        return f"From the one paper {scope}"
    return f"From {cited} of the {papers:,} papers {scope}"


def message_length(text: str) -> int:
    """The length of `text` in UTF-16 code units (an emoji outside the BMP counts 2)."""
    return len(text.encode("utf-16-le")) // 2


def citation(group: Group) -> str:
    return f"[{group.paper.shown_id}]"


def group_lines(group: Group) -> list[str]:
    return [f"{group.title} {citation(group)}", *(BULLET + s for s in group.sentences)]


def lines_of(answer: Answer) -> tuple[str, ...]:
    """All of `answer` as lines, whatever their length (nothing when it is not found)."""
    lines: list[str] = []
    for group in answer.groups:
        if lines:
            lines.append("")
        lines.extend(group_lines(group))
    return tuple(lines)


def answer_lines(answer: Answer, *, limit_chars: int, extra_per_group: int = 0) -> tuple[str, ...]:
    """`answer` as plain-text lines that, joined by newlines, fit in `limit_chars`."""
    return lines_of(fit(answer, limit_chars=limit_chars, extra_per_group=extra_per_group))


def fit(answer: Answer, *, limit_chars: int, extra_per_group: int = 0) -> Answer:
    """`answer` with sentences dropped from the end (module doc) until its lines, plus
    `extra_per_group` per group, fit in `limit_chars`."""
    if limit_chars - extra_per_group < MIN_LIMIT:
        raise ValueError(f"a message limit of {limit_chars} leaves no room for an answer")
    groups = list(answer.groups)
    while groups and _size(groups, extra_per_group) > limit_chars:
        last = groups[-1]
        if len(last.sentences) > 1:
            groups[-1] = replace(last, sentences=last.sentences[:-1])
        elif len(groups) > 1:
            groups.pop()
        else:
            groups[0] = _cut(last, limit_chars - extra_per_group)
            break
    return replace(answer, groups=tuple(groups))


def _size(groups: list[Group], extra_per_group: int) -> int:
    lines = lines_of(Answer(tuple(groups), (), found=True))
    text_size = sum(message_length(line) for line in lines) + max(len(lines) - 1, 0)
    return text_size + extra_per_group * len(groups)


def _cut(group: Group, limit: int) -> Group:
    """The one group left, cut to fit: its title to at most half the room, the sentence to
    the rest."""
    room_for_title = limit // 2 - message_length(citation(group)) - 1
    title = _shorten(group.title, room_for_title)
    used = message_length(f"{title} {citation(group)}") + 1 + message_length(BULLET)
    sentence = _shorten(group.sentences[0], limit - used) if group.sentences else ""
    return replace(group, title=title, sentences=(sentence,) if sentence else ())


def _shorten(text: str, limit: int) -> str:
    """`text` cut at a word boundary so that its UTF-16 length is at most `limit`."""
    cut, budget = text, limit
    while budget > 0 and message_length(cut) > limit:
        cut = shorten_words(text, budget)
        budget -= max(message_length(cut) - limit, 1)
    return cut if message_length(cut) <= limit else ""
