"""scripts/history: change points in the results of one machine kind over its commits.

Usage: scripts/history results/<machine-id>/ [--format text|markdown|json] [--output FILE]
                       [--noise FILE] [--min-effect FRACTION]

Asks the tool for the folder's series and their change points (`stepbench history series`: every
results and profile file in commit order, each series keyed by what it measures (scenario or
path, design, threads, metric: the tool's MeasureKey) with what its numbers mean and where they
moved), says what else changed at each change point, and draws. The series:

- ns_per_element_vs_floor: each repetition of a design divided by its floor's repetition of the
  same round (the scenario's own floor at the same threads, as `stepbench compare` pairs them);
  a run's value is the median of those ratios;
- latency_p50 (where the scenario records latencies): the median over repetitions of each
  repetition's p50;
- allocations_per_element: exact where the row says so (`allocationsExact`), else timing-like;
- instructions_per_element (profiles, callgrind): exact;
- each path's instructions_per_event, synchronising_instructions_per_event and allocations_per_event
  (profiles; the path's name in the scenario column): exact where the gate calls them exact.

The change points are the tool's (`stepbench history series`, its `detection` of each series; the
method's constants under its `method`, printed on the last line here). Timing series:
E-divisive means (Matteson & James 2014, the method of MongoDB's signal processing and of Apache
Otava/Hunter) on log values, applied recursively; a split is tested on every order of its
segment up to 8 runs (an exact p-value: so a timing change needs 8 runs, as with 7 the smallest
p is 2/35 = 0.057), else on seeded random permutations; each side spans at least two runs; and
the regime medians must differ by at least max(--min-effect, 4σ), σ being the split's own noise:
the row's between-run drift from noise.json plus its runs' sampling noise. A row noise.json does
not cover has no drift estimate: as in `compare`, its changes are listed, never called change
points. Exact series: any step above the CI gate's tolerance for the count is a change point,
p = 0.

Each change point is classified (history_cause): where the measurement changed between its run
and the run before (the files' schema or a setting that changes what is measured; the harness,
by `git diff --name-only` of the two commits), where either run is of a dirty tree, or where git
shows no library or peer code changed, it is shown apart with what changed and is neither a
regression nor an improvement. Where git does not know a commit, the output says so and the
files alone decide.

Exit status (as `stepbench compare`): 0 no change point in the worse direction where only the
code changed (none, or only improvements); 2 at least one such regression (a later regime
larger: slower, more instructions or allocations); 1 bad input (no such folder, no results files in it, an
unreadable or malformed file, files of several machine kinds), named with what to do.
Files written with --output are written atomically (temporary file, then rename).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass

from .history_cause import CAUSES, Git, classify
from .history_collect import collect
from .history_model import HistoryError


SCHEMA = "stepbench-history/1"


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
    #: the change-point search's constants, as the tool gives them
    method: dict

    def change_points(self, called=True, code=None):
        """(series, change point) pairs: called ones (rows with a drift estimate, or exact), or
        with called=False those listed without a drift estimate; with code=True only those
        where only the code changed, with code=False only those where something else did."""
        return [(s, c) for s in self.series for c in s.change_points
                if (s.status != "no-drift-estimate") == called and (code is None or (c.cause is None) == code)]

    @property
    def regressions(self):
        """Called change points to worse where only the code changed: a step where the
        measurement changed, on a dirty tree or with no code changed is shown apart, never one."""
        return [(s, c) for s, c in self.change_points(code=True) if c.direction == "regression"]


def analyse(folder, noise_path="default", min_effect=None, series=None):
    """The history of a results folder. noise_path: a noise profile, "default" for the folder's
    noise.json when it exists, or None for none; min_effect: None for the tool's default; series:
    the tool's series of the folder when already asked for (`stepbench show report` holds them).
    Raises HistoryError on bad input (the tool's message: it checks --min-effect too)."""
    files, skipped, series, noise_path, machine_id, min_effect, method = collect(folder, noise_path, min_effect,
                                                                                 data=series)
    notes = []
    if noise_path is None:
        notes.append("no noise profile: no timing row has a drift estimate, so no timing change is called "
                     "(write one with `scripts/regress --update-baseline`)")
    unknown = [f for f in files if f.commit_time is None]
    if unknown:
        notes.append(f"{len(unknown)} of {len(files)} files ordered by their createdAt: git does not know their commit "
                     f"({', '.join(sorted({f.short for f in unknown}))})")
    git = Git(folder)
    for s in series:  # what else changed at each of the tool's change points (history_cause)
        for c in s.change_points:
            c.cause, c.notes = classify(s, c.index, git)
    return History(folder=folder, machine_id=machine_id, files=files, skipped=skipped, series=series,
                   noise_path=noise_path, min_effect=min_effect, notes=notes, method=method)


# ---------------------------------------------------------------- output

def method_text(h):
    drift = (f"drift σ from {h.noise_path}" if h.noise_path else "no drift σ (no noise profile)")
    m = h.method
    return (f"timing: E-divisive means on log values, permutation test (all orders up to {m['exactRuns']} runs, else "
            f"{m['permutations']} seeded), α {m['alpha']:g}, "
            f"regimes of ≥ {m['minRegime']} runs, min effect max({h.min_effect:.0%}, {m['sigmas']:g}σ; {drift}); "
            f"exact: any step beyond the gate's tolerance for the count, p = 0 (`stepbench history series`)")


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
    called = h.change_points(code=True)
    regressions = len(h.regressions)
    apart = h.change_points(code=False)
    uncalled = h.change_points(called=False)
    commits = [f for f in h.files]
    span = f"{commits[0].short} … {commits[-1].short}" if len(commits) > 1 else commits[0].short
    results = sum(1 for f in h.files if f.kind == "results")
    text = (f"{len(called)} change point(s) where only the code changed ({regressions} regression(s), "
            f"{len(called) - regressions} improvement(s)) in {len(h.series)} series of {results} run(s) and "
            f"{len(h.files) - results} profile(s), commits {span}")
    if apart:
        causes = {c.cause for _, c in apart}
        text += (f"; {len(apart)} more where something else changed, none of them a regression (" +
                 ", ".join(f"{sum(c.cause == k for _, c in apart)} {k}" for k in CAUSES if k in causes) + ")")
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
                "direction": c.direction, "cause": c.cause or "code", "pValue": c.p_value, "regimeRuns": list(c.regimes),
                "minimumEffect": c.threshold, "notes": c.notes}
    return {
        "schema": SCHEMA, "folder": h.folder, "machineId": h.machine_id,
        "method": {"timing": "e-divisive-means", "alpha": h.method["alpha"], "permutations": h.method["permutations"],
                   "sigmas": h.method["sigmas"], "minEffect": h.min_effect, "minRegimeRuns": h.method["minRegime"],
                   "noiseProfile": h.noise_path},
        "files": [{"file": f.name, "kind": f.kind, "commit": f.commit, "dirty": f.dirty, "createdAt": f.created_at,
                   "commitTime": f.commit_time, "orderedBy": f.ordered_by, "schema": f.schema} for f in h.files],
        "skipped": h.skipped, "notes": h.notes,
        "changePoints": [cp(s, c) for s, c in h.change_points()],
        "uncalled": [cp(s, c) for s, c in h.change_points(called=False)],
        "series": [{"scenario": s.scenario, "design": s.design, "threads": s.threads, "metric": s.metric,
                    "exact": s.exact, "tolerance": s.tolerance, "status": s.status, "driftSD": s.drift_sd,
                    "samplingSD": s.sampling_sd,
                    "points": [{"file": f.name, "commit": f.commit, "dirty": f.dirty, "value": v} for f, v, _ in s.points],
                    "changePoints": [c.index for c in s.change_points]} for s in h.series],
        "summary": summary_line(h),
        "regressions": len(h.regressions),
    }


def render(h, fmt):
    if fmt == "json":
        return json.dumps(to_json(h), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    called, apart, uncalled = h.change_points(code=True), h.change_points(code=False), h.change_points(called=False)
    known = sum(f.commit_time is not None for f in h.files)
    order_line = ("ordered by commit time" if known == len(h.files) else
                  "ordered by createdAt (git knows none of the commits)" if known == 0 else
                  "ordered by commit time where git knows the commit, else by createdAt")
    intro = [f"history of {h.folder} ({h.machine_id}): {len(h.files)} files, {order_line}"]
    if h.skipped:
        intro.append("left out: " + "; ".join(f"{s['file']} ({s['reason']})" for s in h.skipped))
    intro += h.notes
    tables = []
    sections = [("change points", called)] + [
        (f"{cause}: shown apart, not regressions", [(s, c) for s, c in apart if c.cause == cause]) for cause in CAUSES]
    for title, rows in sections + [("without a drift estimate (not called, as compare's no-drift-estimate)", uncalled)]:
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
    elif not called:
        tables.insert(0, "no change point where only the code changed")
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
    parser = _Parser(prog="scripts/history", description=doc[0].split(": ", 1)[1],
                     epilog=epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", help="results/<machine-id>/: its results and profile files")
    parser.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    parser.add_argument("--output", help="write here (atomically) instead of standard output")
    noise = parser.add_mutually_exclusive_group()
    noise.add_argument("--noise", help="noise profile for the drift allowances (default: the folder's noise.json)")
    noise.add_argument("--no-noise", action="store_true", help="no drift allowances: no timing change is called")
    parser.add_argument("--min-effect", type=float, help="smallest timing change called (default: compare's, 5%%)")
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
