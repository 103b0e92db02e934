"""Locust's own web UI and CSV list each client-side T-code time as a row of its own (request type `T4`, the
scenario as its name), so an operator watching Locust sees them beside the HTTP requests. This module is the one
place a rig measure poses as a Locust request, and the one place that tells such rows from HTTP requests when
Locust's counts are read back. No figure of the rig comes from these rows: T-codes reach Prometheus, load.json and
the reports from the rig's own rows (`rig.load.recorder`)."""

from __future__ import annotations

from typing import Any

from rig.measure import labels
from rig.measure.events import Measure
from rig.measure.tcodes import is_tcode


def show_in_locust(request: Any, rows: list[Measure], failure: Exception | None = None) -> None:
    """Each client-side T-code time of `rows` fired on Locust's `request` event hook as a row of its own, failed with
    `failure` where it ends a run that came without a body. (The hook is passed in: reading Locust's rows back must
    not load Locust, which patches the process for gevent.)"""
    for m in rows:
        if m.source == "client" and m.unit == "ms" and is_tcode(m.code):
            request.fire(request_type=m.code, name=m.scenario or "", response_time=m.value, response_length=0,
                                exception=failure if labels.without_body(m.label) else None, context={})


def is_measure_row(request_type: str) -> bool:
    """A Locust row that `show_in_locust` made (not an HTTP request)."""
    return is_tcode(request_type)
