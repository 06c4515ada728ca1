"""A bad design cannot take a run down (`stepbench run`'s exit status 4): StepBenchFaults is
stepbench with three broken designs beside the built-ins (Benchmarks/Tests/StepBenchFaults: a crash, a
stepper call that never returns, an input delivered twice, each at the 5,000th input of a
subscriber). Needs Benchmarks/.build/debug/StepBenchFaults: scripts/test runs this after `swift test`
built it (or set STEPBENCH_FAULTS_BIN)."""
import json
import os
import signal
import subprocess
import time

import pytest

from scripts.tests.test_export import ROOT


def faults_binary():
    path = os.environ.get("STEPBENCH_FAULTS_BIN", os.path.join(ROOT, "Benchmarks", ".build", "debug", "StepBenchFaults"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"no StepBenchFaults at {path}: run `swift build --package-path Benchmarks` first (scripts/test does)")
    return path


def processes_of(binary):
    """Pids of the running processes whose executable is `binary` (valgrind aside)."""
    real, pids = os.path.realpath(binary), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/exe") == real:
                pids.append(int(pid))
        except OSError:
            pass
    return pids


def default_signals():
    # The run is the foreground job a user or CI would stop: SIGINT as a terminal sends it, even
    # where this test runs with SIGINT ignored (a background job of a shell).
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_crash_and_a_hang_cost_their_rows_and_the_rest_is_written(tmp_path):
    out = tmp_path / "run.json"
    started = time.monotonic()
    done = subprocess.run(
        [faults_binary(), "run", "--allow-debug", "--design", "crashing,hanging,double-input,atomic",
         "--scenario", "sync-step,floor-sync", "--threads", "1", "--elements", "20000", "--repetitions", "2",
         "--watchdog", "5", "--output", str(out)],
        capture_output=True, text=True, timeout=300)
    took = time.monotonic() - started
    assert done.returncode == 4, done.stderr[-3000:]
    rows = {(r["scenario"], r["design"]): r for r in json.load(open(out))["rows"]}
    assert rows[("sync-step", "crashing")]["status"] == "crashed"
    assert "signal" in rows[("sync-step", "crashing")]["failure"]
    assert rows[("sync-step", "hanging")]["status"] == "hung"
    assert "watchdog" in rows[("sync-step", "hanging")]["failure"]
    assert rows[("sync-step", "double-input")]["status"] == "failed", "a broken rule is the scenario's own check"
    assert "out of order" in rows[("sync-step", "double-input")]["failure"]
    for key in [("sync-step", "atomic"), ("floor-sync", "floor")]:
        assert rows[key]["status"] == "ok" and rows[key]["summary"]["nsPerElement"]["median"] > 0, key
        assert rows[key]["summary"]["allocationsPerElement"] is not None, "the allocation pass measured it too"
    assert "CRASHED: crashing in sync-step ×1" in done.stderr
    assert "HUNG: hanging in sync-step ×1" in done.stderr and "no progress for 5 s" in done.stderr
    assert "crashed or hung (the others were measured)" in done.stderr
    assert "atomic" in done.stdout, "the summary table shows the rows that were measured"
    assert processes_of(faults_binary()) == [], "no measuring process left behind"
    print(f"crash and hang (watchdog 5 s) in {took:.1f} s")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_run_leaves_no_process(tmp_path, stop):
    binary = faults_binary()
    run = subprocess.Popen(
        [binary, "run", "--allow-debug", "--design", "hanging", "--scenario", "sync-step", "--threads", "1",
         "--elements", "20000", "--repetitions", "2", "--watchdog", "600", "--output", str(tmp_path / "run.json")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=default_signals)
    deadline = time.monotonic() + 60
    while len(processes_of(binary)) < 2:  # the run and its measuring child
        assert run.poll() is None and time.monotonic() < deadline, "the measuring child did not start"
        time.sleep(0.1)
    time.sleep(1)  # the child is in the hung stepper by now (a few hundred ms of work before it)
    run.send_signal(stop)
    run.wait(timeout=30)
    assert run.returncode == -stop
    deadline = time.monotonic() + 10
    while processes_of(binary) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_of(binary) == [], "the measuring child outlived its parent"
    assert not (tmp_path / "run.json").exists()
