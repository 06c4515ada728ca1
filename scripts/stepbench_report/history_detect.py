"""scripts/history: change points in one series (E-divisive means for timing, steps for exact counts)."""
from __future__ import annotations

import itertools
import math
import zlib

import numpy as np

from .history_cause import classify
from .history_model import (ALPHA, EXACT_RUNS, MAD_TO_SD, MEDIAN_VARIANCE,
                            MIN_REGIME, PERMUTATIONS, SIGMAS, ChangePoint, lower_median)


# ---------------------------------------------------------------- detection

def _median(a, axis=-1):
    """The ordinary median (middle two averaged) of regimes: a regime often holds an even,
    small number of runs, and the lower median of two runs is their minimum, a biased estimate."""
    return np.median(a, axis=axis)


def sampling_sd(point_logs):
    """σ of one repetition's log value, pooled over the series' runs: 1.4826 × the median absolute
    residual around each run's own median, leaving out that median's own residual (0 by
    construction). Nearly unbiased for normal repetitions, however few, and robust to the
    preempted outliers. From the runs themselves: noise.json's residuals come from the gate's
    timing runs, whose windows are not these."""
    residuals = []
    for logs in point_logs:
        if len(logs) < 2:
            continue
        center = lower_median(logs)
        res = [x - center for x in logs]
        res.remove(0.0)  # the median's own residual (it is one of the values)
        residuals += [abs(r) for r in res]
    return MAD_TO_SD * float(np.median(residuals)) if residuals else 0.0


def _threshold(m1, m2, drift_sd, point_var, min_effect, sigmas):
    """Minimum |log effect| of a split into regimes of m1 and m2 runs. The split's noise: each
    regime's median carries the between-run drift once (drift is slow: runs of one session drift
    together, so it does not average out within a regime) plus its runs' sampling noise averaged
    over the regime (MEDIAN_VARIANCE × a run's sampling variance / runs)."""
    sd = np.sqrt(2 * drift_sd ** 2 + MEDIAN_VARIANCE * point_var * (1 / m1 + 1 / m2))
    return np.maximum(math.log1p(min_effect), sigmas * sd)


def _thresholds(n, *noise):
    """Every split τ = MIN_REGIME … n − MIN_REGIME of n runs, with its minimum |log effect|."""
    taus = np.arange(MIN_REGIME, n - MIN_REGIME + 1)
    return taus, _threshold(taus.astype(float), (n - taus).astype(float), *noise)


def _e_statistics(x, taus):
    """E-divisive means (Matteson & James 2014, α = 1) of every split τ of each row of x
    (shape R × n): Q(τ) = m1·m2/n · (2/(m1·m2)·Σ|a−b| − Σ_pairs|a−a'|/C(m1,2) − Σ_pairs|b−b'|/C(m2,2)),
    a over the first τ values, b over the rest (a regime of one value has no within-pairs: 0)."""
    n = x.shape[1]
    d = np.abs(x[:, :, None] - x[:, None, :])
    s = np.zeros((x.shape[0], n + 1, n + 1))
    s[:, 1:, 1:] = d.cumsum(1).cumsum(2)
    within_a = s[:, taus, taus] / 2
    within_b = (s[:, n, n][:, None] - 2 * s[:, taus, n] + s[:, taus, taus]) / 2
    between = s[:, taus, n] - s[:, taus, taus]
    m1, m2 = taus.astype(float), (n - taus).astype(float)
    pairs_a, pairs_b = np.maximum(m1 * (m1 - 1) / 2, 1), np.maximum(m2 * (m2 - 1) / 2, 1)
    e = 2 * between / (m1 * m2) - within_a / pairs_a - within_b / pairs_b
    return m1 * m2 / n * e


def _gated_statistic(x, taus, thresholds):
    """Per row of x: the largest Q(τ) over the splits whose regime medians differ by at least
    their threshold (−inf if none), and that τ. The permutation test uses this same statistic,
    so its p-value is that of the gated search itself."""
    q = _e_statistics(x, taus)
    effects = np.stack([_median(x[:, t:]) - _median(x[:, :t]) for t in taus], axis=1)
    q = np.where(np.abs(effects) >= thresholds - 1e-12, q, -np.inf)
    best = q.argmax(axis=1)
    return q[np.arange(len(x)), best], taus[best]


def _seed(key, start, end):
    return zlib.crc32(f"{key}|{start}|{end}".encode())


def timing_change_points(point_logs, drift_sd, key, min_effect, sigmas=SIGMAS):
    """Change points of a timing series: `point_logs` holds each run's repetitions as log values
    (a run's value is their median). Returns the change points (`ChangePoint`, no notes) and the
    pooled σ of one repetition.

    E-divisive means, recursively (binary segmentation: a significant split's two sides are
    searched again), each split tested at level ALPHA on all orders of its segment when it has at
    most EXACT_RUNS runs, else on PERMUTATIONS permutations seeded by the series key and the
    segment's bounds (deterministic); then pruned: a change point whose adjacent regimes (after
    all splits) no longer differ by its threshold is dropped, the weakest first."""
    x = np.array([lower_median(l) for l in point_logs], dtype=float)
    sd = sampling_sd(point_logs)
    reps = lower_median([len(l) for l in point_logs]) if point_logs else 1
    # a run's value is the median of its repetitions: its sampling variance
    noise = (drift_sd, MEDIAN_VARIANCE * sd ** 2 / max(1, reps), min_effect, sigmas)
    accepted = {}
    todo = [(0, len(x))]
    while todo:
        start, end = todo.pop()
        if end - start < 2 * MIN_REGIME:
            continue
        seg = x[start:end]
        taus, thresholds = _thresholds(end - start, *noise)
        observed, tau = _gated_statistic(seg[None, :], taus, thresholds)
        if not np.isfinite(observed[0]):
            continue
        if end - start <= EXACT_RUNS:
            # every order, the observed one included: p = #{orders at least as extreme} / n!
            orders = seg[np.array(list(itertools.permutations(range(end - start))))]
            extra = 0
        else:
            rng = np.random.default_rng(_seed(key, start, end))
            orders = rng.permuted(np.tile(seg, (PERMUTATIONS, 1)), axis=1)
            extra = 1  # the observed order, counted once (p is never 0)
        null, _ = _gated_statistic(orders, taus, thresholds)
        # ties count against the split (a tolerance for the sums' rounding; Q may be slightly < 0)
        tied = observed[0] - 1e-9 * max(1.0, abs(observed[0]))
        p = (extra + int(np.count_nonzero(null >= tied))) / (len(orders) + extra)
        if p > ALPHA:
            continue
        split = start + int(tau[0])
        accepted[split] = p
        todo += [(start, split), (split, end)]
    while True:
        cps = sorted(accepted)
        bounds = [0] + cps + [len(x)]
        weakest = None
        for i, cp in enumerate(cps):
            before, after = x[bounds[i]:cp], x[cp:bounds[i + 2]]
            margin = abs(_median(after) - _median(before)) - _threshold(len(before), len(after), *noise)
            if margin < 0 and (weakest is None or margin < weakest[1]):
                weakest = (cp, margin)
        if weakest is None:
            break
        del accepted[weakest[0]]
    cps = sorted(accepted)
    bounds = [0] + cps + [len(x)]
    out = []
    for i, cp in enumerate(cps):
        before, after = x[bounds[i]:cp], x[cp:bounds[i + 2]]
        out.append(ChangePoint(index=cp, before=math.exp(_median(before)), after=math.exp(_median(after)),
                               p_value=accepted[cp], regimes=(len(before), len(after)),
                               threshold=math.expm1(float(_threshold(len(before), len(after), *noise)))))
    return out, sd


def detect_exact(values, tolerance):
    """Deterministic counts: any step beyond the tool's tolerance for the count (`relative` or
    `absolute`) between consecutive points is a change point, p = 0 (a count fixed by the code
    does not move by chance; no test needed)."""
    out = []
    for i in range(1, len(values)):
        a, b = values[i - 1], values[i]
        if tolerance.get("relative") is not None:
            moved = a > 0 and abs(b / a - 1) > tolerance["relative"]
        else:
            moved = abs(b - a) > tolerance["absolute"]
        if moved:
            out.append(i)
    return out


def analyse_series(s, min_effect, git):
    """`s` with its change points, each with its cause and notes (history_cause.classify, `git`
    asked what changed between the runs)."""
    _detect(s, min_effect)
    for c in s.change_points:
        c.cause, c.notes = classify(s, c.index, git)
    return s


def _detect(s, min_effect):
    """Fills in `s`'s change points and status: steps for an exact series, E-divisive for a timing one."""
    values = s.values
    if s.exact:
        for i in detect_exact(values, s.tolerance):
            s.change_points.append(ChangePoint(index=i, before=values[i - 1], after=values[i], p_value=0.0,
                                               regimes=(1, 1)))
        if len(values) < 2:
            s.status = "too-short"
        return
    if len(values) < 2 * MIN_REGIME:
        s.status = "too-short"
        return
    if s.drift_sd is None:
        # detected as if drift were 0, listed, never called (compare's no-drift-estimate)
        s.status = "no-drift-estimate"
    s.change_points, s.sampling_sd = timing_change_points([l for _, _, l in s.points], s.drift_sd or 0.0, s.key,
                                                          min_effect)
