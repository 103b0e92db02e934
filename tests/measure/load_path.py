"""The load path, in a process of its own (importing Locust patches the interpreter with gevent).

    python tests/measure/load_path.py STORE [--drop-usage-source]

A `ResearcherUser` follows the recorded run through the configured adapter on the replay transport and
records what it measured into STORE, exactly as it does under Locust.
"""

from __future__ import annotations

import sys
from pathlib import Path

from locust.env import Environment

import rig.measure.sse
from rig.adapters import WorkbenchAdapter
from rig.adapters.models import Auth
from rig.evidence import EvidenceStore
from rig.load.plan import LoadPlan
from rig.load.process import DERIVER, RECORDER
from rig.measure.transcript import RunTranscript
from scenarios.load import ResearcherUser

sys.path.insert(0, str(Path(__file__).resolve().parent))
from replay import SUBMIT_NS, Replay, recorded_clock, recording  # noqa: E402


def main(store_path: str, drop: bool) -> None:
    data = recording(drop)
    rig.measure.sse.now_ns = recorded_clock(data)  # type: ignore[assignment]
    ResearcherUser.host = "http://replay.invalid"
    user = ResearcherUser(Environment(user_classes=[ResearcherUser]))
    user.plan = LoadPlan(target_url="http://replay.invalid", project_by_user={}, paper_sets=[], usernames=["a"])
    user.adapter = WorkbenchAdapter("http://replay.invalid", transport=Replay(data))
    user.auth = Auth(token="t", user_id="u", username="a")
    user.username = "a"
    user.caps = user.adapter.capabilities()
    RECORDER.store = EvidenceStore(Path(store_path))
    user.follow(RunTranscript(run_id=data["run_id"], question=data["question"], submit_ns=SUBMIT_NS), "ask")
    DERIVER.drain()  # as a load run does when its users stop
    RECORDER.flush()
    RECORDER.store.close()


if __name__ == "__main__":
    main(sys.argv[1], "--drop-usage-source" in sys.argv[2:])
