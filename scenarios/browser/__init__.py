"""Browser halves of the reliability cases whose evidence is what a person sees (run with `rig gate --browser`).

Importing the pack registers each half (`rig.gate.browser_kit.browser_step`).
"""

from scenarios.browser import cases

__all__ = ["cases"]
