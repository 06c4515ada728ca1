"""scripts/report on a committed fixture: a real quick run (results/amd-epyc-2c), trimmed to two
repetitions per row (the summaries are those of the full five)."""
import copy
import json
import os
import pathlib
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from scripts.stepbench_report import report, tool
from scripts.stepbench_report.results import ResultsError, load

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "small.json")
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def built(tmp_path):
    out = tmp_path / "report"
    assert report.main([FIXTURE, "--out", str(out)]) == 0
    return out


def series_ids(svg_path):
    root = ET.parse(svg_path).getroot()  # raises if not well-formed XML
    assert root.tag == f"{SVG}svg"
    return {el.get("id") for el in root.iter() if (el.get("id") or "").startswith("series-")}


def test_report_mentions_every_design_and_scenario(built):
    text = (built / "REPORT.md").read_text()
    data = json.load(open(FIXTURE))
    for design in {r["design"] for r in data["rows"] if r["design"] != "floor"}:
        assert f"`{design}`" in text
    for scenario in {r["scenario"] for r in data["rows"] if not r["scenario"].startswith("floor")}:
        assert f"| {scenario} |" in text, scenario
    assert data["machine"]["gitCommit"][:10] in text
    assert "## Verdict" in text
    verdict = text.split("## Verdict")[1].split("##")[0]
    assert len([l for l in verdict.splitlines() if l[:2] in ("1.", "2.", "3.")]) == 3
    assert "★" in text
    # the fixtures folder holds one run and one profile: the history section says there is none yet
    assert "## History" in text and "no history yet" in text


def test_the_method_is_linked_not_restated(tmp_path):
    """Each section says where docs/METHOD.md explains it: in the committed report by a link that
    resolves (to the file from the report's folder, and to one of its headings); in a report
    outside the checkout, where a link would point into this machine's checkout, by the section's
    name."""
    method = pathlib.Path(tool.ROOT, "docs", "METHOD.md").resolve()
    headings = {line.lstrip("#").strip() for line in method.read_text().splitlines() if line.startswith("#")}
    anchors = {"".join(c for c in h.lower().replace(" ", "-") if c.isalnum() or c == "-") for h in headings}
    assert {"how-it-measures", "the-regression-gate-and-its-baseline",
            "what-the-api-costs-and-what-synchronisation-costs"} <= anchors  # GitHub's anchors, as README links them
    committed = pathlib.Path(tool.ROOT, "results", "amd-epyc-2c", "report", "REPORT.md")
    links = re.findall(r"\]\(([^)#]*METHOD\.md)#([^)]+)\)", committed.read_text())
    assert len(links) >= 7, links
    for path, anchor in links:
        assert (committed.parent / path).resolve() == method, path
        assert anchor in anchors, anchor
    out = tmp_path / "report"
    assert report.main([FIXTURE, "--out", str(out)]) == 0
    text = (out / "REPORT.md").read_text()
    assert "METHOD.md#" not in text
    named = re.findall(r"StepBench's docs/METHOD.md, \"([^\"]+)\"", text)
    assert len(named) >= 4 and set(named) <= headings, named


def test_every_chart_is_valid_svg_with_expected_series(built):
    designs = {"seed", "locked", "mutex", "atomic", "actor"}
    charts = sorted(p.name for p in built.glob("*.svg"))
    assert "throughput-sync-step.svg" in charts and "latency-async-step.svg" in charts and "allocations.svg" in charts
    for name in charts:
        ids = series_ids(built / name)
        wanted = {f"series-{d}" for d in designs}
        assert wanted <= ids, f"{name}: missing {wanted - ids}"
    for name in ("throughput-sync-step.svg", "throughput-fan-out.svg", "throughput-async-step.svg",
                 "latency-async-step.svg"):
        assert "series-floor" in series_ids(built / name), name
    assert "series-floor" not in series_ids(built / "throughput-cancel-race.svg")  # it has no floor
    for name in charts:
        assert f"]({name})" in (built / "REPORT.md").read_text()


def test_wrong_schema_is_a_clear_error_and_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "old.json"
    bad.write_text(json.dumps({"schema": "stepbench/0", "rows": []}))
    out = tmp_path / "report"
    assert report.main([str(bad), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "old.json" in err and "stepbench/0" in err and "stepbench/1" in err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["old.json"]


@pytest.mark.parametrize("content,expected", [
    ("not json", "not a JSON results file"),
    ('{"schema": "stepbench/1"}', "malformed stepbench/1 file: the top level has no '"),
    (json.dumps(dict(json.load(open(FIXTURE)), rows=3)), "malformed stepbench/1 file: rows is not a list"),
    ('{"schema": 1}', "schema is '1', expected"),
    ('[1, 2]', "not a results file (the top level is not an object)"),
])
def test_malformed_files_are_clear_errors_and_write_nothing(tmp_path, capsys, content, expected):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    out = tmp_path / "report"
    assert report.main([str(bad), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "bad.json" in err and expected in err
    assert not out.exists()


def test_missing_file_is_a_clear_error(tmp_path, capsys):
    assert report.main([str(tmp_path / "nope.json"), "--out", str(tmp_path / "r")]) == 1
    assert "nope.json" in capsys.readouterr().err


def test_a_failed_report_keeps_the_previous_one(tmp_path, built):
    before = (built / "REPORT.md").read_text()
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert report.main([str(bad), "--out", str(built)]) == 1
    assert (built / "REPORT.md").read_text() == before


def test_two_files_measuring_one_row_are_refused_as_merge_refuses_them(tmp_path):
    """One loader's rule: `stepbench merge --combine` refuses two files that measured one row,
    and so does the report (it let the later file replace the earlier one, so the report and
    `compare` could show different data for the same input)."""
    data = json.load(open(FIXTURE))
    data["rows"] = [r for r in data["rows"] if r["scenario"] == "sync-step"]
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(data))
    with pytest.raises(ResultsError) as e:
        load([FIXTURE, str(newer)])
    assert "sync-step" in str(e.value) and "measured by" in str(e.value) and str(newer) in str(e.value)
    # files of different rows combine, each row as its file measured it
    rest = json.load(open(FIXTURE))
    rest["rows"] = [r for r in rest["rows"] if r["scenario"] != "sync-step"]
    other = tmp_path / "rest.json"
    other.write_text(json.dumps(rest))
    merged = load([str(other), str(newer)])
    assert merged.row("sync-step", "atomic", 1) is not None and merged.row("fan-out", "atomic", 4) is not None


def test_no_tool_no_report(tmp_path, capsys):
    """The tool says what the numbers mean: a binary that is not there is named, nothing written."""
    out = tmp_path / "report"
    assert report.main([FIXTURE, "--out", str(out), "--baseline", FIXTURE, "--stepbench", "/nonexistent"]) == 1
    err = capsys.readouterr().err
    assert "/nonexistent" in err and "build one" in err
    assert not out.exists()


def test_profile_file_adds_the_instruction_chart(tmp_path):
    out = tmp_path / "report"
    profile = os.path.join(os.path.dirname(__file__), "fixtures", "profile.json")
    assert report.main([FIXTURE, profile, "--out", str(out)]) == 0
    ids = series_ids(out / "instructions.svg")
    assert {"series-seed", "series-locked", "series-mutex", "series-atomic", "series-floor"} <= ids
    text = (out / "REPORT.md").read_text()
    assert "](instructions.svg)" in text and "instructions/element" in text
    # the header names each file's own commit (and dirty flag), not only the first file's
    header = text.splitlines()[2]
    assert f"small.json (commit `{json.load(open(FIXTURE))['machine']['gitCommit'][:10]}`)" in header, header
    assert f"profile.json (commit `{json.load(open(profile))['machine']['gitCommit'][:10]}`, dirty)" in header, header
    # the timing file's configuration is kept, not the profile's placeholder
    assert "5 repetitions in shuffled rounds" in text or "2 repetitions in shuffled rounds" in text


def test_verdict_names_the_best_design_even_without_a_seed_row(tmp_path):
    # Two adjacent f-strings join before a conditional: without `seed` (no ratioToSeed) the whole
    # headline used to vanish instead of only its "× faster than seed" part.
    data = json.load(open(FIXTURE))
    data["rows"] = [r for r in data["rows"] if r["design"] != "seed"]
    for r in data["rows"]:
        (r.get("summary") or {}).pop("ratioToSeed", None)
    path = tmp_path / "noseed.json"
    path.write_text(json.dumps(data))
    lines = report.verdict(load([str(path)]))
    # the fixture's two rounds separate no pair: the line names the median's best, undecided
    assert lines and lines[0].startswith("**Synchronous `.more` (one thread): not decided** — by median `"), lines
    assert "ns/element" in lines[0] and "faster than `seed`" not in lines[0]


def test_floors_and_design_order_come_from_the_files_catalog(tmp_path):
    # A file that carries the tool's catalog is read by it: floors and order are not the report's.
    data = json.load(open(FIXTURE))
    designs = sorted({r["design"] for r in data["rows"] if r["design"] != "floor"}, reverse=True)
    catalog = tool.ask("list", "--format", "json")
    scenarios = [dict(s, floor="floor-pingpong") if s["name"] == "sync-step" else
                 {k: v for k, v in s.items() if k != "floor"} if s["name"] == "stale-storm" else s
                 for s in catalog["scenarios"]]
    data["catalog"] = dict(catalog, designs=designs, asynchronousDesigns=designs[:1], scenarios=scenarios)
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(data))
    results = load([str(path)])
    assert results.floor_of("sync-step") == "floor-pingpong"
    assert results.floor_of("stale-storm") is None  # the catalog says it has none
    assert results.designs() == designs
    assert results.asynchronous_designs() == designs[:1]
    # without a catalog (older files): the tool's, with the floors it used then
    legacy = load([FIXTURE])
    assert legacy.floor_of("sync-step") == "floor-sync" and legacy.floor_of("fan-out") == "floor-sync"
    assert legacy.asynchronous_designs() == legacy.tool_catalog["asynchronousDesigns"]


def test_a_design_the_report_does_not_know_is_reported_without_seed(tmp_path):
    """A new design needs no edit here: a file of it alone (no seed to compare to), written with
    the catalog of the build that has it, gets its own verdict line, and its charts a fallback
    colour."""
    data = json.load(open(FIXTURE))
    data["rows"] = [dict(r, design="mutex2") for r in data["rows"]
                    if r["scenario"] == "sync-step" and r["design"] == "mutex"]
    catalog = tool.ask("list", "--format", "json")
    data["catalog"] = dict(catalog, designs=catalog["designs"] + ["mutex2"])
    for r in data["rows"]:
        r["summary"].pop("ratioToSeed", None)
        r["summary"].pop("ratioToFloor", None)
    path = tmp_path / "new.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "report"
    assert report.main([str(path), "--out", str(out)]) == 0
    verdict = (out / "REPORT.md").read_text().split("## Verdict")[1].split("##")[0]
    assert "1. **Synchronous `.more` (one thread): `mutex2`** — " in verdict
    assert "series-mutex2" in series_ids(out / "throughput-sync-step.svg")


def test_cost_splits_are_tabled_as_the_tool_wrote_them(tmp_path):
    profile = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "profile.json")))
    profile["costSplits"] = [
        {"path": "sync-step", "design": "atomic", "instructions": 1100.0, "floor": 500.0, "floorStep": 900.0,
         "api": 400.0, "synchronisation": 200.0, "exact": True},
        {"path": "stale-promise", "design": "actor", "instructions": 86.0, "floorStep": 40.0,
         "synchronisation": 46.0, "synchronisingOverFloorStep": 2.0, "exact": False},
    ]
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(profile))
    out = tmp_path / "report"
    assert report.main([FIXTURE, str(path), "--out", str(out)]) == 0
    text = (out / "REPORT.md").read_text()
    assert "## What the API costs and what synchronisation costs" in text
    assert "| sync-step | `atomic` | 1,100 | 500 | 900 | 400 | 200 | – |" in text
    assert "| stale-promise | `actor` | 86 | – | 40 | – | 46* | 2.0 |" in text


def test_a_peers_bridge_is_tabled_as_the_tool_splits_it(tmp_path):
    """A design with a direct row (the tool's direct scenario) gets its library and bridge
    tabled from `stepbench show document`'s split: here a direct row at half the per-element row's time,
    so the bridge is 100% of it. Without direct rows there is no such section."""
    data = json.load(open(FIXTURE))
    catalog = json.loads(subprocess.run([tool.binary(), "list", "--format", "json"], capture_output=True,
                                        text=True, check=True).stdout)
    row = copy.deepcopy(next(r for r in data["rows"] if r["scenario"] == catalog["perElementScenario"]
                             and r["design"] == "atomic" and r["threads"] == 1))
    row["scenario"] = catalog["directScenario"]
    for k in ("median", "ciLow", "ciHigh"):
        row["summary"]["nsPerElement"][k] /= 2
    data["rows"].append(row)
    path = tmp_path / "with-direct.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "report"
    assert report.main([str(path), "--out", str(out)]) == 0
    text = (out / "REPORT.md").read_text()
    assert "## The peers: their library and their bridge" in text
    line = next(x for x in text.splitlines() if x.startswith("| `atomic` |") and "100%" in x)
    assert line.split("|")[5].strip() == "100%", line  # by medians
    assert report.main([FIXTURE, "--out", str(tmp_path / "plain")]) == 0
    assert "their library and their bridge" not in (tmp_path / "plain" / "REPORT.md").read_text()


def test_the_conformance_table_beside_the_results_and_excluded_rows_are_reported(tmp_path):
    data = json.load(open(FIXTURE))
    row = next(r for r in data["rows"] if r["scenario"] == "stale-storm" and r["design"] == "atomic")
    row.update(status="excluded", failure="not run: atomic declares rule S2 broken (a test's reason)", summary=None)
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "latest.json").write_text(json.dumps(data))
    verdict = {"schema": "stepbench-conformance/2", "designs": ["atomic"], "conforms": True, "measured": [],
               "rules": [{"id": "D1", "summary": "one request", "cells": [{
                   "design": "atomic", "verdict": "passed", "kind": "required", "conforms": True, "failures": [],
                   "checks": [{"name": "storm-64", "torture": True, "kind": "stochastic", "rounds": 10}]}]}]}
    (folder / "conformance.json").write_text(json.dumps(verdict))
    (folder / "conformance.md").write_text("| rule | atomic |\n|---|---|\n| D1 | ok |\n\natomic D1: a failure line\n")
    out = tmp_path / "report"
    assert report.main([str(folder / "latest.json"), "--out", str(out)]) == 0
    text = (out / "REPORT.md").read_text()
    conformance = text.split("## Conformance")[1].split("##")[0]
    assert "| D1 | ok |" in conformance and "a failure line" not in conformance
    assert "Stochastic checks (a design with the fault can pass one run): storm-64 (D1, 10 rounds)." in conformance
    not_run = text.split("## Not run")[1].split("##")[0]
    assert f"stale-storm `atomic` ×{row['threads']}: not run: atomic declares rule S2 broken" in not_run
    assert "## Failed, crashed or hung" not in text
    # a folder stands for its latest.json, as for every command: the conformance table beside it is found
    again = tmp_path / "again"
    assert report.main([str(folder) + "/", "--out", str(again)]) == 0
    assert "| D1 | ok |" in (again / "REPORT.md").read_text().split("## Conformance")[1]


def test_the_verdict_calls_a_tie_where_the_tools_rounds_do_not_separate(tmp_path):
    """The tie is the tool's (`stepbench show ranking`: round-by-round ratios, 95% interval), not the
    summaries': the summaries are left as they are, only the repetitions change."""
    data = json.load(open(FIXTURE))
    rows = [r for r in data["rows"] if r["scenario"] == "sync-step" and r["status"] == "ok"]
    best = min(rows, key=lambda r: r["summary"]["nsPerElement"]["median"])
    runner = min((r for r in rows if r is not best), key=lambda r: r["summary"]["nsPerElement"]["median"])
    base = best["repetitions"][0]

    def rounds(row, factors):
        row["repetitions"] = [dict(base, elapsedNanoseconds=int(base["elapsedNanoseconds"] * f)) for f in factors]

    path = tmp_path / "rounds.json"
    for r in rows:  # every other design far behind, in every round
        rounds(r, [3.0, 3.1, 2.9, 3.05])
    rounds(best, [1.0, 1.02, 0.98, 1.01])
    rounds(runner, [1.30, 1.33, 1.28, 1.31])  # 30% slower round by round: separated
    path.write_text(json.dumps(data))
    first = report.verdict(load([str(path)]))[0]
    assert first.startswith(f"**Synchronous `.more` (one thread): `{best['design']}`** — "), first
    assert "separate" not in first, first
    rounds(runner, [1.01, 1.10, 1.04, 1.00])  # within the rounds' noise, not within ±10%: not decided
    path.write_text(json.dumps(data))
    first = report.verdict(load([str(path)]))[0]
    assert first.startswith(f"**Synchronous `.more` (one thread): not decided** — by median `{best['design']}`, ")
    assert f"neither separate it from `{runner['design']}` (" in first, first
    assert " more" not in first.split("neither separate")[1]


def _measure(row, ns, summary=True):
    """`row`'s repetitions, one per round, at these ns/element (its allocations kept); with
    `summary`, its summary's ns/element from them as the tool writes it (the lower median, the
    range standing in for the interval)."""
    base = row["repetitions"][0]
    row["repetitions"] = [dict(base, elapsedNanoseconds=int(v * base["elements"])) for v in ns]
    if summary:
        row["summary"]["nsPerElement"] = {"median": sorted(ns)[(len(ns) - 1) // 2], "ciLow": min(ns), "ciHigh": max(ns)}


def _write(tmp_path, data, name="run.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return load([str(path)])


def test_the_contention_verdict_never_cites_an_oversubscribed_row(tmp_path):
    """Oversubscribed rows are shown and never decided: the verdict takes each contended scenario
    at its largest thread count within the cores (here ×2), even where the best median of all is
    at ×4 and belongs to another design."""
    data = json.load(open(FIXTURE))
    for r in data["rows"]:
        if r["scenario"] in ("stale-storm", "fan-out") and r["status"] == "ok" and r["threads"] > 1:
            fast = r["design"] == ("seed" if r["threads"] == 4 else "actor")
            _measure(r, [v * (10 if fast else 100) for v in (1.0, 1.02, 0.98, 1.01, 0.99)])
            r["oversubscribed"] = True if r["threads"] == 4 else None
    results = _write(tmp_path, data)
    line = next(l for l in report.verdict(results) if l.startswith("**Under contention"))
    assert line.startswith("**Under contention: `actor`** — "), line
    assert "stale-storm ×2: `actor`" in line and "fan-out ×2: `actor`" in line, line
    assert "×4:" not in line.split(".")[0] and "`seed`" not in line, line
    assert "×4: oversubscribed, shown in the table and not decided" in line
    table = "\n".join(report.relative_table(results))
    over = [l for l in table.splitlines() if "(oversubscribed)" in l]
    assert over and not any("★" in l for l in over), table


def _reversed_pair(tmp_path):
    """The fixture with, in the tool's per-element scenario, `atomic` lowest by median but `mutex`
    faster round by round (a bimodal timing: in five of eleven rounds atomic is 20 times slower);
    the results and that scenario."""
    scenario = tool.catalog()["perElementScenario"]
    data = json.load(open(FIXTURE))
    rows = {r["design"]: r for r in data["rows"] if r["scenario"] == scenario and r["status"] == "ok"}
    for design, row in rows.items():
        _measure(row, [100.0] * 11)
    _measure(rows["atomic"], [1.0] * 6 + [20.0] * 5)
    _measure(rows["mutex"], [1.02] * 6 + [2.0] * 5)
    return _write(tmp_path, data), scenario


def test_rounds_that_reverse_the_medians_leave_one_consistent_statement(tmp_path):
    """`atomic` has the lowest median, but round by round `mutex` is faster (`_reversed_pair`): the
    tool marks the pair reversed, so the verdict names no winner and says why, instead of naming
    atomic and then calling mutex faster."""
    results, scenario = _reversed_pair(tmp_path)
    pair = next(p for p in results.rankings[(scenario, 1, "ns_per_element", "all")]["pairs"]
                if {p["faster"], p["slower"]} == {"atomic", "mutex"})
    assert pair["faster"] == "atomic" and pair["reversed"], pair  # the premise: the tool's rounds reverse it
    first = report.verdict(results)[0]
    assert first.startswith("**Synchronous `.more` (one thread): not decided** — by median `atomic`, "), first
    assert "round by round `mutex` (" in first and "is faster" in first, first
    assert not re.search(r"^\*\*[^*]*: `", first), first  # no design in the headline


def test_a_row_below_its_floor_is_marked_and_given_its_cause(tmp_path):
    """sync-step's floor (floor-sync) runs at 90 ns/element; `atomic` is made to run at half that,
    counting fewer voluntary switches than the floor (the cause, named with both counts), and
    `mutex` below it too with no count that differs (unexplained, so not decided). Both are
    marked † in the table with a note under it, and the verdict that names atomic says why."""
    data = json.load(open(FIXTURE))
    floor = next(r for r in data["rows"] if r["scenario"] == "floor-sync")
    floor_ns = floor["summary"]["nsPerElement"]["median"]
    floor["summary"]["counts"] = {"voluntary_switches_per_element": 1.6}
    rows = {r["design"]: r for r in data["rows"] if r["scenario"] == "sync-step" and r["status"] == "ok"}
    for design, row in rows.items():
        _measure(row, [floor_ns * 3 * f for f in (1.0, 1.01, 0.99, 1.02, 0.98)])
        row["summary"]["ratioToFloor"] = 3.0
    for design, factor, counts in (("atomic", 0.5, 1.3), ("mutex", 0.7, 1.6)):
        _measure(rows[design], [floor_ns * factor * f for f in (1.0, 1.01, 0.99, 1.02, 0.98)])
        rows[design]["summary"]["ratioToFloor"] = factor
        rows[design]["summary"]["counts"] = {"voluntary_switches_per_element": counts}
    out = tmp_path / "report"
    path = tmp_path / "floor.json"
    path.write_text(json.dumps(data))
    assert report.main([str(path), "--out", str(out)]) == 0
    text = (out / "REPORT.md").read_text()
    table = text.split("## Speed relative")[1].split("\n## ")[0]
    row = next(l for l in table.split("Over its own floor's median:")[1].splitlines() if l.startswith("| sync-step |"))
    assert row.count("†") == 2 and "| 0.50× † |" in row and "| 0.70× † |" in row, row
    assert "- sync-step ×1 `atomic`: 0.50× its floor, which counted more voluntary switches (1.6 vs 1.3) than this " \
           "row: no lower bound for it." in table, table
    assert "- sync-step ×1 `mutex`: 0.70× its floor, unexplained: the counts show no cause and the interval lies " \
           "below the floor's" in table and "not decided" in table, table
    first = text.split("## Verdict")[1].splitlines()[2]
    assert first.startswith("1. **Synchronous `.more` (one thread): `atomic`** — "), first
    assert "(0.50× its floor, which counted more voluntary switches (1.6 vs 1.3) than this row" in first, first


def test_a_best_below_its_floor_that_nothing_explains_is_not_named(tmp_path):
    """The same run as above but `atomic` below its floor with the floor's own counts: nothing
    measured explains a time below doing nothing, so the verdict names no winner and says why
    (the rounds alone would have decided `atomic`)."""
    data = json.load(open(FIXTURE))
    floor = next(r for r in data["rows"] if r["scenario"] == "floor-sync")
    floor_ns = floor["summary"]["nsPerElement"]["median"]
    floor["summary"]["counts"] = {"voluntary_switches_per_element": 1.6}
    for row in (r for r in data["rows"] if r["scenario"] == "sync-step" and r["status"] == "ok"):
        _measure(row, [floor_ns * 3 * f for f in (1.0, 1.01, 0.99, 1.02, 0.98)])
        row["summary"]["ratioToFloor"] = 3.0
    atomic = next(r for r in data["rows"] if r["scenario"] == "sync-step" and r["design"] == "atomic")
    _measure(atomic, [floor_ns * 0.5 * f for f in (1.0, 1.01, 0.99, 1.02, 0.98)])
    atomic["summary"]["ratioToFloor"] = 0.5
    atomic["summary"]["counts"] = {"voluntary_switches_per_element": 1.6}
    path = tmp_path / "floor.json"
    path.write_text(json.dumps(data))
    assert report.main([str(path), "--out", str(tmp_path / "report")]) == 0
    first = (tmp_path / "report" / "REPORT.md").read_text().split("## Verdict")[1].splitlines()[2]
    assert first.startswith("1. **Synchronous `.more` (one thread): not decided** — by median `atomic`"), first
    assert "its time lies below its own floor's and nothing measured explains it" in first, first


def test_the_first_screen_answers_which_design_what_its_cost_is_and_whether_anything_got_slower(tmp_path):
    """The report's first 40 lines: the verdict (decided rows only), what each winner's cost is
    made of, and whether this run made anything slower, against the previous run of its folder
    when no baseline is given (here a row that verified there and fails here: the tool's
    `failed`, a regression). A run with no earlier one says there is nothing to compare."""
    data = json.load(open(FIXTURE))
    folder = tmp_path / "runs"
    folder.mkdir()
    older = copy.deepcopy(data)
    older["createdAt"] = "2026-11-21T10:00:00Z"
    (folder / "2026-11-21T100000Z.json").write_text(json.dumps(older))
    (folder / "2026-11-20T100000Z.json").write_text(json.dumps(dict(older, createdAt="2026-11-20T10:00:00Z")))
    newer = copy.deepcopy(data)
    row = next(r for r in newer["rows"] if (r["scenario"], r["design"], r["threads"]) == ("fan-out", "locked", 2))
    row.update(status="failed", failure="verification failed: 3 elements missing")
    (folder / "2026-11-22T202116Z.json").write_text(json.dumps(newer))
    out = tmp_path / "report"
    assert report.main([str(folder / "2026-11-22T202116Z.json"), "--out", str(out)]) == 0
    first = (out / "REPORT.md").read_text().splitlines()[:40]
    text = "\n".join(first)
    assert "## Verdict" in text and "## What the winners' cost is made of" in text, text
    assert "## Did anything get slower?" in text, text
    assert "**1 row slower** against the previous run, " in text and "2026-11-21T100000Z.json" in text, text
    assert "- slower: fan-out `locked` ×2 " in text, text
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "2026-11-22T202116Z.json").write_text(json.dumps(data))
    assert report.main([str(alone / "2026-11-22T202116Z.json"), "--out", str(tmp_path / "r2")]) == 0
    first = "\n".join((tmp_path / "r2" / "REPORT.md").read_text().splitlines()[:40])
    assert "No baseline given and no earlier run in this run's folder: nothing to compare it with" in first, first


def test_a_reversed_pair_is_called_for_the_rounds_not_a_tie(tmp_path):
    """The figures' round-by-round claim on the same reversed pair as above: `mutex` is faster
    round by round though `atomic`'s median is lower, so the claim names mutex faster, never a tie."""
    from scripts.stepbench_report import figures
    results, scenario = _reversed_pair(tmp_path)
    m = next(m for m in figures.measures(results) if m.metric == "ns_per_element")
    said = figures._round_by_round(results, m, [d for d in results.designs() if d not in figures.peers(results)])
    assert said.startswith(f"{scenario} ×1 ns/element: `mutex` is faster than `atomic` ("), said


def test_each_path_runtime_calls_are_tabled_at_their_callers_and_the_whole_profile_names_functions(tmp_path):
    profile = json.load(open(os.path.join(os.path.dirname(__file__), "fixtures", "profile.json")))
    whole = {"functions": [{"key": "swift_retain", "exclusivePerEvent": 40.0, "inclusivePerEvent": 40.0},
                           {"key": "LockedSteppingSubscriber.receive(_:)", "exclusivePerEvent": 96.0,
                            "inclusivePerEvent": 300.0}],
             "edges": [], "unattributedPerEvent": 0.0,
             "runtimeCalls": [{"kind": "retain", "callee": "swift_retain", "caller": "LockedSteppingSubscriber.receive(_:)",
                               "callsPerEvent": 3.0},
                              {"kind": "retain", "callee": "swift_retain", "caller": "CountingUpstream.Conduit.request(_:)",
                               "callsPerEvent": 4.0},
                              {"kind": "lock", "callee": "pthread_mutex_lock", "caller": "NSLock.lock()",
                               "callsPerEvent": 3.0}]}
    profile["paths"] = [{"path": "sync-more", "design": "locked", "eventsLow": 200, "eventsHigh": 600,
                         "instructionsPerEvent": 1169.0, "synchronisingPerEvent": 21.0, "allocationsPerEvent": 0.0,
                         "topFunctions": [], "synchronisingFunctions": [], "exact": True, "callProfile": whole},
                        {"path": "sync-more", "design": "floor", "eventsLow": 200, "eventsHigh": 600,
                         "instructionsPerEvent": 283.0, "synchronisingPerEvent": 0.0, "allocationsPerEvent": 0.0,
                         "topFunctions": [], "synchronisingFunctions": [], "exact": True,
                         "callProfile": dict(whole, runtimeCalls=[])}]
    for p in profile["profiles"]:
        p["callProfile"] = whole
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(profile))
    out = tmp_path / "report"
    assert report.main([FIXTURE, str(path), "--out", str(out)]) == 0
    text = (out / "REPORT.md").read_text()
    assert "### The runtime's calls on every path, and who makes them" in text
    row = next(line for line in text.splitlines() if line.startswith("| sync-more | `locked` |"))
    assert ("retain 7.00 (`CountingUpstream.Conduit.request(_:)` 4.00, `LockedSteppingSubscriber.receive(_:)` 3.00); "
            "lock 3.00 (`NSLock.lock()` 3.00)") in row, row
    assert not any(line.startswith("| sync-more | `floor` |") for line in text.splitlines())  # makes no runtime call
    # the per-element breakdown reads the whole profile: keys, and inclusive beside exclusive
    assert "| 96.0 | 300.0 | `LockedSteppingSubscriber.receive(_:)` |" in text


def test_a_kept_mutant_is_tabled_by_the_function_charged_first_and_its_flame_graph_shown(tmp_path):
    """scripts/mutants --keep leaves mutants/NAME.compare.json and mutants/NAME/flame-*.svg beside the
    results: the report tables each moved row's first charged function and shows the graph of the
    row that moved most."""
    folder = tmp_path / "machine"
    (folder / "mutants" / "mutex-retain").mkdir(parents=True)
    shutil.copyfile(FIXTURE, folder / "latest.json")
    attribution = {"target": "sync-more", "design": "mutex", "baseline": 976, "current": 1020,
                   "functions": [{"key": "MutexSteppingSubscriber.receive(_:)", "exclusive": 4, "inclusive": 44,
                                  "charged": 44, "share": 1.0, "cause": "its calls changed"}],
                   "remainder": 0, "edges": [], "runtimeCalls": [], "change": "code changed",
                   "codeChanged": ["MutexSteppingSubscriber.receive(_:)"]}
    smaller = dict(attribution, target="deferred-more", baseline=1000, current=1010, change=None, codeChanged=None)
    # a helper inlined into its callers is named with how many it was inlined into
    inlined = dict(attribution, target="stale-promise", baseline=100, current=101, change=None, codeChanged=None,
                   functions=[dict(attribution["functions"][0], key="MutexSteppingSubscriber.locked(_:)",
                                   inlinedInto=["MutexSteppingSubscriber.receive(_:)", "MutexSteppingSubscriber.cancel()"])])
    (folder / "mutants" / "mutex-retain.compare.json").write_text(
        json.dumps({"attributions": [smaller, attribution, inlined]}))
    (folder / "mutants" / "mutex-retain" / "flame-sync-more_mutex.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    out = tmp_path / "report"
    assert report.main([str(folder / "latest.json"), "--out", str(out)]) == 0
    text = (out / "REPORT.md").read_text()
    assert "### Where a planted regression went" in text
    assert ("| `mutex-retain` | sync-more `mutex` | 976 → 1020 | `MutexSteppingSubscriber.receive(_:)` | 100% | "
            "its calls changed | code of `MutexSteppingSubscriber.receive(_:)` |") in text
    assert "| deferred-more `mutex` | 1000 → 1010 | `MutexSteppingSubscriber.receive(_:)` | 100% | its calls changed | — |" in text
    assert ("| stale-promise `mutex` | 100 → 101 | `MutexSteppingSubscriber.locked(_:)` (inlined into 2 functions) | "
            "100% |") in text
    assert "![mutex-retain: sync-more mutex](mutant-mutex-retain-flame-sync-more_mutex.svg)" in text
    assert (out / "mutant-mutex-retain-flame-sync-more_mutex.svg").exists()
    # without a kept mutant, no section
    shutil.rmtree(folder / "mutants")
    assert report.main([str(folder / "latest.json"), "--out", str(tmp_path / "plain")]) == 0
    assert "planted regression" not in (tmp_path / "plain" / "REPORT.md").read_text()


def test_the_instruction_chart_shows_the_floors_it_draws(monkeypatch):
    """On a log axis (the peers dwarf the designs) the floor lines lie inside the axis: floor-sync's
    530 instructions sat below it, drawn in the legend only."""
    from scripts.stepbench_report import charts
    root = os.path.join(os.path.dirname(__file__), "..", "..", "results", "intel-r-xeon-r-processor-2-80ghz-2c")
    results = load([os.path.join(root, "latest.json"), os.path.join(root, "profile-latest.json")])
    drawn = {}
    monkeypatch.setattr(charts, "_save", lambda fig, path: drawn.setdefault("axes", fig.axes[0]))
    charts.instruction_bars(results, "unused.svg")
    ax = drawn["axes"]
    assert ax.get_yscale() == "log"
    low, high = ax.get_ylim()
    floors = [line.get_ydata()[0] for line in ax.get_lines() if line.get_gid() in ("series-floor", "series-api-floor")]
    assert len(floors) == 2
    assert all(low < y < high for y in floors), (low, high, floors)


def counting_tool(tmp_path):
    """A stepbench that writes each call's arguments to a log, then runs the real one."""
    log = tmp_path / "calls.log"
    wrapper = tmp_path / "stepbench-counting"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{tool.binary()}" "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper), log


def test_the_report_asks_the_tool_once(tmp_path):
    """Everything a report draws (the files, the tool's catalog, the comparison with the previous
    run, the conformance verdict, the folder's history) comes from one call of the tool; the
    report opens no results file itself."""
    data = json.load(open(FIXTURE))
    folder = tmp_path / "runs"
    folder.mkdir()
    for day in (20, 21):
        older = dict(copy.deepcopy(data), createdAt=f"2026-11-{day}T10:00:00Z")
        (folder / f"2026-11-{day}T100000Z.json").write_text(json.dumps(older))
    newer = folder / "2026-11-22T202116Z.json"
    newer.write_text(json.dumps(data))
    verdict = {"schema": "stepbench-conformance/2", "designs": ["atomic"], "conforms": True, "measured": [],
               "rules": [{"id": "D1", "summary": "one request", "cells": [{
                   "design": "atomic", "verdict": "passed", "kind": "required", "conforms": True, "failures": [],
                   "checks": []}]}]}
    (folder / "conformance.json").write_text(json.dumps(verdict))
    wrapper, log = counting_tool(tmp_path)
    out = tmp_path / "report"
    assert report.main([str(newer), "--out", str(out), "--stepbench", wrapper]) == 0
    calls = log.read_text().splitlines()
    assert len(calls) == 1 and calls[0].startswith("show report "), calls
    text = (out / "REPORT.md").read_text()
    assert "against the previous run, " in text and "2026-11-21T100000Z.json" in text
    assert "| D1 | ok |" in text.split("## Conformance")[1]
    assert "Every run and profile in" in text.split("## History")[1], text.split("## History")[1][:500]


def test_the_previous_run_is_the_newest_clean_ancestor_of_the_same_settings(tmp_path):
    """`stepbench show report`'s choice of the run a report compares with: the runs before this one
    with its settings, the newest made on a clean tree at an ancestor of its commit (with its
    profile), else the newest of them."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    commits = []
    for i in range(2):
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", f"c{i}"], check=True)
        commits.append(subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip())
    data = json.load(open(FIXTURE))
    folder = tmp_path / "runs"
    folder.mkdir()

    def write(name, created, commit, dirty=False, preset=None):
        d = copy.deepcopy(data)
        d["createdAt"] = created
        d["machine"].update(gitCommit=commit, gitDirty=dirty)
        if preset:
            d["configuration"]["preset"] = preset
        (folder / name).write_text(json.dumps(d))
        return str(folder / name)

    head = write("2026-11-22T100000Z.json", "2026-11-22T10:00:00Z", commits[1])
    ancestor = write("2026-11-20T100000Z.json", "2026-11-20T10:00:00Z", commits[0])
    shutil.copy(os.path.join(os.path.dirname(FIXTURE), "profile.json"), folder / "profile-2026-11-20T100000Z.json")
    write("2026-11-21T010000Z.json", "2026-11-21T01:00:00Z", "d" * 40)  # newer, a commit git does not know
    dirty = write("2026-11-21T050000Z.json", "2026-11-21T05:00:00Z", commits[0], dirty=True)  # newer, dirty
    write("2026-11-21T060000Z.json", "2026-11-21T06:00:00Z", commits[0], preset="full")  # other settings
    write("2026-11-23T100000Z.json", "2026-11-23T10:00:00Z", commits[0])  # made after this run

    def against():
        done = subprocess.run([tool.binary(), "show", "report", head, "--repository", str(repo)],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        return answer.get("against"), answer.get("againstPrevious")

    assert against() == ([ancestor, str(folder / "profile-2026-11-20T100000Z.json")], True)
    os.remove(ancestor)
    assert against() == ([dirty], True)
