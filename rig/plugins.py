"""Plug-ins: what the rig finds through Python entry points instead of importing it by name.

The rig never imports the packages that plug into it (`scenarios`, `chaos`, a team's own); they
declare themselves in their package metadata (`pyproject.toml`, `[project.entry-points."<group>"]`):

    rig.scenarios        modules that register cases on import: reliability cases (`rig.gate.registry.case`),
                         browser halves (`rig.gate.browser_kit.browser_step`), quality scenarios
                         (`rig.quality.registry.scenario`)
    rig.locustfiles      the locustfile module `rig load` starts Locust with (the last one installed wins)
    rig.extensions       modules imported before every gate, quality and load run; they add `rig.events`
                         listeners as they load (the chaos schedule of `rig load --chaos` is one)
    rig.cli              typer apps added as `rig <name>` sub-commands
    rig.fault_proxies    fault proxy servers by name (`llm`: the LLM fault proxy the rig starts in front of a
                         target's model, `target.model_proxy` in rig.yaml), each a `rig.faults.ProxyServer`
"""

from __future__ import annotations

import importlib
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from rig.errors import ConfigError

SCENARIOS = "rig.scenarios"
LOCUSTFILES = "rig.locustfiles"
EXTENSIONS = "rig.extensions"
CLI = "rig.cli"
FAULT_PROXIES = "rig.fault_proxies"

_FIX = "install the rig with its scenario packs (pip install -e . from the checkout, or make setup)"


def plugins(group: str) -> list[EntryPoint]:
    """Entry points of `group`, sorted by name (so the order is the same on every machine)."""
    return sorted(entry_points(group=group), key=lambda ep: ep.name)


@cache
def load_scenario_packs() -> tuple[str, ...]:
    """Import every registered scenario pack once; their modules register their cases as they load."""
    found = plugins(SCENARIOS)
    if not found:
        raise ConfigError(f"no scenario pack is installed (entry point group {SCENARIOS!r} is empty)", fix=_FIX)
    for ep in found:
        try:
            importlib.import_module(ep.value)
        except ImportError as exc:
            raise ConfigError(f"scenario pack {ep.name!r} ({ep.value}) cannot be imported: {exc}", fix=_FIX) from None
    return tuple(ep.value for ep in found)


@cache
def load_extensions() -> tuple[str, ...]:
    """Import every `rig.extensions` module once (their listeners register as they load); their names."""
    return tuple(name for name, _module in load_objects(EXTENSIONS))


def extension_names() -> tuple[str, ...]:
    """The names of the installed `rig.extensions`, without importing them."""
    return tuple(ep.name for ep in plugins(EXTENSIONS))


def locustfile_module() -> str:
    """The module `rig load` hands to Locust."""
    found = plugins(LOCUSTFILES)
    if not found:
        raise ConfigError(f"no locustfile is registered (entry point group {LOCUSTFILES!r} is empty)", fix=_FIX)
    return found[-1].value


def load_objects(group: str) -> list[tuple[str, Any]]:
    """(name, object) of every entry point in `group`, loaded."""
    out = []
    for ep in plugins(group):
        try:
            out.append((ep.name, ep.load()))
        except ImportError as exc:
            raise ConfigError(f"plug-in {ep.name!r} of {group!r} ({ep.value}) cannot be imported: {exc}",
                              fix=_FIX) from None
    return out


def fault_proxy(name: str) -> Any:
    """The fault proxy server plug-in called `name` (its class: `cls(upstream, record_path=…)`), loaded."""
    found = dict(load_objects(FAULT_PROXIES))
    if name not in found:
        raise ConfigError(f"no fault proxy {name!r} is installed (entry point group {FAULT_PROXIES!r} has "
                          f"{', '.join(sorted(found)) or 'none'})", fix="install the rig with its chaos plug-in "
                          "(pip install -e . from the checkout, or make setup)")
    return found[name]
