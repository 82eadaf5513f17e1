"""Per-destination rate limits for Slack posts (aiolimiter leaky buckets)."""

from __future__ import annotations

from aiolimiter import AsyncLimiter

# Two posts to one destination can arrive closer together than they left (network and
# scheduling jitter; under CPU load posts spaced exactly 1 s apart arrived < 0.9 s apart
# at Slack): keep 10% more between them, as the Telegram limiter does for one chat.
MARGIN = 1.10


class KeyedLimiter:
    """One bucket per key (a chat or channel) of `rate` messages per second, less `margin`.

    The bucket holds max(1, rate) messages, so at 1/s a chat gets one message, then one
    per 1.1 s; idle buckets are forgotten once there are many.
    """

    def __init__(self, rate: float, *, margin: float = MARGIN, max_keys: int = 4096) -> None:
        self.rate = rate
        self.margin = margin
        self._max_keys = max_keys
        self._buckets: dict[str, AsyncLimiter] = {}

    def __call__(self, key: object) -> AsyncLimiter:
        name = str(key)
        bucket = self._buckets.get(name)
        if bucket is None:
            if len(self._buckets) >= self._max_keys:
                self._buckets = {
                    k: b for k, b in self._buckets.items() if not b.has_capacity(b.max_rate)
                }
            size = max(1.0, self.rate)
            bucket = self._buckets[name] = AsyncLimiter(size, size * self.margin / self.rate)
        return bucket
