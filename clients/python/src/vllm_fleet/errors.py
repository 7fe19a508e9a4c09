"""What the client raises. Every message names the engine, service or file it is about."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class FleetError(Exception):
    """The fleet, or what describes it, is not as the call needs it."""


@dataclass
class EngineResult:
    """One engine's answer to one fanned-out call."""

    engine: str
    ok: bool
    status: int | None = None
    body: Any = None
    error: str | None = None

    def describe(self) -> str:
        if self.ok:
            return f"{self.engine}: ok"
        what = self.error or f"HTTP {self.status}: {str(self.body)[:300]}"
        return f"{self.engine}: {what}"


@dataclass
class FanOutError(FleetError):
    """A call fanned out to every engine did not succeed on all of them. `results` has every engine's answer."""

    operation: str
    results: list[EngineResult] = field(default_factory=list)
    reason: str = ""
    resumed: list[str] = field(default_factory=list)
    """Engines that answered the resume sent after the failure."""
    not_resumed: list[EngineResult] = field(default_factory=list)
    """Engines that did not answer it (gone, usually: a job takes a node's ranks down with a dead one)."""

    def __str__(self) -> str:
        failed = [r.describe() for r in self.results if not r.ok]
        lines = [f"{self.operation} failed: {self.reason}" if self.reason else f"{self.operation} failed on {len(failed)} of {len(self.results)} engine(s)"]
        lines += [f"  {f}" for f in failed]
        if self.resumed:
            lines.append(f"  resumed so that none is left paused: {', '.join(self.resumed)}")
        for r in self.not_resumed:
            lines.append(f"  not resumed: {r.describe()}")
        return "\n".join(lines)


class WeightMismatch(FleetError):
    """The engines do not all serve the same weights after an update. `differing` names them."""

    def __init__(self, message: str, differing: list[str], report: dict[str, Any]):
        super().__init__(message)
        self.differing = differing
        self.report = report
