"""/follow like, /unfollow like, /list and BibTeX files on the fake unit of work, with a fake
arXiv lookup at its port (`bot.ports.PaperLookup`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache

import pytest

from bench.relevance_catalog import CATALOG_DIR, load_labels, load_split
from bot.domain import ChatRef, Command, Paper, Platform, Reply, Role
from bot.domain import SubscriptionKind as Kind
from bot.ports import PaperLookupError
from bot.topics.catalog import Catalog
from bot.topics.like import like_tag
from handlers.base import Context
from handlers.like_follows import bibtex_command
from handlers.registry import REGISTRY
from handlers.text import parse_command
from tests.support.uow import FakeDatabase

NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
CHAT = ChatRef(Platform.TELEGRAM, "4242")


@cache
def positives(slug: str) -> tuple[Paper, ...]:
    papers = load_split("dev")
    labels = load_labels(CATALOG_DIR / "labels" / "dev" / f"{slug}.jsonl")
    return tuple(papers[lb.arxiv_id] for lb in labels if lb.label)


@dataclass
class FakeArxiv:
    """arXiv at the port: knows `papers`; records each call; fails when `down`."""

    papers: dict[str, Paper] = field(default_factory=dict)
    asked: list[list[str]] = field(default_factory=list)
    down: bool = False

    async def papers_for(self, ids: Sequence[str]) -> Sequence[Paper]:
        self.asked.append(list(ids))
        if self.down:
            raise PaperLookupError("arXiv could not be asked (HTTP 503)")
        return [self.papers[i] for i in ids if i in self.papers]


class Lookup:
    def __init__(self, arxiv: FakeArxiv) -> None:
        self._arxiv = arxiv

    async def papers(self, arxiv_ids: Sequence[str]) -> Sequence[Paper]:
        return await self._arxiv.papers_for(arxiv_ids)


@pytest.fixture
def fake() -> FakeDatabase:
    return FakeDatabase()


@pytest.fixture
def arxiv() -> FakeArxiv:
    return FakeArxiv()


@pytest.fixture
def ctx(fake: FakeDatabase, small_catalog: Catalog, arxiv: FakeArxiv) -> Context:
    return Context(
        uow=fake.uow, catalog=small_catalog, clock=lambda: NOW, paper_lookup=Lookup(arxiv)
    )


async def say(ctx: Context, line: str) -> Reply:
    command = parse_command(line, CHAT, role=Role.OWNER)
    assert command is not None
    return await REGISTRY.dispatch(command, ctx)


def unchanged(fake: FakeDatabase) -> bool:
    return not fake.state.subscriptions and not fake.state.like_sets


async def test_follow_stored_papers_list_and_unfollow(
    ctx: Context, fake: FakeDatabase, arxiv: FakeArxiv
) -> None:
    fl = positives("federated-learning")
    fake.seed_papers(*fl)
    ids = [p.arxiv_id for p in fl[:3]]
    reply = await say(ctx, "/follow like " + " ".join(f"arXiv:{i}v2" for i in ids))
    assert not reply.is_error and reply.changes_chat
    title = " ".join(fl[0].title.split())[:120]
    assert reply.lines[0].startswith(f"Now following Papers like “{title[:40]}")
    assert "(3 papers; match score above 0." in reply.lines[0]
    assert "at most 2% of new papers" in reply.lines[0]
    assert arxiv.asked == []  # all stored: arXiv is not asked
    (sub,) = fake.state.subscriptions
    tag = like_tag(ids)
    assert (sub.kind, sub.target, sub.tag) == (Kind.LIKE, tag, tag)
    stored = fake.state.like_sets[tag]
    assert stored.arxiv_ids == tuple(ids) and stored.threshold >= 0.08
    # the newest stored papers like the set are tagged at once, never the set's own
    tagged = {a for a, tags in fake.state.tags.items() if tag in tags}
    assert tagged and not tagged & set(ids)
    assert all(fake.state.tags[a][tag][0].startswith("like score ") for a in tagged)

    listed = await say(ctx, "/list")
    assert f"(match score above {stored.threshold:.2f})" in "\n".join(listed.lines)
    again = await say(ctx, "/follow like " + " ".join(reversed(ids)))
    assert again.lines[0].startswith("This chat already follows Papers like")
    assert len(fake.state.subscriptions) == 1

    gone = await say(ctx, "/unfollow like " + " ".join(ids))
    assert (
        gone.lines[0].startswith("Stopped following Papers like") and not fake.state.subscriptions
    )


async def test_papers_not_stored_are_asked_from_arxiv_once(
    ctx: Context, fake: FakeDatabase, arxiv: FakeArxiv
) -> None:
    sql = positives("text-to-sql")
    fake.seed_papers(sql[0])
    arxiv.papers = {p.arxiv_id: p for p in sql[1:4]}
    ids = [p.arxiv_id for p in sql[:4]]
    reply = await say(ctx, "/follow like " + ", ".join(ids))
    assert not reply.is_error, reply.lines
    assert arxiv.asked == [ids[1:]]
    assert fake.state.like_sets[like_tag(ids)].arxiv_ids == tuple(ids)
    # another chat following the same set reuses it: arXiv is not asked again
    other = parse_command("/follow like " + " ".join(ids), ChatRef(Platform.SLACK, "C1"))
    assert other is not None
    reply = await REGISTRY.dispatch(replace(other, role=Role.OWNER), ctx)
    assert not reply.is_error and arxiv.asked == [ids[1:]]
    assert len(fake.state.subscriptions) == 2 and len(fake.state.like_sets) == 1


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("/follow like", "Which papers?"),
        ("/follow like attention is all you need", '"attention" is not an arXiv id'),
        ("/follow like 2401.1234567", "is not an arXiv id"),
        ("/follow like " + " ".join(f"2401.{n:05d}" for n in range(51)), "at most 50"),
        ("/follow like 2401.99999", "arXiv has no paper 2401.99999."),
        ("/follow like <script>alert(1)</script>", "is not an arXiv id"),
    ],
)
async def test_bad_sets_are_one_line_and_change_nothing(
    ctx: Context, fake: FakeDatabase, line: str, says: str
) -> None:
    reply = await say(ctx, line)
    assert reply.is_error and says in reply.lines[0]
    assert reply.lines[0].endswith("Nothing was changed.")
    assert unchanged(fake)


async def test_arxiv_down_changes_nothing(
    ctx: Context, fake: FakeDatabase, arxiv: FakeArxiv
) -> None:
    arxiv.down = True
    reply = await say(ctx, "/follow like 2401.01234")
    assert reply.is_error and reply.lines == (
        "arXiv could not be reached to look the papers up; try again in a few minutes. "
        "Nothing was changed.",
    )
    assert unchanged(fake)


async def test_without_arxiv_only_stored_papers_can_be_named(
    fake: FakeDatabase, small_catalog: Catalog
) -> None:
    ctx = Context(uow=fake.uow, catalog=small_catalog, clock=lambda: NOW)
    reply = await say(ctx, "/follow like 2401.01234")
    assert reply.is_error and "cannot ask arXiv from here" in reply.lines[0]
    assert unchanged(fake)


async def test_the_limit_of_sets(ctx: Context, fake: FakeDatabase) -> None:
    fl = positives("federated-learning")
    fake.seed_papers(*fl[:4])
    limited = Context(uow=ctx.uow, catalog=ctx.catalog, clock=ctx.clock, max_queries_per_chat=2)
    for paper in fl[:2]:
        assert not (await say(limited, f"/follow like {paper.arxiv_id}")).is_error
    refused = await say(limited, f"/follow like {fl[3].arxiv_id}")
    assert refused.is_error and "already follows 2 sets of papers" in refused.lines[0]
    assert len(fake.state.subscriptions) == 2 and len(fake.state.like_sets) == 2


async def test_other_follows_still_work_and_long_non_sets_are_refused(ctx: Context) -> None:
    assert (await say(ctx, "/follow author Sergey Levine")).changes_chat
    too_long = await say(ctx, "/follow " + "x" * 3000)
    assert too_long.is_error and too_long.lines[0].startswith("That is too long (3,000")


async def test_members_may_not_follow_in_a_group(ctx: Context, fake: FakeDatabase) -> None:
    command = parse_command("/follow like 2401.01234", CHAT, role=Role.MEMBER)
    assert command is not None
    reply = await REGISTRY.dispatch(command, ctx)
    assert reply.denied and unchanged(fake)


def test_a_bibtex_file_becomes_the_same_command() -> None:
    base = Command("anything", "", CHAT, user_id="7", role=Role.ADMIN)
    made = bibtex_command(b"@misc{a, eprint={2401.01234v2}, archivePrefix={arXiv}}", base)
    assert made == Command("follow", "like 2401.01234", CHAT, user_id="7", role=Role.ADMIN)
    for data, says in [
        (b"\x00\x01binary", "not text"),
        (b"@book{x, title={none}}", "no arXiv id"),
        (b" " * 1_000_001, "too large"),
        (b"".join(b"@misc{e%d, eprint={2401.%05d}}" % (n, n) for n in range(60)), "at most 50"),
    ]:
        refused = bibtex_command(data, base)
        assert isinstance(refused, Reply) and refused.is_error
        assert says in refused.lines[0] and refused.lines[0].endswith("Nothing was changed.")
