"""The injectors of the channels a `Fault` goes in by: a fault proxy's rules (LLM, HTTP, network) and the target's
own fault points (its test-only control). A gate case's fixtures and a chaos schedule put faults in force, count
how often they fired and take them back through these; restarts go through the target's restarter."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rig.faults.control import FaultControl
from rig.faults.vocabulary import Fault
from rig.jsonvalue import ForeignJson, JsonObject

ChaosCall = Callable[[str, str, ForeignJson | None], Any]  # the adapter's `chaos(method, path, body)`


class ProxyInjector:
    """Faults as rules of one fault proxy (`via` llm_proxy, http_proxy or network)."""

    def __init__(self, control: FaultControl) -> None:
        self.control = control

    def inject(self, fault: Fault) -> str:
        return self.control.add(fault.link_rule() if fault.via == "network" else fault.proxy_rule())

    def fired(self, fault: Fault, handle: str | None) -> int | None:
        return self.control.fired(handle) if handle else None

    def lift(self, fault: Fault, handle: str | None) -> JsonObject:
        count = self.fired(fault, handle)
        if handle:
            self.control.remove(handle)
        return {"fired": count}


class TargetInjector:
    """Faults at the target's own fault points (`via` target), through its test-only control. The control clears
    only all faults at once, so lifting one puts the others back: this injector's own (under new ids) and any set
    outside it, with what is left of their `times`."""

    def __init__(self, chaos: ChaosCall) -> None:
        self.chaos = chaos
        self.held: dict[str, Fault] = {}  # the faults in force that this injector put there, by the target's id
        self._lock = threading.RLock()

    def inject(self, fault: Fault) -> str:
        with self._lock:
            handle = str(self.chaos("POST", "faults", fault.target_spec())["fault_id"])
            self.held[handle] = fault
            return handle

    def fired(self, fault: Fault, handle: str | None) -> int | None:
        listed = self.chaos("GET", "faults", None) or []
        return next((int(f.get("fired", 0)) for f in listed if str(f.get("fault_id")) == handle), None)

    def lift(self, fault: Fault, handle: str | None) -> JsonObject:
        with self._lock:
            self.held.pop(handle or "", None)
            listed = self.chaos("GET", "faults", None) or []
            fired = {str(f["fault_id"]): f.get("fired") for f in listed}
            foreign = [f for f in listed if str(f["fault_id"]) not in self.held and str(f["fault_id"]) != handle
                       and not f.get("exhausted")]
            self.chaos("DELETE", "faults", None)
            remaining, self.held = dict(self.held), {}
            for other in remaining.values():
                self.inject(other)
            for f in foreign:
                spec = {k: f[k] for k in ("point", "mode", "delay_ms", "match") if f.get(k) is not None}
                if f.get("times") is not None:
                    spec["times"] = f["times"] - (f.get("fired") or 0)
                self.chaos("POST", "faults", spec)
            return {"fired": fired.get(handle or "")}

    def lift_all(self) -> bool:
        """Take back every fault this injector holds; whether it held any."""
        with self._lock:
            held = bool(self.held)
            while self.held:
                handle, fault = next(iter(self.held.items()))
                self.lift(fault, handle)
            return held
