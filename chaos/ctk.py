"""Chaos Toolkit actions and probes: the rig's fault channels for existing experiments.

In an experiment, a provider of type `python` names `module: chaos.ctk` and one of these functions;
every argument is plain JSON and every return value is JSON-serialisable (see docs/ctk-experiment.json).
Chaos Toolkit itself is optional: these are ordinary functions.
"""

from __future__ import annotations

from typing import Any

import httpx

from chaos.proxy_base import ProxyControl
from chaos.restarters import CommandRestarter, DockerRestarter
from chaos.vocabulary import Fault

API = "/api/v1/_chaos"


def _target(base_url: str, chaos_token: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    response = httpx.request(method, f"{base_url.rstrip('/')}{API}/{path}", json=body,
                             headers={"x-chaos-token": chaos_token}, timeout=10)
    response.raise_for_status()
    return response.json() if response.content else None


# -- actions ---------------------------------------------------------------------------------------------------
def inject_target_fault(base_url: str, chaos_token: str, point: str, mode: str, times: int | None = None,
                        delay_ms: float | None = None, match: str | None = None) -> dict[str, Any]:
    """Add a fault at one of the target's fault points (shared/API.md `_chaos`); returns `{fault_id}`."""
    fault = Fault(via="target", point=point, mode=mode, times=times, delay_ms=delay_ms, match=match)
    return dict(_target(base_url, chaos_token, "POST", "faults", fault.target_spec()))


def clear_target_faults(base_url: str, chaos_token: str) -> dict[str, Any]:
    """Remove every fault at the target's fault points; returns `{cleared}`."""
    return dict(_target(base_url, chaos_token, "DELETE", "faults"))


def add_proxy_rule(proxy_url: str, mode: str, **params: Any) -> str:
    """Add a rule to an LLM or HTTP fault proxy (`mode` plus ProxyFault fields); returns the rule id."""
    return ProxyControl(proxy_url).add({"mode": mode, **params})


def clear_proxy_rules(proxy_url: str) -> int:
    """Remove every rule of a fault proxy; returns how many were active."""
    return ProxyControl(proxy_url).clear()


def restart_with_command(command: str, base_url: str, timeout_s: float = 120.0) -> dict[str, Any]:
    """Run a restart command, then wait for the target's /readyz; returns what was done and how long it took."""
    return CommandRestarter(command, base_url, timeout_s).restart()


def restart_docker_container(container: str, base_url: str, mode: str = "restart",
                             timeout_s: float = 120.0) -> dict[str, Any]:
    """kill | term | restart | stop_start a container through the docker SDK, then wait for /readyz."""
    return DockerRestarter(container, base_url, timeout_s).restart(mode=mode)


# -- probes ----------------------------------------------------------------------------------------------------
def target_ready(base_url: str) -> bool:
    """True when the target's /readyz answers 200."""
    try:
        return httpx.get(f"{base_url.rstrip('/')}/readyz", timeout=5).status_code == 200
    except httpx.TransportError:
        return False


def target_faults(base_url: str, chaos_token: str) -> list[dict[str, Any]]:
    """The target's active faults and how often each fired."""
    return list(_target(base_url, chaos_token, "GET", "faults"))


def proxy_requests(proxy_url: str, since: int = 0) -> list[dict[str, Any]]:
    """A fault proxy's request log from sequence number `since` (timings, usage, faults)."""
    return [r.model_dump(mode="json") for r in ProxyControl(proxy_url).requests(since)]
