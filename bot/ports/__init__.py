"""The ports: what handlers and services need from the outside, as protocols.

Handlers and services (`bot.services`) are written against these and nothing concrete:
`storage.uow.UnitOfWork` is the implementation the bot runs (SQLite or PostgreSQL), and
the composition root (`bot.app`, `bot.cli`, `bot.cli_actions`, `bot.scheduler`) hands it
to them as a factory; `tests.support.uow.FakeUnitOfWork` is an in-memory one for pure
handler tests. Every type that crosses a port is a domain object (`bot.domain`,
`bot.outbox_payloads`, `bot.topics.momentum`, `bot.topics.spike_rule`) or a plain value
record defined here, never an ORM row.

- `unit_of_work`: one transaction and its repositories (`UnitOfWork`), and the `Clock`;
- `stores`: the repositories of chats, subscriptions, mutes, papers, the papers' full-text
  search, poll state, momentum and processes;
- `feedback_store`: a chat's 👍/👎 votes and its learned model;
- `outbox_store`: the outbox, whose claim and batch semantics only storage implements;
- `messaging`: the `Messenger` every chat platform implements, and the errors it raises;
- `papers_like`: the "papers like these" sets (`LikeSetStore`) and arXiv's papers by id
  (`PaperLookup`, implemented in `bot.arxiv.by_id`);
- `language_model`: the optional model /ask may write with (`AnswerWriter`, its errors), and
  the daily token budget it spends (`TokenBudgetStore`).

Each protocol lists the methods handlers and services call; the storage classes have a
few more (the CLI's operator commands call those on the concrete unit of work).
`tests/integration/test_ports.py` checks that storage and the fake keep these signatures.
"""

from bot.ports.feedback_store import FeedbackStore
from bot.ports.language_model import (
    AnswerWriter,
    BudgetExhausted,
    TokenBudgetStore,
    WriterError,
    WriterTimeout,
    WriterUnavailable,
    WrittenAnswer,
)
from bot.ports.messaging import (
    ChatMoved,
    DeliveryError,
    Messenger,
    Permanent,
    RateLimited,
    RecipientGone,
    Transient,
)
from bot.ports.outbox_store import OutboxStore
from bot.ports.papers_like import LikeSet, LikeSetStore, PaperLookup, PaperLookupError
from bot.ports.stores import (
    ChatStore,
    MomentumStore,
    MuteStore,
    PaperSearch,
    PaperStore,
    PollStateStore,
    ProcessStore,
    SubscriptionStore,
    UpsertResult,
)
from bot.ports.unit_of_work import Clock, UnitOfWork

__all__ = [
    "AnswerWriter",
    "BudgetExhausted",
    "ChatMoved",
    "ChatStore",
    "Clock",
    "DeliveryError",
    "FeedbackStore",
    "LikeSet",
    "LikeSetStore",
    "Messenger",
    "MomentumStore",
    "MuteStore",
    "OutboxStore",
    "PaperLookup",
    "PaperLookupError",
    "PaperSearch",
    "PaperStore",
    "Permanent",
    "PollStateStore",
    "ProcessStore",
    "RateLimited",
    "RecipientGone",
    "SubscriptionStore",
    "TokenBudgetStore",
    "Transient",
    "UnitOfWork",
    "UpsertResult",
    "WriterError",
    "WriterTimeout",
    "WriterUnavailable",
    "WrittenAnswer",
]
