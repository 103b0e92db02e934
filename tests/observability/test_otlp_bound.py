"""The span receiver bounds what one export may cost: a small gzip that unpacks to 400 MiB is refused 413 without
being unpacked whole, and the receiver goes on taking exports."""

from __future__ import annotations

import gzip
import tracemalloc

import httpx

from rig.telemetry.otlp_receiver import MAX_EXPORT_BYTES, OtlpReceiver


def test_a_gzip_bomb_is_refused_and_the_receiver_goes_on() -> None:
    bomb = gzip.compress(b"\0" * (400 * 2**20), compresslevel=9)
    assert len(bomb) < 1 * 2**20
    receiver = OtlpReceiver().start()
    try:
        tracemalloc.start()
        try:
            refused = httpx.post(f"{receiver.endpoint}/v1/traces", content=bomb, timeout=30,
                                 headers={"content-type": "application/x-protobuf", "content-encoding": "gzip"})
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert refused.status_code == 413
        assert peak < 4 * MAX_EXPORT_BYTES, f"unpacking held {peak / 2**20:.0f} MiB"
        empty = httpx.post(f"{receiver.endpoint}/v1/traces", content=b"{}", timeout=10,
                           headers={"content-type": "application/json"})
        assert empty.status_code == 200
    finally:
        receiver.stop()
