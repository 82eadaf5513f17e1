"""One JSON-lines reader of papers: `bot.services.ingest.read_json_lines`, used by
`paperwatch ingest --file` (through `read_papers`), the bundled sample, and the benches' and
scripts' fixtures."""

from __future__ import annotations

import gzip
import json
from datetime import date

import pytest

from bench.fixtures import json_records, read_paper_file
from bot.services.ingest import read_json_lines, read_papers

RECORDS = [
    {"arxiv_id": "2601.00001", "title": "A", "authors": ["Ada"], "date": "2026-01-05"},
    {"arxiv_id": "2601.00002", "title": "B", "categories": ["cs.LG"], "note": "extra"},
]
TEXT = "\n".join(json.dumps(r) for r in RECORDS[:1]) + "\n\n" + json.dumps(RECORDS[1]) + "\n"


def test_papers_are_read_one_a_line_and_blank_lines_are_skipped():
    papers = read_json_lines(TEXT.splitlines())
    assert [p.arxiv_id for p in papers] == ["2601.00001", "2601.00002"]
    assert papers[0].announced == date(2026, 1, 5) and papers[1].categories == ("cs.LG",)


def test_a_line_that_is_no_paper_is_named_by_its_number_counting_blank_lines():
    lines = [*TEXT.splitlines(), '{"title": "no id"}']
    with pytest.raises(ValueError, match="line 4 is not a paper record"):
        read_json_lines(lines)


def test_a_file_given_to_ingest_is_read_by_the_same_reader():
    assert read_papers(TEXT.encode()) == read_json_lines(TEXT.splitlines())


def test_the_benches_read_plain_and_gzip_files_alike(tmp_path):
    plain, packed = tmp_path / "p.jsonl", tmp_path / "p.jsonl.gz"
    plain.write_text(TEXT, encoding="utf-8")
    with gzip.open(packed, "wt", encoding="utf-8") as f:
        f.write(TEXT)
    assert read_paper_file(plain) == read_paper_file(packed) == read_json_lines(TEXT.splitlines())
    assert list(json_records(packed)) == RECORDS
