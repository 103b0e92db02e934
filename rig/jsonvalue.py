"""The JSON the rig carries without a model of its own, named for why it has none.

Everything the rig itself reads crosses a boundary as a pydantic model. Two kinds of JSON do not, and each is
named here so that a reader sees which it is: `JsonObject`, passed through unread (stored, shown or forwarded as it
came), and `TargetJson`, a target's own shape, read only by the adapter that speaks that target's dialect.
`tests/test_layering.py` holds `dict[str, Any]` to this module.
"""

from __future__ import annotations

from typing import Any, TypeAlias

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object the rig passes through unread: kept in evidence, shown in a report or forwarded as it came."""

TargetJson: TypeAlias = dict[str, Any]
"""A JSON object in a target's (or a proxy's) own shape, read only through the paths its adapter declares."""
