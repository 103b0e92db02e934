"""Fault fixtures: what a case arranges so the target meets a fault — the rig's own LLM proxy first, the target's
test-only control only when that is the way — each a `rig.faults.Fault` (the vocabulary chaos schedules speak too),
kept as evidence with the counter that tells whether it took effect (a fault that never happened decides nothing)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rig import events
from rig.errors import CapabilityMissing
from rig.faults import Fault, ProxyInjector, TargetInjector
from rig.jsonvalue import ForeignJson
from rig.target.items import ItemRecording
from rig.verdict import Verdict

SLOW_PROXY_FIRST_MS, SLOW_PROXY_CHUNK_MS = 400.0, 60.0  # a model stream slowed by the rig's LLM proxy
SLOW_SETTINGS = {"token_delay_ms": 25, "first_token_delay_ms": 40}  # the same through a target's own control


@dataclass
class Fixture:
    """A fault the rig arranged for an item: the way it went in (`rig_proxy`, `target_control`, `rig_process`,
    `rig_derived`), what it does, and the proxy rules or target faults whose fired counters tell its effect."""

    kind: str
    what: str
    rule_ids: list[str] = field(default_factory=list)
    fault_ids: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return self.kind


class FaultFixtures(ItemRecording):
    """Faults and runtime settings a case arranges, and how to tell they took effect."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._chaos_used = False  # the target's test-only control was used: reset_chaos clears it
        self._proxy_rules: list[str] = []  # the LLM proxy's rules this case added

    def chaos(self, method: str, path: str, body: ForeignJson | None = None) -> Any:
        self.require("chaos")
        self._chaos_used = True
        return self.adapter.chaos(method, path, body)

    def fault(self, point: str, mode: str, **extra: Any) -> str:
        """A fault at one of the target's own fault points, through its test-only control; its id."""
        fault = Fault(via="target", point=point, mode=mode, **extra)
        fault_id = TargetInjector(self.chaos).inject(fault)
        self.evidence("fault", f"fault {fault.label} injected", {**fault.target_spec(), "fault_id": fault_id})
        self._injected(point, mode)
        return fault_id

    def _proxy_fault(self, fault: Fault) -> str:
        """A fault through the rig's LLM proxy: its rule id, remembered so the case's end removes it."""
        proxy = self.target.model_proxy
        assert proxy is not None
        rule_id = ProxyInjector(proxy).inject(fault)
        self._proxy_rules.append(rule_id)
        return rule_id

    def _injected(self, point: str, mode: str) -> None:
        events.fault_injected.fire(point=point, mode=mode, source=f"case {self.key}", at_ns=time.time_ns())

    @contextmanager
    def settings(self, **values: Any) -> Iterator[None]:
        """Runtime settings changed for a block (restored after it, and again at the end of the case)."""
        before = self.chaos("GET", "settings")
        self.chaos("PUT", "settings", values)
        self.evidence("settings", "runtime settings changed", {"before": before, "changed": values})
        try:
            yield
        finally:
            self.chaos("PUT", "settings", before)

    # -- fault fixtures: the rig's own model proxy first, the target's test-only control only when it is the way
    @contextmanager
    def slow_model(self) -> Iterator[Fixture]:
        """The model's stream slowed for the block (stop and disconnect cases need a run still streaming);
        yields the fixture used (`rig_proxy` or `target_control`), which is kept as evidence."""
        proxy = self.target.model_proxy
        if proxy is not None:
            ids = [self._proxy_fault(Fault(via="llm_proxy", mode="first_token_delay", delay_ms=SLOW_PROXY_FIRST_MS)),
                   self._proxy_fault(Fault(via="llm_proxy", mode="slow_body", delay_ms=SLOW_PROXY_CHUNK_MS))]
            self.evidence("fixture", "model slowed through the rig's LLM proxy",
                          {"fixture": "rig_proxy", "first_token_ms": SLOW_PROXY_FIRST_MS, "chunk_ms": SLOW_PROXY_CHUNK_MS})
            self._injected("model", "slow")
            try:
                yield Fixture("rig_proxy", "the model slowed", rule_ids=ids[:1])
            finally:
                for rule in ids:
                    if rule in self._proxy_rules:
                        proxy.remove(rule)
                        self._proxy_rules.remove(rule)
            return
        if not self.caps.chaos:
            raise CapabilityMissing("slow_model", detail="no target.model_proxy in rig.yaml and no test-only control")
        with self.settings(**SLOW_SETTINGS):
            self.evidence("fixture", "model slowed through the target's test-only control", {"fixture": "target_control"})
            yield Fixture("target_control", "the model slowed")

    def model_fault(self, mode: str, **extra: Any) -> Fixture:
        """One model request answered with a fault (`empty`, `status`, `no_usage` …): through the rig's LLM proxy
        when configured, else the target's own `llm` fault point; returns the fixture used."""
        once = {"times": 1, **extra}
        if self.target.model_proxy is not None:
            fault = Fault(via="llm_proxy", mode=mode, **once)
            rule_id = self._proxy_fault(fault)
            self.evidence("fault", f"model {mode} through the rig's LLM proxy", {
                "fixture": "rig_proxy", **fault.proxy_rule().model_dump(exclude_none=True), "rule_id": rule_id})
            self._injected("model", mode)
            return Fixture("rig_proxy", f"model {mode}", rule_ids=[rule_id])
        return Fixture("target_control", f"model {mode}", fault_ids=[self.fault("llm", mode, **once)])

    def retrieval_fault(self, mode: str, *, times: int | None = 1, delay_ms: float | None = None,
                        status: int = 500) -> Fixture:
        """The target's retrieval tool faulted: `error`, `slow` (delay_ms), `empty` or `reset`.

        Through the rig's LLM proxy where the target embeds its retrieval queries there (`model_proxy.embeddings`),
        else through the target's own `internal_search` fault point; neither is CapabilityMissing."""
        proxy = self.target.model_proxy
        if proxy is not None and proxy.embeddings:
            modes: dict[str, ForeignJson] = {"error": {"mode": "status", "status": status}, "empty": {"mode": "empty"},
                                                "reset": {"mode": "reset"},
                                                "slow": {"mode": "latency", "delay_ms": delay_ms}}
            fault = Fault(via="llm_proxy", endpoint="embeddings", times=times, **modes[mode])
            rule_id = self._proxy_fault(fault)
            self.evidence("fault", f"retrieval {mode} through the rig's LLM proxy (the target's query embeddings)",
                          {"fixture": "rig_proxy", **fault.proxy_rule().model_dump(exclude_none=True),
                           "rule_id": rule_id})
            self._injected("embeddings", mode)
            return Fixture("rig_proxy", f"retrieval {mode} (embeddings)", rule_ids=[rule_id])
        if not self.caps.chaos:
            raise CapabilityMissing("chaos", detail="no test-only control, and no target.model_proxy with embeddings: "
                                    "true through which the rig could fault the target's retrieval")
        spec: ForeignJson = {"times": times} if times else {}
        if delay_ms is not None:
            spec["delay_ms"] = delay_ms
        point_mode = {"error": "error", "slow": "delay", "empty": "empty", "reset": "error"}[mode]
        return Fixture("target_control", f"retrieval {mode}",
                       fault_ids=[self.fault("internal_search", point_mode, **spec)])

    def lift(self, fixture: Fixture) -> None:
        """End a fixture's proxy rules now, before the case goes on (they would otherwise last to its end)."""
        proxy = self.target.model_proxy
        for rule_id in fixture.rule_ids:
            if proxy is not None and rule_id in self._proxy_rules:
                proxy.remove(rule_id)
                self._proxy_rules.remove(rule_id)

    def fired(self, fixture: Fixture) -> int | None:
        """How often the fixture's rules or faults fired so far (None when the fixture cannot say)."""
        proxy = self.target.model_proxy
        if fixture.rule_ids and proxy is not None:
            return sum(proxy.fired(r) for r in fixture.rule_ids)
        if fixture.fault_ids and self.caps.chaos:
            faults = self.adapter.chaos("GET", "faults") or []
            return sum(int(f.get("fired", 0)) for f in faults if str(f.get("fault_id")) in fixture.fault_ids)
        return None

    def took_effect(self, fixture: Fixture, *items: str) -> bool:
        """Whether the fixture reached the target (its fired counter > 0), kept as evidence; when it did not,
        each of `items` is U saying so — a fault that never happened decides nothing."""
        fired = self.fired(fixture)
        e = self.observe(f"{fixture.what}: took effect?", {"fixture": fixture.kind, "what": fixture.what,
                                                          "fired": fired})
        if fired == 0:
            for name in items:
                self.item(name, Verdict.U, f"the fixture ({fixture.what}, {fixture.kind}) did not take effect: it "
                          "fired 0 times, so the target never met the fault", e)
            return False
        return True

    def reset_chaos(self, defaults: ForeignJson | None) -> None:
        """Clear the case's model-proxy rules, and faults and default settings when it used the control."""
        proxy = self.target.model_proxy
        while proxy is not None and self._proxy_rules:
            proxy.remove(self._proxy_rules.pop())
        if not self._chaos_used:
            return
        self.adapter.chaos("DELETE", "faults")
        if defaults:
            self.adapter.chaos("PUT", "settings", defaults)
