"""Apply a fault through its channel and roll it back: the target's `_chaos` control, a fault proxy, a restarter."""

from __future__ import annotations

import time
from typing import Any, cast

from pydantic import BaseModel

from rig.errors import CapabilityMissing, ConfigError
from rig.faults import Fault, FaultControl, Injector, ProxyInjector, TargetInjector
from rig.target import MISSING_RESTARTER, Restarter, RestartMode


class Applied(BaseModel):
    """A fault in force: when it began, the channel's handle to remove it, what the channel said."""

    fault: Fault
    started_ms: float
    handle: str | None = None
    record: dict[str, Any] = {}


class Injectors:
    """The channels one schedule uses, each an injector of `rig.faults` (the same the gate's fixtures use); target
    faults are tracked so one can be removed while others stay."""

    def __init__(self, adapter: Any = None, restarter: Restarter | None = None,
                 proxies: dict[str, str] | None = None) -> None:
        self.adapter = adapter
        self.restarter = restarter
        self.proxies = proxies or {}
        self.target = TargetInjector(adapter.chaos) if adapter is not None else None

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

    def _injector(self, fault: Fault) -> Injector:
        if fault.via == "target":
            if self.target is None:
                raise CapabilityMissing("chaos", detail="no adapter to reach the target's fault points")
            return self.target
        url = self._proxy_url(fault)
        assert url is not None
        return ProxyInjector(FaultControl(url))

    def apply(self, fault: Fault) -> Applied:
        began = time.time() * 1000
        if fault.via == "restart":
            if self.restarter is None:
                raise CapabilityMissing("restart", detail="no restarter configured")
            restarted = self.restarter.restart(cast(RestartMode, fault.mode))  # Fault checked the mode
            return Applied(fault=fault, started_ms=began, record=restarted.model_dump(mode="json", exclude_none=True))
        return Applied(fault=fault, started_ms=began, handle=self._injector(fault).inject(fault))

    def rollback(self, applied: Applied) -> dict[str, Any]:
        """Remove the fault, saying how often it fired; a restart has nothing to roll back."""
        if applied.fault.via == "restart":
            return {}
        return self._injector(applied.fault).lift(applied.fault, applied.handle)

    def clear_all(self) -> list[str]:
        """Remove every fault this schedule may have left (the schedule's final rollback); says what it cleared."""
        done = []
        if self.target is not None and self.target.lift_all():
            done.append("target faults")
        for via, url in self.proxies.items():
            if FaultControl(url).clear():
                done.append(f"{via} rules")
        return done
