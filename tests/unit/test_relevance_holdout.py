"""Held-out discipline of the catalog evaluation (bench/relevance_holdout.py).

`--topic` reads the dev split only and never prints a held-out paper; `--freeze` records
the held-out files and notices every later change; a `--holdout` run refuses (and logs
nothing) when they differ from FROZEN.json; each consultation appends one log line.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from bench import relevance, relevance_holdout, relevance_report
from bench.relevance_catalog import CATALOG_DIR, labelled_topics


def _held_out_ids() -> set[str]:
    with gzip.open(CATALOG_DIR / "holdout.jsonl.gz", "rt", encoding="utf-8") as f:
        return {json.loads(line)["arxiv_id"] for line in f if line.strip()}


def test_topic_report_prints_dev_errors_and_never_a_held_out_paper(capsys, monkeypatch):
    """Reads the dev split only (checked by spying on the loaders), and the ids it prints
    are dev papers, never held-out ones."""
    held, _ = labelled_topics("holdout")
    found, _ = labelled_topics("dev")
    both = sorted({t.slug for t in found} & {t.slug for t in held})
    if not both:
        pytest.skip("no topic is labelled on both splits yet")
    slug = "rl-for-llm-agents" if "rl-for-llm-agents" in both else both[0]
    asked: list[str] = []
    for name in ("load_split", "labelled_topics"):
        real = getattr(relevance_report, name)
        monkeypatch.setattr(
            relevance_report,
            name,
            lambda split, *a, _real=real, **kw: asked.append(split) or _real(split, *a, **kw),
        )
    assert relevance.main(["--topic", slug]) == 0
    out = capsys.readouterr().out
    assert set(asked) == {"dev"}
    shown = set(re.findall(r"\b\d{4}\.\d{4,5}\b", out))
    assert not shown & _held_out_ids(), f"--topic {slug} printed held-out papers"
    assert shown & {label.arxiv_id for t in found for label in t.labels}  # it lists papers


def test_topic_report_refuses_an_unknown_topic(capsys):
    assert relevance.main(["--topic", "no-such-topic-at-all"]) == 2
    assert "no catalog topic" in capsys.readouterr().out


def _held_out_tree(root: Path) -> None:
    (root / "labels" / "holdout").mkdir(parents=True)
    (root / "pools" / "holdout").mkdir(parents=True)
    (root / "holdout.jsonl.gz").write_bytes(b"papers")
    (root / "labels" / "holdout" / "a.jsonl").write_text('{"arxiv_id": "1", "label": true}\n')
    (root / "pools" / "holdout" / "a.json").write_text("{}\n")


def test_freeze_records_the_held_out_files_and_notices_every_change(tmp_path):
    _held_out_tree(tmp_path)
    frozen = tmp_path / "FROZEN.json"
    assert relevance_holdout.frozen_differences(tmp_path, frozen) is None  # not frozen yet
    assert relevance_holdout.freeze(tmp_path, frozen) == []
    files = json.loads(frozen.read_text())["files"]
    assert set(files) == {"holdout.jsonl.gz", "labels/holdout/a.jsonl", "pools/holdout/a.json"}
    assert relevance_holdout.frozen_differences(tmp_path, frozen) == []
    first = frozen.read_text()
    assert relevance_holdout.freeze(tmp_path, frozen) == []
    assert frozen.read_text() == first  # the same files: the record is not rewritten
    (tmp_path / "labels" / "holdout" / "a.jsonl").write_text('{"arxiv_id": "1", "label": false}\n')
    (tmp_path / "labels" / "holdout" / "b.jsonl").write_text("")
    (tmp_path / "pools" / "holdout" / "a.json").unlink()
    assert relevance_holdout.frozen_differences(tmp_path, frozen) == [
        "changed: labels/holdout/a.jsonl",
        "missing: pools/holdout/a.json",
        "not frozen: labels/holdout/b.jsonl",
    ]
    before = frozen.read_text()
    assert relevance_holdout.freeze(tmp_path, frozen) != []  # refuses to overwrite
    assert frozen.read_text() == before
    assert relevance_holdout.freeze(tmp_path, frozen, force=True) == []
    assert relevance_holdout.frozen_differences(tmp_path, frozen) == []


def test_holdout_run_refuses_when_files_differ_from_frozen_and_logs_nothing(
    tmp_path, monkeypatch, capsys
):
    frozen, log = tmp_path / "FROZEN.json", tmp_path / "HOLDOUT_LOG.md"
    frozen.write_text(json.dumps({"files": {"holdout.jsonl.gz": "0" * 64}}))
    monkeypatch.setattr(relevance_holdout, "FROZEN", frozen)
    monkeypatch.setattr(relevance_holdout, "HOLDOUT_LOG", log)
    assert relevance.main(["--holdout"]) == 2
    captured = capsys.readouterr()
    assert "HELD-OUT FILES DIFFER FROM FROZEN.json" in captured.err
    assert "changed: holdout.jsonl.gz" in captured.err
    assert "held-out" not in captured.out.lower()  # no figures were computed or printed
    assert not log.exists()


def test_a_consultation_appends_one_line_with_commit_and_catalog_hash(tmp_path):
    log = tmp_path / "HOLDOUT_LOG.md"
    relevance_holdout.log_consultation("ab" * 32, 0.8123, 42, log)
    relevance_holdout.log_consultation("cd" * 32, None, 3, log)
    lines = log.read_text().splitlines()
    assert lines[0] == "# Held-out consultations"
    rows = [line for line in lines if re.match(r"\| \d{4}-\d\d-\d\dT", line)]
    assert len(rows) == 2
    assert rows[0].endswith(f"| {'ab' * 32} | 0.8123 | 42 |")
    assert rows[1].endswith(f"| {'cd' * 32} | n/a | 3 |")
    assert rows[0].split(" | ")[1] == relevance_holdout.commit()


def test_freeze_refuses_while_a_held_out_label_file_does_not_fit_its_pool(
    tmp_path, monkeypatch, capsys
):
    frozen = tmp_path / "FROZEN.json"
    monkeypatch.setattr(relevance_holdout, "FROZEN", frozen)
    monkeypatch.setattr(relevance, "labelled_topics", lambda split: ([], [f"t ({split}): bad"]))
    assert relevance.main(["--freeze"]) == 2
    assert "t (holdout): bad" in capsys.readouterr().out
    assert not frozen.exists()


def test_a_tune_report_names_no_check_day_paper(capsys, monkeypatch):
    """`--fold tune --topic` lists errors and unlabelled hits of tune days only: a tuner
    must not see the check days' papers, only their figures."""
    found, _ = labelled_topics("dev", fold="tune")
    slug = found[0].slug
    folds = relevance_report.dev_folds()
    by_fold = {
        fold: sorted(i for i, f in folds.items() if f == fold)[:3] for fold in ("tune", "check")
    }

    def hits(topics, papers, catalog, tagger):  # a hit on each fold's days
        ids = by_fold["tune"] + by_fold["check"]
        return {t.slug: {"count": len(ids), "ids": ids, "reason": "test"} for t in topics}

    monkeypatch.setattr(relevance_report, "unlabelled_hits", hits)
    assert relevance.main(["--fold", "tune", "--topic", slug]) == 0
    out = capsys.readouterr().out
    shown = set(re.findall(r"\b\d{4}\.\d{4,5}\b", out))
    assert set(by_fold["tune"]) <= shown
    assert not shown & {i for i, f in folds.items() if f == "check"}
    assert "unlabelled hits in stratum C, tune days (read them): 3" in out


class _Stop(Exception):
    pass


@pytest.mark.parametrize(("argv", "reads_it"), [([], False), (["--holdout"], True)])
def test_the_flagships_first_held_out_set_is_read_only_with_holdout(monkeypatch, argv, reads_it):
    """A plain run measures dev figures; the flagship's held-out set, like the catalog's
    held-out split, is read only when --holdout asks for it."""
    asked: list[object] = []

    def measure(*args, holdout=None, **kwargs):
        asked.append(holdout)
        raise _Stop

    monkeypatch.setattr(relevance, "measure", measure)
    monkeypatch.setattr(relevance, "_frozen_or_refuse", lambda: True)
    with pytest.raises(_Stop):
        relevance.main(argv)
    assert (asked[0] is not None) == reads_it
