"""Two capacity searches side by side: how many researchers each release holds, and the shift between them.

A search brackets its knee: the load every SLO held at (`holds`, with the search's confidence) and the lowest load
that broke (`breaks`). The true capacity lies in [holds, breaks), so the shift's range runs from the new release's
lowest possible capacity over the base's highest to the new's highest over the base's lowest. A release regressed
only when the whole range lies below zero — it broke at a load the base held — and improved only when the whole
range lies above; within the searches' resolution it is the same.
"""

from __future__ import annotations

import json
from pathlib import Path

from rig.compare.model import CapacityComparison
from rig.results.capacity import CapacityResult

CAPACITY_FILE = "capacity.json"


def read_capacity(run_dir: Path) -> CapacityResult | None:
    """A run directory's capacity search, or None for a run that was not one."""
    path = run_dir / CAPACITY_FILE
    if not path.is_file():
        return None
    return CapacityResult.model_validate(json.loads(path.read_text(encoding="utf-8")))


def capacity_shift(base: CapacityResult, new: CapacityResult) -> CapacityComparison:
    """The new release's capacity against the base's: the shift, its range from both brackets, and the call."""
    out = CapacityComparison(unit=base.unit, base_holds=base.holds, base_breaks=base.breaks, new_holds=new.holds,
                             new_breaks=new.breaks, base_answer=base.answer, new_answer=new.answer)
    if base.verdict == "undecided" or new.verdict == "undecided" or not base.holds or new.holds is None:
        out.why = "a search did not decide a capacity (" + "; ".join(
            f"{name}: {r.answer or r.stopped_because or r.verdict}" for name, r in (("base", base), ("new", new))
            if r.verdict == "undecided" or not r.holds) + ")"
        return out
    out.shift = new.holds / base.holds - 1
    # the true capacity of each lies in [holds, breaks): breaks None means above the search's highest step
    base_top = (base.breaks - 1) if base.breaks else None
    new_top = (new.breaks - 1) if new.breaks else None
    out.low = new.holds / base_top - 1 if base_top else None
    out.high = new_top / base.holds - 1 if new_top is not None else None
    who = f"{base.unit[:-1] if new.holds == 1 else base.unit}"
    if out.high is not None and out.high < 0:
        out.call = "fewer"
        out.why = (f"holds {new.holds} {who} where the base held {base.holds}: {-out.shift:.0%} fewer (range "
                   f"{_pct(out.low)} to {_pct(out.high)}); it broke at {new.breaks}, a load the base held")
    elif out.low is not None and out.low > 0:
        out.call = "more"
        out.why = (f"holds {new.holds} {who} where the base broke at {base.breaks}: {out.shift:.0%} more (range "
                   f"{_pct(out.low)} to {_pct(out.high)})")
    else:
        out.call = "same"
        out.why = (f"holds {new.holds} against the base's {base.holds} ({_pct(out.shift)}); the range "
                   f"{_pct(out.low)} to {_pct(out.high)} takes in no change at the searches' resolution")
    return out


def _pct(value: float | None) -> str:
    return "unbounded" if value is None else f"{value:+.0%}"
