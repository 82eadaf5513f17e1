"""The arXiv ids of a BibTeX file: what a "papers like these" set is made of when a file is sent.

`bibtex_ids(data)` reads the bytes of a file someone sent (so nothing about it is trusted)
and gives the arXiv ids of its entries, in file order, once each. An entry's id is, in this
order of preference:

1. its ``eprint`` field, when it is an arXiv id (``archivePrefix = {arXiv}`` or none; an
   eprint of another archive, such as ``archivePrefix = {hal}``, is not arXiv's);
2. a ``10.48550/arXiv.<id>`` DOI anywhere in the entry (``doi``, ``url``, ``note``);
3. an ``arxiv.org/abs/<id>`` or ``arxiv.org/pdf/<id>`` URL anywhere in the entry;
4. an ``arXiv:<id>`` or ``arXiv preprint <id>`` mention (``journal``, ``note``, ``howpublished``).

One id per entry: an entry citing another paper in its note keeps its own. A file refused
(`BibtexError`, one line) is larger than `MAX_BIB_BYTES`, binary (a NUL byte, or not text
in UTF-8 or Latin-1 with control characters), or holds no arXiv id. Pure.
"""

from __future__ import annotations

import re

from bot.domain import split_arxiv_id

MAX_BIB_BYTES = 1_000_000  # 1 MB: a reading list of thousands of entries fits

_ID = r"(?:\d{4}\.\d{4,5}|[a-z][a-z-]*(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?"
_ENTRY = re.compile(r"@\s*[A-Za-z]+\s*[{(]")
_FIELD = r"(?:^|[,{{\s]){name}\s*=\s*[{{\"]?\s*([^}}\",\s]+)"
_EPRINT = re.compile(_FIELD.format(name="eprint"), re.IGNORECASE)
_PREFIX = re.compile(_FIELD.format(name="archiveprefix"), re.IGNORECASE)
_DOI = re.compile(rf"10\.48550/arxiv\.({_ID})", re.IGNORECASE)
_URL = re.compile(rf"arxiv\.org/(?:abs|pdf)/({_ID})", re.IGNORECASE)
_MENTION = re.compile(rf"arxiv(?:\s+preprint)?\s*[:\s]\s*({_ID})", re.IGNORECASE)


class BibtexError(ValueError):
    """A file that cannot give a set; the message says why, in one line."""


def check_size(size: int) -> None:
    """`BibtexError` for a file of `size` bytes, too large to read (before fetching it)."""
    if size > MAX_BIB_BYTES:
        raise BibtexError(
            f"That file is too large ({size:,} bytes); "
            f"send a BibTeX file of at most {MAX_BIB_BYTES // 1_000_000} MB."
        )


def decode(data: bytes) -> str:
    """The text of a sent file, or `BibtexError` when it is too large or not text."""
    check_size(len(data))
    if b"\x00" in data:
        raise BibtexError("That file is not text; send a BibTeX (.bib) file.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
        controls = sum(1 for c in text if ord(c) < 32 and c not in "\t\r\n\f")
        if controls or sum(0x80 <= ord(c) < 0xA0 for c in text) > len(text) // 100:
            raise BibtexError("That file is not text; send a BibTeX (.bib) file.") from None
    return text


def _entry_id(entry: str) -> str | None:
    """The arXiv id of one entry's text (module docstring), or None."""
    eprint = _EPRINT.search(entry)
    prefix = _PREFIX.search(entry)
    if eprint and (prefix is None or prefix.group(1).lower() == "arxiv"):
        try:
            return split_arxiv_id(eprint.group(1).removeprefix("arXiv:"))[0]
        except ValueError:
            pass
    for pattern in (_DOI, _URL, _MENTION):
        found = pattern.search(entry)
        if found:
            try:
                return split_arxiv_id(found.group(1))[0]
            except ValueError:
                continue
    return None


def bibtex_ids(data: bytes) -> list[str]:
    """The arXiv ids of a BibTeX file's entries, in order, once each (module docstring)."""
    text = decode(data)
    starts = [m.start() for m in _ENTRY.finditer(text)]
    ids: list[str] = []
    for start, end in zip(starts, [*starts[1:], len(text)][: len(starts)], strict=True):
        found = _entry_id(text[start:end])
        if found is not None and found not in ids:
            ids.append(found)
    if not ids:
        raise BibtexError(
            "I found no arXiv id in that file (eprint, arxiv.org URL or 10.48550/arXiv DOI)."
        )
    return ids
