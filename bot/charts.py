"""A small PNG of a topic's weekly counts, for the adapters that can send images.

Rendering takes ~100 ms of CPU: call `momentum_png` off the event loop
(`await asyncio.to_thread(momentum_png, m, title)`). Each call builds its own
`matplotlib.figure.Figure` on the Agg canvas: no pyplot, no global state shared
between calls or threads.

matplotlib is an imaging library, so this sits outside the pure core (the topics-pure
contract forbids it there): `handlers.trends.momentum_chart` draws with it for the
adapters, and `scripts.momentum_example` for the README.
"""

from __future__ import annotations

import io
from datetime import timedelta

from bot.topics.momentum import Momentum

WIDTH_PX, HEIGHT_PX, DPI = 800, 400, 100
BAR = "#4c72b0"
LAST = "#dd8452"  # the last four weeks
PRIOR = "#bbbbbb"  # the four weeks before


def _labels(m: Momentum) -> list[str]:
    """The last day of each week ("Nov 27"), or weeks ago ("-3w") without a date."""
    n = len(m.known_weekly)
    if m.as_of is None:
        return [f"-{n - 1 - i}w" if i < n - 1 else "now" for i in range(n)]
    return [
        (m.as_of - timedelta(days=7 * (n - 1 - i))).strftime("%b %d").replace(" 0", " ")
        for i in range(n)
    ]


def _short(title: str, limit: int = 48) -> str:
    return title if len(title) <= limit else title[: limit - 1].rstrip() + "…"


def momentum_png(m: Momentum, title: str) -> bytes:
    """Weekly counts of the weeks the index covers as bars, the last four weeks and the
    four before them marked (each window once the index covers it)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    fig = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    weekly = m.known_weekly
    n = len(weekly)
    positions = list(range(n))
    colours = [LAST if i >= n - 4 else PRIOR if i >= n - 8 else BAR for i in positions]
    ax.bar(positions, weekly, color=colours, width=0.8)
    if n >= 4:
        ax.axvspan(n - 4.5, n - 0.5, color=LAST, alpha=0.12, lw=0)
    if n >= 8:
        ax.axvspan(n - 8.5, n - 4.5, color=PRIOR, alpha=0.15, lw=0)
    labels = _labels(m)
    step = max(1, n // 8)
    ticks = [i for i in positions if (n - 1 - i) % step == 0]
    ax.set_xticks(ticks, [labels[i] for i in ticks], fontsize=8)
    ax.set_xlim(-0.6, max(n, 1) - 0.4)
    ax.set_ylim(0, max([*weekly, 1]) * 1.15)
    ax.set_ylabel("papers per week", fontsize=9)
    ax.tick_params(axis="y", labelsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.set_title(_short(title), fontsize=11, loc="left", pad=18)
    windows = [
        Patch(color=LAST, label=f"last four weeks: {m.last_28:,}"),
        Patch(color=PRIOR, label=f"four weeks before: {m.prior_28:,}"),
    ]
    ax.legend(
        handles=windows[: 2 if n >= 8 else 1 if n >= 4 else 0],
        loc="lower right",
        bbox_to_anchor=(1.0, 1.0),
        ncols=2,
        fontsize=8,
        frameon=False,
    )
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=DPI, metadata={"Software": None})
    return out.getvalue()
