"""Waiting on a fake's state: from a test thread, or from the app's own event loop."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Self


class Waitable:
    """For fakes that keep their state under `self._cond` and notify it on every change."""

    _cond: threading.Condition

    def _seen(self) -> str:
        """What the fake has seen so far, for a timeout's message (`_cond` is held)."""
        return ""

    def wait_until(self, predicate: Callable[[Self], bool], seconds: float = 5.0) -> None:
        """Block until predicate(self) holds (for an app running in another thread)."""
        with self._cond:
            if not self._cond.wait_for(lambda: predicate(self), seconds):
                raise TimeoutError(f"condition not met within {seconds}s; {self._seen()}")

    async def async_wait_until(
        self, predicate: Callable[[Self], bool], seconds: float = 5.0
    ) -> None:
        """Await until predicate(self) holds (for an app on this event loop, which a
        blocking wait would stop)."""
        deadline = time.monotonic() + seconds
        while True:
            with self._cond:
                if predicate(self):
                    return
                if time.monotonic() > deadline:
                    raise TimeoutError(f"condition not met within {seconds}s; {self._seen()}")
            await asyncio.sleep(0.005)
