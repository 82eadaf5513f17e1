"""arXiv's papers by id (`bot.ports.PaperLookup`): the export API's ``id_list``, asked
through the polite `ArxivClient`, so its spacing (one request every few seconds across
processes), retries and size cap apply as to every other arXiv request."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence

from bot.arxiv.client import ArxivClient, RequestStamp
from bot.arxiv.feed import FeedError
from bot.arxiv.responses import ArxivHTTPError
from bot.config import Settings
from bot.domain import Paper
from bot.ports import PaperLookupError

log = logging.getLogger(__name__)

PAGE = 50  # ids per request: /follow like asks for at most 50


class ArxivLookup:
    """Papers by id from arXiv's export API (`url`, ARXIV_API_URL)."""

    def __init__(self, client: ArxivClient, url: str) -> None:
        self._client = client
        self._url = url

    async def papers(self, arxiv_ids: Sequence[str]) -> Sequence[Paper]:
        wanted = list(dict.fromkeys(arxiv_ids))
        found: list[Paper] = []
        for start in range(0, len(wanted), PAGE):
            page = wanted[start : start + PAGE]
            params = {"id_list": ",".join(page), "max_results": str(len(page))}
            try:
                fetched = await self._client.get_feed(self._url, params)
            except (ArxivHTTPError, FeedError) as exc:
                log.warning("arxiv lookup failed ids=%d reason=%s", len(page), exc)
                raise PaperLookupError(f"arXiv could not be asked ({exc})") from exc
            feed = fetched.feed
            papers = feed.papers if feed is not None else ()
            found += [p for p in papers if p.arxiv_id in page and p.title.strip()]
        log.info("arxiv lookup asked=%d found=%d", len(wanted), len(found))
        return found


@contextlib.asynccontextmanager
async def paper_lookup(settings: Settings, stamp: RequestStamp) -> AsyncIterator[ArxivLookup]:
    """arXiv's papers by id for /follow like (ARXIV_API_URL): a client of its own (one
    connection), spaced with every other arXiv request of every process by `stamp`."""
    client = ArxivClient(settings, stamp=stamp)
    try:
        yield ArxivLookup(client, settings.arxiv_api_url)
    finally:
        await client.aclose()
