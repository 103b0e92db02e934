"""What injects a fault: the protocol each channel's injector meets (the target's own control, a fault proxy, a
restarter), so a gate fixture and a chaos schedule put a `Fault` in force, and take it back, the same way."""

from __future__ import annotations

from typing import Protocol

from rig.faults.vocabulary import Fault
from rig.jsonvalue import JsonObject


class Injector(Protocol):
    """Puts a fault in force and takes it back; `fired` says whether the target ever met it."""

    def inject(self, fault: Fault) -> str | None:
        """Put `fault` in force; a handle to lift it by (None: nothing to lift, as a restart)."""
        ...

    def lift(self, fault: Fault, handle: str | None) -> JsonObject:
        """Take the fault back; what the channel said of it (how often it fired)."""
        ...

    def fired(self, fault: Fault, handle: str | None) -> int | None:
        """How often the fault fired so far (None: the channel cannot say)."""
        ...


class ProxyServer(Protocol):
    """A fault proxy server a plug-in provides (`rig.fault_proxies`): built as `cls(upstream, record_path=…)`,
    served in a background thread of the rig's own process by `start`, which answers its base URL."""

    def start(self, host: str = "127.0.0.1", port: int = 0) -> str: ...

    def stop(self) -> None: ...
