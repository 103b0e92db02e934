"""Quality scenarios: how a case's turns run (direct tool, conversation, a fixture), registered by name.

A scenario pack registers its scenarios on import with `@scenario("conversation")`; a fixture scenario
also names the cases that need it (`@scenario("injection", cases=("对抗-06",))`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rig.errors import ConfigError
from rig.plugins import load_scenario_packs

if TYPE_CHECKING:
    from rig.quality.driver import CaseDriver

Scenario = Callable[["CaseDriver"], None]
_SCENARIOS: dict[str, Scenario] = {}
_FIXTURE_CASES: dict[str, str] = {}


def scenario(kind: str, *, cases: tuple[str, ...] = ()) -> Callable[[Scenario], Scenario]:
    """Register the scenario that runs cases of `kind`; `cases` lists the case labels that need this fixture."""
    def register(fn: Scenario) -> Scenario:
        _SCENARIOS[kind] = fn
        for label in cases:
            _FIXTURE_CASES[label] = kind
        return fn
    return register


def quality_scenario(kind: str) -> Scenario:
    """The scenario registered for `kind`."""
    load_scenario_packs()
    try:
        return _SCENARIOS[kind]
    except KeyError:
        raise ConfigError(f"no quality scenario {kind!r} is registered (have: {', '.join(sorted(_SCENARIOS))})",
                          fix="install the scenario pack that provides it") from None


def fixture_kind(label: str) -> str | None:
    """The fixture scenario a case needs (`对抗-06` → `injection`), None for a plain case."""
    load_scenario_packs()
    return _FIXTURE_CASES.get(label)
