"""A target's answer that does not fit: from a pydantic error (or a rule that found nothing) to the target's
`TargetProtocolError`, carrying the exchange it came from — never a traceback of the rig's.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rig.adapters.transport import Reply
from rig.errors import TargetProtocolError
from rig.jsonvalue import JsonObject

M = TypeVar("M", bound=BaseModel)
MAX_BODY = 4000


def exchange_of(operation: str, method: str, path: str, reply: Reply | None, *, note: str | None = None) -> JsonObject:
    """What the evidence keeps of the exchange a protocol error came from (the body clipped; redacted when stored)."""
    out: JsonObject = {"operation": operation, "method": method, "path": path}
    if reply is not None:
        out.update(status=reply.status_code, content_type=reply.content_type, response=reply.text[:MAX_BODY])
    if note:
        out["note"] = note
    return out


def describe(exc: ValidationError) -> str:
    """The first thing a validation error found, with where and what was there, and how many more."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "(root)"
    more = f" and {exc.error_count() - 1} more" if exc.error_count() > 1 else ""
    return f"{where}: {first.get('msg', '')} (got {str(first.get('input'))[:80]!r}){more}"


def fit(model: type[M], data: Any, *, operation: str, exchange: JsonObject, fix: str = "") -> M:
    """`data` as `model`, or the target's protocol error naming the operation, what did not fit, and the exchange."""
    if data is None:
        raise TargetProtocolError(f"{operation}: the answer holds no {model.__name__}" + (f" ({fix})" if fix else ""),
                                  exchange=exchange, operation=operation)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise TargetProtocolError(f"{operation}: the answer does not fit the rig's {model.__name__}: {describe(exc)}"
                                  + (f" ({fix})" if fix else ""), exchange=exchange, operation=operation) from None
