"""Applies StepBench's gating policy to package-benchmark threshold files (Benchmarks/Thresholds/<machine-id>/).

`swift package benchmark thresholds update` records every metric of every benchmark it runs, and
`thresholds check` checks every metric it finds in a file. The gate checks only what the code
alone decides: mallocCountTotal of the benchmarks whose allocation count is exact (the catalog's
`exactAllocations`, declared once in ScenarioKind). Wall clock is removed from every file and the
files of timing-dependent benchmarks are deleted: on shared VMs both follow the neighbours and the
schedule, so gating them fails unchanged trees (docs/METHOD.md says what was seen). Both are still
measured and printed by the suite.

    python3 scripts/thresholds_policy.py Benchmarks/Thresholds/<machine-id> CATALOG.json
"""
import json
import os
import sys

try:
    from scripts import catalog as cat
except ImportError:  # run as a script from scripts/
    import catalog as cat

GATED_METRICS = ("mallocCountTotal",)
PREFIX, SUFFIX = "SteppingBenchmarks.", ".p90.json"


def apply(directory: str, catalog: dict) -> tuple[list[str], list[str]]:
    """Returns (benchmarks whose file was trimmed, benchmarks whose file was deleted)."""
    known = cat.benchmarks(catalog)
    trimmed, deleted = [], []
    for entry in sorted(os.listdir(directory)):
        if not (entry.startswith(PREFIX) and entry.endswith(SUFFIX)):
            continue
        name = entry[len(PREFIX):-len(SUFFIX)]
        path = os.path.join(directory, entry)
        if name not in known or not known[name]["exactAllocations"]:
            os.remove(path)
            deleted.append(name)
            continue
        with open(path) as f:
            data = json.load(f)
        kept = {k: v for k, v in data.items() if k in GATED_METRICS}
        if kept != data:
            temporary = path + ".tmp"
            with open(temporary, "w") as f:
                json.dump(kept, f, indent=2, sort_keys=True)
                f.write("\n")
            os.replace(temporary, path)
            trimmed.append(name)
    return trimmed, deleted


if __name__ == "__main__":
    if len(sys.argv) != 3 or not os.path.isdir(sys.argv[1]):
        print("usage: thresholds_policy.py Benchmarks/Thresholds/<machine-id> CATALOG.json  (a folder of SteppingBenchmarks.*.p90.json; "
              "the catalog from `stepbench list --format json`)", file=sys.stderr)
        sys.exit(1)
    try:
        trimmed, deleted = apply(sys.argv[1], cat.load(sys.argv[2]))
    except cat.CatalogError as error:
        print(f"thresholds_policy: {error}", file=sys.stderr)
        sys.exit(1)
    print(f"thresholds_policy: kept only {', '.join(GATED_METRICS)} in {len(trimmed)} files; "
          f"removed {len(deleted)} files of benchmarks whose counts follow thread timing")
