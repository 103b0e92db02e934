"""What runs beside Locust in a load run, chosen from its options: browser users, and whatever the
installed `rig.load_extensions` plug-ins add (the chaos schedule of `--chaos` among them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rig.errors import ConfigError
from rig.load.browser_hook import browser_hook
from rig.load.options import LoadOptions
from rig.load.session import Finish, Hook, LoadContext
from rig.plugins import LOAD_EXTENSIONS, load_objects
from rig.results.load import LoadSummary

Bands = Callable[[LoadContext], list[tuple[float, float, str]]]
Sections = Callable[[LoadContext, LoadSummary], list[tuple[str, str]]]


@dataclass
class LoadExtensions:
    """The hooks `run_load` takes, by the name of its keyword arguments."""

    during: list[Hook] = field(default_factory=list)
    prepare: list[Hook] = field(default_factory=list)
    finish: list[Finish] = field(default_factory=list)
    bands: Bands | None = None
    sections: Sections | None = None


    def add(self, other: LoadExtensions) -> None:
        """Take another extension's hooks (bands and sections: the first one given wins)."""
        self.during += other.during
        self.prepare += other.prepare
        self.finish += other.finish
        self.bands = self.bands or other.bands
        self.sections = self.sections or other.sections


ExtensionFactory = Callable[..., "LoadExtensions | None"]


def load_extensions(options: LoadOptions, *, chaos_metrics_port: int | None = None) -> LoadExtensions:
    """Browser users when `options.browsers`, then each plug-in's hooks for these options (the chaos schedule
    when `options.chaos`; a bad schedule file raises at once, before anything starts)."""
    ext = LoadExtensions()
    if options.browsers:

        ext.during.append(browser_hook)
    for _name, factory in load_objects(LOAD_EXTENSIONS):
        extra = factory(options, chaos_metrics_port=chaos_metrics_port)
        if extra is not None:
            ext.add(extra)
    if options.chaos and not ext.bands:
        raise ConfigError("--chaos needs the chaos plug-in, which is not installed",
                          fix="install the rig with its chaos package (pip install -e .)")
    return ext
