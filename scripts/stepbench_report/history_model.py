"""scripts/history: the model of a history (runs, series, change points) and the method's constants."""
from __future__ import annotations

import math
from dataclasses import dataclass, field



# --- the method's constants (docs/METHOD.md, "History"; changing one changes every answer) ---
# Permutations per test: the p-value's resolution is 1/(PERMUTATIONS + 1) = 0.001. A segment
# of at most EXACT_RUNS runs is tested on all its n! orders instead (8! = 40,320), so its
# p-value is exact: with few runs the smallest p there is lies near ALPHA (2/C(7,3) = 0.057 for
# 7 runs, 2/C(8,4) = 0.029 for 8), where a sampled p-value would fall either side by chance.
PERMUTATIONS = 999
EXACT_RUNS = 8
# Level of each permutation test (the default sig.lvl of e.divisive in ecp, Matteson & James'
# R package).
ALPHA = 0.05
# A timing split must move the regime median by SIGMAS standard deviations of its own noise,
# and by at least the minimum effect (--min-effect; the tool's default, `stepbench series`).
# The search looks at every split, so a lone 3σ would be crossed by chance on A/A series; 4σ
# keeps the whole detector's false calls rare (scripts/tests/test_history.py's A/A tests hold it).
SIGMAS = 4.0
# A timing regime spans at least this many runs: one run alone is an outlier, not a regime, so
# a change at the newest commit is reported once a second run confirms it.
MIN_REGIME = 2
# Median of a normal sample of m has variance ≈ (π/2)·σ²/m (asymptotically; for m = 1…5 the
# exact factor is smaller, so this errs on the noisy side).
MEDIAN_VARIANCE = math.pi / 2
# σ from the median absolute deviation of a normal sample.
MAD_TO_SD = 1.4826


class HistoryError(Exception):
    """Bad input: the message names the file or folder, the problem and what to do."""


def lower_median(values):
    """The ⌈n/2⌉-th order statistic: StepBench's median of repetitions (results/README.md)."""
    s = sorted(values)
    return s[(len(s) - 1) // 2]


@dataclass
class RunFile:
    """One run of the history, as `stepbench series` lists it."""
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
    def key(self):
        return f"{self.scenario}|{self.design}|{self.threads}|{self.metric}"

    @property
    def values(self):
        return [v for _, v, _ in self.points]
