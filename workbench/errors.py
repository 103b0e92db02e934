"""Protocol errors: `{"error": {"code", "message", "details"}}` with a normative code."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse


class ApiError(Exception):
    """An error answered to the client with its HTTP status and protocol error code."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None, *,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}
        self.headers = headers or {}  # sent with the answer (Retry-After on a 429)


def not_found(what: str) -> ApiError:
    """404 for a missing object or one that is not the caller's (no content either way)."""
    return ApiError(404, "not_found", f"{what} not found")


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


async def handle_api_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return JSONResponse(error_body(exc.code, exc.message, exc.details), status_code=exc.status,
                        headers=exc.headers or None)


async def handle_validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [{"loc": list(e.get("loc", [])), "msg": e.get("msg", "")} for e in exc.errors()]
    return JSONResponse(error_body("invalid_request", "request body is invalid", {"errors": errors}), status_code=422)


async def handle_unexpected(_: Request, exc: Exception) -> JSONResponse:
    """Anything unforeseen still answers in protocol shape (the details stay in the server log)."""
    import logging

    logging.getLogger("workbench").exception("unhandled error", exc_info=exc)
    return JSONResponse(error_body("internal_error", "the server hit an unexpected error; see its log"),
                        status_code=500)
