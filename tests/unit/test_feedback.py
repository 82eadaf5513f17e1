"""👍/👎 feedback on the fake unit of work: votes only on papers the chat was sent, one vote a
paper, the per-topic threshold before a model acts, digest order, /why, /feedback (reset), and
the learned filter that never hides a paper whose title names a followed topic it carries."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest

from bot.adapters.console import render_reply
from bot.domain import Action, Chat, ChatKind, ChatRef, Paper, Platform, Reply, Role, Subscription
from bot.domain import SubscriptionKind as Kind
from bot.outbox_payloads import AlertPayload, DigestPayload, OutboxItem, OutboxKind, Progress
from bot.services.deliver_steps import Job, next_step
from bot.services.model_training import train_stale
from bot.topics import learned
from bot.topics.catalog import Catalog
from bot.topics.content import Audience, digest
from handlers.base import Context
from handlers.registry import REGISTRY
from handlers.text import parse_command
from tests.support.uow import FakeDatabase

NOW = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
CHAT = ChatRef(Platform.TELEGRAM, "4242")
RL, WEB = "reinforcement-learning", "web-agents"

LIKED = [  # what the reader wants: molecules
    "Graph neural networks for molecule property prediction",
    "Molecular graph generation with equivariant diffusion",
    "Protein and molecule docking with graph transformers",
    "Molecule design by graph rewriting",
    "Chemical reaction graphs for molecule synthesis planning",
    "Graph priors for molecular conformations",
]
DISLIKED = [  # and what they do not: robots
    "Legged robot locomotion on rough terrain",
    "Robot arm grasping from pixels",
    "Quadruped robot gait learning in simulation",
    "Humanoid robot balance control",
]


def paper(n: int, title: str, day: int = 1) -> Paper:
    return Paper(
        f"2603.{n:05d}",
        title,
        abstract=f"{title}. We study this with reinforcement learning and report results.",
        announced=date(2026, 3, day),
    )


@pytest.fixture
def fake() -> FakeDatabase:
    return FakeDatabase()


@pytest.fixture
def ctx(fake: FakeDatabase, small_catalog: Catalog) -> Context:
    return Context(uow=fake.uow, catalog=small_catalog, clock=lambda: NOW)


async def say(ctx: Context, line: str, role: Role = Role.OWNER, kind=ChatKind.PRIVATE) -> Reply:
    command = parse_command(line, CHAT, chat_kind=kind, role=role)
    assert command is not None
    return await REGISTRY.dispatch(command, ctx)


async def setup(fake: FakeDatabase, ctx: Context, papers: list[Paper], tag: str = RL) -> int:
    """The chat follows `tag`, and was sent `papers`, which carry it; the chat's id."""
    await say(ctx, f"/follow {tag}")
    fake.seed_papers(*papers)
    async with fake.uow() as uow:
        await uow.papers.add_tags((p.arxiv_id, tag, ("rl",)) for p in papers)
        chat = await uow.chats.get(CHAT)
        await uow.commit()
    assert chat is not None
    fake.sent(chat.id, *(p.arxiv_id for p in papers))
    return chat.id


def taught_papers() -> tuple[list[Paper], list[Paper]]:
    up = [paper(n, t) for n, t in enumerate(LIKED, 1)]
    down = [paper(n, t) for n, t in enumerate(DISLIKED, 20)]
    return up, down


async def votes(fake: FakeDatabase, chat_id: int) -> dict[str, int]:
    async with fake.uow() as uow:
        return {v.paper.arxiv_id: v.value for v in await uow.feedback.votes(chat_id)}


async def test_a_vote_on_a_paper_the_chat_was_sent_is_stored_once(
    fake: FakeDatabase, ctx: Context
) -> None:
    up, _ = taught_papers()
    chat_id = await setup(fake, ctx, up[:1])
    reply = await say(ctx, "/more arXiv:2603.00001v2")
    assert reply.lines[0].startswith("👍 noted for “Graph neural networks")
    assert "Reinforcement Learning: 1 👍, 0 👎; 4 more 👍 and 3 more 👎" in reply.lines[1]
    assert not reply.is_error and not reply.changes_chat
    assert (await say(ctx, "/more 2603.00001")).lines[0].startswith("👍 was already your vote")
    assert (await say(ctx, "/less 2603.00001")).lines[0].startswith("👎 noted")
    assert await votes(fake, chat_id) == {"2603.00001": -1}  # the new vote replaced the old


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        ("/more", "Give me the arXiv id"),
        ("/less banana", "Give me the arXiv id"),
        ("/more 2603.00001 2603.00002", "Give me the arXiv id"),
        (
            "/more 2603.99999",
            "2603.99999 was not in an alert or a digest I sent this chat",
        ),  # not in the index
        (
            "/less 2603.00002",
            "2603.00002 was not in an alert or a digest I sent this chat",
        ),  # stored, never sent
        ("/more " + "9" * 150, "Give me the arXiv id"),
    ],
)
async def test_bad_or_forged_votes_get_one_line_and_change_nothing(
    fake: FakeDatabase, ctx: Context, line: str, answer: str
) -> None:
    chat_id = await setup(fake, ctx, [paper(1, "Sent")])
    fake.seed_papers(paper(2, "Stored but never sent to this chat"))
    reply = await say(ctx, line)
    assert reply.is_error and reply.lines[0].startswith(answer)
    assert "Nothing was changed" in reply.lines[0]
    assert await votes(fake, chat_id) == {}


async def test_a_vote_from_a_chat_that_never_started_changes_nothing(ctx: Context) -> None:
    reply = await say(ctx, "/more 2603.00001")
    assert reply.is_error and "was not in an alert or a digest I sent this chat" in reply.lines[0]


def test_the_model_acts_only_on_topics_with_five_up_and_three_down() -> None:
    up, down = taught_papers()
    web = [replace(p, tags=(WEB,)) for p in up[:5]]
    rl = [replace(p, tags=(RL,)) for p in up[:4] + down[:3]]
    votes_ = [learned.Vote(p, learned.UP, NOW) for p in web + rl[:4]]
    votes_ += [learned.Vote(p, learned.DOWN, NOW) for p in rl[4:]]
    # RL has 4 👍 and 3 👎, web agents 5 👍 and no 👎: no topic is taught, no model is fitted.
    none = learned.build(votes_, {RL, WEB}, NOW)
    assert none.model is None and none.taught == () and (none.up, none.down) == (9, 3)
    fifth = learned.Vote(replace(up[5], tags=(RL,)), learned.UP, NOW + timedelta(minutes=1))
    model = learned.build([*votes_, fifth], {RL, WEB}, NOW)
    assert model.taught == (RL,) and model.orders(RL) and not model.orders(WEB)
    assert model.last_vote_at == NOW + timedelta(minutes=1)
    assert model.model is not None and len(model.model.encode()) < 8000  # a few KB
    unfollowed = learned.build([*votes_, fifth], {WEB}, NOW)
    assert unfollowed.model is None  # votes count for the topics the chat follows


async def test_the_worker_trains_after_votes_and_digests_follow_the_model(
    fake: FakeDatabase, ctx: Context, small_catalog: Catalog
) -> None:
    up, down = taught_papers()
    fresh = [paper(40, "Legged robot parkour", 3), paper(41, "Molecule graph foundation model", 2)]
    chat_id = await setup(fake, ctx, up + down + fresh)
    for p in up[:5]:
        await say(ctx, f"/more {p.arxiv_id}")
    for p in down[:3]:
        await say(ctx, f"/less {p.arxiv_id}")
    assert await train_stale(fake.uow, lambda: NOW) == 1
    assert await train_stale(fake.uow, lambda: NOW) == 0  # nothing new since
    async with fake.uow() as uow:
        model = await uow.feedback.model(chat_id)
        subs = tuple(await uow.subscriptions.for_chat(chat_id))
        stored = [await uow.papers.get(p.arxiv_id) for p in fresh]
    assert model is not None and model.taught == (RL,) and (model.up, model.down) == (5, 3)
    audience = Audience(subs, ())
    plain = digest(small_catalog, stored, audience, "Digest")
    ordered = digest(small_catalog, stored, audience, "Digest", model=model)
    assert plain and ordered
    assert plain.sections[0].papers[0].paper.title == "Legged robot parkour"  # the newest
    assert ordered.sections[0].papers[0].paper.title.startswith("Molecule graph")
    votes_row = ordered.buttons[0]
    assert [b.action for b in votes_row] == [Action.MORE, Action.LESS]
    assert votes_row[0].text == "👍 Molecule graph foundation…" and votes_row[1].text == "👎"


async def test_why_shows_the_words_for_and_against(fake: FakeDatabase, ctx: Context) -> None:
    up, down = taught_papers()
    await setup(fake, ctx, up + down)
    assert [s.heading for s in (await say(ctx, "/why 2603.00001")).sections] == [
        "Why it has its topics:"
    ]
    for p in up[:5]:
        await say(ctx, f"/more {p.arxiv_id}")
    for p in down[:3]:
        await say(ctx, f"/less {p.arxiv_id}")
    await train_stale(fake.uow, lambda: NOW)
    why = await say(ctx, f"/why {down[3].arxiv_id}")
    learned_section = why.sections[-1]
    assert learned_section.heading == "What your 👍/👎 taught me:"
    against = learned_section.lines[1]
    assert against.startswith("Against: ") and "robot" in against
    assert "likely a 👍 (the model orders Reinforcement Learning)" in learned_section.lines[2]


async def test_feedback_shows_counts_and_reset_clears_them(
    fake: FakeDatabase, ctx: Context
) -> None:
    up, down = taught_papers()
    chat_id = await setup(fake, ctx, up + down)
    assert "No votes yet" in (await say(ctx, "/feedback")).lines[0]
    for p in up[:5]:
        await say(ctx, f"/more {p.arxiv_id}")
    await say(ctx, f"/less {down[0].arxiv_id}")
    shown = await say(ctx, "/feedback")
    assert shown.lines[0] == "Your votes: 5 👍, 1 👎."
    assert (
        shown.lines[1]
        == "• Reinforcement Learning: 5 👍, 1 👎; 2 more 👎 before your votes order your digests."
    )
    assert shown.lines[2].startswith("Model: not trained yet")
    for p in down[1:3]:
        await say(ctx, f"/less {p.arxiv_id}")
    await train_stale(fake.uow, lambda: NOW)
    shown = await say(ctx, "/feedback")
    assert "your digests here follow your votes" in shown.lines[1]
    assert "on 8 votes; it orders your digests in Reinforcement Learning." in shown.lines[2]
    assert (await say(ctx, "/feedback nonsense")).is_error
    # In a group a member may vote and look, but not reset.
    denied = await say(ctx, "/feedback reset", role=Role.MEMBER, kind=ChatKind.GROUP)
    assert denied.denied and len(await votes(fake, chat_id)) == 8
    shown = await say(ctx, "/feedback", role=Role.MEMBER, kind=ChatKind.GROUP)
    assert shown.lines[0] == "Your votes: 5 👍, 3 👎."
    reset = await say(ctx, "/feedback reset")
    assert reset.lines[0].startswith("Forgot this chat's 8 vote(s) and its model")
    assert await votes(fake, chat_id) == {}
    async with fake.uow() as uow:
        assert await uow.feedback.model(chat_id) is None
        assert await uow.feedback.stale() == []
    again = await say(ctx, "/feedback reset")  # nothing left: said so, not "0 vote(s)"
    assert again.lines == ("This chat has no votes to forget. Nothing was changed.",)


async def test_filter_learned_explains_its_threshold(fake: FakeDatabase, ctx: Context) -> None:
    await setup(fake, ctx, [paper(1, "x")])
    shown = await say(ctx, "/filter")
    assert shown.lines[0] == "The learned filter is off in this chat."
    assert "under 30%" in shown.lines[1] and "5 👍 and 3 👎" in shown.lines[1]
    assert "title names a topic you follow" in shown.lines[1]
    on = await say(ctx, "/filter learned on")
    assert on.lines[0] == "The learned filter is on in this chat." and on.changes_chat
    assert "acts on instant alerts" in on.lines[2]  # the chat gets daily digests
    assert (await say(ctx, "/filter learned maybe")).is_error
    assert (await say(ctx, "/filter learned off", Role.MEMBER, ChatKind.GROUP)).denied
    async with fake.uow() as uow:
        chat = await uow.chats.get(CHAT)
    assert chat is not None and chat.learned_filter


def _model_against_robots() -> learned.ChatModel:
    up, down = taught_papers()
    votes_ = [learned.Vote(replace(p, tags=(RL,)), learned.UP, NOW) for p in up]
    votes_ += [learned.Vote(replace(p, tags=(RL,)), learned.DOWN, NOW) for p in down]
    return learned.build(votes_, {RL}, NOW)


def _alert_item(paper_id: int) -> OutboxItem:
    return OutboxItem(1, 7, None, OutboxKind.ALERT, AlertPayload(None, (paper_id,), 0), 0)


@pytest.mark.parametrize(
    ("title", "learned_filter", "held"),
    [
        ("Quadruped robot locomotion with learned gaits", True, True),
        ("Quadruped robot locomotion with learned gaits", False, False),  # filter off
        ("Molecule graph generation", True, False),  # the model likes it
        # Never hidden: the title names a followed topic the paper carries (any case, plural).
        ("Quadruped robot locomotion by Reinforcement Learning", True, False),
        ("Quadruped robot locomotion by reinforcement-learnings", True, False),
        ("Quadruped robot locomotion by rein\u200bforcement learning", True, False),
    ],
)
def test_the_learned_filter_holds_back_alerts_but_never_a_named_topic(
    small_catalog: Catalog, title: str, learned_filter: bool, held: bool
) -> None:
    model = _model_against_robots()
    chat = Chat(7, Platform.TELEGRAM, "7", learned_filter=learned_filter)
    sub = Subscription(1, 7, Kind.TOPIC, RL, "Reinforcement Learning", RL)
    alerted = replace(paper(30, title), tags=(RL,))
    step = next_step(
        small_catalog, _alert_item(30), chat, Audience((sub,), ()), {30: alerted}, {}, model
    )
    assert isinstance(step, Progress) is held
    assert isinstance(step, Job) is not held


def test_the_filter_leaves_alerts_of_untaught_topics_alone(small_catalog: Catalog) -> None:
    model = _model_against_robots()
    chat = Chat(7, Platform.TELEGRAM, "7", learned_filter=True)
    subs = (
        Subscription(1, 7, Kind.TOPIC, RL, "Reinforcement Learning", RL),
        Subscription(2, 7, Kind.TOPIC, WEB, "Web Agents", WEB),
    )
    robot = replace(paper(30, "Quadruped robot locomotion with learned gaits"), tags=(RL, WEB))
    step = next_step(
        small_catalog, _alert_item(30), chat, Audience(subs, ()), {30: robot}, {}, model
    )
    assert isinstance(step, Job)  # Web Agents brought it too, and has no votes


def test_digests_hand_the_model_over(small_catalog: Catalog) -> None:
    model = _model_against_robots()
    chat = Chat(7, Platform.TELEGRAM, "7")
    sub = Subscription(1, 7, Kind.TOPIC, RL, "Reinforcement Learning", RL)
    robot = replace(paper(30, "Quadruped robot locomotion", 4), tags=(RL,))
    molecule = replace(paper(31, "Molecule graph generation", 1), tags=(RL,))
    item = OutboxItem(1, 7, None, OutboxKind.DIGEST, DigestPayload(None, (30, 31)), 0)
    papers = {30: robot, 31: molecule}
    step = next_step(small_catalog, item, chat, Audience((sub,), ()), papers, {}, model)
    assert isinstance(step, Job)
    assert [i.paper.arxiv_id for i in step.reply.sections[0].papers] == ["2603.00031", "2603.00030"]


def test_the_terminal_shows_votes_as_lines_to_type() -> None:
    from bot.topics.content import vote_row

    one = render_reply(Reply(lines=("New",), buttons=(vote_row(paper(1, "x")),)))
    assert "👍/👎: /more 2603.00001 or /less 2603.00001" in one
    assert "[👍" not in one
    two = render_reply(Reply(buttons=(vote_row(paper(1, "x")), vote_row(paper(2, "y")))))
    assert "👍/👎: /more <arXiv id> or /less <arXiv id>" in two


def test_a_model_is_fitted_on_the_newest_votes_and_both_kinds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    up, down = taught_papers()
    old = [learned.Vote(replace(p, tags=(RL,)), learned.DOWN, NOW) for p in down]
    new = [
        learned.Vote(replace(p, tags=(RL,)), learned.UP, NOW + timedelta(minutes=n))
        for n, p in enumerate(up, 1)
    ]
    monkeypatch.setattr(learned, "FIT_VOTES", 3)
    # The 3 newest votes are all 👍: a fit needs both kinds, so every vote is used.
    model = learned.build(old + new, {RL}, NOW)
    linear = model.linear()
    assert linear is not None and linear.weights.get("robot", 0) < 0
    monkeypatch.setattr(learned, "FIT_VOTES", 8)
    # The 8 newest: 6 👍 and the 2 last 👎 ("gait", "balance"); the oldest two are left out.
    recent = learned.build(old + new, {RL}, NOW)
    weights = recent.linear().weights  # type: ignore[union-attr]
    assert "gait" in weights and "balance" in weights
    assert "terrain" not in weights and "grasping" not in weights
    assert (recent.up, recent.down) == (6, 4)  # the counts are of every vote
