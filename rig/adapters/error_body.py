"""What a refusal says, in whichever of the common shapes the target writes its error bodies.

    {"error": {"code": "…", "message": "…", "details": …}}    target protocol v1
    {"error": "…"} / {"error": "…", "message": "…"}           many JSON APIs
    {"detail": "…"} / {"detail": [{"loc": …, "msg": …}]}      FastAPI (and its validation errors)
    {"type": …, "title": "…", "detail": "…"}                  RFC 9457 problem+json
    {"message": "…", "code": …}                               Express-style and most others
    plain text or HTML                                        the body itself, clipped
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_MESSAGE = 300


@dataclass(frozen=True)
class ErrorBody:
    """A refusal as the rig reads it: a code when the target gives one, a message, and any structured details."""

    code: str | None
    message: str | None
    details: Any = None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.strip()[:MAX_MESSAGE] or None


def _fastapi_detail(detail: Any) -> str | None:
    """FastAPI's `detail`: a string, or a list of validation errors (`loc`, `msg`) read as `loc: msg` lines."""
    if isinstance(detail, list):
        parts = []
        for err in detail:
            if isinstance(err, dict) and "msg" in err:
                where = ".".join(str(p) for p in err.get("loc") or ())
                parts.append(f"{where}: {err['msg']}" if where else str(err["msg"]))
            else:
                parts.append(_text(err) or "")
        return _text("; ".join(p for p in parts if p))
    return _text(detail)


def read_error_body(content: bytes, content_type: str = "") -> ErrorBody:
    """The code, message and details of an error answer's body, whatever its shape (empty body: all None)."""
    text = content.decode("utf-8", "replace")
    try:
        data = json.loads(text) if text.strip() else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return ErrorBody(None, _text(text) if "html" not in content_type else None, data)
    error = data.get("error")
    if isinstance(error, dict):
        return ErrorBody(_text(error.get("code")), _text(error.get("message")), error.get("details"))
    if isinstance(error, str) and error.strip():
        return ErrorBody(_text(data.get("code")), _text(data.get("message")) or _text(error),
                         {k: v for k, v in data.items() if k not in ("error", "message", "code")} or None)
    if "title" in data or "type" in data and "detail" in data:  # RFC 9457
        title, detail = _text(data.get("title")), _fastapi_detail(data.get("detail"))
        message = f"{title}: {detail}" if title and detail else title or detail
        return ErrorBody(_text(data.get("code")) or _problem_code(data.get("type")), message,
                         {k: v for k, v in data.items() if k not in ("title", "detail", "type")} or None)
    if "detail" in data:
        return ErrorBody(_text(data.get("code")), _fastapi_detail(data["detail"]),
                         data["detail"] if isinstance(data["detail"], list) else None)
    if "message" in data:
        return ErrorBody(_text(data.get("code")), _text(data["message"]), data.get("details"))
    return ErrorBody(None, _text(data), data)


def _problem_code(kind: Any) -> str | None:
    """A problem type URI's last segment as a code (`…/probs/out-of-credit` → `out-of-credit`); about:blank is none."""
    if not isinstance(kind, str) or kind in ("", "about:blank"):
        return None
    return kind.rstrip("/").rsplit("/", 1)[-1] or None
