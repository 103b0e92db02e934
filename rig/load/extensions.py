"""What runs beside Locust in a load run, chosen from its options: browser users and a chaos schedule."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rig.load.options import LoadOptions
from rig.load.session import Finish, Hook, LoadContext

Bands = Callable[[LoadContext], list[tuple[float, float, str]]]
Sections = Callable[[LoadContext, dict[str, Any]], list[tuple[str, str]]]


@dataclass
class LoadExtensions:
    """The hooks `run_load` takes, by the name of its keyword arguments."""

    during: list[Hook] = field(default_factory=list)
    prepare: list[Hook] = field(default_factory=list)
    finish: list[Finish] = field(default_factory=list)
    bands: Bands | None = None
    sections: Sections | None = None


def load_extensions(options: LoadOptions, *, chaos_metrics_port: int | None = None) -> LoadExtensions:
    """Browser users when `options.browsers`, the chaos schedule when `options.chaos` (a bad file raises at once)."""
    ext = LoadExtensions()
    if options.browsers:
        from rig.browser.load_hook import browser_hook

        ext.during.append(browser_hook)
    if options.chaos:
        from chaos.load_hook import ChaosLoad

        schedule = ChaosLoad(options.chaos, metrics_port=chaos_metrics_port, metrics_host=options.metrics_host,
                             pushgateway=options.pushgateway, otlp_endpoint=options.otlp_endpoint)
        ext.prepare.append(schedule.prepare)
        ext.during.append(schedule.during)
        ext.finish.append(schedule.finish)
        ext.bands, ext.sections = schedule.bands, schedule.sections
    return ext
