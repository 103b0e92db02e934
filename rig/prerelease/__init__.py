"""The full pre-release run (`rig demo`): load with browsers and chaos, the gate, the quality workload,
and one report that puts the gate decision first."""

from rig.prerelease.result import PrereleaseResult
from rig.prerelease.session import PrereleaseOptions, run_prerelease

__all__ = ["PrereleaseOptions", "PrereleaseResult", "run_prerelease"]
