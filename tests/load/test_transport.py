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
    def readline(self, sep: bytes = b"\r\n") -> bytes:
        return b""


def test_a_client_without_the_stream_reader_is_a_rig_error_not_empty_streams() -> None:
    for changed in (SimpleNamespace(), SimpleNamespace(_response=None), SimpleNamespace(_response=object()),
                    SimpleNamespace(_response=SimpleNamespace(readline=lambda: b""))):
        with pytest.raises(RigError, match="changed what the rig reads streams with"):
            stream_reader(changed)
    reader = _Reader()
    assert stream_reader(SimpleNamespace(_response=reader)) is reader


def test_the_installed_locust_client_reads_a_stream_event_by_event() -> None:
    out = subprocess.run([sys.executable, str(HERE / "stream_client.py")], capture_output=True, text=True,
                         timeout=60, cwd=HERE.parent.parent)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["status"] == 200
    head, *blocks = seen["blocks"]  # the first line alone (it tells LF from CRLF framing), then block by block
    assert head == "id: 0\n" and blocks == ["event: token\ndata: {}\n\n"] + \
        [f"id: {i}\nevent: token\ndata: {{}}\n\n" for i in (1, 2)]
