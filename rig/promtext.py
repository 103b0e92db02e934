"""Reading values out of a Prometheus text exposition (a target's `/metrics`)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families


def sample_value(text: str, name: str, labels: dict[str, str] | None = None) -> float | None:
    """The value of the first sample called `name` whose labels include `labels`, or None."""
    want = labels or {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in want.items()):
                return float(sample.value)
    return None
