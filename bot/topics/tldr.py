"""A one- or two-sentence TL;DR taken from the abstract itself (no external service).

Scores each sentence for stating the contribution ("we propose", "we introduce",
"this paper presents") or the main result ("outperforms", "improves", "achieves",
numbers with %), and keeps the best contribution sentence and the best result
sentence, in their original order.
"""

from __future__ import annotations

import re
from functools import lru_cache

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9$\\(\[])")
_CONTRIBUTION = re.compile(
    r"\b(we (propose|introduce|present|develop|design|build|study|show|release)|"
    r"this (paper|work|article) (proposes|introduces|presents|studies|develops)|"
    r"(here|in this (paper|work)),? we)\b",
    re.IGNORECASE,
)
_RESULT = re.compile(
    r"\b(outperform\w*|improv\w*|achiev\w*|surpass\w*|state-of-the-art|sota|reduc\w*|"
    r"gains?|boosts?|speed-?ups?|beats?|matches|exceeds?)\b|\d+(\.\d+)?\s*(%|x\b|×)",
    re.IGNORECASE,
)
MAX_CHARS = 480


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


@lru_cache(maxsize=4096)  # a paper is summarised for every chat it goes to: do it once
def tldr(abstract: str) -> str:
    """The contribution and the main result, or the first sentence as a fallback."""
    found = sentences(abstract)
    if not found:
        return ""
    contribution = next((i for i, s in enumerate(found) if _CONTRIBUTION.search(s)), None)
    scored = [
        (len(_RESULT.findall(s)), -i, i) for i, s in enumerate(found) if i != contribution and i > 0
    ]
    result = max(scored)[2] if scored and max(scored)[0] > 0 else None
    chosen = sorted({i for i in (contribution, result) if i is not None}) or [0]
    text = " ".join(found[i] for i in chosen)
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1].rstrip() + "…"
