"""What "papers like these" needs from outside: the stored sets, and arXiv's papers by id."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from bot.domain import Paper


@dataclass(frozen=True, slots=True)
class LikeSet:
    """A stored set: its tag (the LIKE subscriptions' tag), its arXiv ids in the order
    given, its profile (`bot.topics.like.LikeProfile.to_json`) and its threshold, when that
    was calibrated and on how many stored papers (0: on the bundled day,
    `bot.topics.like_calibration`)."""

    tag: str
    arxiv_ids: tuple[str, ...]
    profile: str
    threshold: float
    calibrated_at: datetime | None = None
    calibrated_on: int = 0


class LikeSetStore(Protocol):
    """The sets of LIKE subscriptions, one per tag whoever follows it (table like_sets)."""

    async def save(self, like_set: LikeSet) -> None:
        """Store `like_set`, replacing the one with its tag."""
        ...

    async def get(self, tag: str) -> LikeSet | None: ...

    async def followed(self) -> Sequence[LikeSet]:
        """Every set a LIKE subscription of an active chat follows, once each, by tag:
        what ingest matches new papers against."""
        ...

    async def recalibrated(self, tag: str, threshold: float, at: datetime, on: int) -> None:
        """The set of `tag` has the `threshold` calibrated `at` on `on` stored papers (no
        change when no set has that tag)."""
        ...


class PaperLookupError(Exception):
    """arXiv could not be asked (unreachable, busy, an unreadable answer); one line."""


class PaperLookup(Protocol):
    """arXiv's metadata of papers by id (the export API, through the polite client)."""

    async def papers(self, arxiv_ids: Sequence[str]) -> Sequence[Paper]:
        """The papers of `arxiv_ids` arXiv knows (an unknown id is absent from the answer);
        `PaperLookupError` when arXiv cannot be asked."""
        ...
