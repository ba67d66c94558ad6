"""Who may use the app's HTTP routes, and how fast: the app's own pages only (a page token,
``explorer.page_token``, and same-origin headers), each page session within a request rate.

``admit(request)`` answers the session id a request is charged to, or raises ``Refused`` with
the status and a plain sentence the route sends as JSON. The browser's own headers do most of
the origin check: a fetch from another site carries an ``Origin`` that is not this host and
``Sec-Fetch-Site: cross-site``; a script without a browser has no page token.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from urllib.parse import urlsplit

from starlette.requests import Request

from explorer.page_token import HEADER, session_of

# The explorer's busiest page (Beyond the weights on SmolLM2, a short sentence) asks for every
# layer's three parts at once: 90 requests; a visitor trying three sentences in a few seconds
# asks for ~270. A burst of BURST, then RATE a second, holds that with room to spare, and a
# script flooding with a copied token past it is answered 429 at once, costing no work.
BURST = 300
RATE = 20.0
MAX_SESSIONS = 4096  # buckets kept (the least recently used go first): memory bounded


class Refused(Exception):
    """A request the routes do not serve: ``status`` and a plain ``message`` for the visitor."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Buckets:
    """A token bucket per session: ``burst`` requests at once, refilled at ``rate`` a second."""

    def __init__(self, burst: int = BURST, rate: float = RATE, sessions: int = MAX_SESSIONS):
        self.burst, self.rate, self.sessions = burst, rate, sessions
        self._held: OrderedDict[str, tuple[float, float]] = OrderedDict()  # -> (tokens, when)
        self._lock = threading.Lock()

    def take(self, session: str, now: float | None = None) -> bool:
        """Spend one request of ``session``'s bucket; False when it is empty."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, when = self._held.pop(session, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - when) * self.rate)
            self._held[session] = (tokens - 1, now) if tokens >= 1 else (tokens, now)
            while len(self._held) > self.sessions:
                self._held.popitem(last=False)  # a forgotten session starts full again
            return tokens >= 1


BUCKETS = Buckets()  # this process's buckets, shared by every route


def same_origin(request: Request) -> bool:
    """The request did not come from another site's page (as far as its browser says)."""
    if request.headers.get("sec-fetch-site", "").lower() == "cross-site":
        return False
    origin = request.headers.get("origin")
    if origin is None:
        return True  # not a browser's cross-origin fetch: those always send Origin
    return urlsplit(origin).netloc.lower() == request.headers.get("host", "").lower()


def admit(request: Request, buckets: Buckets = BUCKETS) -> str:
    """The page session ``request`` is charged to; ``Refused`` (403, 429) when it is not
    served: another site's page, no valid page token, or its session past its request rate."""
    if not same_origin(request):
        raise Refused(403, "This address serves the app's own pages only.")
    session = session_of(request.headers.get(HEADER))
    if session is None:
        raise Refused(403, "This request has no valid page token: reload the page.")
    if not buckets.take(session):
        raise Refused(429, "Too many requests from this page: wait a few seconds.")
    return session
