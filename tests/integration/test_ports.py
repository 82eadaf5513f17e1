"""Storage's unit of work, and the test fake, implement `bot.ports`.

Three arguments, from weakest to strongest: a real SQLite unit of work passes the
runtime-checkable `isinstance` (every member is there); every method of every port has
the same parameters (names, kinds, defaults) and the same sync/async nature in storage
and in the fake; and `_typed` below assigns them to the protocols, which a type checker
(mypy, pyright) rejects when a signature or a return type disagrees.
"""

from __future__ import annotations

import inspect
import typing
from datetime import date

import pytest

from bot import ports
from storage.database import Database
from storage.uow import UnitOfWork
from tests.support.uow import FakeDatabase, FakeUnitOfWork


def _typed(real: UnitOfWork, fake: FakeUnitOfWork) -> list[ports.UnitOfWork]:
    """Never run: for type checkers, which check each assignment against the protocol."""
    return [real, fake]


async def test_a_real_unit_of_work_is_a_port(db: Database) -> None:
    async with db.uow() as uow:
        assert isinstance(uow, ports.UnitOfWork)


def _members(protocol: type) -> dict[str, typing.Any]:
    """The methods and properties a protocol declares itself."""
    return {
        name: value
        for name, value in vars(protocol).items()
        if callable(value) or isinstance(value, property)
        if not name.startswith("_") or name in ("__aenter__", "__aexit__")
    }


def _repositories(uow: type) -> dict[str, tuple[type, type]]:
    """Each repository property of the port -> (its protocol, `uow`'s class for it)."""
    declared = typing.get_type_hints(uow)
    found = {}
    for name, member in _members(ports.UnitOfWork).items():
        if isinstance(member, property) and name in declared:
            found[name] = (typing.get_type_hints(member.fget)["return"], declared[name])
    return found


def _shape(function: typing.Any) -> tuple[bool, list[tuple[str, typing.Any, typing.Any]]]:
    parameters = inspect.signature(function).parameters.values()
    shape = [(p.name, p.kind, p.default) for p in parameters]
    return inspect.iscoroutinefunction(function), shape


PAIRS = [
    (ports.UnitOfWork, UnitOfWork),
    *_repositories(UnitOfWork).values(),
    (ports.UnitOfWork, FakeUnitOfWork),
    *_repositories(FakeUnitOfWork).values(),
]


@pytest.mark.parametrize(("port", "implementation"), PAIRS, ids=lambda c: c.__qualname__)
def test_same_signatures(port: type, implementation: type) -> None:
    for name, member in _members(port).items():
        found = inspect.getattr_static(implementation, name, None)
        if isinstance(member, property):
            # A property of the port: a property or an annotated attribute of the class.
            assert isinstance(found, property) or name in typing.get_type_hints(implementation)
            continue
        assert found is not None, f"{implementation.__qualname__} lacks {name}"
        assert _shape(found) == _shape(member), f"{implementation.__qualname__}.{name}"


def test_every_repository_is_checked() -> None:
    """Storage implements every repository of the port (the services' as well as the
    handlers'); the fake all but two, whose properties raise (`tests.support.uow`)."""
    ports_repositories = {
        n for n, m in _members(ports.UnitOfWork).items() if isinstance(m, property)
    }
    assert set(_repositories(UnitOfWork)) == ports_repositories
    assert ports_repositories == {
        "chats",
        "subscriptions",
        "mutes",
        "papers",
        "search",
        "poll_state",
        "outbox",
        "momentum",
        "processes",
        "llm_budget",
        "feedback",
        "like_sets",
    }
    assert ports_repositories - set(_repositories(FakeUnitOfWork)) == {"outbox", "processes"}


def test_every_port_method_of_a_repository_is_compared() -> None:
    """The services' methods are in the ports too: a method storage has but the port
    lacks is one a service cannot call without importing storage. What storage has
    beyond the ports is the operator's (the CLI's, on the concrete unit of work)."""
    beyond = {
        name: sorted(
            n
            for n, value in vars(implementation).items()
            if callable(value) and not n.startswith("_") and n not in _members(port)
        )
        for name, (port, implementation) in _repositories(UnitOfWork).items()
    }
    assert beyond == {
        "chats": [],
        "subscriptions": [],
        "mutes": [],
        "papers": [],
        "search": [],
        "poll_state": [],
        "outbox": ["dead_letters", "requeue_dead"],
        "momentum": ["coverage", "total", "weekly_counts"],
        "processes": [],
        "llm_budget": [],
        "feedback": [],
        "like_sets": [],
    }


async def test_the_fake_refuses_what_it_does_not_fake() -> None:
    async with FakeDatabase().uow() as uow:
        with pytest.raises(NotImplementedError, match="momentum"):
            await uow.momentum.for_tags(["agents"], date(2026, 3, 2))
        with pytest.raises(NotImplementedError, match="outbox"):
            _ = uow.outbox
        with pytest.raises(NotImplementedError, match="processes"):
            _ = uow.processes
        with pytest.raises(NotImplementedError, match="upsert"):
            await uow.papers.upsert([])
        with pytest.raises(NotImplementedError, match="batch_tags"):
            await uow.papers.batch_tags([1])
