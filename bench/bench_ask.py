"""/ask measured: how well it answers the evaluation set, and how fast over 100,000 papers.

    .venv/bin/python -m bench.bench_ask [--postgres] [-v] [--skip-quality] [--skip-latency]
        [--papers N] [--repeat R] [--reuse FILE] [--questions FILE [--tuning-set]]

Quality: the 6,117 papers of the relevance development set
(tests/fixtures/relevance/catalog/dev.jsonl.gz) are stored by `store_papers` with the bundled
catalog's tags into a fresh database (SQLite; PostgreSQL too with `--postgres` or when
`PAPERWATCH_TEST_POSTGRES_URL` is set: a throwaway database on that server), then every
question of `tests/fixtures/ask/questions.jsonl` goes through `handlers.ask.ask_papers`, as
/ask sends it: a question with a topic is asked of that topic's papers (its tag), one
without of every stored paper. Scored as the set's README says: hit@3 over the answerable
questions (a listed paper among the first three cited), "not found" over the unanswerable.
`--reuse FILE` keeps the SQLite database in FILE and reuses it on the next run.
`--questions FILE` asks another set in the same format instead (e.g.
tests/fixtures/ask/fresh.jsonl, the set written after the tuning and measured once), scored
by the same code; a set other than the default has no tune/check halves, so only its "all"
figures are printed and `-v` lists none of its misses, unless `--tuning-set` says the whole
set is tuning material (fresh.jsonl once measured): then `-v` lists all of its misses. Never
for a set still to be measured blind (fresh2.jsonl): its misses would be seen before its figure.

Tuning protocol (tests/fixtures/ask/README.md): the questions are split once by the parity
of their number, odd = tune, even = check, and the figures are given for each half. `-v`
lists the misses of tune questions only; check questions' misses are never shown.

Latency: the papers of bench_search (the development set repeated under new ids to
`--papers`, default 100,000, about three catalog tags each) are bulk-loaded into SQLite and
PostgreSQL, and `QUESTIONS` (the evaluation set's, with and without their topic) are each
asked `--repeat` times through `ask_papers` in a unit of work. Goal: p95 <= 300 ms.
The last line is JSON with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bench.bench_search import _rebuild_fts, _tables
from bench.fixtures import FIXTURES
from bench.harness import fresh_database, load_tables, migrate_to_head, verdict
from bench.relevance_catalog import load_split
from bot.services.ingest import store_papers
from bot.topics.catalog import Catalog, load_catalog
from handlers.ask import ask_papers
from storage.database import Database

QUESTIONS = FIXTURES / "ask" / "questions.jsonl"
GOAL_HIT3 = 0.8
GOAL_NOT_FOUND = 0.8  # share of the unanswerable questions: 8 of 10 in the issue
GOAL_P95_S = 0.300
BATCH = 1000


def load_questions(path: Path = QUESTIONS) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def half(question_id: str) -> str:
    """The question's half for tuning: odd numbers tune, even numbers check. Only the default
    set (ids `q..`) was split; another set's questions (e.g. `f..`) are in no half."""
    if not question_id.startswith("q"):
        return "none"
    return "tune" if int(question_id.lstrip("q")) % 2 else "check"


def topic_scope(catalog: Catalog, name: str | None) -> tuple[list[str] | None, str]:
    """The tags and the scope words a question is asked with, as /ask would."""
    if name is None:
        return None, "stored"
    topic = next(t for t in catalog.topics if t.name == name)
    return [topic.slug], f"on {topic.name}"


async def store_dev(db: Database, catalog: Catalog) -> int:
    """Store the development set once (nothing when the database already holds papers)."""
    async with db.uow() as uow:
        stored = await uow.papers.count()
    if stored:
        return stored
    papers = list(load_split("dev").values())
    for start in range(0, len(papers), BATCH):
        await store_papers(db.uow, papers[start : start + BATCH], catalog)
    return len(papers)


async def ask_all(db: Database, catalog: Catalog, questions: list[dict[str, Any]]) -> list[dict]:
    """Each question's outcome: its half, whether it is answerable, and whether /ask got it."""
    outcomes = []
    for q in questions:
        tags, scope = topic_scope(catalog, q["topic"])
        async with db.uow() as uow:
            asked = await ask_papers(uow, q["question"], tags, scope, q["topic"] or "")
        cited = [group.paper.arxiv_id for group in asked.answer.groups][:3]
        answerable = bool(q["answers"])
        ok = bool(set(cited) & set(q["answers"])) if answerable else not asked.answer.found
        outcomes.append(
            {
                "id": q["id"],
                "half": half(q["id"]),
                "answerable": answerable,
                "ok": ok,
                "found": asked.answer.found,
                "cited": cited,
            }
        )
    return outcomes


def figures(outcomes: list[dict]) -> dict[str, Any]:
    """hit@3 and not-found, over all questions and over each half the set has."""
    out: dict[str, Any] = {}
    halves = [name for name in ("tune", "check") if any(o["half"] == name for o in outcomes)]
    for name in ("all", *halves):
        mine = [o for o in outcomes if name == "all" or o["half"] == name]
        answerable = [o for o in mine if o["answerable"]]
        unanswerable = [o for o in mine if not o["answerable"]]
        hits = sum(o["ok"] for o in answerable)
        out[name] = {
            "hit3": f"{hits}/{len(answerable)}",
            "hit3_share": round(hits / len(answerable), 3) if answerable else None,
            "not_found": f"{sum(o['ok'] for o in unanswerable)}/{len(unanswerable)}",
            "unanswered": sum(not o["found"] for o in answerable),
        }
    return out


def show_misses(
    outcomes: list[dict], questions: list[dict[str, Any]], tuning_set: bool = False
) -> None:
    """The misses of tune questions; check questions' misses stay unseen (the protocol).
    `tuning_set`: a set without halves that is all tuning material, whose misses are shown."""
    text = {q["id"]: q for q in questions}
    shown = ("tune", "none") if tuning_set else ("tune",)
    for o in outcomes:
        if o["half"] not in shown or o["ok"]:
            continue
        q = text[o["id"]]
        why = "not found" if not o["found"] else f"cited {', '.join(o['cited'])}"
        if not o["answerable"]:
            why = f"answered, citing {', '.join(o['cited'])}"
        print(f"  MISS {o['id']} [{q['topic'] or 'all'}] {q['question']}\n       {why}")


@asynccontextmanager
async def dev_database(backend: str, reuse: str | None) -> AsyncIterator[str]:
    if backend == "sqlite" and reuse:
        url = f"sqlite+aiosqlite:///{reuse}"
        await migrate_to_head(url)
        yield url
        return
    async with fresh_database(backend, "pw_ask_quality") as url:
        yield url


async def quality(
    backend: str,
    reuse: str | None,
    verbose: bool,
    path: Path = QUESTIONS,
    tuning_set: bool = False,
) -> dict[str, Any]:
    catalog = load_catalog()
    questions = load_questions(path)
    async with dev_database(backend, reuse) as url:
        db = Database(url)
        try:
            start = time.perf_counter()
            stored = await store_dev(db, catalog)
            store_s = time.perf_counter() - start
            outcomes = await ask_all(db, catalog, questions)
        finally:
            await db.dispose()
    result = {"papers": stored, "store_s": round(store_s, 1), **figures(outcomes)}
    report_quality(backend, result)
    if verbose:
        show_misses(outcomes, questions, tuning_set)
    return result


def report_quality(backend: str, result: dict[str, Any]) -> None:
    every = result["all"]
    hit_ok = verdict((every["hit3_share"] or 0) >= GOAL_HIT3)
    found, asked = (int(n) for n in every["not_found"].split("/"))
    nf_ok = verdict(asked > 0 and found / asked >= GOAL_NOT_FOUND)
    print(
        f"{backend:>10}: {result['papers']:,} papers; hit@3 {every['hit3']} = "
        f"{every['hit3_share']:.3f} (goal >= {GOAL_HIT3}: {hit_ok}), not found "
        f"{every['not_found']} (goal >= {GOAL_NOT_FOUND:.0%}: {nf_ok}); answerable left "
        f"unanswered {every['unanswered']}"
    )
    for name in ("tune", "check"):
        if name not in result:
            continue
        part = result[name]
        print(
            f"{'':>10}  {name}: hit@3 {part['hit3']} = {part['hit3_share']:.3f}, "
            f"not found {part['not_found']}, unanswered {part['unanswered']}"
        )


async def time_questions(
    db: Database, catalog: Catalog, repeat: int, path: Path = QUESTIONS
) -> dict[str, Any]:
    """p50/p95/max of `ask_papers`, each evaluation question with its topic and without."""
    asks = []
    for q in load_questions(path):
        asks.append((q["question"], *topic_scope(catalog, q["topic"]), q["topic"] or ""))
        if q["topic"]:
            asks.append((q["question"], None, "stored", ""))
    times: list[float] = []
    for _ in range(repeat):
        for question, tags, scope, given in asks:
            start = time.perf_counter()
            async with db.uow() as uow:
                await ask_papers(uow, question, tags, scope, given)
            times.append(time.perf_counter() - start)
    times.sort()
    return {
        "asks": len(times),
        "p50_ms": round(statistics.median(times) * 1000, 1),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))] * 1000, 1),
        "max_ms": round(times[-1] * 1000, 1),
    }


async def latency(backend: str, papers: int, repeat: int, path: Path = QUESTIONS) -> dict[str, Any]:
    async with fresh_database(backend, "pw_ask_latency") as url:
        start = time.perf_counter()
        await load_tables(url, _tables(papers))
        await _rebuild_fts(url)
        load_s = time.perf_counter() - start
        db = Database(url)
        try:
            found = await time_questions(db, load_catalog(), repeat, path)
        finally:
            await db.dispose()
    found["load_s"] = round(load_s, 1)
    ok = verdict(found["p95_ms"] / 1000 <= GOAL_P95_S)
    print(
        f"{backend:>10}: {found['asks']} questions over {papers:,} papers: p50 "
        f"{found['p50_ms']} ms, p95 {found['p95_ms']} ms (goal <= {GOAL_P95_S * 1000:.0f} ms: "
        f"{ok}), max {found['max_ms']} ms; bulk load {found['load_s']} s"
    )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL too")
    parser.add_argument("-v", "--verbose", action="store_true", help="list tune misses")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reuse", metavar="FILE", help="SQLite file kept between runs")
    parser.add_argument(
        "--questions",
        metavar="FILE",
        type=Path,
        default=QUESTIONS,
        help=f"evaluation set to ask (default {QUESTIONS.relative_to(FIXTURES.parent.parent)})",
    )
    parser.add_argument(
        "--tuning-set",
        action="store_true",
        help="the --questions set is all tuning material (never a blind one): -v lists its misses",
    )
    args = parser.parse_args()
    path = args.questions.resolve()
    backends = ["sqlite"]
    if args.postgres or os.environ.get("PAPERWATCH_TEST_POSTGRES_URL"):
        backends.append("postgres")
    reuse = str(Path(args.reuse).resolve()) if args.reuse else None
    out: dict[str, Any] = {"papers": args.papers, "repeat": args.repeat}
    if path != QUESTIONS.resolve():
        out["questions"] = str(args.questions)
        print(f"questions: {args.questions} ({len(load_questions(path))})")
    for backend in backends:
        name = "postgresql" if backend == "postgres" else backend
        out[name] = {}
        if not args.skip_quality:
            out[name]["quality"] = asyncio.run(
                quality(backend, reuse, args.verbose, path, args.tuning_set)
            )
        if not args.skip_latency:
            out[name]["latency"] = asyncio.run(latency(backend, args.papers, args.repeat, path))
        sys.stdout.flush()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
