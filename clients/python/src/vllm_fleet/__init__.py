"""vllm-fleet's Python client: a trainer's view of one service of a vllm-fleet stack."""

from .endpoints import Engine, Island, Router, ServiceEndpoints
from .errors import EngineResult, FanOutError, FleetError, WeightMismatch
from .fleet import Fleet
from .generate import GenerationOutput
from .status import FleetStatus, IslandStatus, ProcessStatus

__all__ = [
    "Engine",
    "EngineResult",
    "FanOutError",
    "Fleet",
    "FleetError",
    "FleetStatus",
    "GenerationOutput",
    "Island",
    "IslandStatus",
    "ProcessStatus",
    "Router",
    "ServiceEndpoints",
    "WeightMismatch",
]
