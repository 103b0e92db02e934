"""What a measure's label says: built and read here, and nowhere else.

A label qualifies a row of its code. The kinds a workload writes and the aggregation, the load summary, the
report and compare read back:

    T8 run end            `<state>/<reason>`            completed/completed, stopped/user_stop, cut/load_ended
    T8 upload outcome     `ingest:<status>`             not a run
    T8 refused request    `refused/<reason>`            not a run (an over-long input refused before any run)
    T4 first text         `first_text_kind=<kind>`      first text of any kind, beside the answer's own T4
    T5 without a body     `no_body:<state>/<reason>`    an end with no answer text: kept out of the percentiles
    error rows            `login_failed:<where>`, `rig_error:<exception>`, or the reason itself (`stream_broken` …)

`tests/test_layering.py` fails when one of these prefixes is written or parsed in another module of the rig.
"""

from __future__ import annotations

LOAD_ENDED = "cut/load_ended"  # a run still streaming when the load run ended: the rig cut it, the target did not fail
USER_STOP = "stopped/user_stop"
ON_PURPOSE = (USER_STOP, LOAD_ENDED)  # ends a user or the rig asked for: not failures
RIG_ERROR = "rig_error"
STREAM_BROKEN = "stream_broken"  # the stream broke off (reset, refused) before its end
STREAM_TOO_LARGE = "stream_too_large"  # an event or line past the reader's cap: the target's protocol error
NEVER_ENDED = "never_ended"  # the answer streamed past the answer budget without its end
STREAM_FAILURES = (STREAM_BROKEN, STREAM_TOO_LARGE, NEVER_ENDED)  # the user never got the answer whole

_COMPLETED = "completed/"
_NO_BODY = "no_body:"
_INGEST = "ingest:"
_REFUSED = "refused/"
_TEXT_KIND = "first_text_kind="
_LOGIN_FAILED = "login_failed"
PREFIXES = (_COMPLETED, _NO_BODY, _INGEST, _REFUSED, _TEXT_KIND, _LOGIN_FAILED)  # what only this module spells


def run_end(state: str | None, reason: str | None) -> str:
    """A run's end: `<state>/<reason>`."""
    return f"{state}/{reason}"


def end_parts(label: str | None) -> tuple[str, str]:
    """A run end's state and reason (`completed/completed` → ("completed", "completed"))."""
    state, _, reason = (label or "").partition("/")
    return state, reason


def completed(label: str | None) -> bool:
    """The run ended completed (whatever its reason)."""
    return (label or "").startswith(_COMPLETED)


def on_purpose(label: str | None) -> bool:
    """A stop a user sent, or a run the rig cut at the load's end: not the target's failure."""
    return (label or "") in ON_PURPOSE


def no_body(state: str | None, reason: str | None) -> str:
    """An end without answer text, its time kept out of the percentiles: `no_body:<state>/<reason>`."""
    return f"{_NO_BODY}{run_end(state, reason)}"


def without_body(label: str | None) -> bool:
    return (label or "").startswith(_NO_BODY)


def ingest(status: str | None) -> str:
    """An upload's final status, as a T8 row: `ingest:<status>`."""
    return f"{_INGEST}{status}"


def refused(reason: str | None) -> str:
    """A request refused before any run (T8): `refused/<reason>`."""
    return f"{_REFUSED}{reason}"


def not_a_run(label: str | None) -> bool:
    """A T8 row that is an upload's outcome or a refusal, not a run's end."""
    return (label or "").startswith((_INGEST, _REFUSED))


def first_text_kind(kind: str) -> str:
    """T4 to the first text of any kind: `first_text_kind=<kind>`."""
    return f"{_TEXT_KIND}{kind}"


def text_kind(label: str | None) -> str | None:
    """The kind of a `first_text_kind=` row; None for any other label."""
    return label[len(_TEXT_KIND):] if label and label.startswith(_TEXT_KIND) else None


def login_failed(where: str) -> str:
    """A refused login, counted as an error: `login_failed:<where>`."""
    return f"{_LOGIN_FAILED}:{where}"


def login_refused(label: str | None) -> str | None:
    """Where a `login_failed` row's login was refused (the text after the prefix); None for any other label."""
    if not (label or "").startswith(_LOGIN_FAILED):
        return None
    return (label or "").partition(":")[2]


def rig_error(exception: str) -> str:
    """A task the rig's own code broke: `rig_error:<exception>`."""
    return f"{RIG_ERROR}:{exception}"


def stream_failed(label: str | None) -> bool:
    """An error row saying the run's stream did not deliver the answer whole (whatever the run's record says)."""
    return label in STREAM_FAILURES


def rigs_own(label: str | None) -> bool:
    return (label or "").startswith(RIG_ERROR)
