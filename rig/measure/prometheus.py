"""The rig's Prometheus schema (names from the design) and how a measured row lands in it.

`rig_t_seconds{code,scenario,source}` holds the timed T-code rows a threshold reads (each code's headline
rows, `rig.measure.aggregate.counts_for_headline`: T7 its execution time, T2 its tool calls, no end
without a body), so a dashboard's `T7` is the policy's `T7`; T8 rows count runs by state and reason, T12
tokens by direction and source, T13 cost as actual or estimated; the rig's own `error` rows count
failures by reason. Units are in the names; no ids are labels.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from rig.measure import labels
from rig.measure.aggregate import counts_for_headline, is_run_end
from rig.measure.events import Measure
from rig.measure.tcodes import PACE_ITL, PACE_TPOT, TOKENS_OUT, is_tcode

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
PACE = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.2, 0.5, 1.0)  # per piece or token, in s
TOKEN_BUCKETS = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)


class RigMetrics:
    """The rig's metrics, on a registry of their own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.t_seconds = Histogram("rig_t_seconds", "T-code timings", ["code", "scenario", "source"], registry=r,
                                   buckets=BUCKETS)
        self.send_lag = Histogram("rig_send_lag_seconds", "Scheduled → actual send (open-loop arrivals)",
                                  ["scenario"], registry=r, buckets=BUCKETS)
        self.tokens = Counter("rig_tokens", "Tokens of completed runs", ["direction", "kind"], registry=r)
        self.cost = Counter("rig_cost_usd", "Cost of runs (actual only where a provider reported it)", ["kind"],
                            registry=r)
        self.runs = Counter("rig_runs", "Runs ended, by state and reason", ["state", "reason"], registry=r)
        self.errors = Counter("rig_errors", "Requests and runs that failed, by reason", ["reason"], registry=r)
        self.users = Gauge("rig_users", "Simulated users running", registry=r)
        self.workers = Gauge("rig_workers", "Locust workers connected", registry=r)
        self.shape_users = Gauge("rig_shape_users", "Users the load shape asks for now (its stage's ramp, or the "
                                 "capacity search's step)", registry=r)
        self.shape_stage = Gauge("rig_shape_stage", "The load shape's stage now (1 for the first), or the capacity "
                                 "search's step", registry=r)
        self.chunk_gap = Histogram("rig_gen_ai_time_per_output_chunk_seconds", "An answer's mean gap between its "
                                   "pieces after the first (ITL), per run", ["scenario"], registry=r, buckets=PACE)
        self.token_time = Histogram("rig_gen_ai_time_per_output_token_seconds", "An answer's time per output token "
                                    "after the first (TPOT), per run", ["scenario"], registry=r, buckets=PACE)
        self.output_tokens = Histogram("rig_gen_ai_output_tokens", "Output tokens of a completed run (reported by "
                                       "the target, else counted as pieces)", ["scenario", "source"], registry=r,
                                       buckets=TOKEN_BUCKETS)
        self.target_cpu = Gauge("rig_target_cpu_cores", "Target CPU use (cores busy), sampled", registry=r)
        self.target_rss = Gauge("rig_target_memory_bytes", "Target resident memory, sampled", registry=r)

    def observe(self, m: Measure) -> None:
        """Count one measured row in the metric its code belongs to (rows of other kinds are not exported)."""
        scenario = m.scenario or ""
        if m.unit == "ms" and is_tcode(m.code):
            if counts_for_headline(m):
                self.t_seconds.labels(m.code, scenario, m.source).observe(m.value / 1000.0)
        elif m.code == PACE_ITL:
            self.chunk_gap.labels(scenario).observe(m.value / 1000.0)
        elif m.code == PACE_TPOT:
            self.token_time.labels(scenario).observe(m.value / 1000.0)
        elif m.code == TOKENS_OUT:
            self.output_tokens.labels(scenario, m.source).observe(m.value)
        elif m.code == "send_lag":
            self.send_lag.labels(scenario).observe(m.value / 1000.0)
        elif is_run_end(m) and m.label:
            state, reason = labels.end_parts(m.label)
            self.runs.labels(state, reason).inc(m.value)
        elif m.code == "T12" and m.unit == "tokens" and m.label in ("input", "output"):
            self.tokens.labels(m.label, m.source).inc(m.value)
        elif m.code == "T13" and m.unit == "usd":
            self.cost.labels("actual" if m.source == "actual" else "estimated").inc(m.value)
        elif m.code == "error":
            self.errors.labels(m.label or "unknown").inc(m.value)
