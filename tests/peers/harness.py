"""What every peer harness shares: its processes (each in its own process group, logged to a file in its root, the
server's pid kept in a file so the deployment's restart command — another process — can find it), waiting for it to
be ready, running one for a test module, and the harness's command line (install, serve, restart)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

import httpx


def spawn(root: Path, cmd: list[str], log: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.Popen[bytes]:
    """Start `cmd` in a new process group, its output appended to `root/log`."""
    with (root / log).open("ab") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True)


def kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def gone(pid: int) -> bool:
    """True when the process no longer runs (a zombie of ours counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def stop_recorded(pid_file: Path, sig: int = signal.SIGTERM, timeout_s: float = 20.0) -> None:
    """End the process group whose leader's pid `pid_file` holds, SIGKILL if it lingers; the file goes."""
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text())
    kill_group(pid, sig)
    deadline = time.monotonic() + timeout_s
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if not gone(pid):
        kill_group(pid, signal.SIGKILL)
    pid_file.unlink(missing_ok=True)


def stop_process(proc: subprocess.Popen[bytes] | None, timeout_s: float = 20.0) -> None:
    """End a process group this harness started (SIGTERM, then SIGKILL), and reap it."""
    if proc is None or proc.poll() is not None:
        return
    kill_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid, signal.SIGKILL)
        proc.wait()


def wait_ready(url: str, root: Path, server: str, proxy: subprocess.Popen[bytes] | None, timeout_s: float) -> None:
    """Until `url/health` answers 200; fails at once when the server (pid in `root/<server>.pid`) or its proxy exits."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proxy is not None and proxy.poll() is not None:
            raise RuntimeError(f"the fault proxy exited with {proxy.returncode}; see {root}/proxy.log")
        pid_file = root / f"{server}.pid"
        if pid_file.exists() and gone(int(pid_file.read_text())):
            raise RuntimeError(f"{server} exited; see {root}/{server}.log")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{server} not ready after {timeout_s:.0f} s; see {root}/{server}.log")


class Peer(Protocol):
    """A running third-party target as a harness makes it."""

    root: Path

    @property
    def url(self) -> str: ...
    def rig_yaml(self) -> str: ...
    def secrets_env(self) -> dict[str, str]: ...
    def stop(self) -> None: ...


@contextmanager
def serving(peer: Peer) -> Iterator[Peer]:
    """A started peer for a test module: its rig.yaml written, its accounts' passwords in the environment (as a team
    would export them), everything restored and stopped after."""
    (peer.root / "rig.yaml").write_text(peer.rig_yaml(), encoding="utf-8")
    saved = dict(os.environ)
    os.environ.update(peer.secrets_env())
    try:
        yield peer
    finally:
        os.environ.clear()
        os.environ.update(saved)
        peer.stop()


def main(argv: list[str], *, name: str, install: Callable[[], str], restart: Callable[[Path], int],
         start: Callable[[Path], Peer]) -> int:
    """`install` · `serve DIR` (start, write DIR/rig.yaml and DIR/env, wait for Ctrl-C) · `restart DIR`."""
    if argv[:1] == ["install"]:
        print(install())
        return 0
    if argv[:1] == ["restart"] and len(argv) == 2:
        print(f"{name} restarted (pid {restart(Path(argv[1]))})")
        return 0
    if argv[:1] == ["serve"] and len(argv) == 2:
        root = Path(argv[1])
        peer = start(root)
        try:
            (root / "rig.yaml").write_text(peer.rig_yaml(), encoding="utf-8")
            env = root / "env"
            env.write_text("".join(f"export {k}={v}\n" for k, v in peer.secrets_env().items()), encoding="utf-8")
            env.chmod(0o600)
            print(f"{name} at {peer.url}; rig.yaml and env (0600) in {root}; Ctrl-C or SIGTERM stops it", flush=True)
            signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started in the background
            signal.signal(signal.SIGTERM, signal.default_int_handler)
            signal.pause()
        except KeyboardInterrupt:
            pass
        finally:
            peer.stop()
        return 0
    print(f"usage: install | serve DIR | restart DIR ({name})")
    return 2
