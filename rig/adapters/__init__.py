"""Adapters: the one interface between scenarios and a target."""

from __future__ import annotations

import importlib

from rig.adapters.base import Adapter, Exchange
from rig.adapters.capabilities import Capabilities
from rig.adapters.models import (
    Auth,
    CheckpointEvent,
    Citation,
    CitationEvent,
    Document,
    Event,
    Hit,
    Located,
    Message,
    ModelConfigView,
    RunDetail,
    SearchResult,
    Session,
    Submitted,
    TokenEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from rig.adapters.transport import HttpxTransport, Reply, StreamReply, Transport, TransportError
from rig.adapters.workbench import WorkbenchAdapter
from rig.errors import ConfigError

__all__ = ["Adapter", "Auth", "Capabilities", "CheckpointEvent", "Citation", "CitationEvent", "Document", "Event",
           "Exchange", "Hit", "HttpxTransport", "Located", "Message", "ModelConfigView", "Reply", "RunDetail",
           "SearchResult", "Session", "StreamReply", "Submitted", "TokenEvent", "ToolCallEvent", "ToolResultEvent",
           "Transport", "TransportError", "WorkbenchAdapter", "load_adapter_class"]


def load_adapter_class(spec: str) -> type[Adapter]:
    """Import `package.module:Class` (the `--adapter` option) and check it is an Adapter."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"adapter {spec!r} is not of the form package.module:Class",
                          fix="for example --adapter mypkg.adapters:MyTargetAdapter")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"cannot import adapter module {module_name!r}: {exc}",
                          fix="install the package or put it on PYTHONPATH") from None
    cls = getattr(module, attr, None)
    if not isinstance(cls, type) or not issubclass(cls, Adapter):
        raise ConfigError(f"{spec} is not a subclass of rig.adapters.Adapter")
    return cls
