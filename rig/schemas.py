"""The JSON Schemas of the files a run writes, generated from the models that write them.

    python -m rig.schemas --write docs/schemas     # regenerate after changing a model
    python -m rig.schemas --check docs/schemas     # exit 1 when a published schema is out of date

| file | model |
|---|---|
| `load.json` | `rig.load.summary.LoadSummary` |
| `results.json` | `rig.results.gate.GateResults` |
| `quality.json` | `rig.quality.summary.QualityReport` |
| `prerelease.json` | `rig.prerelease.report.PrereleaseNumbers` |
| `compare.json` | `rig.compare.model.CompareResult` |
| `coverage.json` | `rig.coverage.CoverageMatrix` |
| `capacity.json` | `rig.results.capacity.CapacityResult` |
| `--json` output | `rig.results.summary.RunSummary` |
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel

from rig.compare.model import CompareResult
from rig.coverage import CoverageMatrix
from rig.jsonvalue import JsonObject
from rig.prerelease.report import PrereleaseNumbers
from rig.results.capacity import CapacityResult
from rig.results.gate import GateResults
from rig.results.load import LoadSummary
from rig.results.quality import QualityReport
from rig.results.summary import RunSummary

MODELS: dict[str, type[BaseModel]] = {
    "load": LoadSummary, "results": GateResults, "quality": QualityReport, "prerelease": PrereleaseNumbers,
    "compare": CompareResult, "summary": RunSummary, "coverage": CoverageMatrix, "capacity": CapacityResult,
}


def schema_of(name: str) -> JsonObject:
    """The JSON Schema of `<name>.json`, as the model writes it (what a reader may rely on)."""
    schema = MODELS[name].model_json_schema(mode="serialization")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"{name}.schema.json", **schema}


def schema_text(name: str) -> str:
    return json.dumps(schema_of(name), ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("--write", "--check"):
        print(__doc__)
        return 2
    folder = Path(argv[1])
    stale = []
    for name in MODELS:
        path = folder / f"{name}.schema.json"
        if argv[0] == "--write":
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(schema_text(name), encoding="utf-8")
        elif not path.exists() or path.read_text(encoding="utf-8") != schema_text(name):
            stale.append(str(path))
    if stale:
        print("out of date (python -m rig.schemas --write " + str(folder) + "): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
