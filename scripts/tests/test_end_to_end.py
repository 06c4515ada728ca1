"""End to end through the binary: two runs of one build compare as "no regression" in every
exact metric, and every timing row is decided as compare promises.

Seven separate `stepbench run`s of sync-step (atomic) and its floor, 31 paired repetitions each
(what is asserted is which rows are exact, decided or information, not how narrow an interval is;
101 repetitions took three times as long for the same assertions):
five are A/A runs that measure this machine's noise (`stepbench noise`), the last two are
compared with that profile (`stepbench compare --noise`), exactly as scripts/regress compares a
build with its baseline. Uses the debug binary that scripts/test builds (or STEPBENCH_BIN).

Why the timing verdict is not asserted: a debug build's runs are bimodal (a process's code and
heap layout put its floor at one of two speeds), so a drift allowance estimated from five runs
that happened to land on one mode is too narrow for a pair that straddles both; with one decided
row (Holm over the decided rows, not over derived columns) such a pair is called a regression in
a few percent of A/A sessions. That is what the gate's timing comparison is: information, never
the gate (scripts/regress gates on exact counts)."""
import json
import subprocess

from scripts.tests.test_export import stepbench

RUN = ["run", "--allow-debug", "--scenario", "sync-step,floor-sync", "--design", "atomic",
       "--elements", "2000", "--repetitions", "31"]


def run(tmp_path, name):
    out = tmp_path / f"{name}.json"
    done = subprocess.run([stepbench(), *RUN, "--output", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return str(out)


def test_two_runs_of_one_build_compare_as_no_regression(tmp_path):
    runs = [run(tmp_path, f"aa{i}") for i in range(7)]
    noise = tmp_path / "noise.json"
    made = subprocess.run([stepbench(), "noise", *runs[:5], "--output", str(noise)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    done = subprocess.run([stepbench(), "compare", "--noise", str(noise), "--format", "json", runs[5], runs[6]],
                          capture_output=True, text=True)
    assert done.returncode in (0, 2), done.stderr
    comparison = json.loads(done.stdout)
    verdicts = {(r["design"], r["metric"]): r["verdict"] for r in comparison["rows"]}
    exact = [r for r in comparison["rows"] if r["exact"]]
    assert exact and all(r["verdict"] == "unchanged" for r in exact), f"A/A changed an exact count: {verdicts}"
    assert verdicts[("atomic", "allocations_per_element")] == "unchanged"
    # one decided timing row: atomic's paired ratio; the rest is shown as information
    decided = [k for k, v in verdicts.items() if v not in ("information", "unchanged") or k[1] == "ns_per_element_vs_floor"]
    assert decided == [("atomic", "ns_per_element_vs_floor")], verdicts
    assert verdicts[("floor", "ns_per_element")] == "information"
    assert comparison["noiseProfile"] and abs(comparison["decisionLevel"] - 0.99) < 1e-9
    assert all(r.get("detectableEffect") for r in comparison["rows"] if not r["exact"] and r.get("ratio"))
    # the drift allowance was found and applied to every timing row
    assert all(r.get("driftSD") is not None for r in comparison["rows"] if not r["exact"] and r["verdict"] != "only-in-baseline")
    # not given, the profile is found where the report and `series` find it: beside the current
    # file (here from a folder with no results/ of its own)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    found = subprocess.run([stepbench(), "compare", "--format", "json", runs[5], runs[6]], capture_output=True,
                           text=True, cwd=elsewhere)
    assert found.returncode in (0, 2), found.stderr
    assert f"drift allowances from {noise}" in found.stderr, found.stderr
    assert json.loads(found.stdout)["noiseProfile"]


def test_compare_names_a_bad_noise_profile(tmp_path):
    good = run(tmp_path, "one")
    bad = tmp_path / "noise.json"
    bad.write_text(json.dumps({"schema": "something-else/9"}))
    done = subprocess.run([stepbench(), "compare", "--noise", str(bad), good, good], capture_output=True, text=True)
    assert done.returncode == 1
    assert "noise.json" in done.stderr and "not a noise profile" in done.stderr
    few = subprocess.run([stepbench(), "noise", good, good, "--output", str(tmp_path / "n.json")], capture_output=True, text=True)
    assert few.returncode == 1 and "at least 3" in few.stderr
    assert not (tmp_path / "n.json").exists()
