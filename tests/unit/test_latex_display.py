"""Paper LaTeX as a chat shows it (`bot.topics.latex.display`): converted where it is LaTeX,
left alone where it is not, and never a failure."""

from __future__ import annotations

import pytest

from bot.topics.latex import MAX_CONVERTED, display


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (r"Andr\'e Gon\c{c}alves and J\"{o}rg", "André Gonçalves and Jörg"),
        (r"$\omega$-regular games", "ω-regular games"),
        (r"\textbf{Fast} and \emph{exact}", "Fast and exact"),
        (r"50% faster with $\alpha$", "50% faster with α"),  # a bare % is no comment
        (r"~3x and 50% of $n$ & more", "~3x and 50% of n & more"),
        (r"O(n \log n) time, $x^2_{i}$ and \$5", "O(n log n) time, x^2_i and $5"),
        (r"unbalanced {brace and $dollar", "unbalanced brace and dollar"),
        ("عربي $x$ 🚀 zero\u200bwidth", "عربي x 🚀 zero\u200bwidth"),
    ],
)
def test_latex_is_shown_as_unicode(raw: str, shown: str) -> None:
    assert display(raw) == shown


@pytest.mark.parametrize("plain", ["50% faster", "a~b & c {x}", "", "עברית 🚀"])
def test_text_without_a_backslash_or_dollar_is_left_alone(plain: str) -> None:
    assert display(plain) is plain


@pytest.mark.parametrize(
    "hostile", ["{" * 5000, "\\textbf{" * 625, "{" * 900 + "\\x", r"\href{x}{y}", "\\sqrt" * 100]
)
def test_hostile_text_falls_back_to_the_raw_text(hostile: str) -> None:
    # No timing here (a loaded machine makes a timed assertion flaky): what keeps this fast
    # is that text over MAX_CONVERTED is never handed to the LaTeX parser at all.
    shown = display(hostile)
    assert shown == hostile or len(hostile) <= MAX_CONVERTED
