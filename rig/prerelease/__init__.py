"""The full pre-release run (`rig demo`): load with browsers and chaos, the gate, the quality workload,
and one report that puts the gate decision first."""

from rig.prerelease.session import PrereleaseOptions, PrereleaseResult, run_prerelease

__all__ = ["PrereleaseOptions", "PrereleaseResult", "run_prerelease"]
