"""The FastAPI application: routes, error handlers, middleware and the start/stop lifecycle."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError

from workbench import __version__
from workbench.api import auth_routes, chaos, citations, health, model_config, projects, runs, sessions, tools, ui
from workbench.chaos import FaultRegistry
from workbench.config import ServerConfig
from workbench.db import Database
from workbench.defects import Defects
from workbench.dialects import Dialects
from workbench.errors import ApiError, handle_api_error, handle_unexpected, handle_validation_error
from workbench.index import Bm25Index
from workbench.ingest import IngestWorker
from workbench.langfuse_export import LangfuseExport
from workbench.metrics import Metrics
from workbench.middleware import RequestMiddleware
from workbench.runs import RunManager
from workbench.security import KeyVault
from workbench.services import Services
from workbench.tracing import Tracing

log = logging.getLogger("workbench")


def build_services(config: ServerConfig) -> Services:
    """Open the data directory and wire every part (nothing starts running yet)."""
    if config.defects and not config.chaos_token:
        raise ValueError("seeded defects are for tests only: they need --chaos-token")
    config.data_dir.mkdir(parents=True, exist_ok=True)
    files = config.data_dir / "files"
    files.mkdir(exist_ok=True)
    metrics = Metrics(config.slots)
    svc = Services(config=config, db=Database(config.data_dir / "workbench.sqlite3"), files_dir=files,
                   index=Bm25Index(), metrics=metrics, faults=FaultRegistry(), defects=Defects(config.defects),
                   dialects=Dialects(config.dialects),
                   vault=KeyVault(config.data_dir), settings=config.runtime.model_copy())
    svc.faults.on_fire.append(lambda f: metrics.chaos_fired.labels(f.spec.point, f.spec.mode).inc())
    svc.ingest = IngestWorker(svc.db, files, svc.index, metrics, svc.defects)
    svc.runs = RunManager(svc)
    svc.tracing = Tracing(config)
    svc.langfuse = LangfuseExport.from_env()
    return svc


def create_app(config: ServerConfig) -> FastAPI:
    svc = build_services(config)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        interrupted = svc.runs.recover_at_start()
        if interrupted:
            log.warning("marked %d run(s) cut by the previous shutdown as %s", interrupted,
                        "stopped" if "restart_marks_user_stop" in svc.defects else "interrupted")
        svc.ingest.load_index()
        svc.ingest.start()
        try:
            yield
        finally:
            await svc.runs.drain(config.drain_timeout_s)
            svc.ingest.stop()
            svc.tracing.shutdown()
            if svc.langfuse is not None:
                svc.langfuse.shutdown()

    app = FastAPI(title="workbench", version=__version__, lifespan=lifespan)
    app.state.services = svc
    app.add_exception_handler(ApiError, handle_api_error)
    app.add_exception_handler(RequestValidationError, handle_validation_error)
    app.add_exception_handler(Exception, handle_unexpected)
    for module in (auth_routes, projects, tools, sessions, runs, citations, model_config, chaos, health, ui):
        app.include_router(module.router)
    app.add_middleware(RequestMiddleware, metrics=svc.metrics)
    return app
