"""`rig.yaml`: how to reach an external target, its accounts, chaos token and restarter.

Secrets are never written in the file itself: passwords and tokens come from environment variables
named by `*_env` fields (a literal value is accepted, but a warning is printed and it is redacted).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rig.adapters.http.spec import HttpSpec
from rig.errors import ConfigError
from rig.jsonvalue import ForeignJson
from rig.measure.sse import MAX_EVENT_BYTES
from rig.yamlfile import load_yaml_model

HTTP_ADAPTER = "rig.adapters.http:HttpAdapter"

LOG = logging.getLogger("rig.config")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AccountConfig(_Strict):
    username: str
    password: str | None = None
    password_env: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> AccountConfig:
        if not self.password and not self.password_env:
            raise ValueError("give password_env (the environment variable holding the password)")
        return self

    def resolve_password(self) -> str:
        if self.password:
            return self.password
        assert self.password_env is not None
        value = os.environ.get(self.password_env)
        if not value:
            raise ConfigError(f"environment variable {self.password_env} (password of {self.username}) is not set",
                              fix=f"export {self.password_env}=... before running the rig")
        return value


class ModelProxyConfig(_Strict):
    """`target.model_proxy`: the rig's LLM fault proxy where the target calls its model.

    Either the rig starts it (`listen` where the target's model base URL points, `upstream` the real model),
    or it already runs beside the target as a sidecar (`control`: its address) and the rig only drives its
    rules. `embeddings: true` says the target also embeds its retrieval queries through it, so the rig can
    fault the target's retrieval tool there (reliability cases 14, 15, 21, 35) without a test-only control.
    """

    listen: str | None = None  # HOST:PORT the target's model base URL points to (http://HOST:PORT/v1)
    upstream: str | None = None  # the real OpenAI-compatible base URL (…/v1), or `mock` for the rig's deterministic model
    control: str | None = None  # http://HOST:PORT of a proxy that already runs (`rig chaos llm-proxy`); not started
    embeddings: bool = False  # the target's retrieval embeds its queries through this proxy too

    @model_validator(mode="after")
    def _one_way(self) -> ModelProxyConfig:
        if self.control and (self.listen or self.upstream):
            raise ValueError("give either control (a proxy that already runs) or listen and upstream (one the rig "
                             "starts), not both")
        if not self.control and not (self.listen and self.upstream):
            raise ValueError("give listen and upstream (the rig starts the proxy there), or control (the address "
                             "of one that already runs)")
        return self

    @property
    def url(self) -> str:
        return (self.control or f"http://{self.listen}").rstrip("/")


class AnswerBudget(_Strict):
    """How long one answer may stream before the rig calls it never-ending (U, with the evidence): generous, so
    only a target that does not stop reaches it."""

    seconds: float = Field(900.0, gt=0)
    events: int = Field(200_000, gt=0)


class TargetConfig(_Strict):
    url: str
    adapter: str = "rig.adapters:WorkbenchAdapter"
    chaos_token_env: str | None = None
    restart_cmd: str | None = None
    docker_container: str | None = None  # restarts (case 26, chaos) through the docker SDK (`rig[dist]`)
    ready_path: str = "/readyz"
    ready_timeout: float = Field(8.0, gt=0)  # seconds the rig waits for ready_path before it gives up
    options: ForeignJson = Field(default_factory=dict)  # passed to the adapter's connect() (no secrets here)
    model_proxy: ModelProxyConfig | None = None  # the rig's LLM fault proxy where the target calls its model
    slots_metric: str | None = None  # overrides the gauge the adapter declares (Capabilities.slots_metric)
    otlp_listen: str | None = None  # HOST:PORT where the gate receives spans; the target's OTLP exporter sends there
    http: HttpSpec | None = None  # a target described here instead of by an adapter class (rig.adapters.http)
    max_event_bytes: int = Field(MAX_EVENT_BYTES, gt=0)  # one streamed event or line past this: a protocol error
    answer_budget: AnswerBudget = Field(default_factory=AnswerBudget)  # an answer streaming past it: "never ended"

    @model_validator(mode="after")
    def _http_adapter(self) -> TargetConfig:
        if self.http is not None and "adapter" not in self.model_fields_set:
            self.adapter = HTTP_ADAPTER  # target.http alone is enough: no Python of the user's own
        if self.adapter == HTTP_ADAPTER and self.http is None:
            raise ValueError(f"adapter {HTTP_ADAPTER} needs target.http (the target's requests, described in YAML)")
        return self

    def chaos_token(self) -> str | None:
        return os.environ.get(self.chaos_token_env) if self.chaos_token_env else None

    def adapter_options(self) -> ForeignJson:
        """What the adapter is built with besides the URL: `options`, and the `http` description when there is one."""
        extra = {"http": self.http.model_dump(mode="json", by_alias=True, exclude_unset=True)} if self.http else {}
        return {**self.options, **extra}


class ModelChoices(_Strict):
    """Model configs case 37/38 switch between, for targets with per-user model configuration."""

    primary: dict[str, str] = Field(default_factory=lambda: {"provider": "local", "model": "local-extractive"})
    alternative: dict[str, str] = Field(default_factory=lambda: {"provider": "local", "model": "local-extractive-mini"})
    invalid: dict[str, str] = Field(default_factory=lambda: {"provider": "local", "model": "rig-invalid-model"})


class RigConfig(_Strict):
    target: TargetConfig
    accounts: dict[str, AccountConfig]
    models: ModelChoices = Field(default_factory=ModelChoices)

    @model_validator(mode="after")
    def _two_accounts(self) -> RigConfig:
        missing = {"a", "b"} - set(self.accounts)
        if missing:
            raise ValueError(f"accounts needs entries a and b (missing: {', '.join(sorted(missing))})")
        return self


def load_config(path: Path) -> RigConfig:
    """Read and validate a rig.yaml; errors name the field and the fix; a password written in the file is warned
    about (it is accepted, and redacted from everything the rig writes)."""
    config = load_yaml_model(path, RigConfig, what="config", flag="--config",
                             shape_fix="see docs/rig.example.yaml for the expected shape", extends=True)
    for key, account in config.accounts.items():
        if account.password:
            LOG.warning("warning: %s: accounts.%s.password is written in the file; prefer password_env (the "
                        "environment variable holding it) — the value is redacted from every output", path, key)
    return config
