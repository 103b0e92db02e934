"""The HTTP fault proxy in front of the workbench itself: the rig's adapter sees each fault as a client would."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from chaos.http_proxy import HttpFaultProxy
from rig.adapters import WorkbenchAdapter
from rig.adapters.models import TokenEvent
from rig.errors import TargetHTTPError, TargetUnreachable
from rig.faults import FaultControl
from tests.conftest import LiveWorkbench
from tests.workbench.helpers import open_on

SEARCH = "/api/v1/tools/internal_search"


@pytest.fixture()
def fronted(live: LiveWorkbench) -> Iterator[tuple[WorkbenchAdapter, FaultControl]]:
    proxy = HttpFaultProxy(live.url)
    url = proxy.start()
    adapter = WorkbenchAdapter(url)
    try:
        yield adapter, FaultControl(url)
    finally:
        adapter.close()
        proxy.stop()


def search(live: LiveWorkbench, adapter: WorkbenchAdapter) -> float:
    began = time.perf_counter()
    adapter.search(live.auth_a, live.corpus.project_id, ["reputation badge"], [live.corpus.doc("P32")])
    return (time.perf_counter() - began) * 1000


def test_pass_through_keeps_streams_and_bodies(live: LiveWorkbench, fronted: tuple[WorkbenchAdapter, FaultControl]
                                               ) -> None:
    adapter, control = fronted
    sid = open_on(live, live.auth_a, ["P32"])
    run = adapter.ask(live.auth_a, sid, "eBay 的声誉机制有什么作用？")
    events = list(adapter.events(live.auth_a, run.run_id))
    assert events[-1].event == "done" and any(isinstance(e, TokenEvent) for e in events)
    log = control.requests()
    assert {r.path for r in log} >= {f"/api/v1/sessions/{sid}/messages", f"/api/v1/runs/{run.run_id}/events"}
    assert all(r.faults == [] for r in log)


def test_latency_on_one_path_only(live: LiveWorkbench, fronted: tuple[WorkbenchAdapter, FaultControl]) -> None:
    adapter, control = fronted
    control.add({"mode": "latency", "delay_ms": 250, "path": SEARCH, "method": "POST"})
    assert search(live, adapter) >= 250  # a delay is a floor, whatever else the machine is doing
    adapter.documents(live.auth_a, live.corpus.project_id)
    faults = {r.path.split("?")[0]: r.faults for r in control.requests()}  # the proxy's own account of each request
    assert faults[SEARCH] == ["latency"] and faults[f"/api/v1/projects/{live.corpus.project_id}/documents"] == []


def test_status_and_reset_reach_the_client(live: LiveWorkbench, fronted: tuple[WorkbenchAdapter, FaultControl]) -> None:
    adapter, control = fronted
    control.add({"mode": "status", "status": 503, "path": SEARCH, "times": 1})
    with pytest.raises(TargetHTTPError) as err:
        search(live, adapter)
    assert err.value.status == 503
    control.add({"mode": "reset", "path": SEARCH, "times": 1})
    with pytest.raises(TargetUnreachable):
        search(live, adapter)
    search(live, adapter)  # both rules spent: the next call goes through
    assert [r["fired"] for r in control.rules()] == [1, 1]


def test_a_cut_body_is_an_incomplete_message(live: LiveWorkbench, fronted: tuple[WorkbenchAdapter, FaultControl]
                                             ) -> None:
    _, control = fronted
    control.add({"mode": "cut", "after_chunks": 0, "path": "/api/v1/projects/*/documents", "method": "GET"})
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(f"{control.url}/api/v1/projects/{live.corpus.project_id}/documents",
                  headers={"authorization": f"Bearer {live.auth_a.token}"})
