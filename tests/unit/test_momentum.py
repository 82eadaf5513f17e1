"""Topic momentum: the sentence, the sparkline, the spike rule, alert state, the chart."""

from __future__ import annotations

import math
import random
import struct
from datetime import UTC, date, datetime, timedelta

import pytest

from bot.charts import momentum_png
from bot.topics.momentum import (
    BLOCKS,
    Coverage,
    Momentum,
    coverage,
    growth_percent,
    sentence,
    share_text,
    sparkline,
)
from bot.topics.spike_rule import AlertState, SpikeVerdict, advance, is_spike, rearm, should_alert

NOW = datetime(2026, 11, 27, 9, tzinfo=UTC)


def figures(last: int, prior: int, everything: int = 10_000) -> Momentum:
    return Momentum("t", (), last, prior, everything)


def series(*weeks: int) -> Momentum:
    """A topic from weekly counts, oldest first; the windows are derived from them."""
    return Momentum("t", weeks, sum(weeks[-4:]), sum(weeks[-8:-4]), 50_000, date(2026, 11, 27))


# --- the sentence ----------------------------------------------------------------------


def test_the_sentence_of_the_index_page() -> None:
    assert (
        sentence(figures(70, 29))
        == "70 papers in the last four weeks, up 141% on the four weeks before. "
        "0.7% of all new papers."
    )


@pytest.mark.parametrize(
    ("last", "prior", "expected"),
    [
        (22, 25, "22 papers in the last four weeks, down 12% on the four weeks before."),
        (3, 0, "3 papers, new in the last four weeks."),
        (100, 96, "100 papers in the last four weeks, about the same as the four weeks before."),
        (100, 105, "about the same as the four weeks before."),
        (105, 100, "about the same as the four weeks before."),
        (106, 100, "up 6% on the four weeks before."),
        (94, 100, "down 6% on the four weeks before."),
        (1, 2, "1 paper in the last four weeks, down 50% on the four weeks before."),
        (0, 5, "0 papers in the last four weeks, down 100% on the four weeks before."),
        (1234, 100, "1,234 papers in the last four weeks, up 1,134% on the four weeks before."),
    ],
)
def test_trend_wording(last: int, prior: int, expected: str) -> None:
    assert expected in sentence(figures(last, prior))


def test_no_papers_in_either_window() -> None:
    assert sentence(figures(0, 0)) == "No papers in the last eight weeks."


def test_share_is_left_out_without_papers_and_tiny_shares_say_so() -> None:
    assert "of all new papers" not in sentence(figures(0, 5))
    assert sentence(figures(1, 1)).endswith(" <0.1% of all new papers.")
    assert sentence(figures(3, 0, everything=0)) == "3 papers, new in the last four weeks."


@pytest.mark.parametrize(
    ("part", "whole", "expected"),
    [
        (70, 10_000, "0.7%"),
        (5, 10_000, "0.1%"),  # 0.05 rounds half up
        (4, 10_000, "<0.1%"),
        (0, 10_000, "0.0%"),
        (1_500, 10_000, "15.0%"),
        (10_000, 10_000, "100.0%"),
        (1, 0, "0%"),
    ],
)
def test_share_rounding(part: int, whole: int, expected: str) -> None:
    assert share_text(part, whole) == expected


def test_growth_rounds_half_away_from_zero_exactly() -> None:
    assert growth_percent(70, 29) == 141
    assert growth_percent(9, 8) == 13  # 12.5
    assert growth_percent(1, 8) == -88  # -87.5
    assert growth_percent(5, 0) is None
    assert figures(5, 0).growth == math.inf
    assert figures(0, 0).growth is None


# --- coverage: rates only on the history the index holds ------------------------------

AS_OF = date(2026, 11, 27)  # a Friday


def weekdays(first: date, last: date = AS_OF) -> list[date]:
    """arXiv's listing days (Monday to Friday) from `first` to `last`."""
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    return [d for d in days if d.weekday() < 5]


def covered(weeks: int, c: Coverage | None = None, **counts: int) -> Momentum:
    """A topic whose weekly counts are all known (26 weeks), with coverage `c`."""
    weekly = (5,) * 18 + (5, 5, 5, 5) + (15, 16, 14, 17)
    if c is None:
        c = coverage(weekdays(AS_OF - timedelta(days=7 * weeks - 1)), AS_OF, 26)
    last, prior = counts.get("last", sum(weekly[-4:])), counts.get("prior", sum(weekly[-8:-4]))
    return Momentum("t", weekly, last, prior, counts.get("everything", 100), AS_OF, c)


def test_coverage_of_an_empty_index() -> None:
    assert coverage([], AS_OF, 26) == Coverage()


def test_coverage_of_one_day() -> None:
    c = coverage([AS_OF], AS_OF, 26)
    assert c == Coverage(since=AS_OF, days=1, weeks=0)


def test_eight_weeks_of_listings_cover_eight_weeks() -> None:
    start = AS_OF - timedelta(days=55)  # a Saturday: the first listing is the Monday after
    c = coverage(weekdays(start), AS_OF, 26)
    assert (c.weeks, c.days, c.since) == (8, 40, start + timedelta(days=2))
    c = coverage(weekdays(start + timedelta(days=3)), AS_OF, 26)  # Monday's listing missing
    assert c.weeks == 7 and not c.covers(8)
    assert coverage(weekdays(AS_OF - timedelta(days=400)), AS_OF, 26).weeks == 26


def test_a_holiday_week_is_no_break_but_a_week_without_listings_is() -> None:
    days = weekdays(AS_OF - timedelta(days=120))
    friday, next_monday = date(2026, 10, 16), date(2026, 10, 26)
    holiday = [d for d in days if not date(2026, 10, 19) <= d <= date(2026, 10, 22)]
    assert coverage(holiday, AS_OF, 26).weeks == 17  # Friday to Friday: seven days, no break
    outage = [d for d in days if not date(2026, 10, 19) <= d <= date(2026, 10, 23)]
    c = coverage(outage, AS_OF, 26)
    assert (c.since, c.gap_from, c.weeks) == (next_monday, friday, 5)


def test_a_single_old_feed_and_nothing_since() -> None:
    old = date(2024, 11, 28)
    assert coverage([old], old, 26) == Coverage(since=old, days=1, weeks=0)
    later = coverage([old, AS_OF], AS_OF, 26, gap_from=None)
    assert later == Coverage(since=AS_OF, days=1, weeks=0, gap_from=old)
    # A caller that fetched only recent days names the day before the stretch itself.
    assert coverage([AS_OF], AS_OF, 26, gap_from=old).gap_from == old


def test_one_day_indexed_says_only_what_it_holds() -> None:
    c = Coverage(since=date(2024, 11, 28), days=1, weeks=0)
    m = Momentum("t", (0,) * 25 + (21,), 21, 0, 30, date(2024, 11, 28), c)
    assert sentence(m) == (
        "21 papers since 28 Nov 2024 (paperwatch has indexed 1 day so far; rises are shown "
        "after 8 weeks)."
    )
    assert sentence(m, note=False) == "21 papers since 28 Nov 2024."
    assert not m.compared and m.known_weeks == 0 and m.known_weekly == ()
    verdict = is_spike(m)
    assert not verdict and "covers 0 of the 8 weeks" in verdict.reason


def test_five_weeks_indexed_give_a_count_but_no_rate() -> None:
    m = covered(5, last=62, prior=20)
    assert m.coverage is not None and m.coverage.days == 25
    assert sentence(m) == (
        "62 papers in the last four weeks (paperwatch has indexed 25 days so far; rises are "
        "shown after 8 weeks)."
    )
    assert m.known_weekly == (5, 15, 16, 14, 17)
    assert not is_spike(m) and not rearm(m)


def test_a_break_is_named() -> None:
    c = Coverage(since=date(2026, 11, 23), days=5, weeks=0, gap_from=date(2026, 10, 2))
    m = Momentum("t", (0,) * 26, 7, 3, 30, AS_OF, c)
    assert sentence(m) == (
        "7 papers in the last four weeks (paperwatch holds no papers from 03 Oct 2026 to "
        "22 Nov 2026; rises are shown once it has 8 weeks without such a gap)."
    )


def test_nothing_indexed() -> None:
    m = Momentum("t", (0,) * 26, 0, 0, 0, AS_OF, Coverage())
    assert sentence(m).startswith("No papers from arXiv are indexed yet")


def test_once_eight_weeks_are_covered_the_sentence_comes_back() -> None:
    m = covered(8)
    assert m.compared and m.known_weeks == 8
    assert sentence(m) == (
        "62 papers in the last four weeks, up 210% on the four weeks before. "
        "62.0% of all new papers."
    )
    verdict = is_spike(m)
    assert verdict, verdict.reason  # the history is the four covered weeks before
    assert verdict.expected == pytest.approx(4 * 21 / 4)
    full = covered(26)
    assert full.known_weekly == full.weekly
    assert is_spike(full).expected == pytest.approx(4 * (12 * 5 + 1) / 12)


# --- the sparkline -----------------------------------------------------------------


def test_sparkline() -> None:
    assert sparkline(()) == ""
    assert sparkline((0, 0, 0)) == "▁▁▁"
    line = sparkline((0, 1, 5, 10, 20, 40, -3))
    assert len(line) == 7
    assert line[0] == "▁" and line[-1] == "▁"  # zero, and negatives clamp to zero
    assert line[1] != "▁"  # any paper shows
    assert line[5] == "█"
    assert [BLOCKS.index(c) for c in line[:6]] == sorted(BLOCKS.index(c) for c in line[:6])
    assert sparkline([7]) == "█"


# --- the spike rule ----------------------------------------------------------------

BASE = (5,) * 22


def test_a_steady_topic_does_not_fire() -> None:
    verdict = is_spike(series(*(10,) * 26))
    assert not verdict and "growth" in verdict.reason


def _poisson(rng: random.Random, lam: float) -> int:
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def test_poisson_noise_does_not_fire() -> None:
    for seed in range(300):
        rng = random.Random(seed)
        m = series(*(_poisson(rng, 10) for _ in range(26)))
        assert not is_spike(m), (seed, m.weekly, is_spike(m).reason)


def test_over_dispersed_noise_does_not_fire() -> None:
    m = series(*(2, 18) * 11, 18, 12, 18, 14)
    assert m.growth is not None and m.growth >= 0.5
    verdict = is_spike(m)
    assert not verdict and "expected" in verdict.reason


def test_a_genuine_jump_fires() -> None:
    verdict = is_spike(series(*BASE, 15, 16, 14, 17))
    assert verdict.fired and bool(verdict)
    assert verdict.growth is not None and verdict.growth > 1
    assert verdict.z >= 3 and verdict.expected == pytest.approx(4 * 61 / 12)
    assert "expected" in verdict.reason


def test_a_jump_two_weeks_old_already_fires() -> None:
    assert is_spike(series(*BASE, 5, 5, 20, 20))


def test_a_one_week_blip_does_not_fire() -> None:
    verdict = is_spike(series(*BASE, 5, 5, 5, 30))
    assert not verdict and "one busy week" in verdict.reason


def test_a_decay_does_not_fire() -> None:
    assert not is_spike(series(*(20,) * 22, 15, 12, 10, 8))
    after_a_spike = series(*(5,) * 18, 20, 22, 21, 20, 15, 12, 10, 8)
    verdict = is_spike(after_a_spike)
    assert not verdict and "below +50%" in verdict.reason


def test_too_few_papers_do_not_fire() -> None:
    verdict = is_spike(series(*(0,) * 22, 2, 2, 3, 2))
    assert not verdict and "only 9 papers" in verdict.reason


def test_a_new_topic_fires_once_it_has_enough_papers() -> None:
    verdict = is_spike(series(*(0,) * 22, 5, 6, 7, 8))
    assert verdict and "new" in verdict.reason


def test_too_little_history_never_fires() -> None:
    verdict = is_spike(series(1, 1, 1, 20, 20, 20, 20))
    assert not verdict and "history" in verdict.reason


def test_thresholds_are_parameters() -> None:
    m = series(*BASE, 8, 8, 8, 8)  # +60%, z ~ 2.4
    assert not is_spike(m)
    assert is_spike(m, z=2.0)
    assert not is_spike(m, min_count=40, z=2.0)
    assert not is_spike(m, min_growth=1.0, z=2.0)


# --- cooldown and re-arming ----------------------------------------------------------

FIRED = SpikeVerdict(True, "test")
QUIET = SpikeVerdict(False, "test")


def test_should_alert() -> None:
    assert should_alert(FIRED, None, True, NOW)
    assert not should_alert(QUIET, None, True, NOW)
    assert not should_alert(FIRED, None, False, NOW)
    assert not should_alert(FIRED, NOW - timedelta(days=13), True, NOW)
    assert should_alert(FIRED, NOW - timedelta(days=14), True, NOW)
    assert should_alert(FIRED, NOW - timedelta(days=3), True, NOW, cooldown_days=2)


def test_rearm_waits_for_the_topic_to_calm() -> None:
    assert not rearm(series(*BASE, 15, 16, 14, 17))  # still rising
    assert not rearm(series(*BASE, 6, 7, 7, 8))  # +40%: above half the growth bar
    assert rearm(series(*BASE, 5, 6, 5, 6))  # back to normal
    assert rearm(series(*(20,) * 22, 15, 12, 10, 8))  # decaying


def test_an_alert_cycle() -> None:
    rising = series(*BASE, 15, 16, 14, 17)
    calm = series(*(5,) * 26)
    send, state = advance(rising, AlertState(), NOW)
    assert send and state == AlertState(armed=False, last_alert_at=NOW)
    send, state = advance(rising, state, NOW + timedelta(days=20))
    assert not send and not state.armed  # still the same rise: no second alert
    send, state = advance(calm, state, NOW + timedelta(days=21))
    assert not send and state.armed and state.last_alert_at == NOW
    send, _ = advance(rising, state, NOW + timedelta(days=22))
    assert send
    send, _ = advance(rising, AlertState(True, NOW - timedelta(days=1)), NOW)
    assert not send  # armed, but within the cooldown


# --- the chart -----------------------------------------------------------------------


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_chart_is_a_small_png() -> None:
    data = momentum_png(series(*BASE, 15, 16, 14, 17), "RL for LLM Agents")
    assert 1_000 < len(data) < 100_000
    assert _png_size(data) == (800, 400)


def test_the_chart_shows_only_the_covered_weeks() -> None:
    assert _png_size(momentum_png(covered(5), "Five weeks")) == (800, 400)
    assert _png_size(momentum_png(covered(0), "Nothing covered")) == (800, 400)


def test_the_chart_copes_with_empty_and_undated_series() -> None:
    assert _png_size(momentum_png(Momentum("t", (), 0, 0, 0), "Nothing")) == (800, 400)
    undated = Momentum("t", (0, 0, 1, 3), 4, 0, 10)
    assert _png_size(momentum_png(undated, "x" * 200)) == (800, 400)
