"""Per-user model configuration: stored with the API key encrypted, resolved to a provider per run."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.models.base import ModelError, Provider
from workbench.models.local import LOCAL_MODELS, LocalModel
from workbench.models.openai_compat import OpenAICompatModel
from workbench.security import mask_key
from workbench.services import Services

PROVIDERS = ("local", "openai")


@dataclass(frozen=True)
class ModelConfig:
    provider: str
    model: str
    base_url: str | None
    api_key: str | None
    config_version: int

    def public(self, *, leak_key: bool = False) -> dict[str, object]:
        """The config as the API shows it: the key masked, never in plain text."""
        return {"provider": self.provider, "model": self.model, "base_url": self.base_url,
                "api_key_masked": self.api_key if leak_key else mask_key(self.api_key),
                "config_version": self.config_version}

    @property
    def version_tag(self) -> str:
        return f"{self.provider}:{self.model}:v{self.config_version}"


def default_config(svc: Services) -> ModelConfig:
    c = svc.config
    return ModelConfig(c.default_provider, c.default_model, c.default_base_url, c.default_api_key, 0)


def user_config(svc: Services, user_id: str) -> ModelConfig:
    """The user's own config, or the server default when the user has none."""
    row = svc.db.one("SELECT * FROM model_configs WHERE user_id=?", user_id)
    if row is None:
        return default_config(svc)
    return ModelConfig(row["provider"], row["model"], row["base_url"], svc.vault.open(row["api_key_enc"]),
                       row["config_version"])


def save_config(svc: Services, user_id: str, provider: str, model: str, base_url: str | None,
                api_key: str | None) -> ModelConfig:
    """Store a new config version for the user (the key sealed at rest)."""
    with svc.db.tx() as conn:
        row = conn.execute("SELECT config_version FROM model_configs WHERE user_id=?", (user_id,)).fetchone()
        version = (row["config_version"] if row else 0) + 1
        sealed = svc.vault.seal(api_key) if api_key else None
        conn.execute("INSERT INTO model_configs(user_id, provider, model, base_url, api_key_enc, config_version) "
                     "VALUES(?,?,?,?,?,?) ON CONFLICT(user_id) DO UPDATE SET provider=excluded.provider, "
                     "model=excluded.model, base_url=excluded.base_url, api_key_enc=excluded.api_key_enc, "
                     "config_version=excluded.config_version",
                     (user_id, provider, model, base_url, sealed, version))
    return ModelConfig(provider, model, base_url, api_key, version)


def validate(config: ModelConfig) -> str | None:
    """Why a config cannot work, or None."""
    if config.provider not in PROVIDERS:
        return f"unknown provider {config.provider!r} (expected one of {', '.join(PROVIDERS)})"
    if config.provider == "local" and config.model not in LOCAL_MODELS:
        return f"unknown local model {config.model!r} (expected one of {', '.join(LOCAL_MODELS)})"
    if config.provider == "openai" and not config.base_url:
        return "an openai-compatible provider needs base_url"
    return None


def build_provider(svc: Services, config: ModelConfig) -> Provider:
    """A provider for the config; an invalid config raises `model_config_invalid` (no silent fallback)."""
    problem = validate(config)
    if problem is not None:
        if "model_fallback_silent" in svc.defects:
            fallback = default_config(svc)
            return LocalModel(fallback.model, svc.settings)
        raise ModelError("model_config_invalid", problem)
    if config.provider == "local":
        return LocalModel(config.model, svc.settings)
    assert config.base_url is not None
    return OpenAICompatModel(config.model, config.base_url, config.api_key)
