"""When a target cannot be used, the rig names what it saw — nothing listening, a port that does not speak HTTP,
a target that answers 500, one that fails only on login, one that hangs on a call (named) — exits 2, and prints
no traceback. Each shape is a small in-process server on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from rig.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


class _Shaped(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, shape: str) -> None:
        self.shape = shape
        self.release = threading.Event()
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: _Shaped

    def _answer(self) -> None:
        shape, ready = self.server.shape, self.path.startswith("/readyz")
        if shape == "hangs_after_ready" and not ready:
            self.server.release.wait(30)  # holds the call until the test ends; the rig's own timeout comes first
            return
        status = 200 if (ready and shape != "errors_everywhere") or shape == "wrong_login" else 500
        body = b'{"status": "ok"}' if status == 200 else b'{"detail": "boom"}'
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer  # noqa: N815 - http.server's naming

    def log_message(self, *_: object) -> None:
        return


def _garbage_server() -> tuple[str, socket.socket]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)

    def serve() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            conn.sendall(b"\x00\x01 hello from another service\r\n")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{sock.getsockname()[1]}", sock


@pytest.fixture
def target(request: pytest.FixtureRequest) -> Iterator[str]:
    shape = request.param
    if shape == "nothing":
        yield f"http://127.0.0.1:{free_port()}"
        return
    if shape == "unresolvable":  # .invalid never resolves (RFC 2606)
        yield "http://no-such-host.invalid:8080"
        return
    if shape == "not_http":
        url, sock = _garbage_server()
        yield url
        sock.close()
        return
    server = _Shaped(shape)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.release.set()
    server.shutdown()
    server.server_close()


READINESS = ("nothing accepts connections there", "something answers there, but not in HTTP",
             "/readyz kept answering HTTP 500", "the host name 'no-such-host.invalid' does not resolve")


@pytest.mark.parametrize(("target", "said"), [
    ("nothing", "nothing accepts connections there"),
    ("unresolvable", "the host name 'no-such-host.invalid' does not resolve"),
    ("not_http", "something answers there, but not in HTTP"),
    ("errors_everywhere", "/readyz kept answering HTTP 500"),
    ("errors_but_ready", "(its own error, not a refused password)"),
    ("wrong_login", "no token and user_id (API.md, POST /api/v1/auth/login)"),
    ("hangs_after_ready", "(capabilities) got no answer: ReadTimeout: timed out fix: the target took the call"),
], indirect=["target"])
def test_an_unusable_target_is_named_for_what_it_does(target: str, said: str, tmp_path: Path) -> None:
    config = tmp_path / "rig.yaml"
    config.write_text(f"target:\n  url: {target}\n  ready_timeout: 1\n  options: {{timeout_s: 2}}\naccounts:\n"
                      "  a: {username: a, password_env: RIG_TEST_PW_A}\n  b: {username: b, password_env: RIG_TEST_PW_B}\n",
                      encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "rig.cli", "gate", "--target", target, "--config", str(config),
                          "--cases", "1", "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=120,
                         cwd=ROOT, env={**os.environ, "COLUMNS": "250", "RIG_TEST_PW_A": "pw-a-secret",
                                        "RIG_TEST_PW_B": "pw-b-secret"})
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 2, text[-2000:]
    assert said in text, text[-2000:]
    assert "Traceback" not in text and "pw-a-secret" not in text
    assert "rig gate --target" not in text  # the hint names the option, not another command
    if said in READINESS:  # the wait is bounded by target.ready_timeout: the bound is in the message, not a stopwatch
        assert "not ready after 1 s" in text, text[-2000:]


@pytest.mark.parametrize("target", ["errors_but_ready"], indirect=True)
def test_a_load_whose_logins_meet_the_targets_own_error_does_not_blame_the_password(target: str,
                                                                                      tmp_path: Path) -> None:
    config = tmp_path / "rig.yaml"
    config.write_text(f"target:\n  url: {target}\n  ready_timeout: 1\n  options: {{timeout_s: 2}}\naccounts:\n"
                      "  a: {username: a, password_env: RIG_TEST_PW_A}\n  b: {username: b, password_env: RIG_TEST_PW_B}\n",
                      encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "rig.cli", "load", "--target", target, "--config", str(config),
                          "--duration", "2s", "--users", "1", "--out", str(tmp_path / "run")], capture_output=True,
                         text=True, timeout=120, cwd=ROOT, env={**os.environ, "COLUMNS": "250",
                                                                 "RIG_TEST_PW_A": "pw-a-secret",
                                                                 "RIG_TEST_PW_B": "pw-b-secret"})
    text = " ".join((out.stdout + out.stderr).split())
    assert out.returncode == 2, text[-2000:]
    assert "(the target's own error, not a refused password)" in text and "check the target's logs" in text, \
        text[-2000:]
    assert "password environment variables" not in text and "pw-a-secret" not in text
