"""Fixtures of the adapter tests: the small in-process target unlike the workbench."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.adapters.gappy import Gappy


@pytest.fixture()
def gappy() -> Iterator[Gappy]:
    server = Gappy()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
