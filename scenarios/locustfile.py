"""The locustfile `rig load` runs (usable directly: `locust -f scenarios/locustfile.py --rig-plan ...`).

It names the users and installs the rig's Locust hooks (`rig.load.locust_hooks`): sample shipping from
workers to the master, the master's Prometheus endpoint, target sampling and the final push.
"""

import os

from rig.load import SHAPE_ENV, install
from scenarios.load import IngestUser, OpenLoopResearcher, ReplayUser, ResearcherUser

install()

__all__ = ["IngestUser", "OpenLoopResearcher", "ReplayUser", "ResearcherUser"]

if os.environ.get(SHAPE_ENV):  # a load shape (stages, or the rig steering `rig capacity`): Locust uses the one it finds
    from rig.load import RigShape

    __all__ += ["RigShape"]
