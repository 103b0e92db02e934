"""`poll` in target.http: ask again until an answer is complete (an upload's document id behind its track id).

The wait follows the target: it goes on while the polled answer keeps changing and gives up only when it has stood
still for `stall_s` (TargetStalled, which the rig reports as undecidable, never as the target's failure).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

import orjson

from rig.adapters.http.extract import Reader
from rig.adapters.http.functions import options as rule_options
from rig.adapters.http.spec import Poll, Request, compile_path
from rig.adapters.models import Auth
from rig.adapters.transport import Reply
from rig.errors import TargetStalled
from rig.jsonvalue import ForeignJson


class Sender(Protocol):
    """What a poll needs of the adapter: one request of an operation sent, and the upload ledger's names."""

    def send(self, name: str, request: Request, auth: Auth | None, variables: ForeignJson
             ) -> tuple[Reply, ForeignJson]: ...

    @property
    def doc_of(self) -> Callable[[str], str | None]: ...


def poll_answer(adapter: Sender, name: str, poll: Poll, auth: Auth | None, variables: ForeignJson,
                first: Any) -> Any:
    """The first answer completed by polling: `poll.request` (which may name the first answer's fields) until
    `poll.until` holds, its `result` merged over the first answer's."""
    values = {**variables, **(first if isinstance(first, dict) else {})}
    until, reader = compile_path(poll.until), Reader(poll.result, poll.values)
    opts = rule_options(values, adapter.doc_of)
    seen, moved = b"", time.monotonic()
    while True:
        reply, _ = adapter.send(f"{name}.poll", poll.request, auth, values)
        try:
            data = orjson.loads(reply.content) if reply.content else None
        except orjson.JSONDecodeError:
            data = None
        if data is not None and until.search(data, options=opts):
            read = reader.read(data, opts)
            return {**first, **read} if isinstance(first, dict) and isinstance(read, dict) else read
        if reply.content != seen:
            seen, moved = reply.content, time.monotonic()
        elif time.monotonic() - moved > poll.stall_s:
            raise TargetStalled(f"{name}: polled until `{poll.until}`", poll.stall_s, reply.text[:200])
        time.sleep(poll.interval_s)
