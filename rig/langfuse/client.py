"""A small client of Langfuse's public API: basic auth with the project's keys, one trace at a time."""

from __future__ import annotations

import os

import httpx

from rig.errors import ConfigError, RigError
from rig.langfuse.models import LangfuseTrace


class LangfuseClient:
    """Reads traces from a Langfuse host (cloud or self-hosted) with a project's public and secret key."""

    def __init__(self, host: str, public_key: str, secret_key: str, *, timeout_s: float = 10.0) -> None:
        self.host = host.rstrip("/")
        self._http = httpx.Client(base_url=self.host, auth=(public_key, secret_key), timeout=timeout_s)

    @classmethod
    def from_env(cls, host: str | None = None) -> LangfuseClient:
        """Keys from `LANGFUSE_PUBLIC_KEY`/`LANGFUSE_SECRET_KEY`, host from the argument or `LANGFUSE_HOST`."""
        public, secret = os.environ.get("LANGFUSE_PUBLIC_KEY"), os.environ.get("LANGFUSE_SECRET_KEY")
        host = host or os.environ.get("LANGFUSE_HOST") or os.environ.get("LANGFUSE_BASE_URL")
        if not (public and secret and host):
            raise ConfigError("Langfuse keys or host are not set",
                              fix="export LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY and LANGFUSE_HOST (or pass --host)")
        return cls(host, public, secret)

    def trace(self, trace_id: str) -> LangfuseTrace | None:
        """The trace with its observations, or None while Langfuse does not know it (404)."""
        try:
            resp = self._http.get(f"/api/public/traces/{trace_id}")
        except httpx.HTTPError as exc:
            raise RigError(f"Langfuse at {self.host} is unreachable: {exc}",
                           fix="check LANGFUSE_HOST and that the server is up") from exc
        if resp.status_code == 404:
            return None
        if resp.status_code in (401, 403):
            raise ConfigError(f"Langfuse refused the keys ({resp.status_code})",
                              fix="use the public and secret key of the project the target sends to")
        if resp.status_code != 200:
            raise RigError(f"Langfuse answered {resp.status_code} for trace {trace_id}: {resp.text[:200]}",
                           fix="retry later; check the Langfuse server's logs")
        return LangfuseTrace.model_validate(resp.json())

    def close(self) -> None:
        self._http.close()
