"""scripts/history: the model of a history (runs, series, change points), as the tool gives it."""
from __future__ import annotations

from dataclasses import dataclass, field



class HistoryError(Exception):
    """Bad input: the message names the file or folder, the problem and what to do."""


@dataclass
class RunFile:
    """One run of the history, as `stepbench history series` lists it."""
    name: str
    kind: str               # "results" (it has rows) or "profile"
    has_profiles: bool
    schema: str
    commit: str
    dirty: bool
    created_at: str
    commit_time: float | None
    ordered_by: str         # "commit-time" or "createdAt"
    index: int = 0          # position in history order

    @property
    def short(self):
        return (self.commit or "unknown")[:7]

    @property
    def label(self):
        return self.short + ("*" if self.dirty else "")


@dataclass
class ChangePoint:
    index: int              # position in the series' points: first point of the new regime
    before: float           # the old regime's median (exact: the previous point's value)
    after: float
    p_value: float
    regimes: tuple          # (points before, points after) in the adjacent regimes
    threshold: float | None = None  # timing: the smallest relative change the split had to show (0.05 = 5%)
    notes: list = field(default_factory=list)
    # None: only the code changed there; else what else did (history_cause), and the step is no
    # regression or improvement of the code
    cause: str | None = None

    @property
    def ratio(self):
        return self.after / self.before if self.before else None

    @property
    def direction(self):
        """regression or improvement (every metric here is smaller-is-better) where only the
        code changed; elsewhere only higher or lower."""
        if self.cause:
            return "higher" if self.after > self.before else "lower"
        return "regression" if self.after > self.before else "improvement"


@dataclass
class Series:
    scenario: str
    design: str
    threads: int
    metric: str
    exact: bool
    points: list            # [(RunFile, value, log samples or None)]
    measurements: list = field(default_factory=list)  # per point: {setting: value}, what it depends on besides the code
    tolerance: dict | None = None  # exact: {"relative": x} or {"absolute": x}, the gate's
    drift_sd: float | None = None
    status: str = "ok"      # ok | too-short | no-drift-estimate
    sampling_sd: float | None = None
    change_points: list = field(default_factory=list)

    @property
    def values(self):
        return [v for _, v, _ in self.points]
