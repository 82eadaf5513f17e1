"""👍/👎 feedback on SQLite and PostgreSQL: votes and models stored (migration 0016, up and
down), what a chat was sent read from the real outbox, and the terminal's /more and /less
through ingest, the outbox worker (which trains the model) and a digest it orders."""

from __future__ import annotations

import io
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import inspect

from bot.adapters.console import CONSOLE_CHAT, ConsoleMessenger, handle_line, render_reply
from bot.domain import ChatRef, Command, Paper, Platform, Role
from bot.services.deliver import Deliverer
from bot.services.digests import fold_due_digests
from bot.services.ingest import store
from bot.topics.catalog import Catalog
from bot.topics.learned import ChatModel
from handlers.base import Context
from handlers.registry import REGISTRY
from storage.database import Database

NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
LIKED = [
    "Graph neural networks for molecule property prediction",
    "Molecular graph generation with equivariant diffusion",
    "Protein and molecule docking with graph transformers",
    "Molecule design by graph rewriting",
    "Chemical reaction graphs for molecule synthesis planning",
]
DISLIKED = [
    "Legged robot locomotion on rough terrain",
    "Robot arm grasping from pixels",
    "Quadruped robot gait learning in simulation",
]


def paper(n: int, title: str, day: int = 2) -> Paper:
    return Paper(
        f"2603.{n:05d}",
        title,
        abstract=f"{title}. We train it with reinforcement learning and report results.",
        announced=date(2026, 3, day),
    )


async def say(ctx: Context, line: str) -> str:
    reply = await handle_line(line, REGISTRY, ctx)
    assert reply is not None
    return render_reply(reply)


async def ingest(db: Database, catalog: Catalog, *papers: Paper) -> None:
    async with db.uow() as uow:
        await store(uow, papers, catalog, NOW)
        await uow.commit()


async def test_votes_models_and_staleness(db: Database, small_catalog: Catalog) -> None:
    await ingest(db, small_catalog, paper(1, "One"), paper(2, "Two"))
    async with db.uow() as uow:
        a = await uow.chats.get_or_create(ChatRef(Platform.TELEGRAM, "10"))
        b = await uow.chats.get_or_create(ChatRef(Platform.TELEGRAM, "11"))
        assert await uow.feedback.vote(a.id, "2603.00001", 1, NOW) is None
        assert await uow.feedback.vote(a.id, "2603.00001", -1, NOW + timedelta(seconds=1)) == 1
        assert await uow.feedback.vote(a.id, "2603.00002", 1, NOW) is None
        assert await uow.feedback.vote(b.id, "2603.00002", -1, NOW) is None
        with pytest.raises(LookupError):
            await uow.feedback.vote(a.id, "2603.09999", 1, NOW)
        with pytest.raises(ValueError):
            await uow.feedback.vote(a.id, "2603.00001", 2, NOW)
        await uow.commit()
    async with db.uow() as uow:
        votes = await uow.feedback.votes(a.id)
        assert [(v.paper.arxiv_id, v.value) for v in votes] == [
            ("2603.00002", 1),
            ("2603.00001", -1),
        ]
        assert "reinforcement-learning" in votes[0].paper.tags  # the paper comes with its tags
        assert sorted(await uow.feedback.stale()) == sorted([a.id, b.id])
        assert await uow.feedback.stale(share=(a.id % 2, 2)) == [a.id]
        model = ChatModel('{"bias": 0.1, "weights": {"graph": 1.5}}', NOW, votes[-1].at, 1, 1)
        await uow.feedback.save_model(a.id, model)
        await uow.commit()
    async with db.uow() as uow:
        assert await uow.feedback.model(a.id) == model
        assert await uow.feedback.models([a.id, b.id, 999]) == {a.id: model}
        assert await uow.feedback.stale() == [b.id]
        await uow.feedback.vote(a.id, "2603.00002", -1, NOW + timedelta(minutes=5))
        await uow.commit()
    async with db.uow() as uow:
        assert sorted(await uow.feedback.stale()) == sorted([a.id, b.id])  # a voted since
        assert await uow.feedback.clear(a.id) == 2
        await uow.commit()
    async with db.uow() as uow:
        assert await uow.feedback.votes(a.id) == []
        assert await uow.feedback.model(a.id) is None
        assert await uow.feedback.stale() == [b.id]
        assert [v.value for v in await uow.feedback.votes(b.id)] == [-1]


async def test_the_terminal_votes_on_what_it_was_sent_and_its_digest_follows(
    db: Database, small_catalog: Catalog
) -> None:
    out = io.StringIO()
    ctx = Context(uow=db.uow, catalog=small_catalog, clock=lambda: NOW)
    now = [NOW]
    deliverer = Deliverer(
        db.uow, {"console": ConsoleMessenger(out)}, small_catalog, clock=lambda: now[0]
    )
    await say(ctx, "/follow Reinforcement Learning")
    await say(ctx, "/digest instant")
    sent = [paper(n, t) for n, t in enumerate(LIKED + DISLIKED, 1)]
    await ingest(db, small_catalog, *sent)
    await ingest(db, small_catalog, paper(50, "Never sent: the terminal followed nothing else"))
    assert await deliverer.drain() == len(sent) + 1
    assert "👍/👎: /more 2603.00001 or /less 2603.00001" in out.getvalue()

    assert "👍 noted" in await say(ctx, "/more 2603.00001")
    assert "2603.00099 was not in an alert or a digest I sent this chat" in await say(
        ctx, "/less 2603.00099"
    )
    async with db.uow() as uow:
        chat = await uow.chats.get(CONSOLE_CHAT)
        assert chat is not None
        assert await uow.feedback.received(chat.id, "2603.00050")  # an alert, sent
        assert not await uow.feedback.received(chat.id, "2603.00099")
    for n in range(2, len(LIKED) + 1):
        await say(ctx, f"/more 2603.{n:05d}")
    for n in range(len(LIKED) + 1, len(sent) + 1):
        await say(ctx, f"/less 2603.{n:05d}")

    # Another terminal chat, on daily digests: sent nothing until its digest goes out.
    other = ChatRef(Platform.CONSOLE, "2")
    octx = Context(uow=db.uow, catalog=small_catalog, clock=lambda: NOW)
    async with db.uow() as uow:
        chat2 = await uow.chats.get_or_create(other)
        await uow.commit()
    await REGISTRY.dispatch(
        Command("follow", "Reinforcement Learning", other, role=Role.OWNER), octx
    )
    fresh = [
        paper(60, "Humanoid robot balance control", 3),
        paper(61, "Molecule graph foundation model", 2),
    ]
    await ingest(db, small_catalog, *fresh)
    await deliverer.drain()  # trains the terminal's model first (it voted), then the alerts
    async with db.uow() as uow:
        model = await uow.feedback.model(chat.id)
        assert not await uow.feedback.received(chat2.id, "2603.00061")
    assert model is not None and model.taught == ("reinforcement-learning",)
    assert (model.up, model.down) == (5, 3)
    why = await say(ctx, "/why 2603.00060")
    assert "What your 👍/👎 taught me:" in why and "Against: " in why

    # The terminal's own digest is ordered by its model: switch it to daily and fold.
    await say(ctx, "/digest daily 08:00")
    await ingest(
        db,
        small_catalog,
        paper(70, "Robot hand dexterity", 4),
        paper(71, "Graph molecule retrosynthesis", 3),
    )
    out.seek(0)
    out.truncate()
    now[0] = NOW + timedelta(days=2)
    await fold_due_digests(db.uow, now[0])
    await deliverer.drain()
    # Both digests went out: the terminal's (2 papers), ordered by its model, and the other
    # chat's (4, it voted on nothing), newest first.
    digests = {d.split("\n", 1)[0]: d for d in out.getvalue().split("Your daily digest: ")[1:]}
    mine, theirs = (
        digests["2 new paper(s) on what you follow."],
        digests["4 new paper(s) on what you follow."],
    )
    assert mine.index("Graph molecule retrosynthesis") < mine.index("Robot hand dexterity")
    assert theirs.index("Robot hand dexterity") < theirs.index("Graph molecule retrosynthesis")
    async with db.uow() as uow:
        assert await uow.feedback.received(chat2.id, "2603.00061")  # its digest went out


async def test_migration_0016_down_and_up(db: Database) -> None:
    async def tables() -> set[str]:
        async with db.engine.connect() as conn:
            return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))

    assert {"votes", "chat_models"} <= await tables()
    await db.downgrade("0014")
    assert not {"votes", "chat_models"} & await tables()
    await db.upgrade()
    assert {"votes", "chat_models"} <= await tables()
    async with db.uow() as uow:
        chat = await uow.chats.get_or_create(ChatRef(Platform.TELEGRAM, "1"))
        assert chat.learned_filter is False
