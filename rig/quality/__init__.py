"""The quality workload: the eval set's case-turns asked of a target, scored (recall@10, nDCG@10,
traceability) and sent to judges. A quality scenario imports `scenario`, `QualityContext` and its helpers from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.lazy import exports

if TYPE_CHECKING:
    from rig.quality import metrics
    from rig.quality.context import QualityContext, answer_citations, open_pages, run_hits
    from rig.quality.driver import CaseDriver
    from rig.quality.registry import scenario
    from rig.quality.session import QualityOptions, QualityResult, run_quality

_EXPORTS = {
    "CaseDriver": "rig.quality.driver", "QualityContext": "rig.quality.context",
    "QualityOptions": "rig.quality.session", "QualityResult": "rig.quality.session",
    "answer_citations": "rig.quality.context", "metrics": "rig.quality.metrics", "open_pages": "rig.quality.context",
    "run_hits": "rig.quality.context", "run_quality": "rig.quality.session", "scenario": "rig.quality.registry",
}
__all__ = ["CaseDriver", "QualityContext", "QualityOptions", "QualityResult", "answer_citations", "metrics",
          "open_pages", "run_hits", "run_quality", "scenario"]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
