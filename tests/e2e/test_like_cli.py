"""`paperwatch follow-like --bib FILE --chat console` as a person runs it: a real process, a
real SQLite file, and a fake arXiv answering the export API for the papers not stored."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_cli import paperwatch
from tests.support.arxiv_server import Canned, FakeArxiv, serve_fake_arxiv

API = Path(__file__).parents[1] / "fixtures" / "arxiv" / "api"
ATTENTION = API / "dcondrey_zotero-validate" / "arxiv_id_list_1706.03762.xml"
BIB = b"""@inproceedings{vaswani2017attention,
  title={Attention is all you need},
  author={Vaswani, Ashish and Shazeer, Noam},
  eprint={1706.03762}, archivePrefix={arXiv}, primaryClass={cs.CL}
}
"""


@pytest.fixture
def arxiv() -> Iterator[FakeArxiv]:
    with serve_fake_arxiv() as fake:
        fake.add("/api/query", Canned(ATTENTION.read_bytes()))
        yield fake


def env(arxiv: FakeArxiv) -> dict[str, str]:
    return {"ARXIV_API_URL": arxiv.url + "/api/query", "ARXIV_MIN_REQUEST_INTERVAL": "0"}


def test_follow_like_a_bib_file_then_the_console_lists_it(tmp_path: Path, arxiv: FakeArxiv) -> None:
    (tmp_path / "reading.bib").write_bytes(BIB)
    result = paperwatch(
        "follow-like", "--bib", "reading.bib", "--chat", "console", cwd=tmp_path, env=env(arxiv)
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Now following Papers like “Attention Is All You Need”")
    assert "(1 paper; match score above 0." in result.stdout
    assert [r.query["id_list"] for r in arxiv.requests] == [["1706.03762"]]
    listed = paperwatch("console", cwd=tmp_path, stdin="/list\n", env=env(arxiv))
    assert "• Papers like “Attention Is All You Need” (match score above 0." in listed.stdout
    again = paperwatch("follow-like", "1706.03762v5", cwd=tmp_path, env=env(arxiv))
    assert again.returncode == 0 and "already follows Papers like" in again.stdout
    assert len(arxiv.requests) == 1  # the stored set is reused: arXiv is not asked again


BAD_INPUT = [
    (b"\x00\x01\x02 binary", ["--bib", "{}"], "That file is not text"),
    (b"@book{x, title={No preprint}}", ["--bib", "{}"], "I found no arXiv id"),
    (b"%" * 1_000_001, ["--bib", "{}"], "That file is too large (1,000,001 bytes)"),
    (BIB, ["--bib", "missing.bib"], "cannot read missing.bib"),
    (BIB, ["--bib", "{}", "1706.03762"], "give a BibTeX file (--bib FILE) or arXiv ids"),
    (BIB, ["2609.99999"], "arXiv has no paper 2609.99999."),
    (BIB, ["not-an-id"], '"not-an-id" is not an arXiv id'),
]


def test_bad_input_is_one_line_and_changes_nothing(tmp_path: Path, arxiv: FakeArxiv) -> None:
    """Each refused input in turn on one database (a process each), then the console shows
    that none of them made a set."""
    for n, (content, args, says) in enumerate(BAD_INPUT):
        name = f"x{n}.bib"
        (tmp_path / name).write_bytes(content)
        typed = [arg.format(name) for arg in args]
        result = paperwatch("follow-like", *typed, cwd=tmp_path, env=env(arxiv))
        assert result.returncode == 2, says
        assert result.stderr.startswith("paperwatch: ") and says in result.stderr
        assert result.stderr.count("\n") == 1 and result.stdout == ""
    listed = paperwatch("console", cwd=tmp_path, stdin="/list\n", env=env(arxiv))
    assert listed.returncode == 0 and "Papers like" not in listed.stdout
