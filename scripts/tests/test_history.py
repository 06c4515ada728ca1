"""scripts/history: change points over commits, on synthetic runs drawn with a measured noise
profile (fixtures/noise.json, a copy of amd-epyc-2c's, owned by these tests) and on two real
profile files (fixtures/history/).

noise.json keeps, per (scenario, design, threads, metric) of its 10 A/A runs, the between-run
drift σ and 101 quantiles of the per-repetition residuals, not the runs' values themselves; so
the A/A series here are drawn from those, as Benchmarks/Tests/StepBenchKitTests/DetectorTests.swift draws
its synthetic comparisons: each run gets its own drift, then each repetition a residual."""
import hashlib
import json
import math
import os
import shutil
import subprocess
import zlib

import numpy as np
import pytest

from scripts.stepbench_report import history, report
from scripts.stepbench_report.results import load
from scripts.tests.test_export import stepbench

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
NOISE_PATH = os.path.join(FIXTURES, "noise.json")
NOISE = json.load(open(NOISE_PATH))
SVG = "{http://www.w3.org/2000/svg}"
MIN_EFFECT = 0.05  # the tool's default (`stepbench history series`: defaultMinEffect), what scripts/history uses


def detect(series, min_effect=MIN_EFFECT, sigmas=None):
    """The tool's search (`stepbench history detect`) over `series`, each (key, exact, drift σ or None,
    tolerance or None, values, per-run logs or None): its answer, the method's constants and one
    outcome per series."""
    request = {"minEffect": min_effect, "series": [
        {"key": key, "exact": exact, "driftSD": drift, "tolerance": tolerance, "values": values, "logs": logs}
        for key, exact, drift, tolerance, values, logs in series]}
    if sigmas is not None:
        request["sigmas"] = sigmas
    done = subprocess.run([stepbench(), "history", "detect", "-"], input=json.dumps(request), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def timing_change_points(runs, drift, key, min_effect=MIN_EFFECT, sigmas=None):
    """One timing series' change points, as the tool finds them."""
    [outcome] = detect([(key, False, drift, None, [0.0] * len(runs), [list(r) for r in runs])], min_effect,
                       sigmas)["outcomes"]
    return outcome["changePoints"]


METHOD = {}


def method():
    """The change-point search's constants, as the tool gives them."""
    if not METHOD:
        METHOD.update(detect([])["method"])
    return METHOD


def entry(scenario, design, metric, threads=1):
    for e in NOISE["entries"]:
        if (e["scenario"], e["design"], e["threads"], e["metric"]) == (scenario, design, threads, metric):
            return e
    raise KeyError((scenario, design, threads, metric))


def residuals(rng, e, n):
    """n per-repetition log residuals drawn from the row's measured quantiles (inverse CDF)."""
    return np.interp(rng.uniform(0, 100, n), np.arange(101), e["residualQuantiles"])


def aa_run(rng, e, repetitions, step=0.0):
    """One synthetic run's repetitions (log values): the run's drift, then each repetition's
    residual; `step` shifts the whole run (a change of the code)."""
    return list(step + rng.normal(0, e["driftSD"]) + residuals(rng, e, repetitions))


def fake_commit(i, salt="run"):
    return hashlib.sha1(f"{salt}-{i}".encode()).hexdigest()  # unknown to git: ordered by createdAt


def created(i):
    return f"2026-12-01T{i // 60:02d}:{i % 60:02d}:00Z"


def rows_for(design, ratio_logs, floor_logs, allocations=0, elements=200_000):
    """sync-step `design` and floor-sync rows whose repetitions give exactly these paired ratios."""
    def row(scenario, name, ns):
        reps = [{"elapsedNanoseconds": int(round(v * elements)), "elements": elements,
                 "allocations": int(allocations * elements), "cpuNanoseconds": int(round(v * elements))} for v in ns]

        def estimate(values):
            return {"median": float(np.median(values)), "ciLow": min(values), "ciHigh": max(values)}
        return {"scenario": scenario, "design": name, "threads": 1, "elements": elements, "status": "ok",
                "failure": None, "allocationsExact": True, "allocationRepetitions": min(3, len(reps)),
                "repetitions": reps,
                "summary": {"nsPerElement": estimate(ns), "elementsPerSecond": estimate([1e9 / v for v in ns]),
                            "allocationsPerElement": estimate([float(allocations)]), "cpuNsPerElement": estimate(ns)}}
    floor_ns = [60.0 * math.exp(f) for f in floor_logs]
    design_ns = [f * math.exp(r) for f, r in zip(floor_ns, ratio_logs)]
    return [row("sync-step", design, design_ns), row("floor-sync", "floor", floor_ns)]


def write_run(folder, commit, when, rows=(), profiles=None, dirty=False, schema="stepbench/2", cpu="AMD EPYC",
              name=None, machine=(), configuration=()):
    """A results file as `stepbench run` writes it (the fields the tool reads); `machine` and
    `configuration`: fields to change in those sections."""
    data = {"schema": schema, "createdAt": when, "peakRSSBytes": 0,
            "machine": {"cpuModel": cpu, "cores": 2, "gitCommit": commit, "gitDirty": dirty,
                        "buildConfiguration": "release", "kernel": "Linux", "swiftVersion": "6.3",
                        "allocator": "jemalloc", **dict(machine)},
            "configuration": {"preset": "quick", "repetitions": 5, "warmup": True, "threads": [1],
                              "handoff": "synthetic", **dict(configuration)},
            "rows": list(rows)}
    if profiles is not None:
        data["profiles"] = profiles
    # named by commit, so the folder's name order is not the history's order
    path = os.path.join(folder, name or f"{commit[:12]}.json")
    with open(path, "w") as f:
        json.dump(data, f)
    return path


def synthetic_folder(folder, design, step, runs=12, step_at=7, repetitions=601, seed=1):
    """`runs` runs of sync-step `design` and its floor, drawn with the noise of that row; from
    run `step_at` on the paired ratio is `step` higher. Returns the commits in history order."""
    os.makedirs(folder, exist_ok=True)
    shutil.copy(NOISE_PATH, os.path.join(folder, "noise.json"))
    rng = np.random.default_rng(seed)
    ratio_e, floor_e = entry("sync-step", design, "ns_per_element_vs_floor"), entry("floor-sync", "floor", "ns_per_element")
    commits = [fake_commit(i, f"{design}-{seed}") for i in range(runs)]
    for i, commit in enumerate(commits):
        ratio = aa_run(rng, ratio_e, repetitions, math.log1p(step) if i >= step_at else 0.0)
        write_run(folder, commit, created(i), rows_for(design, ratio, aa_run(rng, floor_e, repetitions)))
    return commits


def run_history(folder, tmp_path, *extra):
    out = tmp_path / "history.json"
    code = history.main([str(folder), "--format", "json", "--output", str(out), *extra])
    return code, json.loads(out.read_text())


# ------------------------------------------------------------------ (a) a planted step

def threshold(e):
    """The smallest step history calls on a row with this noise entry (drift only; the runs'
    sampling noise adds a little): max(--min-effect, exp(SIGMAS·√2·drift) − 1)."""
    return max(MIN_EFFECT, math.exp(method()["sigmas"] * math.sqrt(2) * e["driftSD"]) - 1)


def rows_a_10_percent_step_shows_on():
    """The sync-step designs whose paired ratio drifts little enough between runs (noise.json,
    refreshed with every baseline) that a 10% step is at least 1.5 times the smallest step
    history calls there. Which designs they are changes with each refresh of the profile."""
    entries = [e for e in NOISE["entries"] if e["scenario"] == "sync-step" and e["metric"] == "ns_per_element_vs_floor"]
    return [e["design"] for e in entries if threshold(e) * 1.5 <= 0.10]


# The design whose sync-step paired ratio drifts least in the committed noise profile: the
# synthetic folders below that need a visible 10–15% step use it (which one it is changes with
# each refresh of noise.json).
QUIET = min((e for e in NOISE["entries"] if e["scenario"] == "sync-step" and e["metric"] == "ns_per_element_vs_floor"),
            key=lambda e: e["driftSD"])["design"]


def test_this_machines_noise_lets_a_10_percent_step_show_on_some_row():
    assert rows_a_10_percent_step_shows_on(), \
        "noise.json: every sync-step row drifts so much between runs that history could not call a 10% step"


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("design", rows_a_10_percent_step_shows_on())
def test_a_planted_10_percent_step_is_found_at_exactly_its_commit(tmp_path, design, seed):
    """On every row whose measured drift lets a 10% step show (see above), a 10% step planted at
    run 7 of 12 is called, once, at exactly that commit. 601 repetitions per run: the protocol
    noise.json measured (scripts/regress's timing baseline)."""
    commits = synthetic_folder(tmp_path / "runs", design, 0.10, seed=seed)
    code, data = run_history(tmp_path / "runs", tmp_path)
    assert code == 2, data["summary"]  # a regression
    assert [(c["scenario"], c["design"], c["metric"]) for c in data["changePoints"]] == \
        [("sync-step", design, "ns_per_element_vs_floor")], data["changePoints"]
    cp = data["changePoints"][0]
    assert cp["commit"] == commits[7] and cp["previousCommit"] == commits[6]
    assert cp["direction"] == "regression" and 1.06 < cp["ratio"] < 1.14
    assert cp["pValue"] <= method()["alpha"] and cp["regimeRuns"] == [7, 5]
    assert data["uncalled"] == []
    # the commits are unknown to git: ordered by createdAt, and the output says so
    assert [f["commit"] for f in data["files"]] == commits
    assert {f["orderedBy"] for f in data["files"]} == {"createdAt"}
    assert any("createdAt" in n for n in data["notes"])


def test_a_step_the_rows_drift_hides_is_not_called(tmp_path):
    """The sync-step row whose paired ratio drifts most between runs (noise.json, refreshed with
    every baseline): its minimum effect is max(--min-effect, exp(SIGMAS·√2·drift) − 1), so a
    step of half that is not called there and one of 2.5 times that is."""
    e = max((x for x in NOISE["entries"] if x["scenario"] == "sync-step" and x["metric"] == "ns_per_element_vs_floor"),
            key=lambda x: x["driftSD"])
    smallest = threshold(e)
    synthetic_folder(tmp_path / "small", e["design"], smallest / 2)
    code, data = run_history(tmp_path / "small", tmp_path)
    assert code == 0 and data["changePoints"] == []
    commits = synthetic_folder(tmp_path / "large", e["design"], smallest * 2.5)
    code, data = run_history(tmp_path / "large", tmp_path)
    assert code == 2 and [c["commit"] for c in data["changePoints"]] == [commits[7]]
    assert data["changePoints"][0]["minimumEffect"] == pytest.approx(smallest, abs=0.01)


def test_an_improvement_is_a_change_point_but_exits_0(tmp_path):
    commits = synthetic_folder(tmp_path / "runs", QUIET, -0.15)
    code, data = run_history(tmp_path / "runs", tmp_path)
    assert code == 0
    assert [(c["commit"], c["direction"]) for c in data["changePoints"]] == [(commits[7], "improvement")]


# ------------------------------------------------------------------ (b) A/A

AA_TRIALS = 10


def aa_series(repetitions, runs=20):
    """AA_TRIALS synthetic A/A series for every row and metric of noise.json."""
    for e in NOISE["entries"]:
        key = f"{e['scenario']}|{e['design']}|{e['threads']}|{e['metric']}"
        rng = np.random.default_rng([zlib.crc32(key.encode()), repetitions])  # fixed: the test is repeatable
        for trial in range(AA_TRIALS):
            yield e, key, [aa_run(rng, e, repetitions) for _ in range(runs)]


@pytest.mark.parametrize("repetitions", [5, 601])
def test_b_aa_series_of_every_row_yield_no_change_point(repetitions):
    """20 A/A runs per series, 10 series per row and metric of noise.json (140 series), with the
    quick profile's 5 repetitions per run and the gate's 601: no change point at all. The same
    series through E-divisive without the noise gate (the plain permutation test) do give false
    change points, at about its level: so the zero is the gate's doing, and the test can fail."""
    drawn = list(aa_series(repetitions))
    series = len(drawn)
    gated = detect([(key, False, e["driftSD"], None, [0.0] * len(runs), [list(r) for r in runs])
                    for e, key, runs in drawn])["outcomes"]
    found = [(key, c["index"], c["after"] / c["before"]) for (_, key, _), o in zip(drawn, gated) for c in o["changePoints"]]
    bare = detect([(key, False, 0.0, None, [0.0] * len(runs), [list(r) for r in runs]) for _, key, runs in drawn],
                  min_effect=0.0, sigmas=0.0)["outcomes"]
    plain = sum(bool(o["changePoints"]) for o in bare)
    assert found == []
    assert series == len(NOISE["entries"]) * AA_TRIALS
    # the permutation test alone: false alarms at roughly its level (binary segmentation adds a little)
    assert 0 < plain <= 2.5 * method()["alpha"] * series, plain


def test_few_runs_get_an_exact_permutation_p_value():
    """Up to 8 runs every order is tried: two groups perfectly apart give p = 2/C(n, n/2), the
    two orders (low group first or last) as extreme as the observed one. 7 runs: 2/35 = 0.057,
    not significant at 0.05; 8 runs: 2/70 = 0.029, called."""
    seven = [[v] for v in (0.0, 0.001, 0.002, 0.5, 0.501, 0.502, 0.503)]
    assert timing_change_points(seven, 0.0, "seven") == []
    eight = [[v] for v in (0.0, 0.001, 0.002, 0.003, 0.5, 0.501, 0.502, 0.503)]
    cps = timing_change_points(eight, 0.0, "eight")
    assert [(c["index"], c["pValue"]) for c in cps] == [(4, pytest.approx(2 / 70))]
    assert cps[0]["after"] / cps[0]["before"] == pytest.approx(math.exp(0.5015 - 0.0015))


def test_b_aa_runs_through_the_whole_pipeline_yield_none(tmp_path):
    """A/A files (no step) for every sync-step design: exit 0, no change point, nothing listed."""
    for design in ("seed", "locked", "mutex", "atomic"):
        synthetic_folder(tmp_path / design, design, 0.0, seed=7)
        code, data = run_history(tmp_path / design, tmp_path)
        assert code == 0 and data["changePoints"] == [] and data["uncalled"] == [], design


def test_real_profiles_give_well_formed_output(tmp_path):
    """Two real profile files (fixtures/history/: b97834b, then fd19f5b, which removed
    generic-metadata look-ups), with copies as a results folder holds them."""
    folder = tmp_path / "amd-epyc-2c"
    shutil.copytree(os.path.join(FIXTURES, "history"), folder)
    shutil.copy(folder / "profile-2026-11-23T141232Z.json", folder / "profile-latest.json")
    shutil.copy(NOISE_PATH, folder / "noise.json")
    code, data = run_history(folder, tmp_path)
    assert code == 0  # improvements only
    assert data["schema"] == history.SCHEMA and data["machineId"] == "amd-epyc-2c"
    names = [f["file"] for f in data["files"]]
    assert names == ["profile-2026-11-23T131946Z.json", "profile-2026-11-23T141232Z.json"]
    skipped = {s["file"]: s["reason"] for s in data["skipped"]}
    assert skipped["profile-latest.json"] == "a copy of profile-2026-11-23T141232Z.json"
    assert "noise profile" in skipped["noise.json"]
    assert data["method"]["permutations"] == method()["permutations"] and data["method"]["noiseProfile"].endswith("noise.json")
    for cp in data["changePoints"] + data["uncalled"]:
        assert cp["file"] in names and 0 <= cp["pValue"] <= method()["alpha"]
        # both profiles were made on dirty trees: every change is shown apart, neither better nor worse
        assert cp["cause"] == "dirty tree" and cp["direction"] in ("higher", "lower"), cp
    # the exact series show fd19f5b's drop (callgrind 3,856 → 2,664 for locked), with p = 0
    instr = {(c["design"], c["commit"][:7]): c for c in data["changePoints"] if c["metric"] == "instructions_per_element"}
    for design in ("locked", "mutex", "atomic"):
        assert instr[(design, "fd19f5b")]["pValue"] == 0
        assert instr[(design, "fd19f5b")]["direction"] == "lower"
    assert not any(design == "seed" for design, _ in instr)  # seed is the unchanged reference
    for fmt in ("text", "markdown"):
        text = history.render(history.analyse(str(folder)), fmt)
        assert "change point(s)" in text and "E-divisive" in text
    assert "| scenario | design |" in history.render(history.analyse(str(folder)), "markdown")


# ------------------------------------------------------------------ (c) bad input

def test_c_bad_input_exits_1_and_names_the_problem(tmp_path, capsys):
    def fails(args, *expected):
        assert history.main([str(a) for a in args]) == 1
        err = capsys.readouterr().err
        for text in expected:
            assert text in err, err

    fails([tmp_path / "nope"], "nope", "no such folder")
    (tmp_path / "empty").mkdir()
    fails([tmp_path / "empty"], "no results files", "scripts/bench")
    only_noise = tmp_path / "only-noise"
    only_noise.mkdir()
    shutil.copy(NOISE_PATH, only_noise / "noise.json")
    fails([only_noise], "no results files", "noise.json")
    file = write_run(str(tmp_path), fake_commit(0), created(0), rows_for("atomic", [0.0], [0.0]))
    fails([file], "not a folder")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "half.json").write_text('{"schema": "stepbench/2", "rows": [')
    fails([broken], "half.json", "not JSON")
    old = tmp_path / "old"
    old.mkdir()
    (old / "old.json").write_text(json.dumps({"schema": "stepbench/0", "rows": []}))
    fails([old], "old.json", "stepbench/0", "stepbench/2")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    write_run(str(mixed), fake_commit(1), created(1), rows_for("atomic", [0.0], [0.0]))
    write_run(str(mixed), fake_commit(2), created(2), rows_for("atomic", [0.0], [0.0]), cpu="Intel Xeon")
    fails([mixed], "several machine kinds", "amd-epyc-2c", "intel-xeon-2c")
    fails([mixed, "--format", "xml"], "invalid choice", "xml")  # argparse's usage error, exit 1 not 2
    good = tmp_path / "good"
    synthetic_folder(good, "mutex", 0.0, runs=4, repetitions=5)
    bad_noise = tmp_path / "noise.json"
    bad_noise.write_text(json.dumps({"schema": "something/9"}))
    fails([good, "--noise", bad_noise], "noise.json", "not a noise profile")
    fails([good, "--output", tmp_path / "no-such-dir" / "h.json"], "cannot write")
    assert not (tmp_path / "no-such-dir").exists()


def test_output_is_written_atomically_and_nothing_on_error(tmp_path):
    good = tmp_path / "good"
    synthetic_folder(good, "mutex", 0.0, runs=4, repetitions=5)
    out = tmp_path / "out" / "h.md"
    out.parent.mkdir()
    out.write_text("previous")
    assert history.main([str(good), "--format", "markdown", "--output", str(out)]) == 0
    assert out.read_text().startswith("history of") and os.listdir(out.parent) == ["h.md"]
    assert history.main([str(tmp_path / "missing"), "--output", str(out)]) == 1
    assert out.read_text().startswith("history of")  # the previous output stays


def test_no_noise_profile_calls_no_timing_change(tmp_path):
    """As compare: without a drift estimate a timing change is listed, never called."""
    commits = synthetic_folder(tmp_path / "runs", QUIET, 0.10)
    code, data = run_history(tmp_path / "runs", tmp_path, "--no-noise")
    assert code == 0 and data["changePoints"] == []
    assert [c["commit"] for c in data["uncalled"]] == [commits[7]] and not data["uncalled"][0]["called"]
    assert any("no noise profile" in n for n in data["notes"])


# ------------------------------------------------------------------ (d) exact series

def profile(design, instructions):
    return {"scenario": "sync-step", "design": design, "elementsLow": 4000, "elementsHigh": 12000,
            "instructionsLow": 0, "instructionsHigh": 0, "instructionsPerElement": instructions, "topFunctions": []}


def test_d_exact_series_step_above_tolerance_is_a_change_point_with_p_0(tmp_path):
    """Instructions: +0.38% (under the gate's 0.5%) is not a change, +3.1% is, at exactly its
    commit. Exact allocations: 0 → 1 per element at its commit; 0.005 of noise is not."""
    folder = tmp_path / "exact"
    folder.mkdir()
    instructions = [1594, 1594, 1600, 1650, 1650]
    allocations = [0.0, 0.005, 0.0, 0.0, 1.0]
    commits = [fake_commit(i, "exact") for i in range(5)]
    for i, commit in enumerate(commits):
        write_run(str(folder), commit, created(i), rows_for("atomic", [0.0] * 3, [0.0] * 3, allocations=allocations[i]),
                  profiles=[profile("atomic", instructions[i]), profile("seed", 6785.0)])
    code, data = run_history(folder, tmp_path)
    assert code == 2
    instr = [c for c in data["changePoints"] if c["metric"] == "instructions_per_element"]
    assert len(instr) == 1, instr  # seed's flat series and atomic's +0.38% are not change points
    ins = instr[0]
    assert (ins["design"], ins["commit"], ins["pValue"], ins["exact"]) == ("atomic", commits[3], 0.0, True)
    assert ins["ratio"] == pytest.approx(1650 / 1600) and ins["direction"] == "regression"
    alloc = [c for c in data["changePoints"] if c["metric"] == "allocations_per_element"]
    # the design's and the floor's rows both allocate one per element from commit 4 on
    assert {(c["design"], c["commit"]) for c in alloc} == {("atomic", commits[4]), ("floor", commits[4])}
    assert all(c["ratio"] is None and c["change"] == pytest.approx(1.0) and c["pValue"] == 0 for c in alloc)
    text = history.render(history.analyse(str(folder)), "text")
    assert "0 (exact)" in text and "+1.00" in text


def test_d_exact_tolerances_are_the_gates(tmp_path):
    """Each exact series carries the gate's own tolerance, from the tool: instructions 0.5%, but
    5% for actor-stream, whose count follows the binary's layout (as `stepbench compare`)."""
    folder = tmp_path / "exact"
    folder.mkdir()
    commits = [fake_commit(i, "tolerance") for i in range(2)]
    for i, commit in enumerate(commits):
        write_run(str(folder), commit, created(i), rows_for("atomic", [0.0] * 3, [0.0] * 3),
                  profiles=[profile("atomic", [1000, 1010][i]), profile("actor-stream", [58000, 59000][i])])
    h = history.analyse(str(folder))
    tolerance = {s.design: s.tolerance for s in h.series if s.metric == "instructions_per_element"}
    assert tolerance == {"atomic": {"relative": 0.005}, "actor-stream": {"relative": 0.05}}
    called = {(s.design, c.index) for s, c in h.change_points() if s.metric == "instructions_per_element"}
    assert called == {("atomic", 1)}  # +1% on atomic; +1.7% on actor-stream is within its 5%
    allocations = next(s.tolerance for s in h.series if s.metric == "allocations_per_element")
    assert allocations == {"absolute": 0.01}
    instructions = tolerance["atomic"]
    cases = [([1000, 1004.9], instructions, []), ([1000, 1005.1], instructions, [1]),
             ([1000, 994.9, 994.9], instructions, [1]), ([0.0, 0.0099], allocations, []),
             ([0.0, 0.0101, 0.0101, 2.0], allocations, [1, 3])]
    outcomes = detect([("exact", True, None, t, values, None) for values, t, _ in cases])["outcomes"]
    assert [[c["index"] for c in o["changePoints"]] for o in outcomes] == [want for _, _, want in cases]


# ------------------------------------------------------------------ order

def git(repo, *args, date=None):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_order_is_by_commit_time_then_created_at_and_dirty_runs_are_flagged(tmp_path):
    """Runs made later of an older commit come first; two runs of one commit stay in createdAt
    order; a commit git does not know is placed by createdAt and said so."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a").write_text("1")
    git(repo, "add", "a")
    git(repo, "commit", "-q", "-m", "old", date="2026-01-01T00:00:00Z")
    old = git(repo, "rev-parse", "HEAD")
    (repo / "a").write_text("2")
    git(repo, "commit", "-qam", "new", date="2026-01-02T00:00:00Z")
    new = git(repo, "rev-parse", "HEAD")
    folder = repo / "results"
    folder.mkdir()
    rows = rows_for("atomic", [0.0], [0.0])
    write_run(str(folder), new, "2026-03-01T00:00:00Z", rows)                 # made first, newer commit
    write_run(str(folder), old, "2026-03-02T00:00:00Z", rows)                 # made later, older commit
    write_run(str(folder), old, "2026-03-03T00:00:00Z", rows, dirty=True, name="0-old-again.json")  # a second run
    unknown = fake_commit(9)
    write_run(str(folder), unknown, "2026-01-01T12:00:00Z", rows)             # between the two commits
    code, data = run_history(folder, tmp_path)
    assert code == 0
    assert [(f["commit"], f["dirty"], f["orderedBy"]) for f in data["files"]] == [
        (old, False, "commit-time"), (old, True, "commit-time"), (unknown, False, "createdAt"),
        (new, False, "commit-time")]
    assert any(unknown[:7] in n and "createdAt" in n for n in data["notes"])
    text = history.render(history.analyse(str(folder)), "text")
    assert "ordered by commit time where git knows the commit, else by createdAt" in text


# ------------------------------------------------------------------ the report's section

def test_report_history_section_charts_and_tables_the_change_point(tmp_path):
    folder = tmp_path / "runs"
    commits = synthetic_folder(folder, QUIET, 0.10, repetitions=101)
    out = tmp_path / "report"
    out.mkdir()
    results = load([str(folder / f"{commits[-1][:12]}.json")])
    md = "\n".join(report.history_section(results, str(out)))
    assert "## History" in md and f"`{commits[7][:7]}`" in md and f"| sync-step | {QUIET} | 1 | ns_per_element_vs_floor" in md
    assert "](history-sync-step.svg)" in md
    import xml.etree.ElementTree as ET
    root = ET.parse(out / "history-sync-step.svg").getroot()
    ids = {el.get("id") for el in root.iter() if el.get("id")}
    assert {f"series-{QUIET}", "series-floor", f"changepoint-{QUIET}", f"changepoint-{commits[7][:7]}"} <= ids
    # no change point, no mark: an A/A folder's chart has the lines only
    aa = tmp_path / "aa"
    commits = synthetic_folder(aa, QUIET, 0.0, repetitions=101)
    out2 = tmp_path / "report2"
    out2.mkdir()
    md = "\n".join(report.history_section(load([str(aa / f"{commits[-1][:12]}.json")]), str(out2)))
    assert "no change points" in md
    ids = {el.get("id") for el in ET.parse(out2 / "history-sync-step.svg").getroot().iter() if el.get("id")}
    assert f"series-{QUIET}" in ids and not any(i.startswith("changepoint-") for i in ids)


def test_report_names_a_folder_history_cannot_read(tmp_path):
    folder = tmp_path / "runs"
    commits = synthetic_folder(folder, "mutex", 0.0, runs=4, repetitions=5)
    (folder / "stray.json").write_text("not json")
    out = tmp_path / "report"
    out.mkdir()
    md = "\n".join(report.history_section(load([str(folder / f"{commits[-1][:12]}.json")]), str(out)))
    assert "No history:" in md and "stray.json" in md


# ------------------------------------------------------------------ what else changed at a change point

def stepped_runs(folder, commits, allocations, **changed):
    """One run per commit of sync-step `atomic` and its floor whose exact allocations per
    element are `allocations` (a step the gate's tolerance sees); `changed[i]`: write_run's
    keyword arguments for run i (a schema, a setting, a dirty tree)."""
    os.makedirs(folder, exist_ok=True)
    for i, commit in enumerate(commits):
        write_run(str(folder), commit, created(i), rows_for("atomic", [0.0] * 3, [0.0] * 3, allocations=allocations[i]),
                  **changed.get(f"run{i}", {}))


@pytest.mark.parametrize("change,expected", [
    ({"schema": "stepbench/1"}, "schema 'stepbench/1' → 'stepbench/2'"),
    ({"configuration": {"handoff": "spin"}}, "handoff 'spin' → 'synthetic'"),
    ({"machine": {"swiftVersion": "6.2"}}, "swiftVersion '6.2' → '6.3'"),
    ({"machine": {"allocator": "glibc"}}, "allocator 'glibc' → 'jemalloc'"),
    ({"configuration": {"repetitionBudget": 0.5}}, "repetitionBudget 0.5 → None"),
])
def test_a_step_where_the_measurement_changed_is_labelled_so_and_is_no_regression(tmp_path, change, expected):
    """Allocations per element step 0 → 1 at run 2, where the files say the measurement changed
    (the runs before it written otherwise): every change point there is "measurement changed",
    higher (not a regression), with what changed, and the history exits 0. The commits are
    unknown to git, and the notes say so."""
    commits = [fake_commit(i, "measured") for i in range(4)]
    stepped_runs(tmp_path / "runs", commits, [0.0, 0.0, 1.0, 1.0], run0=change, run1=change)
    code, data = run_history(tmp_path / "runs", tmp_path)
    assert code == 0 and data["regressions"] == 0, data["summary"]
    assert {(c["commit"], c["cause"], c["direction"]) for c in data["changePoints"]} == \
        {(commits[2], "measurement changed", "higher")}, data["changePoints"]
    for c in data["changePoints"]:
        assert any(expected in n for n in c["notes"]), c["notes"]
        assert any("git cannot tell" in n for n in c["notes"]), c["notes"]
    assert "0 regression(s)" in data["summary"] and "measurement changed" in data["summary"]
    text = history.render(history.analyse(str(tmp_path / "runs")), "text")
    assert "measurement changed: shown apart, not regressions" in text and "no change point where only the code" in text


@pytest.mark.parametrize("dirty_run", [1, 2])
def test_a_step_next_to_a_dirty_tree_is_shown_apart(tmp_path, dirty_run):
    """The same step, the run before it (1) or its own run (2) made on a dirty tree: "dirty
    tree", not a regression, exit 0."""
    commits = [fake_commit(i, "dirty") for i in range(4)]
    stepped_runs(tmp_path / "runs", commits, [0.0, 0.0, 1.0, 1.0], **{f"run{dirty_run}": {"dirty": True}})
    code, data = run_history(tmp_path / "runs", tmp_path)
    assert code == 0 and data["regressions"] == 0, data["summary"]
    assert {(c["commit"], c["cause"], c["direction"]) for c in data["changePoints"]} == {(commits[2], "dirty tree", "higher")}
    assert all(any(f"dirty tree at {commits[dirty_run][:7]}" in n for n in c["notes"]) for c in data["changePoints"])


def test_a_step_where_only_the_code_changed_is_a_regression_and_the_harness_is_read_from_git(tmp_path):
    """In a repository: the step at c2, whose commit changed only the library, is a regression
    (exit 2), as before; the step at c4, whose commit changed only the harness (Bench/), is a
    measurement change, and one whose commit changed both is "measurement and code changed":
    neither is a regression. A commit that changed only documentation leaves no code to blame."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    touched = [["README.md"], ["Sources/Stepping/A.swift"], ["Sources/Stepping/A.swift"], ["docs/X.md"],
               ["Bench/Sources/StepBenchScenarios/K.swift"], ["Bench/Sources/StepBenchScenarios/K.swift", "Peers/Sources/P.swift"],
               ["README.md"]]
    commits = []
    for i, paths in enumerate(touched):
        for path in paths:
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(str(i))
            git(repo, "add", path)
        git(repo, "commit", "-q", "-m", f"c{i}", date=f"2026-01-0{i + 1}T00:00:00Z")
        commits.append(git(repo, "rev-parse", "HEAD"))
    stepped_runs(repo / "results", commits, [0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 4.0])
    code, data = run_history(repo / "results", tmp_path)
    assert code == 2 and data["regressions"] == 2, data["summary"]  # atomic's row and its floor's, at c2
    causes = {(c["commit"], c["cause"], c["direction"]) for c in data["changePoints"]}
    assert causes == {(commits[2], "code", "regression"), (commits[3], "no code changed", "higher"),
                      (commits[4], "measurement changed", "higher"),
                      (commits[5], "measurement and code changed", "higher")}, causes
    harness = next(c for c in data["changePoints"] if c["commit"] == commits[4])
    assert any("the harness changed" in n and "Bench/Sources/" in n for n in harness["notes"]), harness["notes"]
    assert not any("git cannot tell" in n for c in data["changePoints"] for n in c["notes"])


@pytest.mark.parametrize("path, kind", [
    # the layout since the move to Benchmarks/
    ("Benchmarks/Sources/StepBenchScenarios/Scenarios/SyncStep.swift", "harness"),
    ("Benchmarks/Sources/StepBenchKit/Passes/PassRequest.swift", "harness"),
    ("Benchmarks/Sources/CCallgrind/callgrind.c", "harness"),
    ("Benchmarks/Package.swift", "harness"),
    ("Sources/SteppingConformance/Support/CountingUpstream.swift", "harness"),
    ("Sources/SteppingConformance/Support/ChildGuard.swift", "harness"),
    ("Sources/SteppingConformance/Support/Unchecked.swift", "harness"),
    ("Sources/SteppingConformance/Checks/DemandChecks.swift", None),
    ("Benchmarks/Sources/StepBenchCLI/Compare.swift", None),
    ("Benchmarks/Thresholds/intel/SteppingBenchmarks.sync-step_atomic.p90.json", None),
    ("Tests/SteppingTests/StressTests.swift", None),
    ("Benchmarks/Tests/StepBenchKitTests/ComparisonTests.swift", None),
    ("Sources/Stepping/Designs/AtomicSteppingSubscriber.swift", "code"),
    ("Benchmarks/Peers/Sources/StepPeers/ValuesPeer.swift", "code"),
    ("Package.swift", "code"),
    # the layouts before it
    ("Bench/Sources/StepBenchScenarios/Scenarios/SyncStep.swift", "harness"),
    ("Bench/Sources/CProcessGuard/guard.c", "harness"),
    ("Peers/Sources/StepPeers/ValuesPeer.swift", "code"),
    ("Sources/StepBenchScenarios/Scenarios/SyncStep.swift", "harness"),
])
def test_each_path_is_the_harness_the_code_or_neither(path, kind):
    from scripts.stepbench_report.history_cause import kind_of
    assert kind_of(path) == kind, path
