"""A one- or two-sentence TL;DR taken from the abstract itself (no external service).

Finds the sentence that states the contribution ("we propose", "we introduce", "this paper
presents", "we show") and the one that states the main result ("outperforms", "improves",
"achieves", numbers with %), and keeps both, in their original order. Background comes before
the contribution in an abstract, so a result is looked for after the contribution: a TL;DR never
shows a background sentence when the abstract has a contribution sentence. A fragment (a
sentence that ends in ":" and so introduces a list, or one of a few words) is never chosen.
The TL;DR is at most `MAX_CHARS` characters, cut at a word boundary.

The abstract is taken as stored (LaTeX and all); the card converts the TL;DR for display
(`bot.topics.latex`).
"""

from __future__ import annotations

import re
from functools import lru_cache

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9$\\(\[])")
_CONTRIBUTION = re.compile(
    r"\b(we (propose|introduce|present|develop|design|build|study|show|release|demonstrate|"
    r"find|formulate|establish|derive|prove|provide|investigate|construct|describe|report|"
    r"explore|analy[sz]e|offer|identify|argue|extend|train|benchmark|curate|collect)|"
    r"this (paper|work|article|study|note|letter|report) (proposes|introduces|presents|studies|"
    r"develops|shows|describes|investigates|provides|explores|addresses|examines|demonstrates|"
    r"establishes|analy[sz]es|reports)|"
    r"(here|in this (paper|work|study|article)),? we|"
    r"our (method|approach|framework|model|system|results?|experiments|analysis|findings) "
    r"(achieves?|outperforms?|shows?|improves?|reveals?|demonstrates?))\b",
    re.IGNORECASE,
)
_RESULT = re.compile(
    r"\b(outperform\w*|improv\w*|achiev\w*|surpass\w*|state-of-the-art|sota|reduc\w*|"
    r"gains?|boosts?|speed-?ups?|beats?|matches|exceeds?)\b|\d+(\.\d+)?\s*(%|x\b|×)",
    re.IGNORECASE,
)
MAX_CHARS = 480
_MIN_WORDS = 4  # fewer is a fragment ("Results." "See Sec. 3.")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


def is_fragment(sentence: str) -> bool:
    """A sentence that cannot stand on its own: it introduces a list ("The results showed:")
    or is only a few words."""
    return sentence.rstrip().endswith((":", ";")) or len(sentence.split()) < _MIN_WORDS


def shorten_words(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, cut at a word boundary (a single word longer than
    a fifth of `limit` is cut inside) and never right after a colon or comma, ending in "…"
    when it was cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit * 4 // 5:
        cut = cut[:space]
    return cut.rstrip().rstrip(":;,").rstrip() + "…"


@lru_cache(maxsize=4096)  # a paper is summarised for every chat it goes to: do it once
def tldr(abstract: str) -> str:
    """The contribution and the main result, or the first whole sentence as a fallback."""
    found = sentences(abstract)
    if not found:
        return ""
    whole = [i for i, s in enumerate(found) if not is_fragment(s)]
    contribution = next((i for i in whole if _CONTRIBUTION.search(found[i])), None)
    after = contribution if contribution is not None else 0
    scored = [(len(_RESULT.findall(found[i])), -i, i) for i in whole if i > after]
    result = max(scored)[2] if scored and max(scored)[0] > 0 else None
    chosen = sorted(i for i in (contribution, result) if i is not None)
    if not chosen:
        chosen = [whole[0] if whole else 0]
    text = " ".join(found[i] for i in chosen)
    if len(text) > MAX_CHARS and contribution is not None:
        # Both do not fit: the contribution whole rather than both cut short.
        alone = found[contribution]
        text = alone if len(alone) <= MAX_CHARS else text
    return shorten_words(text, MAX_CHARS)
