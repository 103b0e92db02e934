"""Lab hosts: namespaces on a private bridge, gone after the lab ends, also after a failure or a crash."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rig.netlab.netns import PREFIX, Network, lab_namespaces, sweep

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                                reason="network namespaces need root and iproute2")
GET = "import sys, urllib.request as u; print(u.urlopen(sys.argv[1], timeout=3).status)"


def test_hosts_reach_each_other_only_over_their_links_and_everything_goes_on_failure(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="on purpose"), Network() as net:
        a, b = net.add_host("a"), net.add_host("b")
        mine = [n for n in lab_namespaces() if n.startswith(net.lab_id)]
        assert len(mine) == 3  # the switch and two hosts
        server = a.start([sys.executable, "-m", "http.server", "--bind", a.address, "8000"], tmp_path / "srv.log")
        url = f"http://{a.address}:8000/"
        deadline = 100
        while b.run([sys.executable, "-c", GET, url], tmp_path / "get.log") != 0:  # until it listens
            deadline -= 1
            assert deadline and server.poll() is None, (tmp_path / "srv.log").read_text()
        # the machine's own namespace has no route to the lab
        outside = subprocess.run([sys.executable, "-c", GET, url], capture_output=True, timeout=30)
        assert outside.returncode != 0
        a.link(up=False)
        assert b.run([sys.executable, "-c", GET, url], tmp_path / "down.log") != 0
        a.link(up=True)
        assert b.run([sys.executable, "-c", GET, url], tmp_path / "up.log") == 0
        raise RuntimeError("on purpose")
    assert not [n for n in lab_namespaces() if n.startswith(net.lab_id)]
    assert server.poll() is not None  # the lab's processes went with it


def test_sweep_removes_what_a_dead_lab_left() -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    name = f"{PREFIX}{dead.pid}-x"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        assert name in sweep()
        assert name not in lab_namespaces()
    finally:
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)
