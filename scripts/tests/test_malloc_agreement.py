"""`stepbench gate agree`: package-benchmark's malloc counts against stepbench's jemalloc counts, from
the real command (the suite's benchmarks, their threads, elements and tolerances are this build's
catalog's)."""
import copy
import json
import os
import subprocess

from scripts.tests.test_export import stepbench

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "small.json")


def write_bench(tmp_path, counts):
    folder = tmp_path / "bench"
    folder.mkdir()
    for name, count in counts.items():
        (folder / f"SteppingBenchmarks.{name}.p90.json").write_text(json.dumps({"mallocCountTotal": count, "wallClock": 1}))
    return str(folder)


def row(scenario, design, allocations, threads=1, elements=10_000):
    """A row as stepbench writes it (the fixture's, renamed): the repetitions (each thread of a
    pipeline of its own counts `elements`) and the tool's summary (its median per element)."""
    counted = elements * (threads if scenario == "stale-storm" else 1)
    per = sorted(a / counted for a in allocations)
    template = copy.deepcopy(json.load(open(FIXTURE))["rows"][0])
    template["summary"]["allocationsPerElement"] = {"median": per[(len(per) - 1) // 2], "ciLow": per[0], "ciHigh": per[-1]}
    return dict(template, scenario=scenario, design=design, threads=threads, elements=elements, status="ok",
                repetitions=[dict(template["repetitions"][0], allocations=a, elements=counted) for a in allocations])


def write_results(tmp_path, rows, name="run.json"):
    """A results file (the fixture's machine and configuration) of these rows."""
    data = json.load(open(FIXTURE))
    data["rows"] = rows
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def agree(*arguments):
    return subprocess.run([stepbench(), "gate", "agree", *arguments], capture_output=True, text=True, timeout=120)


def test_counts_over_the_same_window_agree_and_timing_dependent_ones_are_skipped(tmp_path):
    bench = write_bench(tmp_path, {"sync-step_seed": 20_022, "sync-step_atomic": 20, "floor-sync": 18,
                                   "sync-step_actor-stream": 220_060})
    results = write_results(tmp_path, [row("sync-step", "seed", [20_024, 20_024, 20_025]),
                                       row("sync-step", "atomic", [22, 22, 22]), row("floor-sync", "floor", [20, 20, 20])])
    done = agree(bench, results, "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert [r["benchmark"] for r in rows] == ["floor-sync", "sync-step_atomic", "sync-step_seed"]  # actor-stream: not exact
    assert all(r["agrees"] and r["tolerance"] == 0.01 for r in rows)
    assert "all 3 agree" in agree(bench, results).stdout


def test_one_allocation_per_element_more_disagrees(tmp_path):
    bench = write_bench(tmp_path, {"sync-step_locked": 10_020})
    done = agree(bench, write_results(tmp_path, [row("sync-step", "locked", [22, 22, 22])]))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "DISAGREE" in done.stdout and "1 of 1 benchmarks disagree" in done.stdout


def test_the_benchmarks_thread_count_is_the_one_compared(tmp_path):
    """stale-storm runs at 2 threads in the suite: stepbench's 1-thread row must not stand in."""
    bench = write_bench(tmp_path, {"stale-storm_seed": 40_048})
    both = [row("stale-storm", "seed", [40_052], threads=2), row("stale-storm", "seed", [90_000], threads=1)]
    done = agree(bench, write_results(tmp_path, both), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert [(r["threads"], r["agrees"]) for r in json.loads(done.stdout)["rows"]] == [(2, True)]
    done = agree(bench, write_results(tmp_path, both[1:], "one.json"))
    assert done.returncode == 1 and "at 2 thread" in done.stderr, done.stderr


def test_the_results_are_read_as_the_tool_reads_them(tmp_path):
    """Several files combine by the tool's rule; two that measured the same row are refused, naming both."""
    bench = write_bench(tmp_path, {"sync-step_locked": 20, "sync-step_atomic": 20})
    locked = write_results(tmp_path, [row("sync-step", "locked", [22, 22, 22])], "locked.json")
    atomic = write_results(tmp_path, [row("sync-step", "atomic", [22, 22, 22])], "atomic.json")
    done = agree(bench, locked, atomic)
    assert done.returncode == 0 and "all 2 agree" in done.stdout, done.stdout + done.stderr
    again = write_results(tmp_path, [row("sync-step", "locked", [10_022])], "again.json")
    done = agree(bench, locked, again)
    assert done.returncode == 1 and "locked.json" in done.stderr and "again.json" in done.stderr, done.stderr


def test_bad_input_is_named(tmp_path):
    results = write_results(tmp_path, [row("sync-step", "locked", [22])])
    done = agree(str(tmp_path / "missing"), results)
    assert done.returncode == 1 and "missing: no such folder" in done.stderr, done.stderr
    bench = write_bench(tmp_path, {"sync-step_locked": 20})
    short = write_results(tmp_path, [row("sync-step", "locked", [22], elements=2000)], "short.json")
    done = agree(bench, short)
    assert done.returncode == 1 and "stepbench measured 2000 elements per repetition, the benchmark 10000" in done.stderr
    (tmp_path / "wrong.json").write_text(json.dumps({"schema": "other/9", "rows": []}))
    done = agree(bench, str(tmp_path / "wrong.json"))
    assert done.returncode == 1 and "wrong.json" in done.stderr, done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    done = agree(str(empty), results)
    assert done.returncode == 1 and "no SteppingBenchmarks.*.p90.json files" in done.stderr, done.stderr
    (empty / "SteppingBenchmarks.sync-step_locked.p90.json").write_text('{"wallClock": 1}')
    done = agree(str(empty), results)
    assert done.returncode == 1 and "no mallocCountTotal" in done.stderr, done.stderr


def test_a_row_a_design_was_left_out_of_is_not_a_failed_verification(tmp_path):
    """stepbench writes an `excluded` row where a design declares breaking a raced rule fatal (a
    peer in stale-storm): no measurement to compare, and no failure either; a failed row is one,
    and exits 3, the exit-status table's failed verification (as `run` and the gate's runs)."""
    bench = write_bench(tmp_path, {"sync-step_atomic": 20})
    excluded = {"scenario": "stale-storm", "design": "flatmap-future", "threads": 2, "elements": 10_000,
                "status": "excluded", "failure": "not run: flatmap-future declares rule S2 broken (…)", "repetitions": []}
    done = agree(bench, write_results(tmp_path, [row("sync-step", "atomic", [22, 22, 22]), excluded]))
    assert done.returncode == 0, done.stderr
    failed = dict(excluded, status="failed", failure="verification failed: 3 elements missing")
    done = agree(bench, write_results(tmp_path, [row("sync-step", "atomic", [22, 22, 22]), failed], "failed.json"))
    assert done.returncode == 3 and "stale-storm flatmap-future ×2 failed its verification" in done.stderr, done.stderr
