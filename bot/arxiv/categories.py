"""arXiv's subject categories, to check `ARXIV_CATEGORIES` before anything is polled.

The list is arXiv's category taxonomy (https://arxiv.org/category_taxonomy) as of 2026: each
archive and its subject classes. An archive alone ("cs", "quant-ph") is accepted too: arXiv's
RSS serves a whole archive, and some archives (gr-qc, hep-th, quant-ph, ...) have no classes;
so are the legacy archives that old papers still carry (chao-dyn, cmp-lg, ...).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from functools import cache

from rapidfuzz import fuzz, process

_TAXONOMY: dict[str, str] = {
    "cs": "AI AR CC CE CG CL CR CV CY DB DC DL DM DS ET FL GL GR GT HC IR IT LG LO MA MM MS NA "
    "NE NI OH OS PF PL RO SC SD SE SI SY",
    "econ": "EM GN TH",
    "eess": "AS IV SP SY",
    "math": "AC AG AP AT CA CO CT CV DG DS FA GM GN GR GT HO IT KT LO MG MP NA NT OA OC PR QA "
    "RA RT SG SP ST",
    "astro-ph": "CO EP GA HE IM SR",
    "cond-mat": "dis-nn mes-hall mtrl-sci other quant-gas soft stat-mech str-el supr-con",
    "gr-qc": "",
    "hep-ex": "",
    "hep-lat": "",
    "hep-ph": "",
    "hep-th": "",
    "math-ph": "",
    "nlin": "AO CD CG PS SI",
    "nucl-ex": "",
    "nucl-th": "",
    "physics": "acc-ph ao-ph app-ph atm-clus atom-ph bio-ph chem-ph class-ph comp-ph data-an "
    "ed-ph flu-dyn gen-ph geo-ph hist-ph ins-det med-ph optics plasm-ph pop-ph soc-ph space-ph",
    "q-bio": "BM CB GN MN NC OT PE QM SC TO",
    "q-fin": "CP EC GN MF PM PR RM ST TR",
    "quant-ph": "",
    "stat": "AP CO ME ML OT TH",
}
#: Archives arXiv has folded into others; old papers still carry them as categories.
_LEGACY = (
    "acc-phys adap-org alg-geom ao-sci atom-ph bayes-an chao-dyn chem-ph cmp-lg comp-gas dg-ga "
    "funct-an mtrl-th patt-sol plasm-ph q-alg solv-int supr-con"
)


@cache
def _known() -> dict[str, str]:
    """Lower-case name -> arXiv's spelling, for every archive and category."""
    names = [*_TAXONOMY, *_LEGACY.split()]
    for archive, classes in _TAXONOMY.items():
        names += [f"{archive}.{c}" for c in classes.split()]
    return {name.lower(): name for name in names}


def canonical_category(text: str) -> str | None:
    """arXiv's spelling of a category or archive typed in any case ("cs.ai" -> "cs.AI")."""
    return _known().get(text.strip().lower())


def closest_category(text: str) -> str | None:
    """The known category nearest to a misspelt one, when one is clearly nearest."""
    found = process.extractOne(
        text.strip().lower(), list(_known()), scorer=fuzz.ratio, score_cutoff=80
    )
    return _known()[found[0]] if found else None


def check_categories(names: tuple[str, ...]) -> tuple[str, ...]:
    """The categories in arXiv's spelling; ValueError naming the first unknown one."""
    checked = []
    for name in names:
        known = canonical_category(name)
        if known is None:
            near = closest_category(name)
            hint = f"; did you mean {near}?" if near else ", e.g. cs.AI, cs.LG or stat.ML"
            raise ValueError(
                f"{name!r} is not an arXiv category{hint} "
                "(the list: https://arxiv.org/category_taxonomy)"
            )
        checked.append(known)
    return tuple(dict.fromkeys(checked))


def in_categories(categories: Iterable[str], wanted: Collection[str]) -> bool:
    """Whether a paper with `categories` belongs to the `wanted` ones, where an archive
    ("cs") stands for each of its categories (cs.AI, cs.LG, ...)."""
    return any(c in wanted or c.partition(".")[0] in wanted for c in categories)
