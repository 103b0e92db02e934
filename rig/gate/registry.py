"""Case registry: scenario modules declare each reliability case with `@case(...)`.

A case function receives a CaseContext, performs the eval set's operation, and records sub-items with
their evidence. Its docstring says what it does, what it expects and what evidence it keeps. The modules
are found through the `rig.scenarios` entry points (`rig.plugins`), never imported by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rig.adapters.capabilities import Capabilities
from rig.gate.context import CaseContext
from rig.measure.tcodes import is_tcode
from rig.plugins import load_scenario_packs

CaseFn = Callable[[CaseContext], None]


@dataclass(frozen=True)
class CaseSpec:
    case_id: int
    record_id: str
    module: str
    fn: CaseFn
    codes: tuple[str, ...] = ()
    needs: tuple[str, ...] = field(default=())
    papers: tuple[str, ...] | None = None  # what it needs uploaded (rig.target.setup.needs_of); None: everything

    @property
    def doc(self) -> str:
        return (self.fn.__doc__ or "").strip()


_CASES: dict[int, CaseSpec] = {}
_REPLACING: dict[int, CaseSpec] = {}  # a team's own version of a case, over the shipped one


def case(case_id: int, record_id: str, *, codes: tuple[str, ...] = (), needs: tuple[str, ...] = (),
         papers: tuple[str, ...] | None = None, replaces: bool = False) -> Callable[[CaseFn], CaseFn]:
    """Register a case function for reliability case `case_id` (`record_id` as the eval set spells it); `papers` says
    what the case needs uploaded: paper ids, variant ids, `isolated:P32`, `B`, `quality:<record prefix>`, `*`.
    A second registration of the same case is an error unless it says `replaces=True` (it then wins, whatever order
    the packs load in; the gate's progress names the replacing module)."""
    Capabilities.check_names(*needs)  # a mistyped capability fails here, at import, not as silent BLOCKED items
    unknown = [c for c in codes if not is_tcode(c)]
    if unknown:
        raise ValueError(f"case {case_id}: no T-code {', '.join(unknown)} (rig.measure.tcodes.TCode)")

    def register(fn: CaseFn) -> CaseFn:
        spec = CaseSpec(case_id, record_id, fn.__module__.rsplit(".", 1)[-1], fn, codes, needs, papers)
        if replaces:
            _REPLACING[case_id] = spec
            return fn
        held = _CASES.get(case_id)
        if held is not None and _where(held.fn) != _where(fn):
            raise ValueError(f"case {case_id} is registered twice: {_where(held.fn)} and {_where(fn)}; a pack that "
                             "means to replace a case says @case(..., replaces=True)")
        _CASES[case_id] = spec
        return fn
    return register


def _where(fn: CaseFn) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def all_cases() -> dict[int, CaseSpec]:
    """Every registered case, loading the scenario packs on first use."""
    load_scenario_packs()
    return dict(sorted({**_CASES, **_REPLACING}.items()))
