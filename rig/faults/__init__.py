"""One fault vocabulary, one control client, one injector protocol: what a gate case's fixtures, a chaos
schedule and Chaos Toolkit's actions all speak (`chaos/` keeps the proxy servers and schedules on top of it).

    rig.faults.vocabulary   `Fault` ({via, point, mode, ...}), the proxies' rules, every channel's modes
    rig.faults.control      `FaultControl`: the one client of a fault proxy's `/_rig` control API
    rig.faults.injector     `Injector`: what puts a fault in force and takes it back; `ProxyServer`: a
                            fault proxy a plug-in serves in the rig's process
    rig.faults.channels     the injectors of a fault proxy's rules and of the target's own fault points
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rig.lazy import exports

if TYPE_CHECKING:
    from rig.faults.channels import ProxyInjector, TargetInjector
    from rig.faults.control import FaultControl, RequestRecord
    from rig.faults.injector import Injector, ProxyServer
    from rig.faults.vocabulary import (
        HTTP_MODES,
        LLM_MODES,
        MODES,
        NET_MODES,
        RESTART_MODES,
        STREAM_ONLY,
        TARGET_MODES,
        TARGET_POINTS,
        Direction,
        Fault,
        LinkFault,
        ModelEndpoint,
        ProxyFault,
        ProxyMode,
        RestartMode,
        Via,
    )

_EXPORTS = {
    "Direction": "rig.faults.vocabulary", "Fault": "rig.faults.vocabulary", "FaultControl": "rig.faults.control",
    "HTTP_MODES": "rig.faults.vocabulary", "Injector": "rig.faults.injector", "LLM_MODES": "rig.faults.vocabulary",
    "LinkFault": "rig.faults.vocabulary", "MODES": "rig.faults.vocabulary", "ModelEndpoint": "rig.faults.vocabulary",
    "NET_MODES": "rig.faults.vocabulary", "ProxyFault": "rig.faults.vocabulary",
    "ProxyInjector": "rig.faults.channels", "ProxyMode": "rig.faults.vocabulary",
    "ProxyServer": "rig.faults.injector", "RESTART_MODES": "rig.faults.vocabulary",
    "RequestRecord": "rig.faults.control", "RestartMode": "rig.faults.vocabulary",
    "STREAM_ONLY": "rig.faults.vocabulary", "TARGET_MODES": "rig.faults.vocabulary",
    "TARGET_POINTS": "rig.faults.vocabulary", "TargetInjector": "rig.faults.channels", "Via": "rig.faults.vocabulary",
}
__all__ = ["Direction", "Fault", "FaultControl", "HTTP_MODES", "Injector", "LLM_MODES", "LinkFault", "MODES",
          "ModelEndpoint", "NET_MODES", "ProxyFault", "ProxyInjector", "ProxyMode", "ProxyServer", "RESTART_MODES",
          "RequestRecord", "RestartMode", "STREAM_ONLY", "TARGET_MODES", "TARGET_POINTS", "TargetInjector", "Via"]
__getattr__, __dir__ = exports(__name__, _EXPORTS)
