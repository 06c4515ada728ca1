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


def processes_of(binary, tag):
    """Pids of the running processes whose executable is `binary` (valgrind aside) and whose
    environment holds `tag` (`tagged`): only one test's, since pytest's second worker may run the
    same binary for another test at the same time, and those are not this test's."""
    real, pids = os.path.realpath(binary), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/exe") == real and \
                    tag.encode() in open(f"/proc/{pid}/environ", "rb").read().split(b"\0"):
                pids.append(int(pid))
        except OSError:
            pass
    return pids


def tagged(tmp_path):
    """A tag for the processes of one test (the children inherit it): its environment and the tag."""
    tag = f"STEPBENCH_TEST_TAG={tmp_path}"
    return {**os.environ, "STEPBENCH_TEST_TAG": str(tmp_path)}, tag


def commands_running(prefix):
    """Pids of the running processes whose command line holds `prefix` (bytes)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if prefix in open(f"/proc/{pid}/cmdline", "rb").read():
                found.append(int(pid))
        except OSError:
            pass
    return found


def profiling_children(temporary):
    """The callgrind children of a profile whose temporary folder (TMPDIR) is `temporary`: valgrind
    running the stripped copy in its work folder there. Only there: another test's profile may run
    beside this one (pytest's second worker), and its children are not this profile's."""
    return commands_running(f"{temporary}/stepbench-profile-".encode())


def default_signals():
    # The run is the foreground job a user or CI would stop: SIGINT as a terminal sends it, even
    # where this test runs with SIGINT ignored (a background job of a shell).
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_crash_and_a_hang_cost_their_rows_and_the_rest_is_written(tmp_path):
    out = tmp_path / "run.json"
    environment, tag = tagged(tmp_path)
    started = time.monotonic()
    done = subprocess.run(
        [faults_binary(), "run", "--allow-debug", "--design", "crashing,hanging,double-input,atomic",
         "--scenario", "sync-step,floor-sync", "--threads", "1", "--elements", "20000", "--repetitions", "2",
         "--watchdog", "5", "--output", str(out)],
        capture_output=True, text=True, timeout=300, env=environment)
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
    assert processes_of(faults_binary(), tag) == [], "no measuring process left behind"
    print(f"crash and hang (watchdog 5 s) in {took:.1f} s")


def test_a_crash_after_a_complete_answer_costs_no_row(tmp_path):
    out = tmp_path / "run.json"
    done = subprocess.run(
        [faults_binary(), "run", "--allow-debug", "--design", "atomic", "--scenario", "sync-step,floor-sync",
         "--threads", "1", "--elements", "2000", "--repetitions", "2", "--output", str(out)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "STEPBENCH_FAULTS_CRASH_AFTER_ANSWER": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {(r["scenario"], r["design"]): r for r in json.load(open(out))["rows"]}
    assert all(r["status"] == "ok" for r in rows.values()), rows
    assert "after its complete answer: the answer stands, no row is charged" in done.stderr, done.stderr[-3000:]


def test_a_child_that_exits_before_reading_its_request_leaves_the_parent_running(tmp_path):
    # The counting build's path given as a binary that exits at once, without reading its
    # request (as `/usr/bin/env` does when valgrind is missing): the parent's write meets a
    # closed pipe. It must say what happened, not die of SIGPIPE (exit 141, no message).
    out = tmp_path / "run.json"
    done = subprocess.run(
        [faults_binary(), "run", "--allow-debug", "--design", "atomic", "--scenario", "sync-step", "--threads", "1",
         "--elements", "2000", "--repetitions", "2", "--counting-build", "/bin/true", "--output", str(out)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode not in (-signal.SIGPIPE, 128 + signal.SIGPIPE), done.returncode
    assert done.returncode == 1 and "is not a results file" in done.stderr, (done.returncode, done.stderr[-2000:])


def test_a_killed_stepbench_leaves_no_command_it_asked(tmp_path):
    # `git` on PATH is a script that becomes a long sleep under a name of its own: stepbench asks
    # git (the run's machine fingerprint, first thing) and is killed meanwhile (SIGKILL: no
    # handler runs).
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "git").write_text("#!/bin/bash\nexec -a stepbench-test-git-shim sleep 300\n")
    (shims / "git").chmod(0o755)
    parent = subprocess.Popen([faults_binary(), "run", "--allow-debug", "--design", "atomic", "--scenario", "sync-step",
                               "--threads", "1", "--elements", "1000", "--repetitions", "1",
                               "--output", str(tmp_path / "run.json")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**os.environ, "PATH": f"{shims}:{os.environ['PATH']}"})

    def shims_running():
        return commands_running(b"stepbench-test-git-shim")

    deadline = time.monotonic() + 60
    while not shims_running():
        assert parent.poll() is None and time.monotonic() < deadline, "stepbench did not ask git"
        time.sleep(0.1)
    parent.kill()
    parent.wait(timeout=30)
    deadline = time.monotonic() + 10
    while shims_running() and time.monotonic() < deadline:
        time.sleep(0.1)
    left = shims_running()
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], "the git stepbench started outlived it"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_run_leaves_no_process(tmp_path, stop):
    binary = faults_binary()
    environment, tag = tagged(tmp_path)
    run = subprocess.Popen(
        [binary, "run", "--allow-debug", "--design", "hanging", "--scenario", "sync-step", "--threads", "1",
         "--elements", "20000", "--repetitions", "2", "--watchdog", "600", "--output", str(tmp_path / "run.json")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=default_signals, env=environment)
    deadline = time.monotonic() + 60
    while len(processes_of(binary, tag)) < 2:  # the run and its measuring child
        assert run.poll() is None and time.monotonic() < deadline, "the measuring child did not start"
        time.sleep(0.1)
    time.sleep(1)  # the child is in the hung stepper by now (a few hundred ms of work before it)
    run.send_signal(stop)
    run.wait(timeout=30)
    assert run.returncode == -stop
    deadline = time.monotonic() + 10
    while processes_of(binary, tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_of(binary, tag) == [], "the measuring child outlived its parent"
    assert not (tmp_path / "run.json").exists()
    said = run.stderr.read().decode()
    assert f"stopped by {signal.Signals(stop).name} during the timing pass: nothing written" in said, said[-2000:]


def test_a_profile_child_that_crashes_or_hangs_costs_its_target_and_the_rest_is_written(tmp_path):
    out = tmp_path / "profile.json"
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    started = time.monotonic()
    done = subprocess.run(
        [faults_binary(), "profile", "--design", "crashing,hanging,atomic", "--scenario", "sync-step",
         "--elements", "1000", "--path", "none", "--watchdog", "15", "--output", str(out)],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "STEPBENCH_FAULT_AT": "100", "TMPDIR": str(temporary)})
    took = time.monotonic() - started
    assert done.returncode == 4, done.stderr[-3000:]
    data = json.load(open(out))
    faults = {(f["scenario"], f["design"]): f for f in data["profileFaults"]}
    assert faults[("sync-step", "hanging")]["status"] == "hung", faults
    assert "stopped by its time limit (--watchdog)" in faults[("sync-step", "hanging")]["failure"]
    assert faults[("sync-step", "crashing")]["status"] == "crashed", faults
    assert [(p["scenario"], p["design"]) for p in data["profiles"]] == [("sync-step", "atomic")], data["profiles"]
    assert "HUNG: sync-step hanging" in done.stderr and "CRASHED: sync-step crashing" in done.stderr
    assert profiling_children(temporary) == [], "no profiling process left behind"
    print(f"a crash and a hang under callgrind (watchdog 15 s) in {took:.1f} s")


def test_a_late_request_ahead_is_counted_before_the_stale_calls():
    """The stale-promise path on a design declared one input ahead (rule D2) whose request ahead
    comes 20 ms after it takes an input, and whose first repeated `.more` holds the window 40 ms:
    the driver waits for that request before it counts, so the window's stale calls are not
    blamed for it. The driver that counted after 2 ms of quiet failed here, "expected 2 requests
    … saw 3", as async-channel's path child did under callgrind in CI."""
    request = {"paths": {"_0": {"subject": "late-ahead", "paths": ["stale-promise"], "events": [1000]}}}
    done = subprocess.run([faults_binary(), "child"], input=json.dumps(request), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    [window] = json.loads(done.stdout)["windows"]
    assert window["path"] == "stale-promise" and window["label"] == "stale-promise late-ahead 1000"
