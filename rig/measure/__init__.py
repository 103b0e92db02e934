"""Measurement: what each T-code means and how it is taken, the same for every workload.

    rig.measure.events      what a run says, typed (events, run record, search result, citations) and Measure
    rig.measure.citations   citations read off an answer's own `[n]` markers
    rig.measure.tcodes      TCode: each code's definition, unit and headline row
    rig.measure.sse         the one reader of event streams (bytes in, stamped events out)
    rig.measure.transcript  RunTranscript: a run as observed (events, run record, end)
    rig.measure.derive      the one derivation of T-code rows (runs, searches, uploads, browser turns)
    rig.measure.aggregate   the one aggregation: report rows, headlines, threshold keys, run ends
    rig.measure.prometheus  the rig's Prometheus schema
"""

from rig.measure.derive import (
    flight_measure,
    ingest_measures,
    refusal_measures,
    restart_measures,
    run_measures,
    search_measures,
    send_lag_measure,
    stage_measures,
    tcode,
)
from rig.measure.events import Measure
from rig.measure.labels import LOAD_ENDED
from rig.measure.sse import RawEvent, SseParser, read_events
from rig.measure.tally import task_row, turn_row
from rig.measure.tcodes import TIME_CODES, TCode, is_tcode
from rig.measure.transcript import RunTranscript

__all__ = ["LOAD_ENDED", "TIME_CODES", "Measure", "RawEvent", "RunTranscript", "SseParser", "TCode", "flight_measure",
           "ingest_measures",
           "is_tcode", "read_events", "refusal_measures", "restart_measures", "run_measures", "search_measures",
           "send_lag_measure", "stage_measures", "task_row", "tcode", "turn_row"]
