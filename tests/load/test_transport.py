"""The load transport reads streams through Locust's client internals, and says so loudly when they change."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rig.errors import RigError
from rig.load.transport import stream_reader

HERE = Path(__file__).resolve().parent


class _Reader:
    _body_buffer = bytearray()
    _sock = None
    message_complete = True
    block_size = 4096

    def readline(self, sep: bytes = b"\r\n") -> bytes:
        return b""

    def feed(self, data: bytes) -> None:
        pass

    def release(self) -> None:
        pass


def test_a_client_without_the_stream_reader_is_a_rig_error_not_empty_streams() -> None:
    for changed in (SimpleNamespace(), SimpleNamespace(_response=None), SimpleNamespace(_response=object()),
                    SimpleNamespace(_response=SimpleNamespace(readline=lambda: b"")),
                    SimpleNamespace(_response=SimpleNamespace(readline=lambda sep=b"": b""))):  # no body buffer
        with pytest.raises(RigError, match="changed what the rig reads streams with"):
            stream_reader(changed)
    reader = _Reader()
    assert stream_reader(SimpleNamespace(_response=reader)) is reader


@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_the_installed_locust_client_reads_whole_blocks_as_they_arrive(eol: str) -> None:
    """Two events and the start of a third arrive together: one read holds the two whole events (stamped together,
    as they arrived), the third comes in a read of its own once its end has arrived — never a part of an event,
    whichever line end the target uses."""
    out = subprocess.run([sys.executable, str(HERE / "stream_client.py"), *(["crlf"] if eol == "\r\n" else [])],
                         capture_output=True, text=True, timeout=60, cwd=HERE.parent.parent)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["status"] == 200

    def event(i: int) -> str:
        return f"id: {i}{eol}event: token{eol}data: {{}}{eol}{eol}"
    assert seen["blocks"] == [event(0) + event(1), event(2)]


def test_a_block_without_its_end_stops_at_the_cap_through_the_installed_client() -> None:
    """64 MiB without a blank line, read by Locust's real client with a 1 MiB cap: StreamTooLarge (the target's
    protocol error) long before the target's end, the reading process's memory bounded."""
    out = subprocess.run([sys.executable, str(HERE / "stream_client.py"), "giant"], capture_output=True, text=True,
                         timeout=120, cwd=HERE.parent.parent)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["error"] == "StreamTooLarge" and seen["cap_bytes"] == 1 << 20, seen
    assert seen["read_bytes"] < 2 << 20 and seen["sent_bytes"] < 64 << 20, seen
    assert seen["max_rss_mib"] - seen["rss_before_mib"] < 32, seen
