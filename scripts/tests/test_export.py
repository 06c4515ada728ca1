"""`stepbench show export` round-trips: what each format writes parses back to the fixture's figures.
Needs the stepbench binary: scripts/test runs this after `swift test` built Benchmarks/.build/debug/stepbench
(or set STEPBENCH_BIN)."""
import csv
import io
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "small.json")
METRICS = {"nsPerElement": "ns_per_element", "elementsPerSecond": "elements_per_second",
           "allocationsPerElement": "allocations_per_element", "cpuNsPerElement": "cpu_ns_per_element",
           "latencyP50": "latency_p50", "latencyP90": "latency_p90", "latencyP99": "latency_p99",
           "latencyP999": "latency_p999", "latencyMax": "latency_max"}


def stepbench():
    path = os.environ.get("STEPBENCH_BIN", os.path.join(ROOT, "Benchmarks", ".build", "debug", "stepbench"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"no stepbench binary at {path}: run `swift build --package-path Benchmarks` first (scripts/test does) or set STEPBENCH_BIN")
    return path


def export(fmt, *extra):
    done = subprocess.run([stepbench(), "show", "export", "--format", fmt, *extra, FIXTURE], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def expected():
    data = json.load(open(FIXTURE))
    out = {}
    for row in data["rows"]:
        for key, name in METRICS.items():
            est = (row.get("summary") or {}).get(key)
            if est:
                out[(row["scenario"], row["design"], str(row["threads"]), name)] = est
    return out


def test_csv_round_trips():
    rows = list(csv.DictReader(io.StringIO(export("csv"))))
    want = expected()
    assert len(rows) == len(want)
    for r in rows:
        est = want[(r["scenario"], r["design"], r["threads"], r["metric"])]
        assert float(r["median"]) == pytest.approx(est["median"], rel=1e-12)
        assert float(r["ci_low"]) == pytest.approx(est["ciLow"], rel=1e-12)
        assert float(r["ci_high"]) == pytest.approx(est["ciHigh"], rel=1e-12)


def test_github_action_benchmark_round_trips(tmp_path):
    out = tmp_path / "bench.json"
    export("github-action-benchmark", "--output", str(out))
    entries = json.loads(out.read_text())
    want = {k: v for k, v in expected().items() if k[3] != "elements_per_second"}
    assert len(entries) == len(want)
    for e in entries:
        scenario, design, threads, metric = e["name"].split(" ")
        assert e["value"] == pytest.approx(want[(scenario, design, threads.lstrip("x"), metric)]["median"], rel=1e-12)
        assert set(e) == {"name", "unit", "value", "range", "extra"}


def test_influx_line_protocol_round_trips():
    got = {}
    for line in export("influx").splitlines():
        series, fields, timestamp = line.split(" ")
        measurement, *tags = series.split(",")
        assert measurement == "stepbench" and int(timestamp) > 0
        tags = dict(t.split("=", 1) for t in tags)
        for field in fields.split(","):
            name, value = field.split("=")
            got[(tags["scenario"], tags["design"], tags["threads"], name)] = float(value)
    want = expected()
    assert got.keys() == want.keys()
    for k, v in got.items():
        assert v == pytest.approx(want[k]["median"], rel=1e-12)


def test_bad_input_is_a_clear_error(tmp_path):
    done = subprocess.run([stepbench(), "show", "export", "--format", "xml", FIXTURE], capture_output=True, text=True)
    assert done.returncode == 1 and all(f"'{name}'" in done.stderr for name in ("csv", "github-action-benchmark", "influx"))
    bad = tmp_path / "old.json"
    bad.write_text('{"schema": "stepbench/0"}')
    done = subprocess.run([stepbench(), "show", "export", "--format", "csv", str(bad)], capture_output=True, text=True)
    assert done.returncode == 1 and "old.json" in done.stderr and "stepbench/1" in done.stderr


def test_every_export_carries_the_exact_counts_of_profiles_and_paths():
    """A profile file's exact counts reach every format: instructions per element of each profiled
    scenario, and each path's instructions, synchronising instructions and allocations per event
    (kind `path`, the path in the scenario column; in InfluxDB their own measurement)."""
    path = os.path.join(ROOT, "results", "amd-epyc-2c", "profile-latest.json")
    data = json.load(open(path))
    assert data["paths"] and data["profiles"]
    want = {("path", p["path"], p["design"], m): p[k] for p in data["paths"]
            for m, k in (("instructions_per_event", "instructionsPerEvent"),
                         ("synchronising_instructions_per_event", "synchronisingPerEvent"),
                         ("allocations_per_event", "allocationsPerEvent"))}
    want.update({("scenario", p["scenario"], p["design"], "instructions_per_element"): p["instructionsPerElement"]
                 for p in data["profiles"]})

    def run(fmt):
        done = subprocess.run([stepbench(), "show", "export", "--format", fmt, path], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout
    rows = list(csv.DictReader(io.StringIO(run("csv"))))
    got = {(r["kind"], r["scenario"], r["design"], r["metric"]): float(r["median"]) for r in rows}
    assert got.keys() == want.keys()
    assert all(got[k] == pytest.approx(v, rel=1e-12) for k, v in want.items())
    entries = json.loads(run("github-action-benchmark"))
    got = {}
    for e in entries:
        name, design, _, metric = e["name"].split(" ")
        kind = "path" if name.startswith("path:") else "scenario"
        got[(kind, name.removeprefix("path:"), design, metric)] = e["value"]
        assert e["extra"].startswith("exact"), e
    assert got.keys() == want.keys()
    assert all(got[k] == pytest.approx(v, rel=1e-12) for k, v in want.items())
    got = {}
    for line in run("influx").splitlines():
        series, fields, _ = line.split(" ")
        measurement, *tags = series.split(",")
        tags = dict(t.split("=", 1) for t in tags)
        kind, name = ("path", tags["path"]) if measurement == "stepbench_path" else ("scenario", tags["scenario"])
        for field in fields.split(","):
            metric, value = field.split("=")
            got[(kind, name, tags["design"], metric)] = float(value)
    assert got.keys() == want.keys()
    assert all(got[k] == pytest.approx(v, rel=1e-12) for k, v in want.items())


@pytest.mark.parametrize("command", [["show", "export", "--format", "csv"], ["show", "ranking"], ["show", "document"], ["show", "machine"]])
def test_a_folder_means_its_latest_json_in_every_command_that_reads_one_file(tmp_path, command):
    """As `compare` and `read` always took it: a folder names its latest.json (issue 51), with
    the same output as the file itself."""
    folder = tmp_path / "kind"
    folder.mkdir()
    (folder / "latest.json").write_text(open(FIXTURE).read())
    by_file = subprocess.run([stepbench(), *command, str(folder / "latest.json")], capture_output=True, text=True)
    by_folder = subprocess.run([stepbench(), *command, str(folder)], capture_output=True, text=True)
    assert by_file.returncode == 0, by_file.stderr
    assert by_folder.returncode == 0, f"`stepbench {' '.join(command)} FOLDER`: {by_folder.stderr}"
    assert by_folder.stdout == by_file.stdout
