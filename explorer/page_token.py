"""The page token: what a page mounting the explorer hands the browser so that the app's HTTP
routes (server/api.py, server/exports.py) serve the app's own pages only.

A token names the Streamlit session that mounted the page and the day it was issued, signed
with HMAC-SHA256. The key is ``STREAMLIT_SERVER_COOKIE_SECRET`` when set (serve.sh exports one to
every replica, so a token survives a failover to another replica, which never saw the session),
else a random secret of this process. The day makes the token stable for a page's life (a token
that changed on every rerun would remount the explorer each time) and lets it expire.

Plain Python: the adapter mints tokens here, the server checks them (``server.visitors``).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from functools import cache

HEADER = "X-Attention-Token"  # the request header the browser sends the token in
DAY_S = 86_400
VALID_DAYS = 2  # a token works on the day it was issued and the next one


@cache
def _key() -> bytes:
    secret = os.environ.get("STREAMLIT_SERVER_COOKIE_SECRET") or secrets.token_hex(32)
    return hashlib.sha256(b"attention page token\0" + secret.encode()).digest()


def _today(now: float | None = None) -> int:
    return int((time.time() if now is None else now) // DAY_S)


def _mac(session: str, day: int) -> str:
    signed = f"{session}\0{day}".encode()
    return hmac.new(_key(), signed, hashlib.sha256).hexdigest()


def mint(session: str, now: float | None = None) -> str:
    """The token of ``session`` for today: ``session.day.mac``."""
    day = _today(now)
    return f"{session}.{day}.{_mac(session, day)}"


def session_of(token: str | None, now: float | None = None) -> str | None:
    """The session a token names when it is genuine and not expired, else None."""
    if not token or len(token) > 256:
        return None
    session, _, rest = token.rpartition(".")
    session, _, day_text = session.rpartition(".")
    if not session or not day_text.isdigit() or len(day_text) > 9:
        return None
    day = int(day_text)
    if not 0 <= _today(now) - day < VALID_DAYS:
        return None
    return session if hmac.compare_digest(rest, _mac(session, day)) else None
