"""Playwright's driver in a session of its own.

A terminal's Ctrl-C goes to the rig's whole process group. Chromium is already outside it (Playwright starts the
browser detached), but the Node.js driver is not, and it closes the browser on SIGINT: a case in flight would lose its
browser to the operator's request to finish it. Started through this wrapper, the driver runs in a new session and the
rig closes the browser itself. Nothing is orphaned: when the rig dies, the driver reads the end of its stdin and exits,
closing Chromium.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

NODE_ENV = "PLAYWRIGHT_NODEJS_PATH"  # Playwright's documented override of the Node.js it runs its driver with


def bundled_node() -> Path | None:
    """The Node.js Playwright would run: `PLAYWRIGHT_NODEJS_PATH`, else the one in its package (None: neither)."""
    explicit = os.environ.get(NODE_ENV)
    if explicit:
        return Path(explicit)
    try:
        import playwright
    except ImportError:
        return None
    node = Path(playwright.__file__).parent / "driver" / "node"
    return node if node.is_file() else None


@contextmanager
def driver_in_own_session() -> Iterator[None]:
    """While the block starts Playwright, its driver is launched through a wrapper that calls setsid() first."""
    node = bundled_node()
    if node is None:  # Playwright will say what is missing
        yield
        return
    previous = os.environ.get(NODE_ENV)
    with tempfile.TemporaryDirectory(prefix="rig-driver-") as tmp:
        wrapper = Path(tmp) / "node"
        # a session of its own, and no signal blocked (the browser's thread, which starts it, blocks the stop signals)
        start = "import os, signal, sys; os.setsid(); signal.pthread_sigmask(signal.SIG_SETMASK, ()); " \
                "os.execv(sys.argv[1], sys.argv[1:])"
        wrapper.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -S -c {shlex.quote(start)} "
                           f"{shlex.quote(str(node))} \"$@\"\n", encoding="utf-8")
        wrapper.chmod(0o700)
        os.environ[NODE_ENV] = str(wrapper)
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop(NODE_ENV, None)
            else:
                os.environ[NODE_ENV] = previous
