"""Apply a fault through its channel and roll it back: the target's `_chaos` control, a fault proxy, a restarter."""

from __future__ import annotations

import threading
import time
from typing import Any, cast

from pydantic import BaseModel

from rig.errors import CapabilityMissing, ConfigError
from rig.faults import Fault, FaultControl
from rig.target import MISSING_RESTARTER, Restarter, RestartMode


class Applied(BaseModel):
    """A fault in force: when it began, the channel's handle to remove it, what the channel said."""

    fault: Fault
    started_ms: float
    handle: str | None = None
    record: dict[str, Any] = {}


class Injectors:
    """The channels one schedule uses; target faults are tracked so one can be removed while others stay."""

    def __init__(self, adapter: Any = None, restarter: Restarter | None = None,
                 proxies: dict[str, str] | None = None) -> None:
        self.adapter = adapter
        self.restarter = restarter
        self.proxies = proxies or {}
        self._target_faults: dict[str, Fault] = {}
        self._lock = threading.RLock()

    def check(self, fault: Fault) -> None:
        """Raise ConfigError when the channel a fault needs is not there (before any load starts)."""
        if fault.via == "target":
            caps = self.adapter.capabilities() if self.adapter is not None else None
            if caps is None or not getattr(caps, "chaos", False):
                raise ConfigError(f"fault {fault.label} needs the target's chaos control, which it does not offer",
                                  fix="give target.chaos_token_env in rig.yaml, or use a fault proxy instead")
        elif fault.via == "restart":
            if self.restarter is None:
                raise ConfigError("a restart fault needs a restarter", fix=f"set {MISSING_RESTARTER}")
        elif not self._proxy_url(fault):
            raise ConfigError(f"fault {fault.label} needs the {fault.via} URL",
                              fix=f"set proxies.{fault.via} in the schedule or proxy_url on the fault")

    def _proxy_url(self, fault: Fault) -> str | None:
        return fault.proxy_url or self.proxies.get(fault.via)

    def apply(self, fault: Fault) -> Applied:
        began = time.time() * 1000
        if fault.via == "target":
            with self._lock:
                handle = str(self.adapter.chaos("POST", "faults", fault.target_spec())["fault_id"])
                self._target_faults[handle] = fault
            return Applied(fault=fault, started_ms=began, handle=handle)
        if fault.via == "restart":
            if self.restarter is None:
                raise CapabilityMissing("restart", detail="no restarter configured")
            restarted = self.restarter.restart(cast(RestartMode, fault.mode))  # Fault checked the mode
            record = restarted.model_dump(mode="json", exclude_none=True)
            return Applied(fault=fault, started_ms=began, record=record)
        url = self._proxy_url(fault)
        assert url is not None
        rule = fault.link_rule().model_dump() if fault.via == "network" else fault.proxy_rule()
        return Applied(fault=fault, started_ms=began, handle=FaultControl(url).add(rule))

    def rollback(self, applied: Applied) -> dict[str, Any]:
        """Remove the fault; a restart has nothing to roll back."""
        fault = applied.fault
        if fault.via == "target":
            with self._lock:
                self._target_faults.pop(applied.handle or "", None)
                listed = self.adapter.chaos("GET", "faults") or []
                fired = {f["fault_id"]: f.get("fired") for f in listed}
                # The control only clears all faults: put back the others (ours and any set outside the schedule).
                foreign = [f for f in listed if f["fault_id"] not in self._target_faults
                           and f["fault_id"] != applied.handle and not f.get("exhausted")]
                self.adapter.chaos("DELETE", "faults")
                remaining = dict(self._target_faults)
                self._target_faults.clear()
                for fault_other in remaining.values():
                    new = str(self.adapter.chaos("POST", "faults", fault_other.target_spec())["fault_id"])
                    self._target_faults[new] = fault_other
                for f in foreign:
                    spec = {k: f[k] for k in ("point", "mode", "delay_ms", "match") if f.get(k) is not None}
                    if f.get("times") is not None:
                        spec["times"] = f["times"] - (f.get("fired") or 0)
                    self.adapter.chaos("POST", "faults", spec)
            return {"fired": fired.get(applied.handle or "")}
        if fault.via == "restart":
            return {}
        url = self._proxy_url(fault)
        assert url is not None
        control = FaultControl(url)
        count: Any = None
        for rule in control.rules():
            if rule["rule_id"] == applied.handle:
                count = rule.get("fired")
        control.remove(applied.handle or "")
        return {"fired": count}

    def clear_all(self) -> list[str]:
        """Remove every fault this schedule may have left (the schedule's final rollback); says what it cleared."""
        done = []
        if self.adapter is not None and self._target_faults:
            with self._lock:
                while self._target_faults:
                    handle, fault = next(iter(self._target_faults.items()))
                    self.rollback(Applied(fault=fault, started_ms=0, handle=handle))
            done.append("target faults")
        for via, url in self.proxies.items():
            if FaultControl(url).clear():
                done.append(f"{via} rules")
        return done
