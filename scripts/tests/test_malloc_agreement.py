"""scripts/malloc_agreement.py: package-benchmark's malloc counts against stepbench's jemalloc counts."""
import copy
import json
import os

import pytest

from scripts import malloc_agreement as ma

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "small.json")


def bench_spec(name, threads=1, elements=10_000, exact=True, tolerance=0.01):
    scenario, _, design = name.partition("_")
    return {"name": name, "scenario": scenario, "design": design or "floor", "threads": threads,
            "elements": elements, "exactAllocations": exact, "allocationTolerance": tolerance if exact else None}


SUITE = {b["name"]: b for b in [
    bench_spec("sync-step_seed"), bench_spec("sync-step_atomic"), bench_spec("sync-step_locked"),
    bench_spec("floor-sync"), bench_spec("sync-step_actor", exact=False),
    bench_spec("cancel-race_seed", threads=2, elements=50, exact=False), bench_spec("stale-storm_seed", threads=2)]}


def write_catalog(tmp_path, suite=SUITE):
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"designs": [], "scenarios": [], "benchmarks": list(suite.values())}))
    return str(path)


def write_bench(tmp_path, counts):
    folder = tmp_path / "bench"
    folder.mkdir()
    for name, count in counts.items():
        (folder / f"SteppingBenchmarks.{name}.p90.json").write_text(json.dumps({"mallocCountTotal": count, "wallClock": 1}))
    return str(folder)


def row(scenario, design, allocations, threads=1):
    """A row as stepbench writes it (the fixture's, renamed): the repetitions and the tool's summary
    (its median per element)."""
    per = sorted(a / 10_000 for a in allocations)
    template = copy.deepcopy(json.load(open(FIXTURE))["rows"][0])
    template["summary"]["allocationsPerElement"] = {"median": per[(len(per) - 1) // 2], "ciLow": per[0], "ciHigh": per[-1]}
    return dict(template, scenario=scenario, design=design, threads=threads, elements=10_000, status="ok",
                repetitions=[dict(template["repetitions"][0], allocations=a, elements=10_000) for a in allocations])


def write_results(tmp_path, rows, name="run.json"):
    """A results file (the fixture's machine and configuration) of these rows, for the tool to read."""
    data = json.load(open(FIXTURE))
    data["rows"] = [row(s, d, allocs) for s, d, allocs in rows]
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def test_the_benchmarks_thread_count_is_the_one_compared(tmp_path):
    """stale-storm runs at 2 threads in the suite: stepbench's 1-thread row must not stand in."""
    bench = ma.load_benchmark_counts(write_bench(tmp_path, {"stale-storm_seed": 20_024}))
    rows = [row("stale-storm", "seed", [a], threads=t) for t, a in [(2, 20_026), (1, 90_000)]]
    agreed = ma.agreement(bench, ma.stepbench_rows(rows, SUITE), SUITE)
    assert [(r["threads"], r["agrees"]) for r in agreed] == [(2, True)]
    with pytest.raises(ma.InputError, match="at 2 thread"):
        ma.agreement(bench, ma.stepbench_rows(rows[1:], SUITE), SUITE)


def test_counts_over_the_same_window_agree_and_timing_dependent_ones_are_skipped(tmp_path):
    bench = write_bench(tmp_path, {"sync-step_seed": 20_022, "sync-step_atomic": 20, "floor-sync": 18,
                                   "cancel-race_seed": 4455, "sync-step_actor": 220_060})
    measured = [("sync-step", "seed", [20_024, 20_024, 20_025]), ("sync-step", "atomic", [22, 22, 22]),
                ("floor-sync", "floor", [20, 20, 20])]
    rows = ma.agreement(ma.load_benchmark_counts(bench),
                        ma.stepbench_rows([row(*m) for m in measured], SUITE), SUITE)
    assert [r["name"] for r in rows] == ["floor-sync", "sync-step_atomic", "sync-step_seed"]  # not exact: skipped
    assert all(r["agrees"] for r in rows)
    assert ma.main(["x", bench, write_catalog(tmp_path), write_results(tmp_path, measured)]) == 0


def test_one_allocation_per_element_more_disagrees(tmp_path):
    bench = write_bench(tmp_path, {"sync-step_locked": 10_020})
    measured = [("sync-step", "locked", [22, 22, 22])]
    rows = ma.agreement(ma.load_benchmark_counts(bench), ma.stepbench_rows([row(*m) for m in measured], SUITE), SUITE)
    assert [r["agrees"] for r in rows] == [False]
    assert ma.main(["x", bench, write_catalog(tmp_path), write_results(tmp_path, measured)]) == 2


def test_the_results_are_read_as_the_tool_reads_them(tmp_path, capsys):
    """One reader: several files combine by the tool's rule, and two that measured the same row are
    refused, naming both (this script's own reader let the later file replace the earlier)."""
    bench = write_bench(tmp_path, {"sync-step_locked": 20, "sync-step_atomic": 20})
    catalog = write_catalog(tmp_path)
    locked = write_results(tmp_path, [("sync-step", "locked", [22, 22, 22])], "locked.json")
    atomic = write_results(tmp_path, [("sync-step", "atomic", [22, 22, 22])], "atomic.json")
    assert ma.main(["x", bench, catalog, locked, atomic]) == 0
    assert "all 2 agree" in capsys.readouterr().out
    again = write_results(tmp_path, [("sync-step", "locked", [10_022])], "again.json")
    assert ma.main(["x", bench, catalog, locked, again]) == 1
    err = capsys.readouterr().err
    assert "sync-step" in err and "locked.json" in err and "again.json" in err


def test_bad_input_is_named(tmp_path, capsys):
    results = write_results(tmp_path, [("sync-step", "locked", [22])])
    catalog = write_catalog(tmp_path)
    assert ma.main(["x", str(tmp_path / "missing"), catalog, results]) == 1
    assert "missing: no such folder" in capsys.readouterr().err
    bench = write_bench(tmp_path, {"sync-step_locked": 20})
    short = dict(SUITE, **{"sync-step_locked": bench_spec("sync-step_locked", elements=2000)})
    with pytest.raises(ma.InputError, match="stepbench measured 10000 elements .* the benchmark 2000"):
        ma.agreement(ma.load_benchmark_counts(bench), ma.stepbench_rows([row("sync-step", "locked", [22])], short), short)
    (tmp_path / "wrong.json").write_text(json.dumps({"schema": "other/9", "rows": []}))
    assert ma.main(["x", bench, catalog, str(tmp_path / "wrong.json")]) == 1
    err = capsys.readouterr().err
    assert "wrong.json" in err and "'stepbench/1'" in err
    assert ma.main(["x", bench, str(tmp_path / "nocatalog.json"), results]) == 1
    assert "unreadable catalog" in capsys.readouterr().err


def test_a_row_a_design_was_left_out_of_is_not_a_failed_verification(tmp_path):
    """stepbench writes an `excluded` row where a design declares breaking a raced rule fatal (a
    peer in stale-storm): no measurement to compare, and no failure either."""
    bench = write_bench(tmp_path, {"sync-step_atomic": 20})
    rows = [row("sync-step", "atomic", [22, 22, 22]),
            {"scenario": "stale-storm", "design": "flatmap-future", "threads": 2, "elements": 10_000,
             "status": "excluded", "failure": "not run: flatmap-future declares rule S2 broken (…)", "repetitions": []}]
    agreed = ma.agreement(ma.load_benchmark_counts(bench), ma.stepbench_rows(rows, SUITE), SUITE)
    assert [(r["name"], r["agrees"]) for r in agreed] == [("sync-step_atomic", True)]
    rows[1]["status"] = "failed"
    with pytest.raises(ma.InputError, match="stale-storm flatmap-future ×2 failed its verification"):
        ma.stepbench_rows(rows, SUITE)
