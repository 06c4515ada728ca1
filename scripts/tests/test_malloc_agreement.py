"""scripts/malloc_agreement.py: package-benchmark's malloc counts against stepbench's jemalloc counts."""
import json

import pytest

from scripts import malloc_agreement as ma


def bench_spec(name, threads=1, elements=10_000, exact=True, tolerance=0.01):
    scenario, _, design = name.partition("_")
    return {"name": name, "scenario": scenario, "design": design or "floor", "threads": threads,
            "elements": elements, "exactAllocations": exact, "allocationTolerance": tolerance if exact else None}


SCHEMAS = ["stepbench/2", "stepbench/1"]  # what `stepbench list --format json` says it reads
SUITE = {b["name"]: b for b in [
    bench_spec("sync-step_seed"), bench_spec("sync-step_atomic"), bench_spec("sync-step_locked"),
    bench_spec("floor-sync"), bench_spec("sync-step_actor", exact=False),
    bench_spec("cancel-race_seed", threads=2, elements=50, exact=False), bench_spec("stale-storm_seed", threads=2)]}


def write_catalog(tmp_path, suite=SUITE):
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps({"designs": [], "scenarios": [], "benchmarks": list(suite.values()),
                                "readableSchemas": SCHEMAS}))
    return str(path)


def write_bench(tmp_path, counts):
    folder = tmp_path / "bench"
    folder.mkdir()
    for name, count in counts.items():
        (folder / f"SteppingBenchmarks.{name}.p90.json").write_text(json.dumps({"mallocCountTotal": count, "wallClock": 1}))
    return str(folder)


def row(scenario, design, allocations, threads=1):
    """A row as stepbench writes it: the repetitions and the tool's summary (its median per element)."""
    per = sorted(a / 10_000 for a in allocations)
    return {"scenario": scenario, "design": design, "threads": threads, "elements": 10_000, "status": "ok",
            "repetitions": [{"allocations": a, "elements": 10_000} for a in allocations],
            "summary": {"allocationsPerElement": {"median": per[(len(per) - 1) // 2]}}}


def write_results(tmp_path, rows):
    data = {"schema": "stepbench/1", "rows": [row(s, d, allocs) for s, d, allocs in rows]}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_the_benchmarks_thread_count_is_the_one_compared(tmp_path):
    """stale-storm runs at 2 threads in the suite: stepbench's 1-thread row must not stand in."""
    bench = write_bench(tmp_path, {"stale-storm_seed": 20_024})
    data = {"schema": "stepbench/1",
            "rows": [row("stale-storm", "seed", [a], threads=t) for t, a in [(2, 20_026), (1, 90_000)]]}
    path = tmp_path / "threads.json"
    path.write_text(json.dumps(data))
    rows = ma.agreement(ma.load_benchmark_counts(bench), ma.load_stepbench_rows([str(path)], SUITE, SCHEMAS), SUITE)
    assert [(r["threads"], r["agrees"]) for r in rows] == [(2, True)]
    only_one = tmp_path / "one.json"
    data["rows"] = data["rows"][1:]
    only_one.write_text(json.dumps(data))
    with pytest.raises(ma.InputError, match="at 2 thread"):
        ma.agreement(ma.load_benchmark_counts(bench), ma.load_stepbench_rows([str(only_one)], SUITE, SCHEMAS), SUITE)


def test_counts_over_the_same_window_agree_and_timing_dependent_ones_are_skipped(tmp_path):
    bench = write_bench(tmp_path, {"sync-step_seed": 20_022, "sync-step_atomic": 20, "floor-sync": 18,
                                   "cancel-race_seed": 4455, "sync-step_actor": 220_060})
    results = write_results(tmp_path, [("sync-step", "seed", [20_024, 20_024, 20_025]),
                                       ("sync-step", "atomic", [22, 22, 22]), ("floor-sync", "floor", [20, 20, 20])])
    rows = ma.agreement(ma.load_benchmark_counts(bench), ma.load_stepbench_rows([results], SUITE, SCHEMAS), SUITE)
    assert [r["name"] for r in rows] == ["floor-sync", "sync-step_atomic", "sync-step_seed"]  # not exact: skipped
    assert all(r["agrees"] for r in rows)
    assert ma.main(["x", bench, write_catalog(tmp_path), results]) == 0


def test_one_allocation_per_element_more_disagrees(tmp_path):
    bench = write_bench(tmp_path, {"sync-step_locked": 10_020})
    results = write_results(tmp_path, [("sync-step", "locked", [22, 22, 22])])
    rows = ma.agreement(ma.load_benchmark_counts(bench), ma.load_stepbench_rows([results], SUITE, SCHEMAS), SUITE)
    assert [r["agrees"] for r in rows] == [False]
    assert ma.main(["x", bench, write_catalog(tmp_path), results]) == 2


def test_bad_input_is_named(tmp_path, capsys):
    results = write_results(tmp_path, [("sync-step", "locked", [22])])
    catalog = write_catalog(tmp_path)
    assert ma.main(["x", str(tmp_path / "missing"), catalog, results]) == 1
    assert "missing: no such folder" in capsys.readouterr().err
    bench = write_bench(tmp_path, {"sync-step_locked": 20})
    short = dict(SUITE, **{"sync-step_locked": bench_spec("sync-step_locked", elements=2000)})
    with pytest.raises(ma.InputError, match="stepbench measured 10000 elements .* the benchmark 2000"):
        ma.agreement(ma.load_benchmark_counts(bench), ma.load_stepbench_rows([results], short, SCHEMAS), short)
    (tmp_path / "wrong.json").write_text(json.dumps({"schema": "other/9", "rows": []}))
    assert ma.main(["x", bench, catalog, str(tmp_path / "wrong.json")]) == 1
    assert "'stepbench/1'" in capsys.readouterr().err
    assert ma.main(["x", bench, str(tmp_path / "nocatalog.json"), results]) == 1
    assert "unreadable catalog" in capsys.readouterr().err


def test_a_row_a_design_was_left_out_of_is_not_a_failed_verification(tmp_path):
    """stepbench writes an `excluded` row where a design declares breaking a raced rule fatal (a
    peer in stale-storm): no measurement to compare, and no failure either."""
    bench = write_bench(tmp_path, {"sync-step_atomic": 20})
    data = {"schema": "stepbench/2", "rows": [
        row("sync-step", "atomic", [22, 22, 22]),
        {"scenario": "stale-storm", "design": "flatmap-future", "threads": 2, "elements": 10_000,
         "status": "excluded", "failure": "not run: flatmap-future declares rule S2 broken (…)", "repetitions": []}]}
    path = tmp_path / "excluded.json"
    path.write_text(json.dumps(data))
    rows = ma.agreement(ma.load_benchmark_counts(bench), ma.load_stepbench_rows([str(path)], SUITE, SCHEMAS), SUITE)
    assert [(r["name"], r["agrees"]) for r in rows] == [("sync-step_atomic", True)]
    failed = tmp_path / "failed.json"
    data["rows"][1]["status"] = "failed"
    failed.write_text(json.dumps(data))
    with pytest.raises(ma.InputError, match="failed its verification"):
        ma.load_stepbench_rows([str(failed)], SUITE, SCHEMAS)
