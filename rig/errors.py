"""The rig's exception tree. Errors from dependencies are translated into these at the boundary.

    RigError                      every error the rig reports: a message and, where known, a fix
    ├── ConfigError               a config, policy, selector map or eval-set file is malformed
    ├── FixtureError              the fixture corpus cannot be built or read
    ├── CapabilityMissing         the target's adapter does not offer an operation a step needs
    ├── AdapterContractError      an adapter broke the rig's adapter contract (a bug in the adapter, not the target)
    ├── EvidenceError             the evidence store cannot be opened or written
    ├── BrowserUnavailable        no Chromium for Playwright, or it would not start
    └── TargetError               talking to the target failed
        ├── TargetUnreachable     no connection (refused, DNS, timeout)
        ├── TargetHTTPError       the target answered with a non-2xx status
        ├── TargetProtocolError   the target answered something the protocol does not allow
        ├── TargetStalled         no progress seen before a deadline: slow or hung, the rig cannot tell
        └── AnswerNeverEnded      a run's stream went on past the answer budget without its end
"""

from __future__ import annotations

from typing import Any

from rig.jsonvalue import JsonObject


class RigError(Exception):
    """Base of every error the rig reports to a user."""

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message} — {self.fix}" if self.fix else self.message


class ConfigError(RigError):
    """A configuration, policy, selector map or eval-set file is malformed."""


class BrowserUnavailable(RigError):
    """No Chromium for Playwright, or it would not start."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"no usable browser: {detail}",
                         fix="`pip install -e '.[browser]'` and `apt-get install -y chromium` "
                             "(or `playwright install chromium`), or set RIG_CHROMIUM to a Chromium binary")


class FixtureError(RigError):
    """The fixture corpus cannot be built or read."""


class CapabilityMissing(RigError):
    """The adapter does not offer an operation (or variant) that a step needs."""

    def __init__(self, capability: str, *, detail: str = "") -> None:
        super().__init__(
            f"target does not offer capability {capability!r}" + (f": {detail}" if detail else ""),
            fix="declare it in the adapter's capabilities() if the target has it",
        )
        self.capability = capability
        self.detail = detail


class AdapterContractError(RigError):
    """An adapter broke the rig's adapter contract: a bug in the adapter, not a fault of the target."""

    def __init__(self, adapter: str, message: str) -> None:
        super().__init__(f"adapter {adapter}: {message}", fix="fix the adapter (docs/extending.md: the adapter contract)")


class EvidenceError(RigError):
    """The evidence store cannot be opened or written."""


class TargetError(RigError):
    """Talking to the target failed."""


class TargetUnreachable(TargetError):
    """The target could not be reached at all."""

    def __init__(self, url: str, cause: str, *, fix: str | None = None) -> None:
        super().__init__(f"target unreachable at {url}: {cause}",
                         fix=fix or "is it running? check the URL (--target URL) and that the port is open")
        self.url = url
        self.cause = cause


class TargetHTTPError(TargetError):
    """The target answered with a non-2xx status; `code` is its error code when it sent one."""

    def __init__(
        self, method: str, path: str, status: int, code: str | None, message: str, details: Any = None,
        *, retry_after_s: float | None = None,
    ) -> None:
        super().__init__(f"{method} {path} → {status}" + (f" {code}" if code else "") + f": {message}")
        self.method = method
        self.path = path
        self.status = status
        self.code = code
        self.details = details
        self.said = message  # the target's own words, without the request line
        self.retry_after_s = retry_after_s  # the target's Retry-After (seconds), where it sent one


class TargetProtocolError(TargetError):
    """The target's answer does not fit the protocol or the adapter's rules (shape, field, status word, event
    order); `exchange` is the request and answer it came from (redacted when stored), `operation` its name."""

    def __init__(self, message: str, *, exchange: JsonObject | None = None, operation: str | None = None) -> None:
        super().__init__(message)
        self.exchange = exchange
        self.operation = operation


class TargetStalled(TargetError):
    """The target showed no progress for a whole deadline: slow or hung, the rig cannot tell which (U)."""

    def __init__(self, what: str, waited_s: float, last_seen: str = "") -> None:
        super().__init__(f"{what}: no progress for {waited_s:.0f}s" + (f" (last seen: {last_seen})" if last_seen else ""),
                         fix="a slow machine or target: raise the wait, or check the target's logs for a hang")
        self.what = what
        self.waited_s = waited_s


class AnswerNeverEnded(TargetError):
    """A run kept streaming past the answer budget (events or seconds) without an end: the case is U, with the
    events read so far as evidence."""

    def __init__(self, run_id: str, events: int, seconds: float, budget: str) -> None:
        super().__init__(f"run {run_id}: the answer never ended ({events} events in {seconds:.0f} s; budget {budget})",
                         fix="a target that streams without end; if its answers are really this long, raise "
                             "target.answer_budget in rig.yaml")
        self.run_id = run_id
        self.events = events
        self.seconds = seconds
