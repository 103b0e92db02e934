"""The LLM fault proxy's embeddings route: a target's retrieval faulted where it embeds its queries.

Rules with `endpoint: embeddings` fire on `/v1/embeddings` only (chat rules never do, and the other way round);
a held request that the client abandons is logged `client_gone`, which is how the rig sees a target's stop
reach its encode stage.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from chaos.llm_proxy import LlmFaultProxy
from rig.faults import FaultControl
from rig.waiting import wait_until


@pytest.fixture()
def proxy() -> Iterator[tuple[str, FaultControl]]:
    p = LlmFaultProxy("mock")
    url = p.start()
    try:
        yield url, FaultControl(url)
    finally:
        p.stop()


def _embed(url: str, text: str = "买家保护", timeout_s: float = 10.0) -> httpx.Response:
    return httpx.post(f"{url}/v1/embeddings", json={"model": "rig-mock-embed", "input": [text]}, timeout=timeout_s)


def test_an_embeddings_rule_fails_exactly_the_requests_it_names(proxy: tuple[str, FaultControl]) -> None:
    url, control = proxy
    control.add({"endpoint": "embeddings", "mode": "status", "status": 500, "times": 1})
    control.add({"mode": "empty"})  # a chat rule: must not touch embeddings
    first, second = _embed(url), _embed(url)
    assert first.status_code == 500 and "injected" in first.text
    assert second.status_code == 200 and len(second.json()["data"][0]["embedding"]) > 0
    log = control.requests()
    assert [(r.endpoint, r.outcome) for r in log] == [("embeddings", "injected_status"), ("embeddings", "ok")]
    fired = {r["fault"]["endpoint"]: r["fired"] for r in control.rules()}
    assert fired == {"embeddings": 1, "chat": 0}


def test_empty_and_reset_embeddings(proxy: tuple[str, FaultControl]) -> None:
    url, control = proxy
    control.add({"endpoint": "embeddings", "mode": "empty", "times": 1})
    assert _embed(url).json()["data"] == []
    control.add({"endpoint": "embeddings", "mode": "reset", "times": 1})
    with pytest.raises(httpx.TransportError):
        _embed(url)
    assert [r.outcome for r in control.requests()] == ["empty", "reset"]


def test_a_held_request_the_client_abandons_is_seen_gone(proxy: tuple[str, FaultControl]) -> None:
    """A client that gives up (a cancelled task closes its connection) is logged as gone well before the delay ends."""
    url, control = proxy
    control.add({"endpoint": "embeddings", "mode": "latency", "delay_ms": 20000, "times": 1})
    host, port = url.removeprefix("http://").split(":")
    body = b'{"model": "m", "input": ["x"]}'
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(b"POST /v1/embeddings HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                     b"content-length: %d\r\n\r\n%s" % (len(body), body))
        assert wait_until(lambda: control.rules()[0]["fired"] == 1, 10.0)
        left = time.monotonic()
    gone = wait_until(lambda: [r for r in control.requests() if r.outcome == "client_gone"], 10.0)
    assert gone, control.requests()
    assert gone[0].total_ms is not None and gone[0].total_ms < 20000
    assert time.monotonic() - left < 10.0


def test_a_held_request_that_is_waited_for_is_answered(proxy: tuple[str, FaultControl]) -> None:
    url, control = proxy
    control.add({"endpoint": "embeddings", "mode": "latency", "delay_ms": 300, "times": 1})
    began = time.monotonic()
    assert _embed(url).status_code == 200
    assert time.monotonic() - began >= 0.3
    assert control.requests()[0].outcome == "ok"


def test_the_mock_lists_more_than_one_model(proxy: tuple[str, FaultControl]) -> None:
    url, _ = proxy
    ids = [m["id"] for m in httpx.get(f"{url}/v1/models", timeout=10).json()["data"]]
    assert len(ids) >= 2 and "rig-mock" in ids
