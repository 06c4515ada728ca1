"""scripts/history: what changed at a change point besides the code measured, and so whether it
can be called a regression.

A step between two runs is the code's only when nothing else moved: not the measurement (the
files' schema or a setting that changes what is measured, or the harness between the two
commits), not a dirty tree on either side, and some library or peer code between them. Only
then is a worse step a regression (exit 2); every other change point is shown apart, with what
changed.
"""
from __future__ import annotations

import subprocess

# Paths (from the repository's root) of the harness: what runs in a measuring child and decides
# what a number is, not what is measured — the scenarios, their upstreams, meter and measured
# window (StepBenchScenarios), the suite's upstream and the child guard (in the kit since the
# move to Benchmarks/), the runner and its passes, the allocation counter, the profiler and path
# counting, the C edges (callgrind window, jemalloc's settings), the bench's pinned dependencies
# and the build scripts. The bench sat under Bench/ from 32b839b, and before that beside the
# library under Sources/; it is Benchmarks/ since. What only reads results (compare, rank,
# history, exports, the report), tests and the gate's thresholds change no measurement.
_KIT = ("BenchmarkRunner.swift", "RunConfiguration.swift", "RunPasses.swift", "Passes/", "Measure/AllocationCounter.swift",
        "Paths/", "Profiler.swift")
_BENCH_ROOTS = ("Benchmarks/Sources/", "Bench/Sources/", "Sources/")
_KIT_HARNESS = tuple(f"Sources/SteppingConformance/Support/{name}.swift"
                     for name in ("CountingUpstream", "ChildGuard", "ChildLaunch", "Clock", "SplitMix64", "Unchecked"))
HARNESS = (tuple(f"{root}{target}/" for root in _BENCH_ROOTS
                 for target in ("StepBenchScenarios", "CCallgrind", "CJemallocConfig", "CProcessGuard", "stepbench"))
           + ("Benchmarks/Package.swift", "Bench/Package.swift", "scripts/bench", "scripts/lib/build-release")
           + _KIT_HARNESS
           + tuple(f"{root}StepBenchKit/{k}" for root in _BENCH_ROOTS for k in _KIT))
# Before 32b839b the bench's other targets sat under Sources/ too: not the library.
NOT_MEASURED = ("Benchmarks/Thresholds/", "Bench/Thresholds/", "Sources/StepBenchKit/", "Sources/StepBenchCLI/",
                "Sources/SteppingConformance", "Sources/CJemalloc", "Benchmarks/Sources/", "Benchmarks/Tests/",
                "Benchmarks/Benchmarks/", "Tests/")
# The code measured: the library, the peers, and the package that builds them.
CODE = ("Sources/", "Benchmarks/Peers/", "Peers/", "Package.swift", "Package.resolved")

# What each run's file says about how it measured, besides what the tool gives per point
# (`stepbench history series`: schema, preset, hand-off, elements): (section, key).
FILE_SETTINGS = (("configuration", "repetitionBudget"), ("configuration", "warmup"), ("machine", "swiftVersion"),
                 ("machine", "allocator"), ("machine", "buildConfiguration"), ("machine", "kernel"))

# A change point's cause: the code (a regression or an improvement), or one of these, shown apart.
MEASUREMENT, MEASUREMENT_AND_CODE, DIRTY, NO_CODE = CAUSES = (
    "measurement changed", "measurement and code changed", "dirty tree", "no code changed")


def _under(path, prefixes):
    return any(path == p or path.startswith(p) for p in prefixes)


def kind_of(path):
    """"harness", "code" or None (documentation, results, scripts that only read, tests)."""
    if "/Tests/" in f"/{path}":
        return None
    if _under(path, HARNESS):
        return "harness"
    if _under(path, NOT_MEASURED):
        return None
    return "code" if _under(path, CODE) else None


class Git:
    """What git says changed between two runs' commits, asked once per pair (the folder's
    repository; a commit it does not know leaves it unable to tell)."""

    def __init__(self, folder):
        self.folder = folder
        self._diffs = {}

    def changed(self, before, after):
        """The paths changed from `before`'s commit to `after`'s, or None when git cannot tell
        (a commit it does not know, no git)."""
        if before.commit_time is None or after.commit_time is None:
            return None
        key = (before.commit, after.commit)
        if key not in self._diffs:
            try:
                done = subprocess.run(["git", "-C", self.folder, "diff", "--name-only", *key],
                                      capture_output=True, text=True, timeout=60)
                self._diffs[key] = done.stdout.split() if done.returncode == 0 else None
            except (OSError, subprocess.TimeoutExpired):
                self._diffs[key] = None
        return self._diffs[key]


def _settings_changed(before, after):
    """'name old → new' for each setting that differs between two points' measurements."""
    return [f"{k} {before.get(k)!r} → {after.get(k)!r}" for k in dict.fromkeys([*before, *after])
            if before.get(k) != after.get(k)]


def _summary(paths, limit=3):
    """How many files, and the first folders (two levels) they lie in: what a reader looks at first."""
    folders = list(dict.fromkeys("/".join(p.split("/")[:2]) + "/" if p.count("/") >= 2 else p for p in paths))
    shown = ", ".join(folders[:limit]) + (f" and {len(folders) - limit} more" if len(folders) > limit else "")
    return f"{len(paths)} file(s) in {shown}"


def classify(series, index, git):
    """(cause, notes) of the change point at `index` of `series`: cause None when only the code
    changed (a regression or an improvement), else MEASUREMENT, MEASUREMENT_AND_CODE, DIRTY or
    NO_CODE; the notes say what changed, and when git could not tell."""
    (before, _, _), (after, _, _) = series.points[index - 1], series.points[index]
    settings = _settings_changed(series.measurements[index - 1], series.measurements[index])
    notes = [f"measurement changed: {'; '.join(settings)}"] if settings else []
    same = before.commit == after.commit
    paths = [] if same else git.changed(before, after)
    kinds = {kind_of(p) for p in paths} if paths is not None else set()
    harness = [p for p in paths or [] if kind_of(p) == "harness"]
    if harness:
        notes.append(f"the harness changed between {before.short} and {after.short}: {_summary(harness)}")
    if paths is None:
        notes.append(f"git cannot tell what changed between {before.short} and {after.short} (a commit it does not "
                     f"know): judged on the files alone")
    dirty = [f.short for f in (before, after) if f.dirty]
    if dirty:
        notes.append(f"measured on a dirty tree at {' and '.join(dict.fromkeys(dirty))}")
    if settings or harness:
        return (MEASUREMENT_AND_CODE if "code" in kinds else MEASUREMENT), notes
    if dirty:
        return DIRTY, notes
    if paths is not None and "code" not in kinds:
        notes.append(f"both sides hold runs of {before.short}: not a change of the code" if same else
                     f"git shows no library or peer code changed between {before.short} and {after.short}")
        return NO_CODE, notes
    return None, notes
