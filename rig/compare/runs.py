"""Comparing two run directories: are they comparable, what verdicts changed, which T-codes and rates moved.

Everything is re-read from each run's own files (`manifest.json`, `results.json`, `load.json`, the
evidence store), so a comparison can be made of any two runs kept on disk, however old.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rig.adapters.protocol import describe
from rig.compare.capacity import capacity_shift, read_capacity
from rig.compare.model import (
    CompareResult,
    CompareSettings,
    Comparison,
    Difference,
    OfferedLoad,
    RateComparison,
    TCodeComparison,
    Throughput,
    VerdictChange,
)
from rig.compare.stats import call_shift, cliffs_delta, two_proportions
from rig.errors import ConfigError
from rig.evidence import EvidenceStore
from rig.measure import labels
from rig.measure.aggregate import counts_for_headline, run_ends
from rig.measure.events import Measure
from rig.measure.tcodes import TIME_CODES, TCode, is_tcode
from rig.results.gate import CaseResult, GateResults
from rig.results.load import LoadSummary
from rig.runmanifest import RunManifest, read_manifest

M = TypeVar("M", bound=BaseModel)

PARTS = ("gate", "load", "quality")
STATS = ("p50", "p95", "p99")
# Settings that make two runs incomparable, and those only listed (a new target version is the point).
BLOCKING = ("kind", "eval_set_sha256", "corpus_digest")
# Settings that decide what the target was asked to do: not comparable unless the user asks (`--anyway`).
ASKED = ("chaos_schedule", "policy")
LISTED = ("target_version", "target_url", "adapter", "defects", "machine")


def compare_dirs(base: Path, new: Path, settings: CompareSettings | None = None) -> CompareResult:
    """Compare two run directories of the same kind (gate, load, quality, or a pre-release run's parts)."""
    settings = settings or CompareSettings()
    pairs = _parts(base, new)
    parts = [compare_part(name, b, n, settings) for name, b, n in pairs]
    blocking = [f"{p.part}: {d.field} differs ({_short(d.base)} → {_short(d.new)}{' ' + d.unit if d.unit else ''})"
                for p in parts for d in p.differences if d.blocking]
    blocking += [f"{p.part}: capacity not comparable: {p.capacity.why}" for p in parts
                 if p.capacity is not None and p.capacity.call == "not comparable"]
    if blocking:
        return CompareResult(base=str(base), new=str(new), settings=settings, decision="not comparable",
                             reasons=blocking, parts=parts)
    reasons = regressions(parts)
    caveats = [f"{p.part}: compared anyway although {d.field} differs ({_short(d.base)} → {_short(d.new)}"
               f"{' ' + d.unit if d.unit else ''})" for p in parts for d in p.differences if d.caveat]
    return CompareResult(base=str(base), new=str(new), settings=settings,
                         decision="regressed" if reasons else "no regression",
                         reasons=(reasons or ["no verdict got worse, no T-code or rate regressed"]) + caveats,
                         parts=parts)


def regressions(parts: list[Comparison]) -> list[str]:
    """Every finding that makes the new run worse than the base, in words."""
    out: list[str] = []
    for p in parts:
        out += [f"{p.part}: {v.case}{'/' + v.item if v.item else ''} {v.base} → {v.new} ({v.new_reason[:120]})"
                for v in p.verdict_changes if v.worse]
        for t in p.tcodes + p.tokens_and_cost:
            out += [f"{p.part}: {t.code} ({t.source}) {s.stat} {_num(s.base)} → {_num(s.new)} {t.unit} regressed "
                    f"({s.why})" for s in t.shifts if s.call == "regressed"]
        out += [f"{p.part}: {r.name} {r.base}/{r.base_runs} → {r.new}/{r.new_runs} regressed (p={r.p_value:.3g})"
                for r in p.rates if r.call == "regressed" and r.p_value is not None]
        if p.capacity is not None and p.capacity.call == "fewer":
            out.append(f"{p.part}: capacity {p.capacity.why}")
    return out


@dataclass
class RunFiles:
    """What a comparison reads of one run directory, read once: its manifest, load plan and measures."""

    path: Path
    manifest: RunManifest
    offered: OfferedLoad | None  # a load run's offered load (None: not a load run)
    measures: list[Measure]


def read_run(path: Path) -> RunFiles:
    """A run directory's manifest, offered load (its plan with the run's own user and worker counts and stages)
    and measures; the evidence store is opened once."""
    manifest = _manifest(path)
    plan: Any = None
    measures: list[Measure] = []
    if (path / "evidence.sqlite3").exists():
        store = EvidenceStore(path / "evidence.sqlite3")
        try:
            plan, measures = store.meta("plan"), store.measures()
        finally:
            store.close()
    return RunFiles(path, manifest, _offered(plan, _load_summary(path)), measures)


def _offered(plan: Any, summary: LoadSummary | None) -> OfferedLoad | None:
    """The offered load from the plan the Locust processes read and load.json (the run's own counts and stages)."""
    if not isinstance(plan, dict) and summary is None:
        return None
    offered = OfferedLoad.model_validate(plan if isinstance(plan, dict) else {})
    if summary is not None:
        offered.users, offered.workers, offered.duration_s = summary.users, summary.workers, summary.duration_s
        offered.stages = [f"{(s.end_ms - s.start_ms) / 1000:g}:{s.to_users}" for s in summary.stages]
    return offered


def compare_part(name: str, base: Path, new: Path, settings: CompareSettings) -> Comparison:
    rb, rn = read_run(base), read_run(new)
    out = Comparison(part=name, base_dir=str(base), new_dir=str(new), kind=rn.manifest.kind)
    out.differences = differences(rb, rn, anyway=settings.anyway)
    if any(d.blocking for d in out.differences):
        return out
    out.verdict_changes = verdict_changes(base, new)
    cb, cn = read_capacity(base), read_capacity(new)
    if (cb is None) != (cn is None):
        out.differences.append(Difference(field="capacity search", base=cb is not None, new=cn is not None,
                                          blocking=True))
        return out
    if cb is not None and cn is not None:  # their samples span every step's load: only the capacities compare
        out.capacity = capacity_shift(cb, cn)
        return out
    out.tcodes = tcode_shifts(rb.measures, rn.measures, settings)
    out.tokens_and_cost = usage_shifts(rb.measures, rn.measures, settings)
    out.rates = rate_changes(rb.measures, rn.measures, settings)
    out.throughput = throughput(rb, rn)
    return out


def differences(rb: RunFiles, rn: RunFiles, *, anyway: bool = False) -> list[Difference]:
    """Settings that differ: the blocking ones first (kind, eval set, corpus; then what the target was asked to do —
    offered load, chaos schedule, policy — unless compared `anyway`, each then a caveat), then the rest."""
    mb, mn = rb.manifest, rn.manifest
    out = [Difference(field=f, base=getattr(mb, f), new=getattr(mn, f), blocking=True)
           for f in BLOCKING if getattr(mb, f) != getattr(mn, f)]
    asked = [(f, getattr(mb, f), getattr(mn, f), "") for f in ASKED]
    ob, on = rb.offered, rn.offered
    if ob is not None and on is not None:
        sb, sn = ob.comparable_settings(), on.comparable_settings()
        asked += [(k, v, sn[k][0], unit) for k, (v, unit) in sb.items()]
        out += [Difference(field=f"load.{k}", base=getattr(ob, k), new=getattr(on, k), unit=u)
                for k, u in (("workers", ""), ("duration_s", "s")) if getattr(ob, k) != getattr(on, k)]
    out += [Difference(field=f, base=b, new=n, unit=unit, blocking=not anyway, caveat=anyway)
            for f, b, n, unit in asked if b != n]
    both_embedded = mb.target_embedded and mn.target_embedded
    out += [Difference(field=f, base=getattr(mb, f), new=getattr(mn, f),
                       environment=f == "machine" or (f == "target_url" and both_embedded)) for f in LISTED
            if getattr(mb, f) != getattr(mn, f)]
    return sorted(out, key=lambda d: (not d.blocking, d.environment))  # what matters first, where it ran last


def verdict_changes(base: Path, new: Path) -> list[VerdictChange]:
    """Case and item verdicts that differ between two results.json files (cases present in either)."""
    rb, rn = _results(base), _results(new)
    out: list[VerdictChange] = []
    for key in dict.fromkeys([*rb, *rn]):
        cb, cn = rb.get(key), rn.get(key)
        vb, vn = (cb.verdict.value if cb else None), (cn.verdict.value if cn else None)
        if vb != vn:
            out.append(VerdictChange(case=key, base=vb, new=vn, base_reason=cb.reason if cb else "",
                                     new_reason=cn.reason if cn else "", worse=_worse(vb, vn)))
        ib = {i.name: i for i in (cb.items if cb else [])}
        inn = {i.name: i for i in (cn.items if cn else [])}
        for item in dict.fromkeys([*ib, *inn]):
            b, n = ib.get(item), inn.get(item)
            xb, xn = (b.verdict.value if b else None), (n.verdict.value if n else None)
            if xb != xn:
                out.append(VerdictChange(case=key, item=item, base=xb, new=xn, base_reason=b.reason if b else "",
                                         new_reason=n.reason if n else "", worse=_worse(xb, xn)))
    return out


def samples(measures: list[Measure]) -> dict[tuple[str, str], list[float]]:
    """Headline samples of each time T-code per source (the rows a threshold on the code reads)."""
    out: dict[tuple[str, str], list[float]] = defaultdict(list)
    for m in measures:
        if is_tcode(m.code) and TCode(m.code) in TIME_CODES and counts_for_headline(m):
            out[(m.code, m.source)].append(m.value)
    return out


def tcode_shifts(base: list[Measure], new: list[Measure], settings: CompareSettings) -> list[TCodeComparison]:
    sb, sn = samples(base), samples(new)
    out = []
    for key in sorted(set(sb) | set(sn), key=lambda k: (int(k[0][1:]), k[1])):
        b, n = sb.get(key, []), sn.get(key, [])
        shifts = [call_shift(stat, b, n, alpha=settings.alpha, min_rel=settings.min_rel,
                             min_abs=settings.min_abs_ms, resamples=settings.resamples, seed=settings.seed)
                  for stat in STATS]
        out.append(TCodeComparison(code=key[0], source=key[1], unit="ms", n_base=len(b), n_new=len(n),
                                   cliffs_delta=round(cliffs_delta(b, n), 4) if b and n else None, shifts=shifts))
    return out


def usage_shifts(base: list[Measure], new: list[Measure], settings: CompareSettings) -> list[TCodeComparison]:
    """Tokens (T12) and cost (T13) per run, by source and label (input/output, actual/estimate)."""
    def per_run(measures: list[Measure]) -> dict[tuple[str, str, str], list[float]]:
        groups: dict[tuple[str, str, str], list[float]] = defaultdict(list)
        for m in measures:
            if m.code in ("T12", "T13") and m.run_id:
                groups[(m.code, m.source, (m.label or "").split(":")[0] or m.unit)].append(m.value)
        return groups

    gb, gn = per_run(base), per_run(new)
    out = []
    for key in sorted(set(gb) & set(gn)):
        b, n = gb[key], gn[key]
        shifts = [call_shift("p50", b, n, alpha=settings.alpha, min_rel=settings.min_rel, min_abs=0.0,
                             resamples=settings.resamples, seed=settings.seed)]
        out.append(TCodeComparison(code=key[0], source=f"{key[1]}:{key[2]}", unit="tokens" if key[0] == "T12" else "USD",
                                   n_base=len(b), n_new=len(n), cliffs_delta=round(cliffs_delta(b, n), 4),
                                   shifts=shifts))
    return out


def rate_changes(base: list[Measure], new: list[Measure], settings: CompareSettings) -> list[RateComparison]:
    """The share of runs that did not complete, and of each end reason, compared with a two-proportion test."""
    eb, en = run_ends(base), run_ends(new)
    nb, nn = sum(eb.values()), sum(en.values())
    rows = [("not completed", sum(v for k, v in eb.items() if not labels.completed(k)),
             sum(v for k, v in en.items() if not labels.completed(k)))]
    rows += [(reason, eb.get(reason, 0), en.get(reason, 0)) for reason in sorted(set(eb) | set(en))
             if not labels.completed(reason)]
    out = []
    for name, xb, xn in rows:
        p = two_proportions(xb, nb, xn, nn)
        row = RateComparison(name=name, base=xb, base_runs=nb, new=xn, new_runs=nn, p_value=p)
        if p is not None and min(nb, nn) >= 20:
            worse = xn / nn > xb / nb
            row.call = ("regressed" if worse else "improved") if p < settings.alpha else "no evidence"
        out.append(row)
    return out


def throughput(rb: RunFiles, rn: RunFiles) -> Throughput | None:
    """Completed runs per second, compared only at equal offered load (the same open-loop arrival rate)."""
    jb, jn = _load_summary(rb.path), _load_summary(rn.path)
    pb, pn = rb.offered, rn.offered
    if rb.manifest.kind != "load" or jb is None or jn is None or pb is None or pn is None:
        return None
    row = Throughput(base_rps=jb.throughput_rps, new_rps=jn.throughput_rps, comparable=True)
    if "closed" in (pb.arrival, pn.arrival):
        row.comparable, row.why = False, "closed-loop runs: throughput follows the target's own speed, not an offered load"
    elif (pb.arrival, pb.rate_per_s) != (pn.arrival, pn.rate_per_s):
        row.comparable = False
        row.why = f"offered load differs: {pb.arrival} {pb.rate_per_s}/s vs {pn.arrival} {pn.rate_per_s}/s"
    return row


# -- reading run directories --------------------------------------------------------------------------------
def _parts(base: Path, new: Path) -> list[tuple[str, Path, Path]]:
    for path in (base, new):
        if not path.is_dir():
            raise ConfigError(f"{path} is not a run directory", fix="pass two run directories: rig compare BASE NEW")
    pre_b, pre_n = (base / "prerelease.json").exists(), (new / "prerelease.json").exists()
    if pre_b != pre_n:
        raise ConfigError(f"{base if pre_b else new} is a pre-release run and the other is not: not comparable",
                          fix="compare two pre-release runs, or two parts of the same kind (e.g. BASE/load NEW/load)")
    if pre_b:
        return [(p, base / p, new / p) for p in PARTS if (base / p / "manifest.json").exists()
                and (new / p / "manifest.json").exists()]
    return [(_manifest(base).kind, base, new)]


def _manifest(path: Path) -> RunManifest:
    if not (path / "manifest.json").exists():
        raise ConfigError(f"{path} has no manifest.json: not a rig run directory",
                          fix="pass the directory a rig gate, load, quality or demo run wrote")
    return read_manifest(path)


def read_measures(path: Path) -> list[Measure]:
    """Every measure a run directory's evidence store holds (none when it has no store)."""
    store_path = path / "evidence.sqlite3"
    if not store_path.exists():
        return []
    store = EvidenceStore(store_path)
    try:
        return store.measures()
    finally:
        store.close()


def _results(path: Path) -> dict[str, CaseResult]:
    """The cases of a run's results.json by record id, read through its model (none without the file)."""
    file = path / "results.json"
    if not file.exists():
        return {}
    return {c.record_id or str(c.case_id): c for c in _read(file, GateResults).cases}


def _load_summary(path: Path) -> LoadSummary | None:
    """A run's load.json through its model (None without the file)."""
    file = path / "load.json"
    return _read(file, LoadSummary) if file.exists() else None


def _read(file: Path, model: type[M]) -> M:
    """A result file through its model; one that does not fit is named with what is wrong, never a traceback."""
    try:
        return model.model_validate_json(file.read_bytes())
    except ValidationError as exc:
        raise ConfigError(f"{file} is not a {model.__name__} the rig wrote: {describe(exc)}",
                          fix="compare run directories written by this version of the rig (or re-run `rig report` "
                              "on them)") from None


def _worse(before: str | None, after: str | None) -> bool:
    if after == "FAIL":
        return before != "FAIL"
    return before == "PASS" and after in ("U", "BLOCKED", "NOT_RUN")


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"
