"""Running the app under uvicorn, reporting the bound port (for `--port 0`) once it listens."""

from __future__ import annotations

import socket
from pathlib import Path
from types import ModuleType

from fastapi import FastAPI

from workbench.config import ServerConfig


def serve_app(uvicorn: ModuleType, application: FastAPI, config: ServerConfig, port_file: Path | None) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((config.host, config.port))
    port = sock.getsockname()[1]
    uv_config = uvicorn.Config(application, loop="uvloop", http="httptools", log_level="warning",
                               timeout_graceful_shutdown=int(max(1, config.drain_timeout_s)), access_log=False)
    server = uvicorn.Server(uv_config)
    original_startup = server.startup

    async def startup(sockets: list[socket.socket] | None = None) -> None:
        await original_startup(sockets=sockets)
        if port_file is not None and server.started:
            tmp = port_file.with_suffix(".tmp")
            tmp.write_text(str(port))
            tmp.rename(port_file)

    server.startup = startup
    server.run(sockets=[sock])
