"""What a target offers, per operation and per variant. Cases needing something absent end BLOCKED."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from rig.errors import CapabilityMissing

_ALL_EXPORTS: tuple[Literal["md", "json"], ...] = ("md", "json")


class Capabilities(BaseModel):
    """Declared by an adapter; `missing()` names what a step needs but the target lacks."""

    stream: Literal["sse", "websocket", "none"] = "sse"
    stop: Literal["server", "disconnect", "none"] = "server"
    resume: bool = True
    regenerate: bool = True
    export: list[Literal["md", "json"]] = Field(default_factory=lambda: list(_ALL_EXPORTS))
    direct_search: bool = True
    locate_citation: bool = True
    run_detail: bool = True
    members: bool = True
    attachments: bool = True
    scope_change: bool = True
    summaries: bool = True
    model_config_api: bool = True
    chaos: bool = False
    scope_rule: str | None = None  # the target's declared rule for combining scope and attachments
    page_text: bool = True
    version: str | None = None  # the target's own version, when it says
    download: bool = True
    slots_metric: str | None = None  # the gauge of run slots in use on the target's /metrics, when it has one

    def missing(self, *names: str) -> list[str]:
        """Names (as `field` or `field=variant`) that are not offered."""
        out = []
        for name in names:
            field, _, variant = name.partition("=")
            value = getattr(self, field, None)
            if variant:
                ok = variant in value if isinstance(value, list) else value == variant
            else:
                ok = bool(value) and value != "none"
            if not ok:
                out.append(name)
        return out

    def require(self, *names: str) -> None:
        missing = self.missing(*names)
        if missing:
            raise CapabilityMissing(", ".join(missing))
