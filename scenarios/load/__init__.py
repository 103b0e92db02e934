"""Locust users that behave like researchers, driving the target through the configured adapter.

A user's own locustfile can import and subclass them:

    from scenarios.load import ResearcherUser

    class MyResearcher(ResearcherUser):
        weight = 3
        questions_per_session = 5  # the knobs are class attributes (docs/extending.md)
"""

from scenarios.load.ingest_user import IngestUser
from scenarios.load.replay_user import ReplayUser
from scenarios.load.researcher import OpenLoopResearcher, ResearcherUser

__all__ = ["IngestUser", "OpenLoopResearcher", "ReplayUser", "ResearcherUser"]
