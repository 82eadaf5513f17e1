"""An in-memory unit of work at the port (`bot.ports.UnitOfWork`), for pure handler tests.

    fake = FakeDatabase()
    ctx = Context(uow=fake.uow, catalog=catalog)   # as `Database.uow` in the bot

Small on purpose: chats, subscriptions, mutes, the poll state, the spike alert state, and
the papers as the chat commands read them. What only SQL does well is not faked, so that
the fake never re-implements it: storing papers, batches and database ids (`upsert`,
`batch_tags`, ...), momentum figures, the outbox (claims, fan-out, digests) and the
processes (which release outbox claims). Those methods and properties raise
NotImplementedError, and the services that need them are tested on real databases.
`tests/integration/test_fake_uow.py` makes the same calls here and on SQLite (and
PostgreSQL) and compares the answers, so the fake cannot drift from storage.

As in storage: `commit()` keeps what the block changed; leaving the block without it, or
`rollback()`, goes back to the last commit. Unlike storage: a commit replaces the whole
state (so two units of work open at once do not merge), `created_at` stays None, and a
stored paper keeps every field it was seeded with (`FakePapers.seed`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import date, datetime
from types import TracebackType
from typing import Any, NoReturn, Self

from bot.domain import (
    Chat,
    ChatKind,
    ChatRef,
    DigestMode,
    Paper,
    PollState,
    Subscription,
    SubscriptionKind,
)
from bot.ports import LikeSet, OutboxStore, ProcessStore, UpsertResult
from bot.topics.document import Document
from bot.topics.learned import ChatModel, Vote
from bot.topics.momentum import Momentum
from bot.topics.query_tree import Node, Scope, compile_node
from bot.topics.search_text import SearchHit, SearchResult, parse_search, positive_terms
from bot.topics.spike_rule import AlertState

# A title hit counts this many abstract hits in the fake's search (as in SQLite's bm25).
TITLE_WEIGHT = 10.0

# What `ChatStore.update` may change: every field but the chat's identity.
_SETTINGS = {f.name for f in fields(Chat)} - {"id", "platform", "external_id", "created_at"}


@dataclass
class _State:
    """Everything committed (or, inside a unit of work, its working copy)."""

    chats: dict[int, Chat] = field(default_factory=dict)
    subscriptions: list[Subscription] = field(default_factory=list)
    mutes: list[tuple[int, str, str]] = field(default_factory=list)  # (chat id, tag, scope)
    papers: dict[str, Paper] = field(default_factory=dict)  # stored without tags
    # arXiv id -> tag -> the words that matched
    tags: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    poll_state: dict[str, PollState] = field(default_factory=dict)
    alert_state: dict[tuple[int, str], AlertState] = field(default_factory=dict)
    last_id: dict[str, int] = field(default_factory=dict)
    llm_tokens: dict[date, int] = field(default_factory=dict)  # UTC day -> tokens counted
    # (chat id, arXiv id) -> (vote, when); the papers each chat was sent (`FakeDatabase.sent`)
    votes: dict[tuple[int, str], tuple[int, datetime]] = field(default_factory=dict)
    models: dict[int, ChatModel] = field(default_factory=dict)
    received: set[tuple[int, str]] = field(default_factory=set)
    like_sets: dict[str, LikeSet] = field(default_factory=dict)  # by tag

    def new_id(self, table: str) -> int:
        self.last_id[table] = self.last_id.get(table, 0) + 1
        return self.last_id[table]


class FakeChats:
    def __init__(self, state: _State) -> None:
        self._state = state

    def _find(self, ref: ChatRef) -> Chat | None:
        return next(
            (
                c
                for c in self._state.chats.values()
                if (c.platform, c.external_id) == (ref.platform, ref.external_id)
            ),
            None,
        )

    async def get(self, ref: ChatRef) -> Chat | None:
        return self._find(ref)

    async def get_by_id(self, chat_id: int) -> Chat | None:
        return self._state.chats.get(chat_id)

    async def by_ids(self, chat_ids: Iterable[int]) -> Mapping[int, Chat]:
        chats = self._state.chats
        return {i: chats[i] for i in set(chat_ids) if i in chats}

    async def get_or_create(self, ref: ChatRef, kind: ChatKind = ChatKind.PRIVATE) -> Chat:
        chat = self._find(ref)
        if chat is None:
            chat = Chat(self._state.new_id("chats"), ref.platform, ref.external_id, kind=kind)
            self._state.chats[chat.id] = chat
        return chat

    async def update(self, chat_id: int, **values: Any) -> None:
        unknown = set(values) - _SETTINGS
        if unknown:
            raise ValueError(f"not chat settings: {sorted(unknown)}")
        if "kind" in values:
            values["kind"] = ChatKind(values["kind"])
        if "digest_mode" in values:
            values["digest_mode"] = DigestMode(values["digest_mode"])
        chat = self._state.chats.get(chat_id)
        if chat is not None:
            self._state.chats[chat_id] = replace(chat, **values)

    async def set_active(self, chat_id: int, active: bool) -> None:
        await self.update(chat_id, active=active)

    async def move(self, ref: ChatRef, new_ref: ChatRef) -> bool:
        chat = self._find(ref)
        if chat is None or self._find(new_ref) is not None:
            return False
        self._state.chats[chat.id] = replace(chat, external_id=new_ref.external_id)
        return True

    async def with_momentum_alerts(self) -> Sequence[int]:
        return [c.id for c in self._state.chats.values() if c.active and c.momentum_alerts]

    async def due_for_digest(self, now: datetime, limit: int = 500) -> Sequence[Chat]:
        due = [
            c
            for c in self._state.chats.values()
            if c.active and c.next_digest_at is not None and c.next_digest_at <= now
        ]
        return sorted(due, key=lambda c: c.next_digest_at or now)[:limit]


class FakeSubscriptions:
    def __init__(self, state: _State) -> None:
        self._state = state

    def _find(self, chat_id: int, kind: SubscriptionKind, target: str) -> Subscription | None:
        key = (chat_id, kind, target)
        return next(
            (s for s in self._state.subscriptions if (s.chat_id, s.kind, s.target) == key), None
        )

    async def add(
        self, chat_id: int, kind: SubscriptionKind, target: str, label: str, tag: str
    ) -> tuple[Subscription, bool]:
        found = self._find(chat_id, kind, target)
        if found is not None:
            return found, False
        sub = Subscription(self._state.new_id("subscriptions"), chat_id, kind, target, label, tag)
        self._state.subscriptions.append(sub)
        return sub, True

    async def remove(self, chat_id: int, kind: SubscriptionKind, target: str) -> bool:
        found = self._find(chat_id, kind, target)
        if found is not None:
            self._state.subscriptions.remove(found)
        return found is not None

    async def count_by_kind(self, chat_id: int) -> Mapping[SubscriptionKind, int]:
        counts = dict.fromkeys(SubscriptionKind, 0)
        for sub in await self.for_chat(chat_id):
            counts[sub.kind] += 1
        return counts

    async def for_chat(self, chat_id: int) -> Sequence[Subscription]:
        return [s for s in self._state.subscriptions if s.chat_id == chat_id]

    async def for_chats(self, chat_ids: Iterable[int]) -> Mapping[int, Sequence[Subscription]]:
        wanted = set(chat_ids)
        found: dict[int, list[Subscription]] = {}
        for sub in self._state.subscriptions:
            if sub.chat_id in wanted:
                found.setdefault(sub.chat_id, []).append(sub)
        return found

    async def query_targets(
        self, kind: SubscriptionKind = SubscriptionKind.QUERY
    ) -> Sequence[tuple[str, int]]:
        first: dict[str, int] = {}
        for sub in self._state.subscriptions:
            chat = self._state.chats.get(sub.chat_id)
            if sub.kind == kind and chat is not None and chat.active:
                first[sub.target] = min(first.get(sub.target, sub.id), sub.id)
        return sorted(first.items())


class FakeMutes:
    def __init__(self, state: _State) -> None:
        self._state = state

    async def add(self, chat_id: int, tag: str, scope: str = "") -> bool:
        if (chat_id, tag, scope) in self._state.mutes:
            return False
        self._state.mutes.append((chat_id, tag, scope))
        return True

    async def remove(self, chat_id: int, tag: str) -> int:
        kept = [m for m in self._state.mutes if m[:2] != (chat_id, tag)]
        removed = len(self._state.mutes) - len(kept)
        self._state.mutes[:] = kept
        return removed

    async def for_chat(self, chat_id: int) -> Sequence[tuple[str, str]]:
        return [(tag, scope) for chat, tag, scope in self._state.mutes if chat == chat_id]

    async def for_chats(self, chat_ids: Iterable[int]) -> Mapping[int, Sequence[tuple[str, str]]]:
        wanted = set(chat_ids)
        found: dict[int, list[tuple[str, str]]] = {}
        for chat, tag, scope in self._state.mutes:
            if chat in wanted:
                found.setdefault(chat, []).append((tag, scope))
        return found


class FakePapers:
    def __init__(self, state: _State) -> None:
        self._state = state

    def seed(self, papers: Iterable[Paper]) -> None:
        """Store papers (their `tags` are ignored, as `PaperRepository.upsert` ignores
        them: tags come from `add_tags`). Not part of the port: ingest stores papers."""
        for paper in papers:
            self._state.papers[paper.arxiv_id] = replace(paper, tags=())

    def _tagged(self, paper: Paper) -> Paper:
        return replace(paper, tags=tuple(sorted(self._state.tags.get(paper.arxiv_id, {}))))

    async def get(self, arxiv_id: str) -> Paper | None:
        paper = self._state.papers.get(arxiv_id)
        return self._tagged(paper) if paper else None

    async def latest(
        self,
        tags: Sequence[str] | None = None,
        limit: int = 5,
        offset: int = 0,
        without: Sequence[str] = (),
    ) -> Sequence[Paper]:
        papers = self._with(tags, without)
        papers.sort(key=lambda p: p.arxiv_id, reverse=True)
        papers.sort(key=lambda p: p.announced or date.min, reverse=True)
        papers.sort(key=lambda p: p.announced is None)  # undated last
        return papers[offset : offset + limit]

    async def count(self, tags: Sequence[str] | None = None, without: Sequence[str] = ()) -> int:
        return len(self._with(tags, without))

    async def extent(self, tags: Sequence[str] | None = None) -> tuple[int, date | None]:
        """As storage, but for the day stored: the fake keeps no `ingested_at`."""
        papers = self._with(tags)
        days = [p.announced for p in papers if p.announced is not None]
        return len(papers), min(days, default=None)

    def _with(self, tags: Sequence[str] | None, without: Sequence[str] = ()) -> list[Paper]:
        papers = [self._tagged(p) for p in self._state.papers.values()]
        if tags is not None:
            papers = [p for p in papers if set(p.tags) & set(tags)]
        return [p for p in papers if not set(p.tags) & set(without)]

    async def tags_with_why(self, arxiv_id: str) -> Sequence[tuple[str, tuple[str, ...]]]:
        return sorted(self._state.tags.get(arxiv_id, {}).items())

    async def add_tags(
        self, tags: Iterable[tuple[str, str, Sequence[str]]], source: str = "rule"
    ) -> int:
        added = 0
        for arxiv_id, tag, why in tags:
            if arxiv_id not in self._state.papers:
                continue
            have = self._state.tags.setdefault(arxiv_id, {})
            if tag not in have:
                have[tag] = tuple(why)
                added += 1
        return added

    async def page(self, after: str | None, limit: int) -> Sequence[Paper]:
        ids = sorted(a for a in self._state.papers if after is None or a > after)
        return [self._state.papers[a] for a in ids[:limit]]  # stored without tags

    # Papers as ingest stores them, with database ids and batches: SQL, not faked.

    async def upsert(self, papers: Iterable[Paper], *, sample: bool = False) -> UpsertResult:
        _not_faked("papers.upsert (seed papers instead)")

    async def ids_for(self, arxiv_ids: Iterable[str]) -> Mapping[str, int]:
        _not_faked("papers.ids_for")

    async def by_ids(self, paper_ids: Sequence[int]) -> Mapping[int, Paper]:
        _not_faked("papers.by_ids")

    async def replace_rule_tags(
        self, arxiv_ids: Sequence[str], tags: Iterable[tuple[str, str, Sequence[str]]]
    ) -> int:
        _not_faked("papers.replace_rule_tags")

    async def new_since(self, since: datetime) -> int:
        _not_faked("papers.new_since")

    async def batch_tags(
        self, batch_ids: Iterable[int]
    ) -> Mapping[int, Mapping[int, Sequence[str]]]:
        _not_faked("papers.batch_tags")


class FakePollState:
    def __init__(self, state: _State) -> None:
        self._state = state

    async def get(self, source: str) -> PollState | None:
        return self._state.poll_state.get(source)

    async def save(self, state: PollState) -> None:
        self._state.poll_state[state.source] = state

    async def all(self) -> Sequence[PollState]:
        return list(self._state.poll_state.values())


class FakeMomentum:
    """The spike alert state; the figures are counted in SQL, so they are not faked."""

    def __init__(self, state: _State) -> None:
        self._state = state

    async def latest_announced(self, today: date | None = None) -> date | None:
        _not_faked("momentum figures")

    async def for_tags(
        self, tags: Sequence[str] | None, as_of: date, weeks: int = 26
    ) -> Mapping[str, Momentum]:
        _not_faked("momentum figures")

    async def for_tag(self, tag: str, as_of: date, weeks: int = 26) -> Momentum:
        _not_faked("momentum figures")

    async def alert_state(self, chat_id: int, tag: str) -> AlertState:
        return self._state.alert_state.get((chat_id, tag), AlertState())

    async def save_alert_state(self, chat_id: int, tag: str, state: AlertState) -> None:
        self._state.alert_state[(chat_id, tag)] = state


class FakeSearch:
    """Search by the query language's own matcher: a paper matches as `compile_node` says;
    its score counts the found terms, a title hit `TITLE_WEIGHT` times an abstract one.
    Every match is ranked (storage ranks the 2,000 stored last when more match)."""

    def __init__(self, papers: FakePapers) -> None:
        self._papers = papers

    async def index_new(self) -> int:
        """Nothing to do: the fake searches its papers as they are (and stores none)."""
        return 0

    async def search(
        self,
        text: str,
        *,
        tags: Sequence[str] | None = None,
        without: Sequence[str] = (),
        limit: int = 10,
        offset: int = 0,
    ) -> SearchResult:
        query = parse_search(text)
        found = self._run(query.strict, tags, without)
        loosened = not found and query.loose is not None
        if loosened:
            found = self._run(query.loose, tags, without)  # type: ignore[arg-type]
        found.sort(key=lambda hit: hit.paper.arxiv_id, reverse=True)
        found.sort(key=lambda hit: hit.paper.announced or date.min, reverse=True)
        found.sort(key=lambda hit: hit.paper.announced is None)  # undated last
        found.sort(key=lambda hit: hit.score, reverse=True)
        return SearchResult(tuple(found[offset : offset + limit]), len(found), loosened)

    def _run(self, node: Node, tags: Sequence[str] | None, without: Sequence[str]) -> list:
        matches = compile_node(node)
        scored = [(t, compile_node(replace(t, scope=Scope.TITLE))) for t in positive_terms(node)]
        hits = []
        for paper in self._papers._with(tags, without):
            doc = Document.from_paper(paper)
            if matches(doc, []):
                score = sum(TITLE_WEIGHT if in_title(doc, []) else 1.0 for _, in_title in scored)
                hits.append(SearchHit(paper, score))
        return hits


class FakeLlmBudget:
    """The daily token count; one fake database is one process, so no race to fake."""

    def __init__(self, state: _State) -> None:
        self._state = state

    async def reserve(self, day: date, tokens: int, limit: int) -> bool:
        spent = self._state.llm_tokens.get(day, 0)
        if spent + tokens > limit:
            return False
        self._state.llm_tokens[day] = spent + tokens
        return True

    async def settle(self, day: date, reserved: int, used: int) -> None:
        spent = self._state.llm_tokens.get(day, 0)
        self._state.llm_tokens[day] = spent + max(used, 0) - reserved

    async def used(self, day: date) -> int:
        return self._state.llm_tokens.get(day, 0)


class FakeFeedback:
    """Votes and models in memory; what a chat was sent is what `FakeDatabase.sent` says
    (storage reads it from the outbox, which the fake does not have)."""

    def __init__(self, state: _State, papers: FakePapers) -> None:
        self._state, self._papers = state, papers

    async def vote(self, chat_id: int, arxiv_id: str, value: int, now: datetime) -> int | None:
        if value not in (1, -1):
            raise ValueError(f"a vote is +1 or -1, not {value!r}")
        if arxiv_id not in self._state.papers:
            raise LookupError(f"no paper {arxiv_id} stored")
        before = self._state.votes.get((chat_id, arxiv_id))
        self._state.votes[(chat_id, arxiv_id)] = (value, now)
        return before[0] if before else None

    async def votes(self, chat_id: int) -> Sequence[Vote]:
        found = [
            Vote(paper, value, at)
            for (chat, arxiv_id), (value, at) in self._state.votes.items()
            if chat == chat_id and (paper := await self._papers.get(arxiv_id)) is not None
        ]
        return sorted(found, key=lambda v: (v.at, v.paper.arxiv_id))

    async def received(self, chat_id: int, arxiv_id: str) -> bool:
        return (chat_id, arxiv_id) in self._state.received

    async def clear(self, chat_id: int) -> int:
        self._state.models.pop(chat_id, None)
        mine = [key for key in self._state.votes if key[0] == chat_id]
        for key in mine:
            del self._state.votes[key]
        return len(mine)

    async def model(self, chat_id: int) -> ChatModel | None:
        return self._state.models.get(chat_id)

    async def models(self, chat_ids: Iterable[int]) -> Mapping[int, ChatModel]:
        return {c: m for c in set(chat_ids) if (m := self._state.models.get(c)) is not None}

    async def save_model(self, chat_id: int, model: ChatModel) -> None:
        self._state.models[chat_id] = model

    async def stale(self, limit: int = 100, share: tuple[int, int] = (0, 1)) -> Sequence[int]:
        newest: dict[int, datetime] = {}
        for (chat, _), (_, at) in self._state.votes.items():
            newest[chat] = max(at, newest.get(chat, at))
        slot, workers = share
        waiting = [
            (at, chat)
            for chat, at in newest.items()
            if chat % workers == slot
            and ((m := self._state.models.get(chat)) is None or at > m.last_vote_at)
        ]
        return [chat for _, chat in sorted(waiting)[:limit]]


class FakeLikeSets:
    """The "papers like these" sets, by tag."""

    def __init__(self, state: _State) -> None:
        self._state = state

    async def save(self, like_set: LikeSet) -> None:
        self._state.like_sets[like_set.tag] = like_set

    async def get(self, tag: str) -> LikeSet | None:
        return self._state.like_sets.get(tag)

    async def followed(self) -> Sequence[LikeSet]:
        tags = {
            sub.tag
            for sub in self._state.subscriptions
            if sub.kind == SubscriptionKind.LIKE
            and (chat := self._state.chats.get(sub.chat_id)) is not None
            and chat.active
        }
        return [self._state.like_sets[tag] for tag in sorted(tags & self._state.like_sets.keys())]

    async def recalibrated(self, tag: str, threshold: float, at: datetime, on: int) -> None:
        if (known := self._state.like_sets.get(tag)) is not None:
            self._state.like_sets[tag] = replace(
                known, threshold=threshold, calibrated_at=at, calibrated_on=on
            )


def _not_faked(part: str) -> NoReturn:
    raise NotImplementedError(f"the fake unit of work has no {part}: test it on a database")


class FakeUnitOfWork:
    """`bot.ports.UnitOfWork` over a `FakeDatabase`'s state."""

    chats: FakeChats
    subscriptions: FakeSubscriptions
    mutes: FakeMutes
    papers: FakePapers
    poll_state: FakePollState
    momentum: FakeMomentum
    search: FakeSearch
    llm_budget: FakeLlmBudget
    feedback: FakeFeedback
    like_sets: FakeLikeSets

    def __init__(self, database: FakeDatabase) -> None:
        self._database = database
        self._work: _State | None = None

    async def __aenter__(self) -> Self:
        work = self._work = copy.deepcopy(self._database.state)
        self.chats, self.subscriptions = FakeChats(work), FakeSubscriptions(work)
        self.mutes, self.papers = FakeMutes(work), FakePapers(work)
        self.poll_state, self.momentum = FakePollState(work), FakeMomentum(work)
        self.search = FakeSearch(self.papers)
        self.llm_budget = FakeLlmBudget(work)
        self.feedback = FakeFeedback(work, self.papers)
        self.like_sets = FakeLikeSets(work)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._work = None

    def _inside(self) -> _State:
        if self._work is None:
            raise RuntimeError("use the unit of work inside `async with`")
        return self._work

    async def commit(self) -> None:
        self._database.state = copy.deepcopy(self._inside())

    async def rollback(self) -> None:
        """Back to the last commit, in place: repositories already taken stay valid."""
        vars(self._inside()).update(vars(copy.deepcopy(self._database.state)))

    @property
    def outbox(self) -> OutboxStore:
        _not_faked("outbox")

    @property
    def processes(self) -> ProcessStore:
        _not_faked("processes")


class FakeDatabase:
    """The committed state that every `uow()` starts from, as `storage.database.Database`."""

    def __init__(self) -> None:
        self.state = _State()

    def uow(self) -> FakeUnitOfWork:
        return FakeUnitOfWork(self)

    def seed_papers(self, *papers: Paper) -> None:
        FakePapers(self.state).seed(papers)

    def sent(self, chat_id: int, *arxiv_ids: str) -> None:
        """The chat was sent these papers (in storage, an alert or digest row says so)."""
        self.state.received.update((chat_id, a) for a in arxiv_ids)
