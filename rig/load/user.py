"""The base of every simulated user: a Locust user that reaches the target only through its adapter.

`AdapterUser` reads the plan, builds the configured adapter on a `LocustTransport` over its own client
(so Locust's request rows are the adapter's requests), logs one of the plan's accounts in, and offers
`record()` for the rows it measured: T-code rows also become Locust rows of their own (request type =
the code), which `load.json` keeps apart from the request rows.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator

from locust import events
from locust.contrib.fasthttp import FastHttpUser
from locust.exception import InterruptTaskSet, RescheduleTask, RescheduleTaskImmediately, StopUser

from rig.adapters import Adapter, Capabilities, load_adapter_class
from rig.adapters.models import Auth
from rig.errors import AnswerNeverEnded, TargetError, TargetHTTPError, TargetUnreachable
from rig.load.locust_rows import show_in_locust
from rig.load.plan import LoadPlan, load_secrets
from rig.load.process import PROCESS, RECORDER, plan_of
from rig.load.transport import LocustTransport
from rig.measure import labels
from rig.measure.events import Measure, TerminalEvent
from rig.measure.sse import RawEvent, StreamTooLarge

LOG = logging.getLogger("rig.load")
LOCUST_CONTROL = (StopUser, InterruptTaskSet, RescheduleTask, RescheduleTaskImmediately)  # Locust's own flow


def reason_of(exc: TargetError) -> str:
    """A short, label-safe reason: `http_409`, `unreachable`, `stream_too_large`, `never_ended`, `protocol`."""
    if isinstance(exc, StreamTooLarge):
        return labels.STREAM_TOO_LARGE
    if isinstance(exc, AnswerNeverEnded):
        return labels.NEVER_ENDED
    if isinstance(exc, TargetHTTPError):
        return f"http_{exc.status}"
    if isinstance(exc, TargetUnreachable):
        return "unreachable"
    return "protocol"


def stream_failure(reason: str | None) -> str:
    """The error label of a run whose answer never came whole: how its stream failed (`stream_too_large`,
    `never_ended`), else `stream_broken`."""
    return reason if labels.stream_failed(reason) and reason else labels.STREAM_BROKEN


class RunEndedWithoutBody(Exception):
    """A run that ended failed, stopped or empty: its end time is kept apart from the T5 of answered runs."""


def error_row(scenario: str, reason: str, run_id: str | None = None) -> Measure:
    """A failure the load run counts (`error_ratio`, `rig_errors_total{reason}`)."""
    return Measure(code="error", source="client", value=1.0, unit="count", run_id=run_id, label=reason,
                   scenario=scenario)


class AdapterUser(FastHttpUser):
    """A user on the configured adapter, logged in as one of the plan's accounts (round robin per process)."""

    abstract = True
    connection_timeout = 30.0
    network_timeout = 180.0

    plan: LoadPlan
    adapter: Adapter
    transport: LocustTransport
    caps: Capabilities
    auth: Auth
    username: str

    def on_start(self) -> None:
        self.plan = plan_of(self.environment)
        self.transport = LocustTransport(self.client)
        self.adapter = load_adapter_class(self.plan.adapter).connect(self.plan.target_url, transport=self.transport,
                                                                     options=self.plan.adapter_options)
        self.username = self.pick_account()
        try:
            self.auth = self.adapter.login(self.username, load_secrets()[self.username])
            self.caps = self.adapter.capabilities()
        except TargetError as exc:  # this user cannot act: count it, and stop it (the others go on)
            self.record([error_row("login", labels.login_failed(exc.__class__.__name__))])
            raise StopUser() from None
        except Exception as exc:  # the rig's own code broke: counted as such, and the run is undecided
            LOG.exception("rig error while logging in")
            self.record([error_row("login", labels.rig_error(type(exc).__name__))])
            raise StopUser() from None

    def guarded(self, action: str, task: Callable[[], object]) -> None:
        """Run one task: a refusal or break by the target counts under its reason, a crash of the rig's own code as
        `rig_error` (its traceback logged); either way the task is counted and the user goes on."""
        try:
            task()
        except TargetError as exc:
            self.record([error_row(action, reason_of(exc))])
        except LOCUST_CONTROL:
            raise
        except Exception as exc:
            LOG.exception("rig error in %s", action)
            self.record([error_row(action, labels.rig_error(type(exc).__name__))])

    def stream(self, run_id: str) -> Iterator[RawEvent]:
        """The run's events as they arrive, to its end — or until the plan's answer budget is spent without one: then
        the stream is closed (its drain bounded) and AnswerNeverEnded raised, which the run counts `never_ended`."""
        began = time.monotonic()
        limit, deadline = self.plan.answer_events, began + self.plan.answer_seconds
        events = self.adapter.raw_events(self.auth, run_id)
        try:
            for n, event in enumerate(events, 1):  # the clock read every 64 events: this runs for every event
                if (n > limit or (not n & 63 and time.monotonic() > deadline)) \
                        and not isinstance(self.adapter.typed(event), TerminalEvent):
                    raise AnswerNeverEnded(run_id, n, time.monotonic() - began, f"{limit} events, "
                                                                                f"{self.plan.answer_seconds:.0f} s")
                yield event
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()

    def pick_account(self) -> str:
        return self.plan.usernames[next(PROCESS.accounts) % len(self.plan.usernames)]

    def record(self, rows: list[Measure], failure: Exception | None = None) -> None:
        """Keep measured rows; Locust's own UI shows their T-code times too (`rig.load.locust_rows`)."""
        show_in_locust(events.request, rows, failure)
        RECORDER.record(rows)

    def on_stop(self) -> None:
        if hasattr(self, "adapter"):
            self.adapter.close()
