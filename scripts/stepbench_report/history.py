"""scripts/history: change points in the results of one machine kind over its commits.

Usage: scripts/history results/<machine-id>/ [--format text|markdown|json] [--output FILE]
                       [--noise FILE] [--min-effect 0.05]

Reads every results file (`stepbench run`) and profile file (`stepbench profile`) in the folder,
orders them by the commit they measured, and looks for change points in each series keyed by
(scenario, design, threads, metric):

- ns_per_element_vs_floor: each repetition of a design divided by its floor's repetition of the
  same round (the scenario's own floor at the same threads, as `stepbench compare` pairs them);
  a run's value is the median of those ratios;
- latency_p50 (where the scenario records latencies): the median over repetitions of each
  repetition's p50;
- allocations_per_element: exact where the row says so (`allocationsExact`), else timing-like;
- instructions_per_element (profiles, callgrind): exact.

Timing series: E-divisive means (Matteson & James 2014, the method of MongoDB's signal
processing and of Apache Otava/Hunter) on log values, applied recursively. A split is tested at
level ALPHA on every order of its segment up to EXACT_RUNS runs (an exact p-value: so a timing
change needs 8 runs, as with 7 the smallest p is 2/35 = 0.057), else on PERMUTATIONS random
permutations (seeded by series and segment); each side spans at least MIN_REGIME runs; and the
regime medians must differ by at least max(--min-effect, SIGMAS σ), σ being the split's own
noise: the row's between-run drift from noise.json plus its runs' sampling noise. A row
noise.json does not cover has no drift estimate: as in `compare`, its changes are listed, never
called change points.
Exact series: any step above the CI gate's tolerance (instructions INSTRUCTION_TOLERANCE
relative, exact allocations ALLOCATION_TOLERANCE per element) is a change point, p = 0.

Exit status (as `stepbench compare`): 0 no change point in the worse direction (none, or only
improvements); 2 at least one change point that is a regression (a later regime larger: slower,
more instructions or allocations); 1 bad input (no such folder, no results files in it, an
unreadable or malformed file, files of several machine kinds), named with what to do.
Files written with --output are written atomically (temporary file, then rename).
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import itertools
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import zlib
from dataclasses import dataclass, field

import numpy as np

from .results import READABLE_SCHEMAS, ResultsError, _load_one, floor_in, in_order, preset

SCHEMA = "stepbench-history/1"

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
# A timing split must move the regime median by SIGMAS standard deviations of its own noise ...
# The search looks at every split, so a lone 3σ would be crossed by chance: measured on
# synthetic A/A series drawn from noise.json (14 rows × 700, 5 repetitions a run), the whole
# detector called a change in 7 of 9,800 series of 20 runs at 3σ, 4 at 3.5σ, 1 at 4σ (0 of
# 9,800 at 7 runs, at any of them).
SIGMAS = 4.0
# ... and by at least this much (--min-effect, compare's default).
MIN_EFFECT = 0.05
# A timing regime spans at least this many runs: one run alone is an outlier, not a regime, so
# a change at the newest commit is reported once a second run confirms it.
MIN_REGIME = 2
# Exact series: the CI gate's tolerances (Comparison.instructionTolerance, allocationTolerance).
INSTRUCTION_TOLERANCE = 0.005   # relative
ALLOCATION_TOLERANCE = 0.01     # absolute, per element
# Median of a normal sample of m has variance ≈ (π/2)·σ²/m (asymptotically; for m = 1…5 the
# exact factor is smaller, so this errs on the noisy side).
MEDIAN_VARIANCE = math.pi / 2
# σ from the median absolute deviation of a normal sample.
MAD_TO_SD = 1.4826

COMMIT_RE = re.compile(r"^[0-9a-f]{7,40}$")


class HistoryError(Exception):
    """Bad input: the message names the file or folder, the problem and what to do."""


def lower_median(values):
    """The ⌈n/2⌉-th order statistic: StepBench's median of repetitions (results/README.md)."""
    s = sorted(values)
    return s[(len(s) - 1) // 2]


def _epoch(created_at):
    try:
        return datetime.datetime.fromisoformat(created_at.replace("Z", "+00:00")).timestamp()
    except (AttributeError, ValueError):
        return None


@dataclass
class RunFile:
    path: str
    name: str
    data: dict
    commit: str
    dirty: bool
    created_at: str
    created_epoch: float
    commit_time: float | None = None
    index: int = 0  # position in history order

    @property
    def ordered_by(self):
        return "commit-time" if self.commit_time is not None else "createdAt"

    @property
    def short(self):
        return (self.commit or "unknown")[:7]

    @property
    def label(self):
        return self.short + ("*" if self.dirty else "")

    @property
    def kind(self):
        return "results" if self.data["rows"] else "profile"

    def method(self, row=None):
        """What a point's value depends on besides the code: a change point across a change of
        these is flagged (the measurement changed, not necessarily the code)."""
        c = self.data.get("configuration") or {}
        m = {"schema": self.data.get("schema"), "preset": preset(c), "handoff": c.get("handoff"),
             "elementsOverride": c.get("elementsOverride"), "aggregation": self.data.get("aggregation")}
        if row is not None:
            m["elements"] = row.get("elements")
        return m


@dataclass
class ChangePoint:
    index: int              # position in the series' points: first point of the new regime
    before: float           # the old regime's median (exact: the previous point's value)
    after: float
    p_value: float
    regimes: tuple          # (points before, points after) in the adjacent regimes
    threshold: float | None = None  # timing: the smallest relative change the split had to show (0.05 = 5%)
    notes: list = field(default_factory=list)

    @property
    def ratio(self):
        return self.after / self.before if self.before else None

    @property
    def direction(self):
        # every metric here is smaller-is-better
        return "regression" if self.after > self.before else "improvement"


@dataclass
class Series:
    scenario: str
    design: str
    threads: int
    metric: str
    exact: bool
    points: list            # [(RunFile, value, log samples or None)]
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


# ---------------------------------------------------------------- reading the folder

def _machine_id(machine):
    slug = re.sub(r"[^a-z0-9]+", "-", (machine.get("cpuModel") or "").lower()).strip("-")
    return f"{slug or 'unknown-cpu'}-{machine.get('cores', 0)}c"


def collect(folder):
    """The folder's history files and the files left out, with why. Raises HistoryError."""
    if not os.path.exists(folder):
        raise HistoryError(f"{folder}: no such folder; pass a results folder, e.g. results/<machine-id>/")
    if not os.path.isdir(folder):
        raise HistoryError(f"{folder}: not a folder; pass the folder holding the results files "
                           f"(e.g. {os.path.dirname(folder) or '.'}/), not one file")
    names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    skipped, by_digest, files = [], {}, []
    # Copies (latest.json, profile-latest.json) repeat a time-named file: keep the time-named one.
    names.sort(key=lambda n: (n.endswith("latest.json"), n))
    for name in names:
        path = os.path.join(folder, name)
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except OSError as e:
            raise HistoryError(f"{path}: cannot read ({e.strerror}); fix its permissions or move it out of the folder")
        digest = hashlib.sha256(raw).hexdigest()
        if digest in by_digest:
            skipped.append({"file": name, "reason": f"a copy of {by_digest[digest]}"})
            continue
        try:
            head = json.loads(raw)
        except ValueError as e:
            raise HistoryError(f"{path}: not JSON ({e}); every writer here writes atomically, so this is not a "
                               f"StepBench file: move it out of the folder")
        schema = head.get("schema") if isinstance(head, dict) else None
        if isinstance(schema, str) and schema.startswith("stepbench-noise/"):
            skipped.append({"file": name, "reason": "a noise profile, read for the drift allowances"})
            continue
        if name.startswith("baseline"):
            skipped.append({"file": name, "reason": "the regression gate's reference, written by scripts/regress "
                                                    "with its own elements and repetitions"})
            continue
        if schema not in READABLE_SCHEMAS:
            found = f"'{schema}'" if schema is not None else "no schema"
            raise HistoryError(f"{path}: {found}, expected a results or profile file "
                               f"({' or '.join(READABLE_SCHEMAS)}); move it out of the folder or re-run `stepbench run`")
        try:
            data = _load_one(path)
        except ResultsError as e:
            raise HistoryError(str(e))
        by_digest[digest] = name
        machine = data["machine"]
        if machine.get("buildConfiguration") == "debug":
            skipped.append({"file": name, "reason": "a debug build (--allow-debug): not comparable with release runs"})
            continue
        if not data["rows"] and not data.get("profiles"):
            skipped.append({"file": name, "reason": "no rows and no profiles"})
            continue
        created = data.get("createdAt") or ""
        epoch = _epoch(created)
        if epoch is None:
            raise HistoryError(f"{path}: createdAt '{created}' is not an ISO 8601 time; a results file from "
                               f"`stepbench run` always has one")
        files.append(RunFile(path=path, name=name, data=data, commit=(machine.get("gitCommit") or "").lower(),
                             dirty=bool(machine.get("gitDirty")), created_at=created, created_epoch=epoch))
    if not files:
        what = f" (left out: {', '.join(s['file'] for s in skipped)})" if skipped else ""
        raise HistoryError(f"{folder}: no results files{what}; run scripts/bench (it writes "
                           f"results/<machine-id>/<time>.json) or pass the folder that holds them")
    kinds = {}
    for f in files:
        kinds.setdefault(_machine_id(f.data["machine"]), f.name)
    if len(kinds) > 1:
        listed = ", ".join(f"{k} ({v})" for k, v in kinds.items())
        raise HistoryError(f"{folder}: files of several machine kinds: {listed}; a history is of one machine kind, "
                           f"keep each kind in its own results/<machine-id>/ folder")
    return files, skipped


def commit_time(folder, commit):
    """The commit's committer time from git (None when git does not know it)."""
    if not COMMIT_RE.match(commit or ""):
        return None
    try:
        done = subprocess.run(["git", "-C", folder, "log", "-1", "--format=%ct", commit, "--"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = done.stdout.strip()
    return float(out) if done.returncode == 0 and out.isdigit() else None


def order(folder, files):
    """Commit order: by the commit's time where git knows the commit, else by the file's
    createdAt (said in the output); several files at one commit keep their createdAt order."""
    times = {}
    for f in files:
        if f.commit not in times:
            times[f.commit] = commit_time(folder, f.commit)
        f.commit_time = times[f.commit]
    files.sort(key=lambda f: (f.commit_time if f.commit_time is not None else f.created_epoch, f.created_epoch, f.name))
    for i, f in enumerate(files):
        f.index = i
    return files


# ---------------------------------------------------------------- series

def _timing_row_samples(row, floor_row):
    """{metric: per-repetition values} of a row's timing metrics that history tracks, taken as
    compare's timingSamples takes them: the paired ratio to the floor (repetition i of the
    design over repetition i of its floor, same round) and latency p50."""
    reps = row.get("repetitions") or []
    out = {}
    if not reps:
        return out
    if floor_row is not None and len(floor_row.get("repetitions") or []) == len(reps):
        ratios = []
        for a, b in zip(reps, floor_row["repetitions"]):
            if a.get("elements") and b.get("elements") and b.get("elapsedNanoseconds"):
                ratios.append((a["elapsedNanoseconds"] / a["elements"]) / (b["elapsedNanoseconds"] / b["elements"]))
        if len(ratios) == len(reps) and all(r > 0 and math.isfinite(r) for r in ratios):
            out["ns_per_element_vs_floor"] = ratios
    p50 = [r["latency"]["p50"] for r in reps if r.get("latency")]
    if len(p50) == len(reps) and all(v > 0 for v in p50):
        out["latency_p50"] = p50
    return out


def _allocations(row):
    reps = row.get("repetitions") or []
    return [r["allocations"] / (r.get("countedElements") or r["elements"])
            for r in reps if r.get("elements") and r.get("allocations") is not None]


def build_series(files, noise):
    """Every series of the folder, in a stable order. `noise`: {key: driftSD} or None."""
    # Whether a row's allocation count is exact: what its newest stepbench/2 file says.
    # stepbench/1 rows carry no flag and take that one; a row never flagged is compared like a
    # timing (the cautious side: it is then never called without a drift estimate).
    exact_alloc = {}
    for f in files:
        for row in f.data["rows"]:
            if "allocationsExact" in row:
                exact_alloc[(row["scenario"], row["design"], row["threads"])] = bool(row["allocationsExact"])
    series = {}

    def add(key, exact, f, value, samples):
        s = series.get(key)
        if s is None:
            s = series[key] = Series(*key, exact=exact, points=[])
        s.points.append((f, value, samples))

    for f in files:
        ok = {(r["scenario"], r["design"], r["threads"]): r for r in f.data["rows"]
              if r.get("status") == "ok" and r.get("repetitions")}
        for (scenario, design, threads), row in ok.items():
            floor_name = floor_in(f.data, scenario)
            floor = ok.get((floor_name, "floor", threads)) if floor_name else None
            for metric, values in _timing_row_samples(row, floor).items():
                logs = [math.log(v) for v in values]
                add((scenario, design, threads, metric), False, f, math.exp(lower_median(logs)), logs)
            allocs = _allocations(row)
            if not allocs:
                continue
            if exact_alloc.get((scenario, design, threads), False):
                add((scenario, design, threads, "allocations_per_element"), True, f, lower_median(allocs), None)
            else:
                # only the repetitions that carry their own count (compare does the same)
                own = allocs[:row.get("allocationRepetitions") or len(allocs)]
                if all(a > 0 for a in own):
                    logs = [math.log(a) for a in own]
                    add((scenario, design, threads, "allocations_per_element"), False, f,
                        math.exp(lower_median(logs)), logs)
        for p in f.data.get("profiles") or []:
            if p.get("instructionsPerElement"):
                add((p["scenario"], p["design"], 1, "instructions_per_element"), True, f, p["instructionsPerElement"], None)
    out = []
    for s in series.values():
        if not s.exact:
            s.drift_sd = noise.get(s.key) if noise is not None else None
        out.append(s)
    metric_order = ["ns_per_element_vs_floor", "latency_p50", "allocations_per_element", "instructions_per_element"]

    def rank(seq, v):
        return seq.index(v) if v in seq else len(seq)
    # the tool's order: the newest catalog's, then the order the files wrote their rows in
    catalog = next((f.data["catalog"] for f in reversed(files) if f.data.get("catalog")), {})
    rows = [r for f in reversed(files) for r in f.data["rows"]]
    scenario_order = in_order((r["scenario"] for r in rows), [c["name"] for c in catalog.get("scenarios", [])])
    design_order = [d for d in in_order((r["design"] for r in rows), catalog.get("designs", ())) if d != "floor"]
    out.sort(key=lambda s: (rank(metric_order, s.metric), rank(scenario_order, s.scenario), s.scenario,
                            rank(design_order + ["floor"], s.design), s.threads))
    return out


def load_noise(path):
    """{series key: driftSD} from a stepbench-noise/1 profile. Raises HistoryError."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise HistoryError(f"{path}: cannot read the noise profile ({e.strerror}); write one with "
                           f"`scripts/regress --update-baseline`, or pass --no-noise")
    except ValueError as e:
        raise HistoryError(f"{path}: not a noise profile ({e})")
    if not isinstance(data, dict) or data.get("schema") != "stepbench-noise/1" or not isinstance(data.get("entries"), list):
        raise HistoryError(f"{path}: not a noise profile (schema {data.get('schema') if isinstance(data, dict) else None!r}, "
                           f"expected 'stepbench-noise/1')")
    if data.get("method") == "interleaved-processes":
        raise HistoryError(f"{path}: a noise profile of the interleaved protocol (scripts/abtest); a history compares "
                           f"separate runs: use the single-run profile (noise.json)")
    try:
        return {f"{e['scenario']}|{e['design']}|{e['threads']}|{e['metric']}": float(e["driftSD"]) for e in data["entries"]}
    except (KeyError, TypeError, ValueError) as e:
        raise HistoryError(f"{path}: malformed noise profile entry ({e})")


# ---------------------------------------------------------------- detection

def _median(a, axis=-1):
    """The ordinary median (middle two averaged) of regimes: a regime often holds an even,
    small number of runs, and the lower median of two runs is their minimum, a biased estimate."""
    return np.median(a, axis=axis)


def sampling_sd(point_logs):
    """σ of one repetition's log value, pooled over the series' runs: 1.4826 × the median absolute
    residual around each run's own median, leaving out that median's own residual (0 by
    construction). Nearly unbiased for normal repetitions (measured: 1.03σ at 5 repetitions,
    1.00σ at 101) and robust to the preempted outliers. From the runs themselves: noise.json's
    residuals come from the gate's 601 repetitions of 10,000 elements, not from these windows."""
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


def timing_change_points(point_logs, drift_sd, key, min_effect=MIN_EFFECT, sigmas=SIGMAS):
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


def detect_exact(values, metric):
    """Deterministic counts: any step above the tolerance between consecutive points is a change
    point, p = 0 (a count fixed by the code does not move by chance; no test needed)."""
    out = []
    for i in range(1, len(values)):
        a, b = values[i - 1], values[i]
        if metric == "instructions_per_element":
            moved = a > 0 and abs(b / a - 1) > INSTRUCTION_TOLERANCE
        else:
            moved = abs(b - a) > ALLOCATION_TOLERANCE
        if moved:
            out.append(i)
    return out


def _notes(series, index):
    """What else changed at a change point: the measurement, a dirty tree, or nothing (two runs
    of one commit on either side)."""
    (f_before, _, _), (f_after, _, _) = series.points[index - 1], series.points[index]
    notes = []
    def row_of(f):
        for r in f.data["rows"]:
            if (r["scenario"], r["design"], r["threads"]) == (series.scenario, series.design, series.threads):
                return r
        return None
    mb, ma = f_before.method(row_of(f_before)), f_after.method(row_of(f_after))
    changed = [k for k in ma if mb.get(k) != ma.get(k)]
    if changed:
        notes.append("measurement changed: " + "; ".join(f"{k} {mb.get(k)!r} → {ma.get(k)!r}" for k in changed))
    if f_after.dirty:
        notes.append(f"measured on a dirty tree at {f_after.short}")
    if f_before.commit == f_after.commit and f_before.dirty == f_after.dirty:
        notes.append(f"both sides hold runs of {f_before.short}: not a change of the code")
    return notes


def analyse_series(s, min_effect=MIN_EFFECT):
    values = s.values
    if s.exact:
        for i in detect_exact(values, s.metric):
            s.change_points.append(ChangePoint(index=i, before=values[i - 1], after=values[i], p_value=0.0,
                                               regimes=(1, 1), notes=_notes(s, i)))
        if len(values) < 2:
            s.status = "too-short"
        return s
    if len(values) < 2 * MIN_REGIME:
        s.status = "too-short"
        return s
    if s.drift_sd is None:
        # detected as if drift were 0, listed, never called (compare's no-drift-estimate)
        s.status = "no-drift-estimate"
    s.change_points, s.sampling_sd = timing_change_points([l for _, _, l in s.points], s.drift_sd or 0.0, s.key,
                                                          min_effect)
    for c in s.change_points:
        c.notes = _notes(s, c.index)
    return s


@dataclass
class History:
    folder: str
    machine_id: str
    files: list
    skipped: list
    series: list
    noise_path: str | None
    min_effect: float
    notes: list

    def change_points(self, called=True):
        """(series, change point) pairs: called ones (rows with a drift estimate, or exact), or
        with called=False those listed without a drift estimate."""
        return [(s, c) for s in self.series for c in s.change_points
                if (s.status != "no-drift-estimate") == called]

    @property
    def regressions(self):
        return [(s, c) for s, c in self.change_points() if c.direction == "regression"]


def analyse(folder, noise_path="default", min_effect=MIN_EFFECT):
    """The history of a results folder. noise_path: a noise profile, "default" for the folder's
    noise.json when it exists, or None for none. Raises HistoryError on bad input."""
    if not 0 <= min_effect < 10:
        raise HistoryError(f"--min-effect {min_effect}: expected a fraction such as 0.05")
    files, skipped = collect(folder)
    files = order(folder, files)
    notes = []
    if noise_path == "default":
        candidate = os.path.join(folder, "noise.json")
        noise_path = candidate if os.path.exists(candidate) else None
    noise = load_noise(noise_path) if noise_path else None
    if noise is None:
        notes.append("no noise profile: no timing row has a drift estimate, so no timing change is called "
                     "(write one with `scripts/regress --update-baseline`)")
    unknown = [f for f in files if f.commit_time is None]
    if unknown:
        notes.append(f"{len(unknown)} of {len(files)} files ordered by their createdAt: git does not know their commit "
                     f"({', '.join(sorted({f.short for f in unknown}))})")
    series = [analyse_series(s, min_effect) for s in build_series(files, noise)]
    return History(folder=folder, machine_id=_machine_id(files[0].data["machine"]), files=files, skipped=skipped,
                   series=series, noise_path=noise_path, min_effect=min_effect, notes=notes)


# ---------------------------------------------------------------- output

def method_text(h):
    drift = (f"drift σ from {h.noise_path}" if h.noise_path else "no drift σ (no noise profile)")
    return (f"timing: E-divisive means on log values, permutation test (all orders up to {EXACT_RUNS} runs, else "
            f"{PERMUTATIONS} seeded), α {ALPHA:g}, "
            f"regimes of ≥ {MIN_REGIME} runs, min effect max({h.min_effect:.0%}, {SIGMAS:g}σ; {drift}); "
            f"exact: instructions > {INSTRUCTION_TOLERANCE:.1%}, allocations > {ALLOCATION_TOLERANCE:g}/element, p = 0")


def _fmt(v):
    if v is None:
        return "–"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}" if abs(v) >= 1 else f"{v:.4f}"


def _cp_row(s, c, markdown=False):
    f = s.points[c.index][0]
    prev = s.points[c.index - 1][0]
    ratio = f"×{c.ratio:.3f}" if c.ratio is not None else f"{c.after - c.before:+.2f}"
    p = "0 (exact)" if s.exact else f"{c.p_value:.3f}"
    code = (lambda t: f"`{t}`") if markdown else (lambda t: t)  # a dirty commit's * is not emphasis
    return [s.scenario, s.design, str(s.threads), s.metric, code(f.label), code(prev.label), _fmt(c.before),
            _fmt(c.after), ratio, c.direction, p, f"{c.regimes[0]}/{c.regimes[1]}", "; ".join(c.notes)]


HEADER = ["scenario", "design", "threads", "metric", "commit", "previous", "before", "after", "ratio",
          "direction", "p", "runs", "note"]


def summary_line(h):
    called = h.change_points()
    regressions = len(h.regressions)
    uncalled = h.change_points(called=False)
    commits = [f for f in h.files]
    span = f"{commits[0].short} … {commits[-1].short}" if len(commits) > 1 else commits[0].short
    results = sum(1 for f in h.files if f.kind == "results")
    text = (f"{len(called)} change point(s) ({regressions} regression(s), {len(called) - regressions} improvement(s)) in "
            f"{len(h.series)} series of {results} run(s) and {len(h.files) - results} profile(s), commits {span}")
    if uncalled:
        text += f"; {len(uncalled)} more without a drift estimate, not called"
    return text


def to_json(h):
    def cp(s, c):
        f, prev = s.points[c.index][0], s.points[c.index - 1][0]
        return {"scenario": s.scenario, "design": s.design, "threads": s.threads, "metric": s.metric,
                "exact": s.exact, "called": s.status != "no-drift-estimate", "index": c.index,
                "commit": f.commit, "dirty": f.dirty, "file": f.name, "previousCommit": prev.commit,
                "before": c.before, "after": c.after, "ratio": c.ratio, "change": c.after - c.before,
                "direction": c.direction, "pValue": c.p_value, "regimeRuns": list(c.regimes),
                "minimumEffect": c.threshold, "notes": c.notes}
    return {
        "schema": SCHEMA, "folder": h.folder, "machineId": h.machine_id,
        "method": {"timing": "e-divisive-means", "alpha": ALPHA, "permutations": PERMUTATIONS, "sigmas": SIGMAS,
                   "minEffect": h.min_effect, "minRegimeRuns": MIN_REGIME, "noiseProfile": h.noise_path,
                   "instructionTolerance": INSTRUCTION_TOLERANCE, "allocationTolerance": ALLOCATION_TOLERANCE},
        "files": [{"file": f.name, "kind": f.kind, "commit": f.commit, "dirty": f.dirty, "createdAt": f.created_at,
                   "commitTime": f.commit_time, "orderedBy": f.ordered_by, "schema": f.data.get("schema")} for f in h.files],
        "skipped": h.skipped, "notes": h.notes,
        "changePoints": [cp(s, c) for s, c in h.change_points()],
        "uncalled": [cp(s, c) for s, c in h.change_points(called=False)],
        "series": [{"scenario": s.scenario, "design": s.design, "threads": s.threads, "metric": s.metric,
                    "exact": s.exact, "status": s.status, "driftSD": s.drift_sd, "samplingSD": s.sampling_sd,
                    "points": [{"file": f.name, "commit": f.commit, "dirty": f.dirty, "value": v} for f, v, _ in s.points],
                    "changePoints": [c.index for c in s.change_points]} for s in h.series],
        "summary": summary_line(h),
        "regressions": len(h.regressions),
    }


def render(h, fmt):
    if fmt == "json":
        return json.dumps(to_json(h), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    called, uncalled = h.change_points(), h.change_points(called=False)
    known = sum(f.commit_time is not None for f in h.files)
    order_line = ("ordered by commit time" if known == len(h.files) else
                  "ordered by createdAt (git knows none of the commits)" if known == 0 else
                  "ordered by commit time where git knows the commit, else by createdAt")
    intro = [f"history of {h.folder} ({h.machine_id}): {len(h.files)} files, {order_line}"]
    if h.skipped:
        intro.append("left out: " + "; ".join(f"{s['file']} ({s['reason']})" for s in h.skipped))
    intro += h.notes
    tables = []
    for title, rows in (("change points", called), ("without a drift estimate (not called, as compare's no-drift-estimate)", uncalled)):
        if not rows:
            continue
        body = [_cp_row(s, c, fmt == "markdown") for s, c in rows]
        if fmt == "markdown":
            tables.append(f"**{title}**\n\n" + "\n".join(["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
                                                       + ["| " + " | ".join(r) + " |" for r in body]))
        else:
            table = [HEADER] + body
            widths = [max(len(r[c]) for r in table) for c in range(len(HEADER))]
            tables.append(f"{title}:\n" + "\n".join("  ".join(v.ljust(widths[c]) for c, v in enumerate(r)).rstrip()
                                                   for r in table))
    if not tables:
        tables.append("no change points")
    foot = [summary_line(h), method_text(h)]
    sep = "\n\n" if fmt == "markdown" else "\n"
    return sep.join(intro) + "\n\n" + "\n\n".join(tables) + "\n\n" + sep.join(foot) + "\n"


def write_atomically(path, text):
    """Temporary file in the target's folder, then rename: a reader sees the old file or the
    new one, never half of one."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".history-", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class _Parser(argparse.ArgumentParser):
    """Usage errors exit 1, as compare's do (argparse's own 2 would read as "regression")."""

    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(1)


def main(argv=None):
    doc = __doc__.split("\n\n", 2)
    epilog = doc[2]
    for name, value in (("PERMUTATIONS", f"{PERMUTATIONS:,}"), ("EXACT_RUNS", str(EXACT_RUNS)), ("ALPHA", f"{ALPHA:g}"), ("SIGMAS", f"{SIGMAS:g}"),
                        ("MIN_REGIME", str(MIN_REGIME)), ("INSTRUCTION_TOLERANCE", f"{INSTRUCTION_TOLERANCE:.1%}"),
                        ("ALLOCATION_TOLERANCE", f"{ALLOCATION_TOLERANCE:g}")):
        epilog = epilog.replace(name, value)  # the help states the numbers in force
    parser = _Parser(prog="scripts/history", description=doc[0].split(": ", 1)[1],
                     epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", help="results/<machine-id>/: its results and profile files")
    parser.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    parser.add_argument("--output", help="write here (atomically) instead of standard output")
    noise = parser.add_mutually_exclusive_group()
    noise.add_argument("--noise", help="noise profile for the drift allowances (default: the folder's noise.json)")
    noise.add_argument("--no-noise", action="store_true", help="no drift allowances: no timing change is called")
    parser.add_argument("--min-effect", type=float, default=MIN_EFFECT, help="smallest timing change called (default 0.05)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (1, see _Parser)
        return e.code if isinstance(e.code, int) else 1
    try:
        h = analyse(args.folder.rstrip("/") or "/", None if args.no_noise else (args.noise or "default"), args.min_effect)
        text = render(h, args.format)
        if args.output:
            try:
                write_atomically(args.output, text)
            except OSError as e:
                raise HistoryError(f"{args.output}: cannot write ({e.strerror}); pick a writable --output")
        else:
            sys.stdout.write(text)
    except HistoryError as e:
        print(f"scripts/history: {e}", file=sys.stderr)
        return 1
    return 2 if h.regressions else 0


if __name__ == "__main__":
    sys.exit(main())
