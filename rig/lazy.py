"""Public namespaces that load a name's module only when the name is first used (PEP 562).

A package's `__init__` names what it exposes and where each lives; `import rig` (or `import rig.load`) then loads
nothing else, and the Locust side of a load (which patches the process with gevent) is never loaded by a command
that only reads results:

    __getattr__, __dir__ = exports(__name__, {"run_gate": "rig.gate.session", "events": "rig.events"})

A name that is its module's own name and lives at `package.name` is the module itself; `"module:attr"` exposes an
attribute under another name (where the plain name would be taken by a submodule of the same name).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def exports(package: str, table: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: each name of `table` imported from its module on first use (and
    kept in the package from then on)."""

    def getattr_(name: str) -> Any:
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attr = where.partition(":")
        loaded = importlib.import_module(module)
        value = loaded if module == f"{package}.{name}" and not attr else getattr(loaded, attr or name)
        setattr(sys.modules[package], name, value)
        return value

    def dir_() -> list[str]:
        return sorted(set(table) | set(vars(sys.modules[package])))

    return getattr_, dir_
