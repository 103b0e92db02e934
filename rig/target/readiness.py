"""Waiting for a target to be ready: its readiness path (`target.ready_path`) answering 2xx, polled."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from rig.errors import TargetUnreachable

POLL_S = 0.05


def wait_ready(url: str, timeout_s: float, check: Callable[[], None] | None = None, *, path: str = "/readyz") -> None:
    """Poll `{url}{path}` until it answers 2xx or the deadline passes; `check` may raise to stop early
    (a child process that died)."""
    deadline = time.monotonic() + max(timeout_s, 0.1)
    last = "no answer"
    target = f"{url.rstrip('/')}/{path.lstrip('/')}"
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if check is not None:
                check()
            try:
                response = client.get(target)
                if response.is_success:
                    return
                last = f"HTTP {response.status_code}"
            except httpx.TransportError as exc:
                last = type(exc).__name__
            time.sleep(POLL_S)
    raise TargetUnreachable(url, f"{path} not ready after {timeout_s:.0f}s ({last})")
