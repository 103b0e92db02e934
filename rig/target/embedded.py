"""The embedded default target: the reference workbench started as a child process on loopback.

The rig reaches it only as any operator would: its command line (`python -m workbench serve`, `python -m
workbench user add`) and its HTTP API. Passwords go to the account command on standard input, never in
its arguments.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from rig.errors import TargetUnreachable
from rig.lifeline import spawn
from rig.target.readiness import wait_ready


@dataclass(frozen=True)
class Account:
    """A seeded account; the password stays in memory and is redacted from every output."""

    username: str
    password: str


class EmbeddedWorkbench:
    """Start, stop, kill and restart a workbench on a free loopback port with its own data directory."""

    def __init__(self, data_dir: Path | None = None, *, chaos_token: str | None = None,
                 defects: list[str] | None = None, extra_args: list[str] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self._tmp = None if data_dir else tempfile.TemporaryDirectory(prefix="rig-workbench-")
        self.data_dir = data_dir or Path(self._tmp.name)  # type: ignore[union-attr]
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.chaos_token = chaos_token
        self.defects = defects or []
        self.extra_args = extra_args or []
        self.env = env or {}
        self.process: subprocess.Popen[bytes] | None = None
        self.port: int | None = None
        self.log_path = self.data_dir / "workbench.log"

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the workbench is not running")
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def add_account(self, username: str, password: str | None = None) -> Account:
        """Create an account in the data directory (works while the server runs: SQLite WAL)."""
        return self.add_accounts({username: password})[username]

    def add_accounts(self, accounts: dict[str, str | None]) -> dict[str, Account]:
        """Create several accounts with one call of the workbench's own `user add` command; a None
        password is replaced by a random one."""
        made = {name: Account(name, password or secrets.token_urlsafe(18)) for name, password in accounts.items()}
        cmd = [sys.executable, "-m", "workbench", "user", "add", *made, "--data", str(self.data_dir)]
        stdin = "".join(f"{a.password}\n" for a in made.values())
        done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120,
                              env={**os.environ, **self.env})
        if done.returncode != 0:
            raise TargetUnreachable("embedded workbench", f"`{' '.join(cmd[:5])}` failed: {done.stderr.strip()[-500:]}")
        return made

    def seal(self) -> None:
        """After `stop()`: remove the secrets from its data directory (it lives in a run directory people share);
        a resume starts it again and sets the accounts' passwords anew."""
        done = subprocess.run([sys.executable, "-m", "workbench", "seal", "--data", str(self.data_dir)],
                              capture_output=True, text=True, timeout=60, env={**os.environ, **self.env})
        if done.returncode != 0:
            raise TargetUnreachable("embedded workbench", f"sealing its data failed: {done.stderr.strip()[-500:]}")

    def command(self) -> list[str]:
        port = str(self.port) if self.port else "0"
        cmd = [sys.executable, "-m", "workbench", "serve", "--data", str(self.data_dir), "--port", port,
               "--port-file", str(self.data_dir / "port")]
        for defect in self.defects:
            cmd += ["--defect", defect]
        return cmd + self.extra_args

    def start(self, timeout_s: float = 60.0) -> str:
        """Start the server and wait until `/readyz` answers 200; returns its URL."""
        port_file = self.data_dir / "port"
        port_file.unlink(missing_ok=True)
        log = self.log_path.open("ab")
        env = {**os.environ, **self.env, "PYTHONUNBUFFERED": "1"}
        env.pop("WORKBENCH_CHAOS_TOKEN", None)
        if self.chaos_token:  # through the environment: a command line is readable by every local user
            env["WORKBENCH_CHAOS_TOKEN"] = self.chaos_token
        self.process = spawn(self.command(), stdout=log, stderr=subprocess.STDOUT, env=env)
        log.close()
        deadline = time.monotonic() + timeout_s
        while not port_file.exists():
            self._check_alive()
            if time.monotonic() > deadline:
                self.kill()
                raise TargetUnreachable("embedded workbench", f"did not start within {timeout_s:.0f}s "
                                        f"(log: {self.log_path})")
            time.sleep(0.02)
        self.port = int(port_file.read_text())
        wait_ready(self.url, deadline - time.monotonic(), self._check_alive, path="/readyz")
        return self.url

    def _check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            tail = self.log_path.read_text(errors="replace")[-2000:] if self.log_path.exists() else ""
            raise TargetUnreachable("embedded workbench", f"exited with {self.process.returncode}: {tail}")

    def stop(self, timeout_s: float = 20.0) -> int | None:
        """SIGTERM (graceful drain) and wait; SIGKILL if it does not exit in time."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        code = self.process.returncode
        self.process = None
        return code

    def kill(self) -> None:
        """SIGKILL: the process dies with whatever was in flight."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def restart(self, *, hard: bool = False, timeout_s: float = 60.0) -> float:
        """Kill (`hard`) or stop, start again on the same port and data; returns seconds until ready."""
        if hard:
            self.kill()
        else:
            self.stop()
        began = time.monotonic()
        self.start(timeout_s)
        return time.monotonic() - began

    def cleanup(self) -> None:
        self.kill()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> EmbeddedWorkbench:
        return self

    def __exit__(self, *_: object) -> None:
        self.cleanup()

