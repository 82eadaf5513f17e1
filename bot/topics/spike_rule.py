"""The spike rule: when a topic's rise is sudden enough to alert on, pure and stdlib only.

Over the `Momentum` figures of `bot.topics.momentum` (windows and coverage are defined
there). It (`is_spike`, defaults in brackets) fires only when all of these hold:

1. volume: `last_28 >= min_count` [10];
2. growth: `(last_28 - prior_28) / prior_28 >= min_growth` [0.5, i.e. +50%]
   (any rise from zero counts as infinite growth);
3. significance against the topic's own history, the `history_weeks` [12] weekly counts
   before the last four weeks. The baseline weekly rate is `mu = (sum + 1) / weeks` (one
   pseudo-paper, so an empty history is not a zero rate) and the weekly variance is
   `max(mu, sample variance)`: Poisson, widened when the history is over-dispersed. The
   z-score of the last four weeks, `(last_28 - 4 mu) / sqrt(4 var)`, must be `>= z` [3.0,
   one-sided p ~ 0.0013 under the normal approximation];
4. not a one-week blip: the same test without the busiest of the last four weeks
   (three weeks against `3 mu`) must also reach `z`.

Fewer than four weeks of history never fire, nor does anything before the index covers
the eight weeks compared (the history is the covered weeks only). After an alert,
`should_alert` stays quiet until the topic re-arms and the cooldown [14 days] has passed;
`rearm` re-arms once the topic has calmed, with hysteresis: growth below
`min_growth / 2` or the z-score below `z / 2` (never while the index does not cover the
weeks compared).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.topics.momentum import COMPARED_WEEKS, Momentum

MIN_HISTORY = 4  # weeks


@dataclass(frozen=True, slots=True)
class SpikeVerdict:
    """Whether a topic's rise is real, and why (or why not), for people and logs."""

    fired: bool
    reason: str
    growth: float | None = None  # as `Momentum.growth`
    z: float = 0.0  # z-score of the last four weeks against the history
    expected: float = 0.0  # papers the history predicts for the last four weeks

    def __bool__(self) -> bool:
        return self.fired


@dataclass(frozen=True, slots=True)
class _Test:
    z: float  # last four weeks
    z_without_peak: float  # the last four weeks minus the busiest of them
    expected: float


def _history_test(m: Momentum, history_weeks: int) -> _Test | None:
    weekly = m.known_weekly
    recent = weekly[-4:]
    history = weekly[-4 - history_weeks : -4] if len(weekly) > 4 else ()
    if len(history) < MIN_HISTORY or len(recent) < 4:
        return None
    mu = (sum(history) + 1) / len(history)
    variance = sum((h - mu) ** 2 for h in history) / (len(history) - 1)
    var = max(mu, variance)
    z4 = (m.last_28 - 4 * mu) / math.sqrt(4 * var)
    z3 = (m.last_28 - max(recent) - 3 * mu) / math.sqrt(3 * var)
    return _Test(z=z4, z_without_peak=z3, expected=4 * mu)


def _pct(growth: float | None) -> str:
    if growth is None:
        return "n/a"
    return "new" if math.isinf(growth) else f"{growth * 100:+.0f}%"


def is_spike(
    m: Momentum,
    *,
    min_count: int = 10,
    min_growth: float = 0.5,
    z: float = 3.0,
    history_weeks: int = 12,
) -> SpikeVerdict:
    """Apply the spike rule of the module docstring to one topic."""
    growth = m.growth
    test = _history_test(m, history_weeks)
    zs, expected = (test.z, test.expected) if test else (0.0, 0.0)

    def verdict(fired: bool, reason: str) -> SpikeVerdict:
        return SpikeVerdict(fired, reason, growth, zs, expected)

    if not m.compared:
        weeks = m.coverage.weeks if m.coverage else 0
        return verdict(False, f"the index covers {weeks} of the {COMPARED_WEEKS} weeks compared")
    if m.last_28 < min_count:
        return verdict(False, f"only {m.last_28} papers in 28 days (needs {min_count})")
    if growth is None or growth < min_growth:
        return verdict(False, f"growth {_pct(growth)} is below {min_growth * 100:+.0f}%")
    if test is None:
        return verdict(False, f"fewer than {MIN_HISTORY} weeks of history")
    if test.z < z:
        return verdict(
            False,
            f"{m.last_28} papers vs {expected:.1f} expected: z={test.z:.1f} below {z:g}",
        )
    if test.z_without_peak < z:
        return verdict(
            False,
            f"one busy week: without it z={test.z_without_peak:.1f} is below {z:g}",
        )
    return verdict(
        True,
        f"{m.last_28} papers vs {expected:.1f} expected ({_pct(growth)}, z={test.z:.1f})",
    )


def should_alert(
    verdict: SpikeVerdict,
    last_alert_at: datetime | None,
    armed: bool,
    now: datetime,
    cooldown_days: int = 14,
) -> bool:
    """Alert on a firing verdict only when armed and out of the cooldown."""
    if not verdict.fired or not armed:
        return False
    return last_alert_at is None or now - last_alert_at >= timedelta(days=cooldown_days)


def rearm(m: Momentum, *, min_growth: float = 0.5, z: float = 3.0, history_weeks: int = 12) -> bool:
    """Whether a topic alerted on has calmed enough to alert again later: growth below
    half of `min_growth`, or the z-score below half of `z` (hysteresis, no flapping).
    Never while the index does not cover the weeks compared: calm is not known then."""
    if not m.compared:
        return False
    growth = m.growth
    if growth is None or growth < min_growth / 2:
        return True
    test = _history_test(m, history_weeks)
    return test is None or test.z < z / 2


@dataclass(frozen=True, slots=True)
class AlertState:
    """Per chat and topic: whether a spike may alert, and when it last did."""

    armed: bool = True
    last_alert_at: datetime | None = None


def advance(
    m: Momentum, state: AlertState, now: datetime, cooldown_days: int = 14
) -> tuple[bool, AlertState]:
    """One check with the default rule: (send an alert now?, the state to store)."""
    verdict = is_spike(m)
    if should_alert(verdict, state.last_alert_at, state.armed, now, cooldown_days):
        return True, AlertState(armed=False, last_alert_at=now)
    if not state.armed and rearm(m):
        return False, AlertState(armed=True, last_alert_at=state.last_alert_at)
    return False, state
