"""Waiting for a target to be ready: its readiness path (`target.ready_path`) answering 2xx, polled."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx

from rig.errors import TargetUnreachable

POLL_S = 0.05


def wait_ready(url: str, timeout_s: float, check: Callable[[], None] | None = None, *, path: str = "/readyz") -> None:
    """Poll `{url}{path}` until it answers 2xx or the deadline passes; `check` may raise to stop early
    (a child process that died). The error names what was seen last: nothing listening, something that does not
    speak HTTP, an answer that never came, or the status the target kept answering."""
    deadline = time.monotonic() + max(timeout_s, 0.1)
    last: tuple[str, str | None] = ("no answer", None)
    target = f"{url.rstrip('/')}/{path.lstrip('/')}"
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if check is not None:
                check()
            try:
                response = client.get(target)
                if response.is_success:
                    return
                last = (f"{path} kept answering HTTP {response.status_code}",
                        "the target is up but says it is not ready: check its logs, or give it longer with "
                        "target.ready_timeout in rig.yaml")
            except httpx.ConnectError:
                last = _unconnected(url)
            except httpx.TimeoutException:
                last = (f"it accepts connections but {path} did not answer within 2 s",
                        "the target hangs: check its logs and its worker threads")
            except httpx.TransportError as exc:  # bytes that are not HTTP, a reset before any answer
                last = (f"something answers there, but not in HTTP ({type(exc).__name__}: {exc})",
                        "check the URL's port: another service listens there, or the target speaks TLS (https://)")
            time.sleep(POLL_S)
    cause, fix = last
    raise TargetUnreachable(url, f"not ready after {timeout_s:.0f} s: {cause}", fix=fix)


def _unconnected(url: str) -> tuple[str, str | None]:
    """Why a connection failed: a host name that does not resolve, or nothing listening at an address that does."""
    host = urlsplit(url).hostname or ""
    try:
        socket.getaddrinfo(host, None)
    except (socket.gaierror, UnicodeError) as exc:
        return (f"the host name {host!r} does not resolve ({exc})",
                "check the URL's host name (in compose: the service's name, on the same network as the rig)")
    return ("nothing accepts connections there", None)
