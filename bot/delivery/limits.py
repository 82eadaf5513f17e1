"""Per-destination rate limits (aiolimiter leaky buckets), shared by the chat adapters."""

from __future__ import annotations

from aiolimiter import AsyncLimiter


class KeyedLimiter:
    """One bucket per key (a chat or channel) of `rate` messages per second.

    The bucket holds max(1, rate) messages, so at 1/s a chat gets one message, then one
    per second; idle buckets are forgotten once there are many.
    """

    def __init__(self, rate: float, *, max_keys: int = 4096) -> None:
        self.rate = rate
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
            bucket = self._buckets[name] = AsyncLimiter(size, size / self.rate)
        return bucket
