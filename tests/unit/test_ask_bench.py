"""bench/bench_ask.py: the tune/check split of the /ask evaluation set, and that `-v` never
shows a check question's miss (tests/fixtures/ask/README.md, tuning protocol)."""

from __future__ import annotations

from bench.bench_ask import QUESTIONS, figures, half, load_questions, show_misses

FRESH = QUESTIONS.parent / "fresh.jsonl"


def test_the_split_is_by_id_parity_and_halves_the_set():
    questions = load_questions()
    halves = {q["id"]: half(q["id"]) for q in questions}
    assert halves["q01"] == "tune" and halves["q02"] == "check" and halves["q67"] == "tune"
    for name in ("tune", "check"):
        mine = [q for q in questions if halves[q["id"]] == name]
        assert sum(bool(q["answers"]) for q in mine) == 29
        assert sum(not q["answers"] for q in mine) == 5


def _outcome(qid: str, ok: bool, answerable: bool = True) -> dict:
    return {
        "id": qid,
        "half": half(qid),
        "answerable": answerable,
        "ok": ok,
        "found": not ok if not answerable else True,
        "cited": ["2601.00001"],
    }


def test_verbose_lists_tune_misses_and_never_check_ones(capsys):
    questions = load_questions()
    outcomes = [_outcome(q["id"], ok=False, answerable=bool(q["answers"])) for q in questions]
    show_misses(outcomes, questions)
    shown = capsys.readouterr().out
    for q in questions:
        assert (f"MISS {q['id']} " in shown) == (half(q["id"]) == "tune")
        if half(q["id"]) == "check":
            assert q["question"] not in shown


def test_figures_count_hits_and_not_found_per_half():
    outcomes = [
        _outcome("q01", ok=True),
        _outcome("q03", ok=False),
        _outcome("q02", ok=True),
        _outcome("q59", ok=True, answerable=False),
        _outcome("q60", ok=False, answerable=False),
    ]
    found = figures(outcomes)
    assert found["all"]["hit3"] == "2/3" and found["all"]["not_found"] == "1/2"
    assert found["tune"]["hit3"] == "1/2" and found["tune"]["not_found"] == "1/1"
    assert found["check"]["hit3"] == "1/1" and found["check"]["not_found"] == "0/1"


def test_the_fresh_set_is_in_no_half_and_its_misses_stay_unseen(capsys):
    """`--questions tests/fixtures/ask/fresh.jsonl`: the fresh set was never split, so only
    its "all" figures are given and `-v` lists none of its misses (it is measured once)."""
    questions = load_questions(FRESH)
    assert questions and all(half(q["id"]) == "none" for q in questions)
    outcomes = [_outcome(q["id"], ok=False, answerable=bool(q["answers"])) for q in questions]
    show_misses(outcomes, questions)
    assert capsys.readouterr().out == ""
    outcomes[0]["ok"] = True
    found = figures(outcomes)
    assert set(found) == {"all"}
    answerable = sum(bool(q["answers"]) for q in questions)
    unanswerable = len(questions) - answerable
    assert found["all"]["hit3"] == f"{int(bool(questions[0]['answers']))}/{answerable}"
    assert found["all"]["not_found"] == f"{int(not questions[0]['answers'])}/{unanswerable}"


def test_a_set_named_tuning_material_lists_its_misses_but_never_check_ones(capsys):
    """`--tuning-set`: the fresh set, once measured, is tuning material (-v lists its misses);
    the flag does not open the default set's check half."""
    fresh = load_questions(FRESH)
    outcomes = [_outcome(q["id"], ok=False, answerable=bool(q["answers"])) for q in fresh]
    show_misses(outcomes, fresh, tuning_set=True)
    shown = capsys.readouterr().out
    assert all(f"MISS {q['id']} " in shown for q in fresh)
    questions = load_questions()
    outcomes = [_outcome(q["id"], ok=False, answerable=bool(q["answers"])) for q in questions]
    show_misses(outcomes, questions, tuning_set=True)
    shown = capsys.readouterr().out
    assert all((f"MISS {q['id']} " in shown) == (half(q["id"]) == "tune") for q in questions)


def test_the_default_set_keeps_both_halves():
    outcomes = [_outcome(q["id"], ok=True, answerable=bool(q["answers"])) for q in load_questions()]
    assert set(figures(outcomes)) == {"all", "tune", "check"}
