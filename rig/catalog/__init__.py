"""The eval set as typed data."""

from rig.catalog.loader import eval_set_sha256, load_eval_set
from rig.catalog.models import EvalSet, Metric, Paper, QualityTurn, ReliabilityCase

__all__ = ["EvalSet", "Metric", "Paper", "QualityTurn", "ReliabilityCase", "eval_set_sha256", "load_eval_set"]
