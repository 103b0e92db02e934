"""A free TCP port on loopback, for the servers the rig starts (metrics, the embedded target, Locust)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port nothing listens on now (the OS picks it; the caller binds it soon after)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
