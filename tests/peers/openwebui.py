"""A real Open WebUI on loopback for the peer tests: its own cached virtual environment, offline, with its chat
and embeddings on the rig's LLM fault proxy serving the deterministic mock model.

    python tests/peers/openwebui.py install        # the cached venv (~7 GB, ~6 min the first time)
    python tests/peers/openwebui.py serve DIR      # start everything, write DIR/rig.yaml and DIR/env, wait for Ctrl-C
    python tests/peers/openwebui.py restart DIR    # SIGKILL the Open WebUI serving DIR and start it again (restart_cmd)

The fault proxy runs beside Open WebUI as a sidecar (`rig chaos llm-proxy --upstream mock`), the way a staging
deployment would keep one in front of its model provider: Open WebUI calls its chat model and embeds its
documents and queries there, and the rig attaches to it (`model_proxy: {control: …, embeddings: true}`) to
slow or empty answers and to fault the retrieval's embeddings. `restart` is the deployment's restart command
(`restart_cmd`): same port, same data, same secret key. Accounts: an admin (which enables knowledge bases and
sharing, and turns retrieval query generation off, since the mock's answer would become the query) and two
plain users with random passwords, handed to the rig through environment variables only.
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

import httpx

from rig.ports import free_port

if __package__ in (None, ""):  # run as a script (make peers, the restart command): the checkout is the import root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.peers.harness import main as harness_main
from tests.peers.harness import spawn, stop_process, stop_recorded, wait_ready

VERSION = "0.12.4"
CACHE = Path(os.environ.get("RIG_PEERS_CACHE", Path.home() / ".cache" / "rig" / "peers"))
VENV = CACHE / f"open-webui-{VERSION}"
EXECUTABLE = VENV / "bin" / "open-webui"
READY_TIMEOUT_S = 240.0
MODELS = {"primary": "rig-mock", "alternative": "rig-mock-mini", "invalid": "rig-no-such-model"}


def installed() -> bool:
    return EXECUTABLE.exists()


def install() -> None:
    """Install Open WebUI into its own virtual environment (never the project's)."""
    if installed():
        return
    VENV.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(VENV / "bin" / "pip"), "install", "--quiet", f"open-webui=={VERSION}"], check=True)


@dataclass
class Account:
    email: str
    password: str = field(repr=False)
    env: str


def start_server(root: Path) -> int:
    """Start Open WebUI for `root` with its saved settings (port, environment); returns and records its pid."""
    settings = json.loads((root / "open-webui.json").read_text())
    proc = spawn(root, [str(EXECUTABLE), "serve", "--host", "127.0.0.1", "--port", str(settings["port"])],
                 "open-webui.log", {**os.environ, **settings["env"]})
    (root / "open-webui.pid").write_text(str(proc.pid))
    return proc.pid


def stop_server(root: Path, sig: int = signal.SIGTERM, timeout_s: float = 20.0) -> None:
    """End the Open WebUI recorded for `root` (its whole process group), SIGKILL if it lingers."""
    stop_recorded(root / "open-webui.pid", sig, timeout_s)


def restart_server(root: Path) -> int:
    """The deployment's restart command: SIGKILL (a crash, nothing drained) and start again, same port and data."""
    stop_server(root, signal.SIGKILL)
    return start_server(root)


@dataclass
class OpenWebUI:
    """Open WebUI, the fault proxy it calls its model through, and the accounts the rig uses; `stop()` ends it."""

    root: Path
    port: int = field(default_factory=free_port)
    proxy_port: int = field(default_factory=free_port)
    accounts: dict[str, Account] = field(default_factory=dict)
    admin: Account | None = None
    proxy: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.proxy_port}"

    def env(self) -> dict[str, str]:
        model = f"{self.proxy_url}/v1"
        return {"DATA_DIR": str(self.root / "data"), "WEBUI_SECRET_KEY": secrets.token_hex(16),
                "OFFLINE_MODE": "true", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "ENABLE_VERSION_UPDATE_CHECK": "false", "ANONYMIZED_TELEMETRY": "false", "SCARF_NO_ANALYTICS": "true",
                "DO_NOT_TRACK": "true", "ENABLE_OLLAMA_API": "false", "ENABLE_OPENAI_API": "true",
                "OPENAI_API_BASE_URL": model, "OPENAI_API_KEY": "sk-rig-mock",
                "RAG_EMBEDDING_ENGINE": "openai", "RAG_EMBEDDING_MODEL": "rig-mock-embed",
                "RAG_OPENAI_API_BASE_URL": model, "RAG_OPENAI_API_KEY": "sk-rig-mock", "RAG_RERANKING_MODEL": "",
                "ENABLE_RAG_HYBRID_SEARCH": "false", "BYPASS_MODEL_ACCESS_CONTROL": "true", "ENABLE_SIGNUP": "true",
                "DEFAULT_USER_ROLE": "user", "ENABLE_TITLE_GENERATION": "false", "ENABLE_TAGS_GENERATION": "false",
                "ENABLE_FOLLOW_UP_GENERATION": "false", "ENABLE_AUTOCOMPLETE_GENERATION": "false",
                "ENABLE_RETRIEVAL_QUERY_GENERATION": "false", "GLOBAL_LOG_LEVEL": "WARNING"}

    def start(self) -> OpenWebUI:
        if not installed():
            raise RuntimeError(f"Open WebUI {VERSION} is not installed in {VENV}: run `make peers`")
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "data").mkdir(exist_ok=True)
        settings = self.root / "open-webui.json"
        settings.write_text(json.dumps({"port": self.port, "env": self.env()}))
        settings.chmod(0o600)  # the secret key
        try:
            self.proxy = spawn(self.root, [sys.executable, "-m", "rig.cli", "chaos", "llm-proxy", "--upstream", "mock",
                                            "--listen", f"127.0.0.1:{self.proxy_port}"], "proxy.log", dict(os.environ))
            start_server(self.root)
            self.wait_ready()
            self._provision()
        except BaseException:
            self.stop()
            raise
        return self

    def wait_ready(self) -> None:
        wait_ready(self.url, self.root, "open-webui", self.proxy, READY_TIMEOUT_S)

    def _provision(self) -> None:
        self.admin = Account("admin@rig.invalid", secrets.token_urlsafe(12), "RIG_OWUI_ADMIN")
        with httpx.Client(base_url=self.url, timeout=60) as c:
            token = c.post("/api/v1/auths/signup", json={"name": "admin", "email": self.admin.email,
                                                         "password": self.admin.password}).raise_for_status().json()["token"]
            h = {"authorization": f"Bearer {token}"}
            perms = c.get("/api/v1/users/default/permissions", headers=h).raise_for_status().json()
            perms["workspace"]["knowledge"] = True
            perms["sharing"]["knowledge"] = True
            perms.setdefault("access_grants", {})["allow_users"] = True
            c.post("/api/v1/users/default/permissions", headers=h, json=perms).raise_for_status()
            tasks = c.get("/api/v1/tasks/config", headers=h).raise_for_status().json()
            tasks["ENABLE_RETRIEVAL_QUERY_GENERATION"] = False
            c.post("/api/v1/tasks/config/update", headers=h, json=tasks).raise_for_status()
            for key in ("a", "b"):
                account = Account(f"rig-{key}@rig.invalid", secrets.token_urlsafe(12), f"RIG_OWUI_PASSWORD_{key.upper()}")
                c.post("/api/v1/auths/add", headers=h, json={"name": f"rig-{key}", "email": account.email,
                                                              "password": account.password, "role": "user"}).raise_for_status()
                self.accounts[key] = account

    def restart_cmd(self) -> str:
        return f"{sys.executable} {Path(__file__).resolve()} restart {self.root}"

    def rig_yaml(self) -> str:
        """The rig.yaml a team would write for this instance (passwords from the environment)."""
        accounts = "\n".join(f"  {k}: {{username: {a.email}, password_env: {a.env}}}" for k, a in self.accounts.items())
        models = "\n".join(f"  {k}: {{provider: openai, model: {m}}}" for k, m in MODELS.items())
        return (f"target:\n  url: {self.url}\n  adapter: rig.adapters.openwebui:OpenWebUIAdapter\n"
                f"  ready_path: /health\n  model_proxy: {{control: {self.proxy_url}, embeddings: true}}\n"
                f"  restart_cmd: {json.dumps(self.restart_cmd())}\naccounts:\n{accounts}\nmodels:\n{models}\n")

    def secrets_env(self) -> dict[str, str]:
        return {a.env: a.password for a in self.accounts.values()}

    def stop(self) -> None:
        stop_server(self.root)
        stop_process(self.proxy)
        self.proxy = None


def _install() -> str:
    install()
    return f"Open WebUI {VERSION} in {VENV}"


def main(argv: list[str]) -> int:
    return harness_main(argv, name="Open WebUI", install=_install, restart=restart_server,
                        start=lambda root: OpenWebUI(root).start())


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
