"""What ./serve.sh needs: Debian's Chromium for the browsers and HAProxy for the balancer."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from scripts.live_app import CHROMIUM


def haproxy_missing() -> bool:
    """No haproxy where serve.sh looks (PATH and /usr/sbin, off a normal user's PATH)."""
    return shutil.which("haproxy", path=f"{os.environ.get('PATH', '')}:/usr/sbin") is None


def _cannot_run() -> list[str]:
    missing = []
    if not Path(CHROMIUM).exists():
        missing.append(f"{CHROMIUM} is not installed")
    # serve.sh installs Debian's haproxy itself when it runs as root where apt-get exists
    if haproxy_missing() and not (os.geteuid() == 0 and shutil.which("apt-get")):
        missing.append("haproxy is not installed and cannot be installed here (root + apt-get)")
    return missing


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    mine = [item for item in items if here in item.path.parents]
    missing = _cannot_run() if mine else []
    if not missing:
        return
    # test.sh installs both; on CI their absence is a failure, elsewhere a skip.
    if os.environ.get("CI"):
        raise pytest.UsageError("; ".join(missing) + ": run ./test.sh, which installs them")
    skip = pytest.mark.skip(reason="; ".join(missing) + " (./test.sh installs them)")
    for item in mine:
        item.add_marker(skip)


@pytest.fixture
def ready_timeout_s() -> float:
    """How long ./serve.sh may take to be ready: longer when it installs haproxy first."""
    return 240.0 if haproxy_missing() else 120.0
