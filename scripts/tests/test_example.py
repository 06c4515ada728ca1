"""The outside package Examples/SemaphoreStepping, built as the README writes it (beside a copy of
the repository named StepBench: scripts/lib/outside-package): its executable (the whole tool with
the semaphore design beside the built-ins) runs, profiles and checks the design; its own compare
is a gate that can say "slower" on exact counts and, with a noise profile it makes, on timing; its
results file is read by scripts/report and scripts/history like any other. Needs the outside
build (scripts/test makes it; or set STEPBENCH_EXAMPLE_BIN)."""
import json
import os
import re
import subprocess
import tempfile

import pytest

from scripts.tests.test_export import ROOT, stepbench

ENV = dict(os.environ)


def example():
    path = os.environ.get("STEPBENCH_EXAMPLE_BIN", os.path.join(
        tempfile.gettempdir(), "stepbench-outside", "SemaphoreStepping", ".build", "debug", "semaphore-bench"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"no semaphore-bench at {path}: run `scripts/lib/outside-package "
                    f"{os.path.join(tempfile.gettempdir(), 'stepbench-outside')}` first (scripts/test does)")
    return path


@pytest.fixture(scope="module")
def run_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("example") / "run.json"
    done = subprocess.run(
        [example(), "run", "--allow-debug", "--design", "semaphore,atomic",
         "--scenario", "sync-step,floor-sync,async-step,floor-async", "--threads", "1",
         "--elements", "3000", "--repetitions", "3", "--output", str(out)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_the_design_is_measured_beside_atomic_in_one_session(run_file):
    data = json.load(open(run_file))
    rows = {(r["scenario"], r["design"]): r for r in data["rows"]}
    for scenario in ("sync-step", "async-step"):
        for design in ("semaphore", "atomic"):
            row = rows[(scenario, design)]
            assert row["status"] == "ok" and row["summary"]["nsPerElement"]["median"] > 0, (scenario, design)
        # value promises: the semaphore allocates per element what atomic does (a debug build's
        # closures in async-step, nothing in sync-step but each repetition's setup, spread out)
        allocations = [rows[(scenario, d)]["summary"]["allocationsPerElement"]["median"] for d in ("semaphore", "atomic")]
        assert abs(allocations[0] - allocations[1]) < 0.05, (scenario, allocations)
    assert "semaphore" in data["catalog"]["designs"], "the file's catalog describes the outside design"


def test_stepbench_compare_reads_it(run_file):
    done = subprocess.run([stepbench(), "compare", str(run_file), str(run_file)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^sync-step\s+semaphore\s", done.stdout, re.M), done.stdout


def test_scripts_report_reads_it(run_file, tmp_path):
    done = subprocess.run([os.path.join(ROOT, "scripts", "report"), str(run_file), "--out", str(tmp_path / "report")],
                          capture_output=True, text=True, timeout=300, env={**ENV, "STEPBENCH_BIN": stepbench()})
    assert done.returncode == 0, done.stderr
    assert "`semaphore`" in open(tmp_path / "report" / "REPORT.md").read()


def test_scripts_history_reads_it(run_file, tmp_path):
    # The history leaves debug builds out (not comparable with release runs): two copies of the
    # example's debug run stand for two release runs of two commits.
    folder = tmp_path / "history"
    folder.mkdir()
    data = json.load(open(run_file))
    for hour, commit in ((10, "a" * 40), (11, "b" * 40)):
        data["machine"]["buildConfiguration"], data["machine"]["gitCommit"] = "release", commit
        data["createdAt"] = f"2026-11-25T{hour}:00:00Z"
        json.dump(data, open(folder / f"2026-11-25T{hour}0000Z.json", "w"))
    done = subprocess.run([os.path.join(ROOT, "scripts", "history"), str(folder), "--format", "json"],
                          capture_output=True, text=True, timeout=300, env={**ENV, "STEPBENCH_BIN": stepbench()})
    assert done.returncode == 0, done.stderr
    history = json.loads(done.stdout)
    assert len(history["files"]) == 2
    assert any(s.get("design") == "semaphore" for s in history["series"]), "the outside design has its series"


def test_the_readme_writes_the_examples_manifest():
    readme = open(os.path.join(ROOT, "README.md")).read()
    block = re.search(r"```swift\ndependencies: \[\n(.*?)\],\n", readme, re.S)
    assert block, "the README's manifest for an outside package"
    manifest = open(os.path.join(ROOT, "Examples", "SemaphoreStepping", "Package.swift")).read()
    for line in block.group(1).strip().splitlines():
        assert line.strip() in manifest, f"the README's {line.strip()!r} is not what the example writes"
    for product, package in (("Stepping", "StepBench"), ("SteppingConformanceTesting", "StepBench"),
                             ("StepBenchCLI", "Benchmarks")):
        assert f'.product(name: "{product}", package: "{package}")' in manifest, (product, package)


@pytest.fixture(scope="module")
def profile_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("example") / "profile.json"
    done = subprocess.run(
        [example(), "profile", "--design", "semaphore,atomic", "--scenario", "sync-step", "--elements", "1000",
         "--events", "50", "--path", "sync-more,stale-promise", "--output", str(out)],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def outside_compare(*arguments, cwd):
    """The example's own compare, from a folder with no results/ (an outside package's)."""
    return subprocess.run([example(), "compare", *map(str, arguments)], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


def test_the_outside_exact_gate_says_slower(profile_file, tmp_path):
    same = outside_compare(profile_file, profile_file, cwd=tmp_path)
    assert same.returncode == 0, same.stdout + same.stderr
    head = json.load(open(profile_file))
    for path in head["paths"]:
        if path["design"] == "semaphore" and path["path"] == "sync-more":
            path["instructionsPerEvent"] *= 1.5
    json.dump(head, open(tmp_path / "head.json", "w"))
    slower = outside_compare(profile_file, tmp_path / "head.json", cwd=tmp_path)
    assert slower.returncode == 2, slower.stdout + slower.stderr
    assert re.search(r"sync-more.*semaphore.*regression", slower.stdout, re.I), slower.stdout


@pytest.mark.alone
def test_the_outside_timing_gate_needs_a_noise_profile_and_then_says_slower(tmp_path):
    # A/A: the same build, the same configuration, separate processes. Five, not the minimum three:
    # the drift allowance takes a Student-t quantile with runs - 1 degrees of freedom at the gate's
    # tail (0.5% here), 9.9 for three runs and 4.6 for five, so three runs' allowance on a debug
    # build of a busy machine (seen at +261%) can hide the planted 3x; five runs' is half as wide.
    runs = []
    for n in range(5):
        runs.append(tmp_path / f"aa-{n}.json")
        done = subprocess.run(
            [example(), "run", "--allow-debug", "--design", "semaphore", "--scenario", "sync-step,floor-sync",
             "--threads", "1", "--elements", "3000", "--repetitions", "5", "--output", str(runs[-1])],
            capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
    head = json.load(open(runs[0]))  # a head whose semaphore took three times as long, floor unchanged
    for row in head["rows"]:
        if row["design"] == "semaphore":
            for repetition in row["repetitions"]:
                repetition["elapsedNanoseconds"] *= 3
                repetition["cpuNanoseconds"] *= 3
    json.dump(head, open(tmp_path / "head.json", "w"))
    blind = outside_compare(runs[1], tmp_path / "head.json", cwd=tmp_path)
    assert blind.returncode == 0 and "no noise profile" in blind.stderr, blind.stdout + blind.stderr
    made = subprocess.run([example(), "noise", *map(str, runs), "--output", str(tmp_path / "noise.json")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    slower = outside_compare("--noise", tmp_path / "noise.json", runs[1], tmp_path / "head.json", cwd=tmp_path)
    assert slower.returncode == 2, slower.stdout + slower.stderr
    assert re.search(r"sync-step.*semaphore.*regression", slower.stdout, re.I), slower.stdout
    print(slower.stdout)


def test_it_profiles_the_designs_paths(profile_file):
    paths = {(p["path"], p["design"]): p for p in json.load(open(profile_file))["paths"]}
    for design in ("semaphore", "atomic"):
        assert paths[("sync-more", design)]["instructionsPerEvent"] > 0, design
    assert paths[("stale-promise", "semaphore")]["synchronisingPerEvent"] > 0, "the semaphore's"


def test_it_checks_the_design_torture_cases_in_its_own_children():
    done = subprocess.run([example(), "conform", "--design", "semaphore", "--rule", "D1,S1,R3", "--format", "markdown"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    cells = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in done.stdout.splitlines()[2:]
             if line.startswith("|")}
    assert cells == {"D1": "ok", "S1": "ok", "R3": "ok"}


def test_its_usage_names_its_own_executable():
    # The whole tool under another name: its help must say how to call it, not `stepbench`.
    done = subprocess.run([example(), "run", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "USAGE: semaphore-bench run" in done.stdout, done.stdout[:600]
    done = subprocess.run([example(), "run", "--design", "nope"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "semaphore-bench run" in done.stderr, done.stderr[-2000:]
