"""Declarative HTTP adapters: a target described in rig.yaml (`target.http`) instead of an adapter class."""

from __future__ import annotations

from rig.adapters.http.adapter import HttpAdapter
from rig.adapters.http.spec import HttpSpec

__all__ = ["HttpAdapter", "HttpSpec"]
