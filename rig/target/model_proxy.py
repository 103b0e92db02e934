"""The rig's own fault fixture in front of a target's model: the LLM fault proxy at the address the
target's OpenAI-compatible base URL points to (`target.model_proxy` in rig.yaml).

The rig serves it in a thread of its own process, from the server the chaos plug-in registers as
`rig.fault_proxies` `llm` (so the rig imports nothing of it by name), or attaches to one that already runs beside
the target (`control:`), and drives it over its published control API (`/_rig/rules`, `/_rig/requests`) with
the one fault control client. Cases use it to slow a model's stream, empty an answer, fail a
request or drop usage on any target whose model endpoint can be pointed at it, and — where the target embeds
its retrieval queries through it — to fault the target's retrieval, without a test-only control in the target.
A fixture's effect is read back (`fired()`, `requests()`) before an item decides on it.
"""

from __future__ import annotations

from pathlib import Path

from rig.config import ModelProxyConfig
from rig.errors import ConfigError, RigError
from rig.faults import FaultControl, ProxyServer
from rig.plugins import fault_proxy
from rig.target.readiness import wait_ready


class ModelProxy(FaultControl):
    """A running LLM fault proxy this rig started (or a sidecar it drives); its rules change through the one fault
    control client (`rig.faults.FaultControl`: `add()`, `remove()`, `fired()`, `requests()` …) while it runs."""

    def __init__(self, config: ModelProxyConfig, log_dir: Path) -> None:
        super().__init__(config.url)
        self.config = config
        self.record_path = log_dir / "model-proxy.jsonl"
        self.server: ProxyServer | None = None

    @property
    def embeddings(self) -> bool:
        """The target embeds its retrieval queries through this proxy (`embeddings: true` in rig.yaml)."""
        return self.config.embeddings

    def start(self, timeout_s: float = 30.0) -> ModelProxy:
        if self.config.control:  # a sidecar someone else runs: check it answers, never start or stop it
            wait_ready(self.config.url, timeout_s, path="/_rig/healthz")
            return self
        assert self.config.listen is not None and self.config.upstream is not None
        host, _, port = self.config.listen.rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"target.model_proxy.listen {self.config.listen!r} is not HOST:PORT",
                              fix="for example listen: 127.0.0.1:18099 (the target's model base URL: http://127.0.0.1:18099/v1)")
        self.record_path.parent.mkdir(parents=True, exist_ok=True)
        server: ProxyServer = fault_proxy("llm")(self.config.upstream, record_path=self.record_path)
        try:
            server.start(host, int(port))
        except OSError as exc:
            raise RigError(f"the model proxy cannot listen on {self.config.listen}: {exc}",
                           fix="check target.model_proxy.listen (is the port free?)") from None
        self.server = server
        wait_ready(self.config.url, timeout_s, path="/_rig/healthz")
        return self

    def stop(self) -> None:
        """Stop the proxy this rig started (a sidecar is never stopped)."""
        if self.server is not None:
            self.server.stop()
        self.server = None
