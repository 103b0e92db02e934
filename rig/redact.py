"""Secrets never reach the evidence store, the reports or the logs.

A Redactor knows the exact secrets of a run (passwords, tokens, API keys, the chaos token) and also
masks anything shaped like a credential (bearer headers, `sk-…` keys, token/password fields).
"""

from __future__ import annotations

import re
import threading
from typing import Any

MASK = "«redacted»"
SECRET_KEYS = {"password", "token", "api_key", "authorization", "x-chaos-token", "secret", "secret_key",
               "access_token", "refresh_token", "cookie", "set-cookie"}
_PATTERNS = [
    re.compile(r"(?i)bearer\s+[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?i)(wb_session=)[^;\s]+"),
]


class Redactor:
    """Masks registered secrets and credential-shaped strings in any JSON-like value."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._lock = threading.Lock()

    def add(self, *secrets: str | None) -> None:
        with self._lock:
            self._secrets.update(s for s in secrets if s and len(s) >= 4)

    def text(self, value: str) -> str:
        with self._lock:
            secrets = sorted(self._secrets, key=len, reverse=True)
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        for pattern in _PATTERNS:
            value = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + MASK, value)
        return value

    def value(self, data: Any) -> Any:
        """A redacted deep copy of `data`."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {k: (MASK if str(k).lower() in SECRET_KEYS and v not in (None, "") else self.value(v))
                    for k, v in data.items()}
        if isinstance(data, (list, tuple)):
            return [self.value(v) for v in data]
        return data
