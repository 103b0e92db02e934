"""Running the app under uvicorn: the bound port is reported for `--port 0`, and SIGTERM drains runs first.

On SIGTERM the run manager drains before uvicorn closes connections, so every open event stream ends
with its run's terminal event (completed, or `interrupted/server_restart` past the drain timeout)
instead of a dropped connection.
"""

from __future__ import annotations

import socket
from pathlib import Path
from types import ModuleType
from typing import Any

from fastapi import FastAPI

from workbench.config import ServerConfig


def serve_app(uvicorn: ModuleType, application: FastAPI, config: ServerConfig, port_file: Path | None) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((config.host, config.port))
    port = sock.getsockname()[1]
    runs = application.state.services.runs

    class Server(uvicorn.Server):  # type: ignore[name-defined]
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if port_file is not None and self.started:
                tmp = port_file.with_suffix(".tmp")
                tmp.write_text(str(port))
                tmp.rename(port_file)

        async def shutdown(self, sockets: Any = None) -> None:
            await runs.drain(config.drain_timeout_s)
            await super().shutdown(sockets=sockets)

    uv_config = uvicorn.Config(application, loop="uvloop", http="httptools", log_level="warning",
                               timeout_graceful_shutdown=5, access_log=False)
    Server(uv_config).run(sockets=[sock])
