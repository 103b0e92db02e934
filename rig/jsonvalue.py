"""The JSON the rig carries without a model of its own, named for why it has none.

Everything the rig itself reads crosses a boundary as a pydantic model. Two kinds of JSON do not, and each is
named here so that a reader sees which it is: `JsonObject`, passed through unread (stored, shown or forwarded as it
came), and `ForeignJson`, a shape the rig does not own (a target's, a fault proxy's, Locust's, an OTLP file's),
read only by the code that speaks that shape.
`tests/test_layering.py` holds `dict[str, Any]` to this module.
"""

from __future__ import annotations

from typing import Any, TypeAlias

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object the rig passes through unread: kept in evidence, shown in a report or forwarded as it came."""

ForeignJson: TypeAlias = dict[str, Any]
"""A JSON object in a shape the rig does not own — what a target or a fault proxy sends and is sent, the
`target.options` of the adapter that speaks to it, Locust's reports, an OTLP file — read only by the code that
speaks that shape (an adapter, through the paths it declares)."""
