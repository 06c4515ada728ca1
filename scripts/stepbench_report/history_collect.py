"""scripts/history: reading a results folder into runs in commit order, and runs into series."""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import subprocess

from .results import READABLE_SCHEMAS, ResultsError, _load_one, floor_in, in_order
from .history_model import COMMIT_RE, HistoryError, RunFile, Series, _epoch, lower_median


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
        if isinstance(schema, str) and schema.startswith("stepbench-calibration/"):
            skipped.append({"file": name, "reason": "the timing detector's calibration on the noise profiles"})
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
