"""Identifiers: a short prefix that names the kind, then random hex."""

from __future__ import annotations

import secrets


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def new_trace_id() -> str:
    """A W3C trace id (32 lowercase hex, never all zeros)."""
    while True:
        value = secrets.token_hex(16)
        if value != "0" * 32:
            return value
