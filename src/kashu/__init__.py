"""kashu (卡数): how many GPUs to rent to train a large language model, and how to defend the plan."""

from .errors import KashuError
from .planner import Plan, PlanRequest, plan

__all__ = ["KashuError", "Plan", "PlanRequest", "plan"]
__version__ = "0.1.0"
