"""Paper text as a chat shows it: LaTeX accents, symbols and simple markup as Unicode.

Titles, author names and abstracts arrive with LaTeX in them (`Andr\\'e`, `$\\omega$`,
`\\textbf{...}`). They are stored as they came (`bot.arxiv.fields`: stored text is never
repaired); `display` converts them for showing, with pylatexenc's `LatexNodes2Text`. Formulas
stay readable: `$O(n^2)$` shows as "O(n^2)", `$\\alpha \\leq \\beta$` as "α ≤ β".

Paper text is not LaTeX, though, and it is hostile, so the conversion is guarded:

- only text with a backslash or a `$` is converted; anything else is returned unchanged;
- characters that are special in LaTeX but plain in an abstract (`%` starts a comment and would
  swallow the rest of "50% faster"; `~` is a non-breaking space, `&` an alignment tab) are kept
  as they are;
- a space after a macro (`\\log n`) is kept, where LaTeX would swallow it ("logn");
- text longer than `MAX_CONVERTED` is not converted (no real title, name or TL;DR is that long;
  a 5,000-character hostile title stays fast), and any failure of the parser (unbalanced braces
  nested too deep, a macro missing its arguments) shows the raw text: `display` never raises;
- the result is one line (LaTeX line breaks become spaces); right-to-left text, emoji and
  zero-width characters pass through as they are (renderers deal with those).
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

MAX_CONVERTED = 1000

# pylatexenc reports each tolerated parse error as a log record; paper text has plenty of them
# and they are not ours to act on (nor to land in the terminal chat's prompt).
logging.getLogger("pylatexenc").setLevel(logging.CRITICAL)

# Private-use stand-ins for what must come out as typed (hostile text holding one of these
# characters shows the original character in its place: harmless).
_KEEP = {"%": "\ue000", "~": "\ue001", "&": "\ue002"}
_BARE_SPECIAL = re.compile(r"(?<!\\)[%~&]")
_SPACE_AFTER_MACRO = re.compile(r"(\\[A-Za-z]+) +(?=[A-Za-z0-9(\\])")


def _converter() -> LatexNodes2Text:
    context = get_default_latex_context_db().filter_context()
    context.add_context_category(
        "paperwatch",
        prepend=True,
        macros=[
            MacroTextSpec("texttt", simplify_repl="%s"),
            MacroTextSpec("LaTeX", simplify_repl="LaTeX"),
            MacroTextSpec("TeX", simplify_repl="TeX"),
            MacroTextSpec("cite", simplify_repl=""),  # not "<cit.>"
        ],
    )
    return LatexNodes2Text(latex_context=context, math_mode="text")


_CONVERTER = _converter()


@lru_cache(maxsize=8192)  # one paper's title and names, shown to every chat it goes to
def display(text: str) -> str:
    """`text` with its LaTeX converted to Unicode, or `text` itself when it holds none, is
    too long, or does not convert."""
    if ("\\" not in text and "$" not in text) or len(text) > MAX_CONVERTED:
        return text
    source = _BARE_SPECIAL.sub(lambda m: _KEEP[m.group()], text)
    source = _SPACE_AFTER_MACRO.sub(r"\1{} ", source)
    try:
        converted = _CONVERTER.latex_to_text(source)
    except Exception:  # a parser failure on hostile text: show it as it came
        return text
    for char, stand_in in _KEEP.items():
        converted = converted.replace(stand_in, char)
    converted = " ".join(converted.split())
    return converted or text
