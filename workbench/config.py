"""Server configuration (fixed at start) and runtime settings (changeable through `_chaos/settings`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field


class RuntimeSettings(BaseModel):
    """Knobs of the agent loop and streaming that tests may change while the server runs."""

    max_rounds: int = Field(6, ge=1, le=32)
    no_progress_threshold: int = Field(2, ge=1, le=16)
    input_budget_tokens: int = Field(4000, ge=16)
    summary_trigger_tokens: int = Field(12000, ge=16)
    trace_budget_spans: int = Field(10000, ge=0)
    token_delay_ms: float = Field(1.0, ge=0)
    first_token_delay_ms: float = Field(15.0, ge=0)
    search_top_k: int = Field(8, ge=1, le=50)


class ServerConfig(BaseModel):
    """Everything `python -m workbench serve` is started with."""

    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 8000
    chaos_token: str | None = None
    defects: list[str] = Field(default_factory=list)
    dialects: list[str] = Field(default_factory=list)  # legitimate variations of the contract (workbench.dialects)
    slots: int = Field(8, ge=1)
    drain_timeout_s: float = 10.0
    code_version: str | None = None
    token_ttl_s: int = 12 * 3600
    default_provider: Literal["local", "openai"] = "local"
    default_model: str = "local-extractive"
    default_base_url: str | None = None
    default_api_key: str | None = None
    otlp_endpoint: str | None = None
    trace_file: Path | None = None
    runtime: RuntimeSettings = Field(default_factory=lambda: RuntimeSettings())
