"""Reads the catalog `stepbench list --format json` publishes: designs, scenarios, the
package-benchmark suite's benchmarks and which allocation counts are exact. Scripts take these
from the tool (one source of truth in Swift) instead of repeating them."""
from __future__ import annotations

import json


class CatalogError(Exception):
    pass


def load(path: str) -> dict:
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as error:
        raise CatalogError(f"{path}: unreadable catalog ({error}); make it with `stepbench list --format json > {path}`")
    for key in ("designs", "scenarios", "benchmarks"):
        if key not in data:
            raise CatalogError(f"{path}: no '{key}'; is it the output of `stepbench list --format json`?")
    return data


def benchmarks(catalog: dict) -> dict[str, dict]:
    """The suite's benchmarks by name: scenario, design, threads, elements, exactAllocations."""
    return {b["name"]: b for b in catalog["benchmarks"]}


def exact_benchmarks(catalog: dict) -> list[str]:
    return sorted(b["name"] for b in catalog["benchmarks"] if b["exactAllocations"])


def gate_runs(catalog: dict) -> list[tuple[int, list[str]]]:
    """The stepbench runs the CI gate makes for the allocation check, as the tool publishes them
    (`gateRuns`: every scenario with an exact count for the gate's designs, grouped by the suite's
    elements per iteration, so the two tools' counts can be compared for the same work)."""
    if "gateRuns" not in catalog:
        raise CatalogError("the catalog has no 'gateRuns': the stepbench that wrote it is older than these scripts; "
                           "build this checkout's (`swift build -c release --package-path Benchmarks --product stepbench`)")
    return [(run["elements"], run["scenarios"]) for run in catalog["gateRuns"]]


if __name__ == "__main__":
    import sys

    usage = ("usage: catalog.py CATALOG.json designs | gate-designs | profiled-scenarios | timing-scenarios | abtest-scenarios | timing-elements |\n"
             "       exact-benchmarks-regex | gate-runs\n"
             "  (CATALOG.json: `stepbench list --format json`)")
    if len(sys.argv) != 3:
        print(usage, file=sys.stderr)
        sys.exit(1)
    try:
        data = load(sys.argv[1])
    except CatalogError as error:
        print(f"catalog: {error}", file=sys.stderr)
        sys.exit(1)
    query = sys.argv[2]
    if query == "designs":  # every design, in the tool's order
        print(",".join(data["designs"]))
    elif query == "scenarios":  # every scenario the tool knows, floors included
        print(",".join(s["name"] for s in data["scenarios"]))
    elif query == "gate-designs":
        print(",".join(data["gateDesigns"]))
    elif query == "profiled-scenarios":
        print(",".join(data["profiledScenarios"]))
    elif query == "timing-scenarios":  # the timing protocol (scripts/regress, scripts/abtest)
        print(",".join(data["timingScenarios"]))
    elif query == "abtest-scenarios":  # the contended timing protocol of scripts/abtest
        print(",".join(data["abtestScenarios"]))
    elif query == "timing-elements":
        print(data["timingElements"])
    elif query == "exact-benchmarks-regex":
        print("^(" + "|".join(exact_benchmarks(data)) + ")$")
    elif query == "gate-runs":  # one line per run: ELEMENTS SCENARIO,SCENARIO...
        try:
            runs = gate_runs(data)
        except CatalogError as error:
            print(f"catalog: {error}", file=sys.stderr)
            sys.exit(1)
        for elements, scenarios in runs:
            print(elements, ",".join(scenarios))
    else:
        print(f"catalog: unknown query '{query}'\n{usage}", file=sys.stderr)
        sys.exit(1)
