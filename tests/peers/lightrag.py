"""A real LightRAG server on loopback for the peer tests: its own cached virtual environment, offline, its model and
embeddings on the rig's LLM fault proxy serving the deterministic mock (which answers LightRAG's keyword and
entity-extraction prompts too, `chaos.mock_prompts`).

    python tests/peers/lightrag.py install        # the cached venv (~80 s, ~770 MB the first time) and tiktoken's ranks
    python tests/peers/lightrag.py serve DIR      # start everything, write DIR/rig.yaml and DIR/env, wait for Ctrl-C
    python tests/peers/lightrag.py restart DIR    # SIGKILL the LightRAG serving DIR and start it again (restart_cmd)

LightRAG builds a tiktoken `o200k_base` tokenizer at start and would download its ranks; they ship in the npm
package `js-tiktoken`, so `install` rewrites them as tiktoken's cache file (checked against its known sha256) and
the server never reaches the network. Accounts are LightRAG's own (`AUTH_ACCOUNTS`), with random passwords handed
to the rig through environment variables only. The rig.yaml is docs/targets/lightrag.rig.yaml with this URL.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from rig.ports import free_port

if __package__ in (None, ""):  # run as a script (make peers, the restart command): the checkout is the import root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.peers.harness import main as harness_main
from tests.peers.harness import spawn, stop_process, stop_recorded, wait_ready
from tests.peers.tiktoken_ranks import ensure_ranks, ranks_file

VERSION = "1.5.7"
CACHE = Path(os.environ.get("RIG_PEERS_CACHE", Path.home() / ".cache" / "rig" / "peers"))
VENV = CACHE / f"lightrag-{VERSION}"
EXECUTABLE = VENV / "bin" / "lightrag-server"
TIKTOKEN = CACHE / "tiktoken"
RIG_YAML = Path(__file__).resolve().parents[2] / "docs" / "targets" / "lightrag.rig.yaml"
READY_TIMEOUT_S = 120.0


def installed() -> bool:
    return EXECUTABLE.exists() and ranks_file(TIKTOKEN, "o200k_base").exists()


def install() -> None:
    """LightRAG in its own virtual environment (never the project's), and tiktoken's ranks in its cache."""
    if not EXECUTABLE.exists():
        VENV.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(VENV / "bin" / "pip"), "install", "--quiet", f"lightrag-hku[api]=={VERSION}"], check=True)
    ensure_ranks(TIKTOKEN, "o200k_base")


@dataclass
class Account:
    username: str
    password: str = field(repr=False)
    env: str


def start_server(root: Path) -> int:
    """Start LightRAG for `root` with its saved settings (port, environment); returns and records its pid."""
    settings = json.loads((root / "lightrag.json").read_text())
    proc = spawn(root, [str(EXECUTABLE)], "lightrag.log", {**os.environ, **settings["env"]}, cwd=root)
    (root / "lightrag.pid").write_text(str(proc.pid))
    return proc.pid


def stop_server(root: Path, sig: int = signal.SIGTERM) -> None:
    stop_recorded(root / "lightrag.pid", sig)


def restart_server(root: Path) -> int:
    """The deployment's restart command: SIGKILL (a crash, nothing drained) and start again, same port and data."""
    stop_server(root, signal.SIGKILL)
    return start_server(root)


@dataclass
class LightRAG:
    """LightRAG, the fault proxy it calls its model and embeddings through, and the rig's accounts; `stop()` ends it."""

    root: Path
    port: int = field(default_factory=free_port)
    proxy_port: int = field(default_factory=free_port)
    accounts: dict[str, Account] = field(default_factory=dict)
    proxy: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.proxy_port}"

    def env(self) -> dict[str, str]:
        model = f"{self.proxy_url}/v1"
        users = ",".join(f"{a.username}:{a.password}" for a in self.accounts.values())
        return {"HOST": "127.0.0.1", "PORT": str(self.port), "WORKING_DIR": str(self.root / "rag"),
                "INPUT_DIR": str(self.root / "inputs"), "LOG_DIR": str(self.root / "logs"),
                "TIKTOKEN_CACHE_DIR": str(TIKTOKEN), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "LLM_BINDING": "openai", "LLM_BINDING_HOST": model, "LLM_MODEL": "rig-mock",
                "LLM_BINDING_API_KEY": "sk-rig-mock", "EMBEDDING_BINDING": "openai", "EMBEDDING_BINDING_HOST": model,
                "EMBEDDING_MODEL": "rig-mock-embed", "EMBEDDING_DIM": "256", "EMBEDDING_BINDING_API_KEY": "sk-rig-mock",
                "AUTH_ACCOUNTS": users, "TOKEN_SECRET": secrets.token_hex(24), "WHITELIST_PATHS": "/health",
                # the mock's hashed embeddings are further apart than a real model's: a lower bar for a chunk match
                "COSINE_THRESHOLD": "0.05", "ENABLE_LLM_CACHE": "false", "LOG_LEVEL": "WARNING"}

    def start(self) -> LightRAG:
        if not installed():
            raise RuntimeError(f"LightRAG {VERSION} is not installed in {VENV}: run `make peers`")
        for sub in ("rag", "inputs", "logs"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        for key in ("a", "b"):
            self.accounts[key] = Account(f"rig-{key}", secrets.token_urlsafe(12), f"RIG_LIGHTRAG_PASSWORD_{key.upper()}")
        settings = self.root / "lightrag.json"
        settings.write_text(json.dumps({"port": self.port, "env": self.env()}))
        settings.chmod(0o600)  # passwords and the token secret
        try:
            self.proxy = spawn(self.root, [sys.executable, "-m", "rig.cli", "chaos", "llm-proxy", "--upstream", "mock",
                                           "--listen", f"127.0.0.1:{self.proxy_port}"], "proxy.log", dict(os.environ))
            start_server(self.root)
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def wait_ready(self) -> None:
        wait_ready(self.url, self.root, "lightrag", self.proxy, READY_TIMEOUT_S)

    def restart_cmd(self) -> str:
        return f"{sys.executable} {Path(__file__).resolve()} restart {self.root}"

    def rig_yaml(self) -> str:
        """docs/targets/lightrag.rig.yaml for this instance: its URL, the sidecar proxy, the restart command and
        the accounts (passwords from the environment)."""
        config = yaml.safe_load(RIG_YAML.read_text(encoding="utf-8"))
        config["target"].update(url=self.url, model_proxy={"control": self.proxy_url, "embeddings": True},
                                restart_cmd=self.restart_cmd())
        config["accounts"] = {k: {"username": a.username, "password_env": a.env} for k, a in self.accounts.items()}
        return yaml.safe_dump(config, allow_unicode=True, sort_keys=False)

    def secrets_env(self) -> dict[str, str]:
        return {a.env: a.password for a in self.accounts.values()}

    def stop(self) -> None:
        stop_server(self.root)
        stop_process(self.proxy)
        self.proxy = None


def _install() -> str:
    install()
    return f"LightRAG {VERSION} in {VENV}; tiktoken's o200k_base in {TIKTOKEN}"


def main(argv: list[str]) -> int:
    return harness_main(argv, name="LightRAG", install=_install, restart=restart_server,
                        start=lambda root: LightRAG(root).start())


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
