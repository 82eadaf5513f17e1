"""Regenerate docs/momentum-example.png, the chart shown in the README.

    .venv/bin/python -m scripts.momentum_example

The weekly counts are illustrative, chosen to match the figures of the index page
that inspired paperwatch: 70 papers in the last four weeks against 29 before, out of
10,000 new papers. The sentence and the chart are paperwatch's own rendering.
"""

from __future__ import annotations

from datetime import date

from bench.fixtures import ROOT
from bot.charts import momentum_png
from bot.topics.momentum import Momentum, sentence, sparkline
from bot.topics.spike_rule import is_spike

WEEKLY = (3, 4, 3, 5, 4, 4, 5, 3, 4, 5, 4, 6, 5, 4, 5, 6, 5, 6, 6, 7, 8, 8, 15, 17, 18, 20)


def main() -> None:
    m = Momentum(
        tag="rl-for-llm-agents",
        weekly=WEEKLY,
        last_28=sum(WEEKLY[-4:]),
        prior_28=sum(WEEKLY[-8:-4]),
        all_last_28=10_000,
        as_of=date(2026, 9, 28),
    )
    out = ROOT / "docs" / "momentum-example.png"
    out.write_bytes(momentum_png(m, "RL for LLM Agents"))
    print(sentence(m))
    print(sparkline(m.weekly))
    print(is_spike(m).reason)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
