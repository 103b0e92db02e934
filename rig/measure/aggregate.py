"""One aggregation of T-code rows, used by every report, every workload summary and the policy.

- `tcode_rows`: the report table, one row per (code, source, label kind, unit);
- `headline`: the one row a threshold such as `T4.p95` reads: the code's time rows without a label (or
  with its primary label, e.g. T7 `execution`, or a `first_text_kind=` label), never an end without a body,
  from the first source present in the order client, browser, server;
- `observed`: the threshold keys (`T4.p95`, `send_lag.p99`, …) from those headlines;
- `run_ends`: runs counted by `<state>/<reason>` (T8), uploads and refusals apart.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from pydantic import BaseModel

from rig.measure import labels
from rig.measure.events import Measure
from rig.measure.tcodes import PACE_CODES, SOURCE_PREFERENCE, TIME_CODES, TCode, is_tcode
from rig.measure.thresholds import STATS, key
from rig.stats import Summary, summarize

HEADLINE_CODES: tuple[str, ...] = (*sorted((c.value for c in TIME_CODES), key=lambda c: int(c[1:])), *PACE_CODES)


class TCodeRow(BaseModel):
    """A report row: one code, one source, one kind of label, with its summary."""

    code: str
    source: str
    label: str | None
    unit: str
    summary: Summary


class TCodeStats(Summary):
    """The summary of one code's headline rows (what thresholds read), or of one of its sources."""

    code: str
    source: str
    label: str | None = None


def group_label(m: Measure) -> str | None:
    """Labels that describe a kind of value stay apart; per-item labels (paper ids of T1) fold together."""
    if m.label is None:
        return None
    if m.code == "T1":  # a file name or paper id each
        return None
    if labels.text_kind(m.label) is not None:
        return m.label
    if labels.without_body(m.label):
        return "no_body"
    return m.label


_ORDER = {c: i for i, c in enumerate(HEADLINE_CODES[:-len(PACE_CODES)] + ("T10", "T11", "T12", "T13") + PACE_CODES)}


def tcode_rows(measures: Iterable[Measure]) -> list[TCodeRow]:
    """The report's T-code table, by code, source and kind of label (T8 is counted in `run_ends`, not summarised;
    the rig's bookkeeping rows — committed messages, tasks, errors — are not T-codes)."""
    groups: dict[tuple[str, str, str | None, str], list[float]] = defaultdict(list)
    for m in measures:
        if m.code == "T8" or not (is_tcode(m.code) or m.code == "send_lag"):  # bookkeeping rows stay in the evidence
            continue
        groups[(m.code, m.source, group_label(m), m.unit)].append(m.value)
    rows = [TCodeRow(code=c, source=s, label=lbl, unit=u, summary=summarize(v)) for (c, s, lbl, u), v in groups.items()]
    return sorted(rows, key=lambda r: (_ORDER.get(r.code, 99), r.code, r.source, r.label or ""))


def counts_for_headline(m: Measure) -> bool:
    """True for a row a threshold on its code reads (see the module docstring)."""
    if m.unit != "ms":
        return False
    if m.label is None or labels.text_kind(m.label) is not None:
        return True
    return is_tcode(m.code) and m.label == TCode(m.code).primary_label


def _stats(code: str, source: str, values: list[float]) -> TCodeStats:
    label = TCode(code).primary_label if is_tcode(code) else None
    return TCodeStats(code=code, source=source, label=label, **summarize(values).model_dump())


def by_source(measures: Iterable[Measure], codes: Iterable[str] = HEADLINE_CODES) -> dict[str, dict[str, TCodeStats]]:
    """Headline rows of each code, summarised per source (`{"T4": {"client": …, "server": …}}`)."""
    wanted = set(codes)
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for m in measures:
        if m.code in wanted and counts_for_headline(m):
            values[m.code][m.source].append(m.value)
    order = {s: i for i, s in enumerate(SOURCE_PREFERENCE)}
    return {code: {src: _stats(code, src, v) for src, v in sorted(per.items(), key=lambda kv: (order.get(kv[0], 9), kv[0]))}
            for code, per in sorted(values.items(), key=lambda kv: _ORDER.get(kv[0], 99))}


def headlines(measures: Iterable[Measure], codes: Iterable[str] = HEADLINE_CODES) -> dict[str, TCodeStats]:
    """Each code's headline: its first source in the preference order (client, browser, server, then others)."""
    return {code: next(iter(per.values())) for code, per in by_source(measures, codes).items()}


def observed(measures: Iterable[Measure]) -> dict[str, float | None]:
    """Threshold keys: `T4.p95`, `T7.count`, … for every headline, and `send_lag.*` when there was a schedule."""
    rows = list(measures)
    out: dict[str, float | None] = {}
    for code, stats in headlines(rows).items():
        for stat in STATS:
            out[key(code, stat)] = getattr(stats, stat)
    lag = summarize([m.value for m in rows if m.code == "send_lag"])
    if lag.count:
        for stat in STATS:
            out[key("send_lag", stat)] = getattr(lag, stat)
    return out


def is_run_end(m: Measure) -> bool:
    """A run's end, counted once (T8 `<state>/<reason>`); an upload's final status (`ingest:…`) and a request refused
    before any run (`refused/…`) are T8 rows too, but not runs."""
    return m.code == "T8" and bool(m.label) and not labels.not_a_run(m.label)


def ended_run_ids(measures: Iterable[Measure]) -> dict[str, str]:
    """The runs whose end was counted, each with its end label (`<state>/<reason>`)."""
    return {m.run_id: m.label or "" for m in measures if is_run_end(m) and m.run_id}


def run_ends(measures: Iterable[Measure]) -> Counter[str]:
    """Runs by `<state>/<reason>` (the one count of run ends: reports, load.json, Prometheus)."""
    return Counter(m.label for m in measures if is_run_end(m) and m.label)
