"""The fake unit of work answers as storage does, for every call it fakes.

One script of calls through `bot.ports.UnitOfWork` runs on a real database and on
`tests.support.uow.FakeDatabase`; the answers must be equal (`created_at` aside, which the
fake leaves None). A change in storage that the fake does not follow fails here, so
pure handler tests (`tests/unit/test_handlers_pure.py`) keep meaning what they say.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

from bot.domain import ChatKind, ChatRef, Paper, Platform, PollState, SubscriptionKind
from bot.ports import LikeSet, UnitOfWork
from bot.topics.learned import ChatModel
from bot.topics.spike_rule import AlertState
from storage.database import Database
from tests.support.uow import FakeDatabase

ALICE = ChatRef(Platform.TELEGRAM, "1001")
GROUP = ChatRef(Platform.SLACK, "C0GROUP")
MOVED = ChatRef(Platform.SLACK, "C0MOVED")
TOPIC, QUERY = SubscriptionKind.TOPIC, SubscriptionKind.QUERY
PAPERS = [
    Paper("2603.00001", "Older", announced=date(2026, 3, 2), categories=("cs.LG",)),
    Paper("2603.00003", "Newest", announced=date(2026, 3, 4)),
    Paper("2603.00002", "Same day, lower id", announced=date(2026, 3, 4)),
    Paper("2603.00009", "Undated"),
]


def plain(value: Any) -> Any:
    """`value` with every `created_at` set to None, so that answers compare."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        if "created_at" in {f.name for f in dataclasses.fields(value)}:
            value = dataclasses.replace(value, created_at=None)
        return value
    if isinstance(value, list | tuple):
        return type(value)(plain(v) for v in value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


async def script(uow_factory: Callable[[], UnitOfWork]) -> list[Any]:
    """The same calls on any unit of work; what each returned, in order."""
    said: list[Any] = []

    async def note(call: Any) -> None:
        try:
            said.append(plain(await call))
        except ValueError as error:
            said.append(("ValueError", str(error)))

    async with uow_factory() as uow:
        await note(uow.chats.get(ALICE))
        alice = await uow.chats.get_or_create(ALICE)
        group = await uow.chats.get_or_create(GROUP, ChatKind.GROUP)
        said += [plain(alice), plain(group), plain(await uow.chats.get_or_create(GROUP))]
        when = datetime(2026, 3, 5, 7, 30, tzinfo=UTC)
        await note(uow.chats.update(alice.id, digest_mode="weekly", next_digest_at=when))
        await note(uow.chats.update(alice.id, timezone="Europe/Berlin", quiet_start="22:00"))
        await note(uow.chats.update(alice.id, id=7))
        await note(uow.chats.set_active(group.id, False))
        await note(uow.chats.move(GROUP, MOVED))
        await note(uow.chats.move(GROUP, ALICE))
        await note(uow.chats.move(ALICE, MOVED))
        found = await uow.chats.get_by_id(alice.id)
        said += [plain(found), found and type(found.digest_mode), plain(await uow.chats.get(MOVED))]
        await note(uow.chats.get_by_id(999))

        for kind, target in [(TOPIC, "web-agents"), (QUERY, "agent*"), (TOPIC, "web-agents")]:
            await note(uow.subscriptions.add(alice.id, kind, target, target.title(), target))
        await note(uow.subscriptions.add(group.id, TOPIC, "web-agents", "Web Agents", "web-agents"))
        await note(uow.subscriptions.count_by_kind(alice.id))
        await note(uow.subscriptions.remove(alice.id, QUERY, "agent*"))
        await note(uow.subscriptions.remove(alice.id, QUERY, "agent*"))
        await note(uow.subscriptions.for_chat(alice.id))
        await note(uow.subscriptions.count_by_kind(alice.id))

        for tag, scope in [("surveys", ""), ("surveys", ""), ("surveys", "web-agents"), ("x", "")]:
            await note(uow.mutes.add(alice.id, tag, scope))
        said.append(sorted(await uow.mutes.for_chat(alice.id)))
        await note(uow.mutes.remove(alice.id, "surveys"))
        await note(uow.mutes.remove(alice.id, "surveys"))
        said.append(sorted(await uow.mutes.for_chat(alice.id)))
        await uow.commit()

    # What the services read: several chats at once, digests due, spikes wanted, queries.
    async with uow_factory() as uow:
        chat_ids = [alice.id, group.id, 999]
        await note(uow.chats.by_ids(chat_ids))
        said.append(sorted(await uow.chats.with_momentum_alerts()))  # the group is inactive
        await note(uow.chats.update(alice.id, momentum_alerts=False))
        said.append(sorted(await uow.chats.with_momentum_alerts()))
        await note(uow.chats.due_for_digest(when))
        await note(uow.chats.due_for_digest(when - timedelta(seconds=1)))
        await note(uow.chats.due_for_digest(when + timedelta(days=1), limit=0))
        for chat_id, target in [(alice.id, "(agent*) AND survey"), (alice.id, "diffusion")]:
            await note(uow.subscriptions.add(chat_id, QUERY, target, target, f"q:{target}"))
        await note(uow.subscriptions.add(group.id, QUERY, "diffusion", "diffusion", "q:d"))
        await note(uow.subscriptions.add(group.id, QUERY, "inactive only", "x", "q:x"))
        said.append([tuple(q) for q in await uow.subscriptions.query_targets()])
        author = SubscriptionKind.AUTHOR
        await note(uow.subscriptions.add(alice.id, author, "levine, sergey", "S L", "a:1"))
        await note(uow.subscriptions.add(group.id, author, "finn, chelsea", "C F", "a:2"))
        said.append([tuple(q) for q in await uow.subscriptions.query_targets(author)])
        await note(uow.subscriptions.count_by_kind(alice.id))
        await note(uow.subscriptions.for_chats(chat_ids))
        await note(uow.subscriptions.for_chats([]))
        await note(uow.mutes.add(group.id, "surveys", "web-agents"))
        mutes = await uow.mutes.for_chats(chat_ids)
        said.append({chat: sorted(found) for chat, found in mutes.items()})
        await uow.commit()

    async with uow_factory() as uow:  # the poll state and the spike alert state
        polled = datetime(2026, 3, 4, 0, 30, tzinfo=UTC)
        await note(uow.poll_state.get("rss:cs.AI"))
        rss = PollState("rss:cs.AI", etag='"abc"', last_announced=date(2026, 3, 4))
        await note(uow.poll_state.save(rss))
        await note(uow.poll_state.save(PollState("oai:cs", watermark="2026-03-03")))
        rss = dataclasses.replace(rss, last_count=42, last_success_at=polled, last_error=None)
        await note(uow.poll_state.save(rss))
        await note(uow.poll_state.get("rss:cs.AI"))
        said.append(sorted(await uow.poll_state.all(), key=lambda state: state.source))
        await note(uow.momentum.alert_state(alice.id, "agents"))
        await note(uow.momentum.save_alert_state(alice.id, "agents", AlertState(False, polled)))
        await note(uow.momentum.save_alert_state(alice.id, "agents", AlertState(True, polled)))
        await note(uow.momentum.alert_state(alice.id, "agents"))
        await note(uow.momentum.alert_state(group.id, "agents"))
        await uow.commit()

    async with uow_factory() as uow:
        await note(uow.papers.count())
        triples = [
            ("2603.00001", "web-agents", ("web agent",)),
            ("2603.00002", "web-agents", ()),
            ("2603.00001", "web-agents", ("again",)),  # a pair already there: kept
            ("2603.00001", "agents", ("agent", "agents")),
            ("9999.99999", "web-agents", ("no such paper",)),
        ]
        await note(uow.papers.add_tags(triples))
        await note(uow.papers.add_tags(triples[:1], source="curated"))
        await note(uow.papers.latest())
        await note(uow.papers.latest(None, limit=10))
        await note(uow.papers.latest(["web-agents", "nothing"], limit=3))
        await note(uow.papers.latest([]))
        await note(uow.papers.latest(None, limit=2, offset=1))  # a page of /latest
        await note(uow.papers.latest(None, limit=2, offset=3))
        await note(uow.papers.latest(["web-agents"], limit=1, offset=1))
        await note(uow.papers.latest(["web-agents"], limit=5, offset=5))
        await note(uow.papers.count(["web-agents", "agents"]))
        await note(uow.papers.count(["nothing"]))
        await note(uow.papers.count([]))
        await note(uow.papers.latest(None, without=["agents"]))  # /latest leaves out mutes
        await note(uow.papers.latest(["web-agents"], limit=1, offset=1, without=["agents"]))
        await note(uow.papers.count(["web-agents"], without=["agents", "nothing"]))
        await note(uow.papers.count(None, without=["web-agents"]))
        await note(uow.papers.extent())  # the undated paper aside: the earliest date
        await note(uow.papers.extent(["web-agents", "agents"]))
        await note(uow.papers.extent(["nothing"]))
        await note(uow.papers.get("2603.00001"))
        await note(uow.papers.get("2603.99999"))
        await note(uow.papers.tags_with_why("2603.00001"))
        await note(uow.papers.tags_with_why("2603.99999"))
        await note(uow.papers.page(None, 2))  # retagging walks the index
        await note(uow.papers.page("2603.00002", 10))
        await note(uow.papers.page("2603.00009", 10))
        await uow.commit()

    async with uow_factory() as uow:  # leaving without commit: nothing happened
        alice = await uow.chats.get_or_create(ALICE)
        await uow.subscriptions.add(alice.id, QUERY, "gone", "gone", "q:gone")
        await uow.mutes.add(alice.id, "gone")
        await uow.chats.update(alice.id, paused=True)
    async with uow_factory() as uow:  # rollback(): back to the last commit, and go on
        await uow.mutes.add(alice.id, "rolled back")
        await uow.rollback()
        await note(uow.mutes.for_chat(alice.id))
        await note(uow.mutes.add(alice.id, "kept"))
        await uow.commit()
    async with uow_factory() as uow:
        chat = await uow.chats.get(ALICE)
        said.append(plain(chat))
        await note(uow.subscriptions.for_chat(alice.id))
        said.append(sorted(await uow.mutes.for_chat(alice.id)))
    return said


async def test_the_fake_answers_as_storage_does(db: Database) -> None:
    async with db.uow() as uow:
        await uow.papers.upsert(PAPERS)
        await uow.commit()
    fake = FakeDatabase()
    fake.seed_papers(*PAPERS)

    real, faked = await script(db.uow), await script(fake.uow)

    assert len(real) == len(faked)
    for number, (expected, got) in enumerate(zip(real, faked, strict=True)):
        assert got == expected, f"answer {number}"


SEARCHED = [
    Paper("2603.00101", "Memory for agents", "We study recall.", announced=date(2026, 3, 2)),
    Paper("2603.00102", "Planning", "Agents with a memory of maps.", announced=date(2026, 3, 4)),
    Paper("2603.00103", "Planning", "Agents with a memory of maps.", announced=date(2026, 3, 3)),
    Paper(
        "2603.00104",
        "Protein folding",
        "Agents with a record of folds.",
        announced=date(2026, 3, 3),
    ),
]
SEARCHES: list[tuple[str, dict[str, Any]]] = [
    ("memory", {}),
    ("memory", {"limit": 1, "offset": 1}),
    ("memory", {"tags": ["maps"]}),
    ("memory", {"without": ["maps"]}),
    ("agents", {"limit": 2}),
    ("protein zeppelin", {}),
    ("ti:planning OR ti:zeppelin", {}),
    ('"memory of maps" AND NOT folding', {}),
    ("zeppelin", {}),
]


async def _searched(uow_factory: Callable[[], UnitOfWork]) -> list[Any]:
    async with uow_factory() as uow:
        await uow.papers.add_tags([("2603.00102", "maps", ()), ("2603.00103", "maps", ())])
        found = []
        for typed, options in SEARCHES:
            result = await uow.search.search(typed, **options)
            found.append(([h.paper.arxiv_id for h in result.hits], result.total, result.loosened))
        return found


async def test_the_fake_searches_as_storage_does(db: Database) -> None:
    """The same hits in the same order (scores are each one's own), totals and fallback.
    The papers are such that no ranking depends on what the fake leaves out: bm25's
    lengths and rarity, ts_rank_cd's proximity (a fake that counts terms cannot rank
    "Protein folding" against "Memory for agents" as SQLite and PostgreSQL each do)."""
    async with db.uow() as uow:
        await uow.papers.upsert(SEARCHED)
        await uow.commit()
    fake = FakeDatabase()
    fake.seed_papers(*SEARCHED)
    real, faked = await _searched(db.uow), await _searched(fake.uow)
    assert real[0] == (["2603.00101", "2603.00102", "2603.00103"], 3, False)
    assert faked == real


async def _budgeted(uow_factory: Callable[[], UnitOfWork]) -> list[Any]:
    day, other = date(2026, 3, 4), date(2026, 3, 5)
    said: list[Any] = []
    async with uow_factory() as uow:
        said.append(await uow.llm_budget.used(day))
        said.append(await uow.llm_budget.reserve(day, 600, 1000))
        said.append(await uow.llm_budget.reserve(day, 500, 1000))
        await uow.llm_budget.settle(day, 600, 100)
        said.append(await uow.llm_budget.reserve(day, 900, 1000))
        said.append(await uow.llm_budget.reserve(other, 2000, 1000))
        await uow.commit()
    async with uow_factory() as uow:  # not committed: not counted
        said.append(await uow.llm_budget.reserve(other, 10, 1000))
    async with uow_factory() as uow:
        said.append((await uow.llm_budget.used(day), await uow.llm_budget.used(other)))
    return said


async def test_the_fake_budgets_tokens_as_storage_does(db: Database) -> None:
    real, faked = await _budgeted(db.uow), await _budgeted(FakeDatabase().uow)
    assert real == [0, True, False, True, False, True, (1000, 0)]
    assert faked == real


async def _voted(uow_factory: Callable[[], UnitOfWork]) -> list[Any]:
    """Votes and models through the port (`received` reads the outbox, which the fake has
    not: `tests/integration/test_feedback_storage.py` tests it)."""
    t0 = datetime(2026, 3, 4, 9, tzinfo=UTC)
    said: list[Any] = []

    async def votes(chat_id: int) -> list[Any]:
        return [
            (v.paper.arxiv_id, v.value, v.at, v.paper.tags)
            for v in await uow.feedback.votes(chat_id)
        ]

    async with uow_factory() as uow:
        await uow.papers.add_tags([("2603.00001", "web-agents", ())])
        a = await uow.chats.get_or_create(ALICE)
        b = await uow.chats.get_or_create(GROUP)
        said.append(await uow.feedback.vote(a.id, "2603.00001", 1, t0))
        said.append(await uow.feedback.vote(a.id, "2603.00001", -1, t0 + timedelta(seconds=2)))
        said.append(await uow.feedback.vote(a.id, "2603.00003", 1, t0 + timedelta(seconds=1)))
        said.append(await uow.feedback.vote(b.id, "2603.00002", 1, t0))
        for bad in (("2603.00404", 1), ("2603.00002", 0)):
            try:
                await uow.feedback.vote(a.id, bad[0], bad[1], t0)
            except (LookupError, ValueError) as error:
                said.append(type(error).__name__)
        await uow.commit()
    async with uow_factory() as uow:
        said += [await votes(a.id), await votes(b.id), await uow.feedback.stale()]
        said.append(await uow.feedback.stale(share=(b.id % 2, 2)))
        model = ChatModel(None, t0, t0 + timedelta(seconds=2), 1, 1)
        await uow.feedback.save_model(a.id, model)
        said += [await uow.feedback.stale(), await uow.feedback.models([a.id, b.id])]
        said += [await uow.feedback.clear(b.id), await uow.feedback.clear(b.id)]
        await uow.commit()
    async with uow_factory() as uow:
        said += [await uow.feedback.model(a.id), await uow.feedback.model(b.id)]
        said += [await uow.feedback.stale(), await votes(b.id)]
    return said


async def test_the_fake_keeps_votes_as_storage_does(db: Database) -> None:
    async with db.uow() as uow:
        await uow.papers.upsert(PAPERS)
        await uow.commit()
    fake = FakeDatabase()
    fake.seed_papers(*PAPERS)
    real, faked = await _voted(db.uow), await _voted(fake.uow)
    assert real[:6] == [None, 1, None, None, "LookupError", "ValueError"]
    assert faked == real


async def _liked(uow_factory: Callable[[], UnitOfWork]) -> list[Any]:
    """The same "papers like these" calls on any unit of work (`bot.ports.LikeSetStore`)."""
    first = LikeSet("l:b", ("2603.00001", "hep-th/9901001"), '{"centroid":{}}', 0.12)
    second = LikeSet("l:a", ("2603.00002",), "{}", 0.09)
    said: list[Any] = []
    async with uow_factory() as uow:
        alice = await uow.chats.get_or_create(ALICE)
        group = await uow.chats.get_or_create(GROUP, ChatKind.GROUP)
        await uow.like_sets.save(first)
        await uow.like_sets.save(second)
        await uow.like_sets.save(dataclasses.replace(first, threshold=0.2))
        await uow.subscriptions.add(alice.id, SubscriptionKind.LIKE, "l:b", "Papers like B", "l:b")
        await uow.subscriptions.add(group.id, SubscriptionKind.LIKE, "l:a", "Papers like A", "l:a")
        await uow.subscriptions.add(alice.id, SubscriptionKind.LIKE, "l:a", "Papers like A", "l:a")
        said.append([await uow.like_sets.get(t) for t in ("l:a", "l:b", "l:c")])
        said.append(await uow.like_sets.followed())
        await uow.chats.set_active(alice.id, False)
        said.append(await uow.like_sets.followed())
        await uow.subscriptions.remove(group.id, SubscriptionKind.LIKE, "l:a")
        said.append(await uow.like_sets.followed())
        await uow.commit()
    async with uow_factory() as uow:
        said.append(await uow.like_sets.get("l:b"))
    return said


async def test_the_fake_keeps_like_sets_as_storage_does(db: Database) -> None:
    real, faked = await _liked(db.uow), await _liked(FakeDatabase().uow)
    assert [s.tag for s in real[1]] == ["l:a", "l:b"] and [s.tag for s in real[2]] == ["l:a"]
    assert real[3] == [] and real[4] is not None and real[4].threshold == 0.2
    assert faked == real
