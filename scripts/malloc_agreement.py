"""Checks that package-benchmark's malloc counts agree with stepbench's jemalloc counts.

Both tools run the same scenarios from StepBenchScenarios and count allocations over the same
window (the scenario's Meter opens and closes package-benchmark's measurement). For every
benchmark `<scenario>_<design>` (floors: `<scenario>`) whose allocation count is fixed by the
code, mallocCountTotal (its p90 per iteration, from `benchmark thresholds update --path DIR`)
divided by the elements per iteration must match stepbench's allocations per element for the
same scenario, design, threads and elements, within the benchmark's tolerance per element (the
catalog's `allocationTolerance`, which `stepbench compare` and the thresholds use too).

    python3 scripts/malloc_agreement.py BENCH_DIR CATALOG.json STEPBENCH_RESULTS.json [more results files]

CATALOG.json is `stepbench list --format json`: it says which benchmarks have exact counts and
each benchmark's threads and elements per iteration. The results files are read by the tool
(`stepbench read`, $STEPBENCH_BIN or this checkout's build), as every other reader reads them.

Exit 0 when every pair agrees, 2 on a disagreement (a table names it), 1 on bad input.
"""
from __future__ import annotations

import json
import os
import sys

try:
    from scripts import catalog as cat
    from scripts.stepbench_report import tool
except ImportError:  # run as a script from scripts/
    import catalog as cat
    from stepbench_report import tool

class InputError(Exception):
    pass


def load_benchmark_counts(directory: str) -> dict[str, int]:
    """mallocCountTotal per benchmark name from `SteppingBenchmarks.<name>.p90.json` files."""
    if not os.path.isdir(directory):
        raise InputError(f"{directory}: no such folder; run `swift package --package-path Benchmarks benchmark thresholds update --path {directory}` first")
    counts = {}
    for entry in sorted(os.listdir(directory)):
        if not (entry.startswith("SteppingBenchmarks.") and entry.endswith(".p90.json")):
            continue
        path = os.path.join(directory, entry)
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError) as error:
            raise InputError(f"{path}: unreadable ({error})")
        if "mallocCountTotal" not in data:
            raise InputError(f"{path}: no mallocCountTotal; was the suite run with the malloc-interposer trait?")
        counts[entry[len("SteppingBenchmarks."):-len(".p90.json")]] = int(data["mallocCountTotal"])
    if not counts:
        raise InputError(f"{directory}: no SteppingBenchmarks.*.p90.json files")
    return counts


def stepbench_rows(rows: list[dict], suite: dict[str, dict],
                   source: str = "stepbench's results") -> dict[tuple[str, int], tuple[int, int, int, float]]:
    """(threads, elements, elements counted per repetition, median allocations per element from the
    tool's summary) per (benchmark name, threads), of results rows as `stepbench read` gives them;
    `suite`: the catalog's benchmarks by name, which name each (scenario, design); `source`: the
    files the rows come from, for messages. The two element
    counts differ where each thread runs a pipeline of its own (`elements` are per pipeline): a
    repetition counts threads × elements."""
    names = {(b["scenario"], b["design"]): name for name, b in suite.items()}
    found = {}
    for row in rows:
        if row["status"] == "excluded":
            continue  # not run: the design declares breaking a rule the scenario races fatal
        if row["status"] != "ok":
            raise InputError(f"{source}: {row['scenario']} {row['design']} ×{row['threads']} failed its verification: "
                             f"{row.get('failure')}")
        name = names.get((row["scenario"], row["design"]))
        if name is None:
            continue  # no benchmark of the suite measures it
        median = row["summary"]["allocationsPerElement"]["median"]
        found[(name, row["threads"])] = (row["threads"], row["elements"], row["repetitions"][0]["elements"], median)
    return found


def read_stepbench_rows(paths: list[str]) -> list[dict]:
    """The rows of stepbench's results files as the tool reads them (`stepbench read`: each file
    checked, several combined, a row measured twice refused)."""
    try:
        return tool.ask("read", *paths)["results"]["rows"]
    except tool.ToolError as error:
        raise InputError(str(error))


def agreement(bench: dict[str, int], stepbench: dict[tuple[str, int], tuple[int, int, int, float]],
              suite: dict[str, dict]) -> list[dict]:
    """One entry per benchmark with an exact count (`suite`: the catalog's benchmarks by name);
    each must have been measured by stepbench too, at the benchmark's threads and elements."""
    result = []
    for name, count in sorted(bench.items()):
        if name not in suite:
            raise InputError(f"{name}: not a benchmark of the catalog; run the suite of the same build")
        spec = suite[name]
        if not spec["exactAllocations"]:
            continue
        key = (name, spec["threads"])
        if key not in stepbench:
            raise InputError(f"{name}: stepbench measured no {spec['scenario']} {spec['design']} at {key[1]} thread(s); "
                             "run it for every benchmark with an exact count")
        threads, elements, counted, jemalloc = stepbench[key]
        if spec["elements"] != elements:
            raise InputError(f"{name}: stepbench measured {elements} elements per repetition, the benchmark {spec['elements']}; "
                             "run stepbench with the benchmark's --elements")
        interposer = count / counted
        tolerance = spec.get("allocationTolerance")
        if tolerance is None:
            raise InputError(f"{name}: the catalog gives no allocationTolerance; make it with this build's `stepbench list --format json`")
        result.append(dict(name=name, threads=threads, interposer=interposer, jemalloc=jemalloc,
                           agrees=abs(interposer - jemalloc) <= tolerance))
    return result


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print("usage: malloc_agreement.py BENCH_DIR CATALOG.json STEPBENCH_RESULTS.json [...]  "
              "(CATALOG.json: `stepbench list --format json`)", file=sys.stderr)
        return 1
    try:
        catalog = cat.load(argv[2])
        suite = cat.benchmarks(catalog)
        bench = load_benchmark_counts(argv[1])
        rows = agreement(bench, stepbench_rows(read_stepbench_rows(argv[3:]), suite, ", ".join(argv[3:])), suite)
    except (InputError, cat.CatalogError) as error:
        print(f"malloc_agreement: {error}", file=sys.stderr)
        return 1
    if not rows:
        print("malloc_agreement: no benchmark was measured by both tools; nothing was checked", file=sys.stderr)
        return 1
    print(f"{'benchmark':24} {'threads':>7} {'interposer/elem':>16} {'jemalloc/elem':>14}  verdict")
    for r in rows:
        print(f"{r['name']:24} {r['threads']:7d} {r['interposer']:16.4f} {r['jemalloc']:14.4f}  "
              f"{'agree' if r['agrees'] else 'DISAGREE'}")
    bad = [r for r in rows if not r["agrees"]]
    if bad:
        print(f"malloc_agreement: {len(bad)} of {len(rows)} benchmarks disagree by more than their tolerance "
              "(the catalog's allocationTolerance per element)", file=sys.stderr)
        return 2
    print(f"malloc_agreement: all {len(rows)} agree within their tolerance (the catalog's allocationTolerance per element)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
