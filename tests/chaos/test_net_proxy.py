"""The network fault proxy in front of the workbench: a delay line, a partition that holds bytes, resets."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from pydantic import ValidationError

from chaos.net_proxy import NetFaultProxy
from rig.adapters import WorkbenchAdapter
from rig.adapters.models import TokenEvent
from rig.errors import RigError
from rig.faults import Fault, FaultControl, LinkFault
from tests.conftest import LiveWorkbench
from tests.workbench.helpers import open_on


@pytest.fixture()
def relay(live: LiveWorkbench) -> Iterator[tuple[NetFaultProxy, WorkbenchAdapter, FaultControl]]:
    up = urlsplit(live.url)
    proxy = NetFaultProxy(up.hostname or "127.0.0.1", up.port or 80)
    address, control = proxy.start()
    adapter = WorkbenchAdapter(f"http://{address}")
    try:
        yield proxy, adapter, FaultControl(control)
    finally:
        adapter.close()
        proxy.stop()


def first_token_ms(live: LiveWorkbench, adapter: WorkbenchAdapter, sid: str) -> float:
    began = time.perf_counter()
    run = adapter.ask(live.auth_a, sid, "eBay 的声誉机制有什么作用？")
    for event in adapter.events(live.auth_a, run.run_id):
        if isinstance(event, TokenEvent):
            return (time.perf_counter() - began) * 1000
    raise AssertionError("no token")


def test_latency_delays_what_comes_from_the_target_and_goes_when_removed(
        live: LiveWorkbench, relay: tuple[NetFaultProxy, WorkbenchAdapter, FaultControl]) -> None:
    proxy, adapter, control = relay
    sid = open_on(live, live.auth_a, ["P32"])
    rule = control.add({"mode": "latency", "delay_ms": 300})
    # the answer to the submit and the first token each come back at least 300 ms late
    assert first_token_ms(live, adapter, sid) >= 600
    fired = [r["fired"] for r in control.rules() if r["rule_id"] == rule]
    assert fired and fired[0] > 0
    assert control.remove(rule) and control.rules() == []  # no rule left: nothing on the link is held back
    moved = sum(link.from_target_bytes for link in proxy.links())
    adapter.documents(live.auth_a, live.corpus.project_id)
    links = proxy.links()
    assert sum(link.from_target_bytes for link in links) > moved  # the relay still carries the traffic
    assert links and all(link.peer.startswith("127.0.0.1:") for link in links)
    assert sum(link.from_target_bytes for link in links) > 0


def test_a_partition_holds_bytes_until_it_is_lifted(live: LiveWorkbench,
                                                    relay: tuple[NetFaultProxy, WorkbenchAdapter, FaultControl]) -> None:
    _, adapter, control = relay
    rule = control.add({"mode": "partition"})
    done = threading.Event()
    result: list[object] = []

    def call() -> None:
        result.append(adapter.documents(live.auth_a, live.corpus.project_id))
        done.set()

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    deadline = time.monotonic() + 30
    while not any(r["rule_id"] == rule and r["fired"] for r in control.rules()):  # a chunk reached the gate
        assert time.monotonic() < deadline, "the request never reached the partition"
        time.sleep(0.02)
    assert not done.is_set()  # held at the gate, not answered
    control.clear()
    assert done.wait(30) and result and isinstance(result[0], list)


def test_reset_breaks_connections_and_refuses_new_ones_while_it_holds(
        live: LiveWorkbench, relay: tuple[NetFaultProxy, WorkbenchAdapter, FaultControl]) -> None:
    proxy, adapter, control = relay
    address = proxy.address
    assert address is not None
    control.add({"mode": "reset"})
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://{address[0]}:{address[1]}/readyz", timeout=5)
    assert any(link.reset for link in proxy.links())
    control.clear()
    assert httpx.get(f"http://{address[0]}:{address[1]}/readyz", timeout=5).status_code == 200


def test_rules_are_checked_where_they_are_written() -> None:
    with pytest.raises(ValidationError, match="delay_ms"):
        LinkFault(mode="latency")
    with pytest.raises(ValidationError, match="no mode"):
        Fault(via="network", mode="cut")
    fault = Fault(via="network", mode="latency", delay_ms=100)
    assert fault.point == "link" and fault.link_rule().direction == "from_target"
    proxy = NetFaultProxy("127.0.0.1", 9)
    _, control = proxy.start()
    try:
        with pytest.raises(RigError, match="delay_ms"):
            FaultControl(control).add({"mode": "latency"})
        assert FaultControl(control).healthy()
    finally:
        proxy.stop()
