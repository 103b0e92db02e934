"""One restarter for the gate and chaos alike, chosen from rig.yaml, waiting for what the target is seen to do."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from chaos.injectors import Injectors
from rig.config import TargetConfig
from rig.errors import ConfigError, RigError
from rig.faults import Fault
from rig.target.restart import CommandRestarter, DockerRestarter, restarter_for


def test_rig_yaml_picks_the_one_restarter_for_gate_and_chaos() -> None:
    both = TargetConfig(url="http://127.0.0.1:9", restart_cmd="systemctl restart x", docker_container="x")
    assert isinstance(restarter_for(both), DockerRestarter)
    command = restarter_for(TargetConfig(url="http://127.0.0.1:9", restart_cmd="systemctl restart x",
                                         ready_path="/health"))
    assert isinstance(command, CommandRestarter) and command.ready_path == "/health"
    assert restarter_for(TargetConfig(url="http://127.0.0.1:9")) is None
    with pytest.raises(ConfigError, match="restart_cmd or target.docker_container"):
        Injectors(restarter=None).check(Fault(via="restart", mode="kill"))


@pytest.fixture()
def flag_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A readiness path that answers 503 until a flag file exists (what the restart command makes)."""
    flag = tmp_path / "up"

    class Ready(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200 if flag.exists() else 503)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Ready)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", flag
    finally:
        server.shutdown()
        server.server_close()


def test_a_command_restart_returns_once_the_target_answers_ready(flag_server: tuple[str, Path]) -> None:
    url, flag = flag_server
    restarter = restarter_for(TargetConfig(url=url, restart_cmd=f"sleep 0.3 && touch {flag}"))
    assert restarter is not None
    record = restarter.restart("term")
    assert flag.exists() and record.kind == "command" and record.mode == "term"
    assert record.ready_ns > record.began_ns and record.ready_s >= 0.3
    assert record.model_dump()["ready_s"] == record.ready_s  # chaos windows and case 26 evidence read it


def test_a_failing_restart_command_says_so(flag_server: tuple[str, Path]) -> None:
    url, _ = flag_server
    with pytest.raises(RigError, match="restart command failed"):
        CommandRestarter("echo nope >&2; exit 3", url).restart()
