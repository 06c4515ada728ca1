"""scripts/report: REPORT.md and SVG charts from results and profile files.

Usage: scripts/report [--out DIR] [--baseline FILE] [--stepbench PATH] RESULTS.json [MORE.json ...]
Writes DIR (default results/<machine-id>/report/) atomically: into a temporary folder first,
renamed into place only when everything was written. Bad input writes nothing.
"""
import argparse
import os
import shutil
import sys
import tempfile

from . import charts, history, tool
from .results import ResultsError, load

def _fmt_ns(v):
    return f"{v:,.0f} ns" if v >= 100 else f"{v:.1f} ns"


def _best(results, scenario, threads, key="nsPerElement"):
    if scenario is None:  # a question the tool names no scenario for
        return None
    rows = [r for r in results.ok_rows(scenario) if r["threads"] == threads]
    rows = [r for r in rows if r["summary"].get(key)]
    return min(rows, key=lambda r: r["summary"][key]["median"]) if rows else None


_RANKED = {"nsPerElement": "ns_per_element", "latencyP50": "latency_p50"}


def _tie(results, scenario, threads, best, key="nsPerElement", among=None):
    """' — a tie with …' naming the designs (of `among`, by default every row of the scenario:
    designs and peers alike) the tool's round-by-round comparison does not separate from the
    best (`stepbench rank`: the 95% interval of their ratio reaches 1), with the interval; ''
    when it separates the best from all of them."""
    ranking = results.rankings.get((scenario, threads, _RANKED[key]))
    if not ranking:
        return ""
    names = {r["design"] for r in among} if among is not None else None
    ties, ahead = [], []
    for p in ranking["pairs"]:
        other = p["slower"] if p["faster"] == best["design"] else p["faster"] if p["slower"] == best["design"] else None
        if other is None or p["separated"] or (names is not None and other not in names):
            continue
        text = (f"`{other}` ({p['ratio']:.2f}× [{p['ciLow']:.2f}–{p['ciHigh']:.2f}])" if p.get("ratio")
                else f"`{other}` ({p['rounds']} rounds: too few to tell)")
        (ahead if p.get("reversed") and p["faster"] == best["design"] else ties).append(text)
    out = ""
    if ties:
        shown = ties[:3] + ([f"{len(ties) - 3} more"] if len(ties) > 3 else [])
        out += (" — a tie with " + ", ".join(shown) + ": the run's rounds do not separate them "
                "(their time over the best's, round by round, 95% interval)")
    if ahead:
        out += (" — but round by round " + ", ".join(ahead) + (" is" if len(ahead) == 1 else " are")
                + " faster (the interval of its time over the best's lies below 1: a bimodal timing puts the medians "
                "and the rounds at odds)")
    return out


def verdict(results):
    """Three lines: which design for which load, and why (from the numbers). Which scenario
    answers which question is the tool's (its catalog's roles)."""
    lines = []
    per_element, cross_thread = results.role("perElementScenario"), results.role("crossThreadScenario")
    best = _best(results, per_element, 1)
    if best:
        s = best["summary"]
        line = f"**Synchronous `.more` (one thread): `{best['design']}`** — {_fmt_ns(s['nsPerElement']['median'])}/element"
        if s.get("ratioToSeed"):
            line += f", {1 / s['ratioToSeed']:.1f}× faster than `{results.role('referenceDesign')}`"
        if s.get("ratioToFloor"):
            line += f", {s['ratioToFloor']:.1f}× its floor (the same upstream into a plain subscriber)"
        lines.append(line + f", {s['allocationsPerElement']['median']:.2f} allocations/element"
                     + _tie(results, per_element, 1, best) + ".")
    best = _best(results, cross_thread, 2, "latencyP50")
    if best:
        s = best["summary"]
        extra = f" ({s['latencyP50RatioToFloor']:.2f}× its own floor, the same hand-offs without a stepping subscriber)" if s.get("latencyP50RatioToFloor") else ""
        lines.append(f"**Promise fulfilled on another thread: `{best['design']}`** — p50 {_fmt_ns(s['latencyP50']['median'])} "
                     f"from `.more` to the next input{extra}, p99 {_fmt_ns(s['latencyP99']['median'])}"
                     + _tie(results, cross_thread, 2, best, "latencyP50") + ".")
    contention = []
    for scenario in results.role("contendedScenarios") or []:
        threads = max((r["threads"] for r in results.ok_rows(scenario)), default=None)
        if threads:
            b = _best(results, scenario, threads)
            contention.append((scenario, threads, b))
    if contention:
        names = {b["design"] for _, _, b in contention if b}
        parts = ", ".join(f"{sc} ×{t}: `{b['design']}` {_fmt_ns(b['summary']['nsPerElement']['median'])}/element"
                          + _tie(results, sc, t, b) for sc, t, b in contention if b)
        who = f"`{names.pop()}`" if len(names) == 1 else "it depends"
        lines.append(f"**Under contention: {who}** — {parts}.")
    parked = (results.catalog or {}).get("asynchronousVerdictScenario")
    rows = [r for d in results.asynchronous_designs() for r in results.ok_rows(parked) if r["design"] == d] if parked else []
    rows = [r for r in rows if r["summary"].get("latencyP50")]
    if rows:
        floor = results.floor_of(parked)
        floor_row = next(iter(results.ok_rows(floor)), None) if floor else None
        best = min(rows, key=lambda r: r["summary"]["latencyP50"]["median"])
        s = best["summary"]
        extra = f" ({s['latencyP50RatioToFloor']:.2f}× its floor, which parks alike)" if s.get("latencyP50RatioToFloor") else ""
        wakes = ", ".join(f"`{r['design']}` {r['summary']['counts'][m]:.2f} {m.replace('_per_element', '').replace('_', ' ')}"
                          for r in rows for m in (results.catalog or {}).get("countMetrics", [])
                          if (r["summary"].get("counts") or {}).get(m, 0) >= 0.05 and "switches" not in m)
        lines.append(f"**Delivered on their own executor, promise fulfilled on another thread ({parked}, hand-offs that park): "
                     f"`{best['design']}`** — p50 {_fmt_ns(s['latencyP50']['median'])}{extra}"
                     + _tie(results, parked, best["threads"], best, "latencyP50", among=rows)
                     + (f"; per element: {wakes}" if wakes else "") + "."
                     + (f" The floor's p50 is {_fmt_ns(floor_row['summary']['latencyP50']['median'])}." if floor_row and floor_row['summary'].get('latencyP50') else ""))
    asynchronous = [(d, results.row(per_element, d, 1)) for d in results.asynchronous_designs()]
    asynchronous = [(d, r) for d, r in asynchronous if r]
    first = _best(results, per_element, 1)
    if asynchronous and first and len(lines) < 3:
        parts = ", ".join(f"`{d}` {_fmt_ns(r['summary']['nsPerElement']['median'])} "
                          f"({r['summary']['nsPerElement']['median'] / first['summary']['nsPerElement']['median']:.1f}× "
                          f"`{first['design']}`, {r['summary']['allocationsPerElement']['median']:.2f} allocations)"
                          for d, r in asynchronous)
        lines.append(f"**Delivered on their own executor** ({per_element}, per element): {parts}.")
    return lines[:4]


def counts_table(results):
    """Per element, what explains a timing: each row's counts (the tool's summary), in the
    catalog's order of count metrics; only the columns some row has."""
    metrics = [m for m in (results.catalog or {}).get("countMetrics", [])
               if any((r["summary"].get("counts") or {}).get(m) for r in results.ok_rows())]
    if not metrics:
        return ["No counts in these results (a run with `--counting-build` adds the contention counters)."]
    out = ["| scenario | threads | design | " + " | ".join(m.replace("_per_element", "").replace("_", " ") for m in metrics) + " |",
           "|---|---|---|" + "---|" * len(metrics)]
    for scenario in results.scenarios():
        for r in sorted(results.ok_rows(scenario), key=lambda r: r["threads"]):
            counts = r["summary"].get("counts") or {}
            if not any(counts.get(m) for m in metrics):
                continue
            cells = [f"{counts[m]:.3g}" if m in counts else "–" for m in metrics]
            threads = f"{r['threads']} (oversubscribed)" if r.get("oversubscribed") else str(r["threads"])
            out.append(f"| {scenario} | {threads} | `{r['design']}` | " + " | ".join(cells) + " |")
    return out


def relative_table(results):
    designs = results.designs()
    out = ["| scenario | threads | " + " | ".join(f"`{d}`" for d in designs) + " |",
           "|---|---|" + "---|" * len(designs)]
    for scenario in results.scenarios():
        if results.is_floor(scenario):
            continue
        for threads in sorted({r["threads"] for r in results.ok_rows(scenario)}):
            cells, best = [], _best(results, scenario, threads)
            for d in designs:
                row = results.row(scenario, d, threads)
                if not row:
                    failed = [r for r in results.rows if r["scenario"] == scenario and r["design"] == d
                              and r["threads"] == threads and r["status"] != "ok"]
                    cells.append(failed[0]["status"].upper() if failed else "–")
                    continue
                s = row["summary"]
                text = f"{_fmt_ns(s['nsPerElement']['median'])}"
                if s.get("ratioToSeed") is not None:
                    text += f" · {s['ratioToSeed']:.2f}× {results.role('referenceDesign')}"
                if s.get("ratioToFloor") is not None:
                    text += f" · {s['ratioToFloor']:.1f}× floor"
                cells.append(f"**{text}** ★" if best and row is best else text)
            over = any(r.get("oversubscribed") for r in results.ok_rows(scenario) if r["threads"] == threads)
            out.append(f"| {scenario} | {threads}{' (oversubscribed)' if over else ''} | " + " | ".join(cells) + " |")
    return out


def regression_section(args, results):
    if not args.baseline:
        return ["No baseline given (`scripts/report --baseline OLD.json NEW.json` adds the regression table)."]
    try:  # exit 2: the comparison found a regression, which the table shows
        return [tool.text("compare", "--format", "markdown", args.baseline, results.paths[-1], statuses=(0, 2)).strip()]
    except tool.ToolError as e:
        raise ResultsError(f"stepbench compare failed: {e}")


def _method(folder, section, text):
    """Where docs/METHOD.md explains it (the method is written there once, the report only says
    where): a link to the section's heading from a report inside this checkout; from one outside
    it (a link would point into this machine's checkout), the section named."""
    root = os.path.abspath(tool.ROOT)
    if os.path.commonpath([os.path.abspath(folder), root]) != root:
        return f'{text}: StepBench\'s docs/METHOD.md, "{section}"'
    path = os.path.relpath(os.path.join(root, "docs", "METHOD.md"), folder)
    anchor = "".join(c for c in section.lower().replace(" ", "-") if c.isalnum() or c == "-")
    return f"[{text}]({path}#{anchor})"


def build(args, results, folder):
    charts.use_design_order(results.designs())  # every chart colours a design alike
    m = results.machine
    made_by = ", ".join(os.path.relpath(p) for p in results.paths)
    md = [f"# StepBench report — {m.get('cpuModel')} ({m.get('cores')} cores)", "",
          f"Produced by `scripts/report` from {made_by}: measured at commit `{m.get('gitCommit', '?')[:10]}`"
          f"{' (dirty)' if m.get('gitDirty') else ''}, {m.get('buildConfiguration')} build, {m.get('swiftVersion')}, "
          f"{m.get('kernel')}, allocator {m.get('allocator')}; created {results.created_at}; "
          f"preset {results.configuration.get('preset')}, {results.configuration.get('repetitions')} repetitions in shuffled rounds (order seed {results.configuration.get('orderSeed', '–')}); "
          f"hand-off {results.configuration.get('handoff')}.", "", "## Verdict", ""]
    md += [f"{i + 1}. {line}" for i, line in enumerate(verdict(results))]
    per_round = ", ".join(x for x in results.scenarios() if results.unit(x) != "element" and not results.is_floor(x))
    md += ["", f"## Speed relative to `{results.role('referenceDesign')}` and to the floor", "",
           f"Median ns/element{f' ({per_round}: per round)' if per_round else ''}; ★ = fastest in the row; ×floor: over the "
           f"scenario's own floor ({_method(folder, 'How it measures', 'a floor of its shape')}).", ""]
    md += relative_table(results)
    md += ["", "Oversubscribed: more threads than cores, shown and never decided "
           f"({_method(folder, 'Reading a verdict', 'reading a verdict')}).",
           "", "## What contention did, per element", "",
           "Per element: the scenario's own side count, context switches, and what a counting build of the designs "
           f"counts ({_method(folder, 'How it measures', 'contention counts')}).", ""]
    md += counts_table(results)
    md += ["", "## Throughput vs threads", ""]
    for scenario in results.scenarios():
        if results.is_floor(scenario) or not results.ok_rows(scenario):
            continue
        name = f"throughput-{scenario}.svg"
        charts.throughput_vs_threads(results, scenario, os.path.join(folder, name))
        md += [f"![{scenario} throughput]({name})", ""]
    md += ["## Latency", ""]
    for scenario in [x for x in results.scenarios() if not results.is_floor(x)]:
        if not any(r["summary"].get("latencyP50") for r in results.ok_rows(scenario)):
            continue
        if results.ok_rows(scenario):
            name = f"latency-{scenario}.svg"
            charts.latency_distribution(results, scenario, os.path.join(folder, name))
            md += [f"![{scenario} latency]({name})", ""]
    md += ["## Allocations and instructions per element", ""]
    per_element = results.role("perElementScenario")
    if results.ok_rows(per_element):
        charts.per_element_bars(results, per_element, "allocationsPerElement",
                                f"{per_element}: heap allocations per element (exact, jemalloc)",
                                "allocations / element", os.path.join(folder, "allocations.svg"))
        md += ["![allocations per element](allocations.svg)", ""]
    if any(p["scenario"] == per_element for p in results.profiles):
        charts.instruction_bars(results, os.path.join(folder, "instructions.svg"))
        md += ["![instructions per element](instructions.svg)", ""]
        top = [p for p in results.profiles if p["scenario"] == per_element] + \
            [p for p in results.profiles if results.is_floor(p["scenario"])]
        md += instruction_breakdown(results, top)
    else:
        md += ["Instructions per element: not in these results (pass a `stepbench profile` file too).", ""]
    md += path_section(results, folder)
    md += split_section(results, folder)
    md += ["## Repetitions and the scheduler", "",
           "One point per repetition (ns/element, log scale); hollow: preempted or migrated "
           f"({_method(folder, 'How it measures', 'the scheduler, per repetition')}).", ""]
    for scenario in results.scenarios():
        if results.is_floor(scenario) or not results.ok_rows(scenario):
            continue
        threads = min(r["threads"] for r in results.ok_rows(scenario))
        name = f"repetitions-{scenario}.svg"
        charts.repetition_strips(results, scenario, threads, os.path.join(folder, name))
        md += [f"![{scenario} repetitions]({name})", ""]
    warnings = results.harness_warnings
    if warnings:
        md += ["**Harness warnings** (a design faster than its own floor: the harness, not the design):", ""]
        md += [f"- {w}" for w in warnings] + [""]
    md += history_section(results, folder)
    md += conformance_section(results)
    md += ["## Regressions", ""] + regression_section(args, results) + [""]
    excluded = [r for r in results.rows if r["status"] == "excluded"]
    if excluded:
        md += ["## Not run", "", "A scenario that races a rule leaves out a design that declares breaking it fatal "
               "(a crash or a stall measures nothing):", ""] + [
            f"- {r['scenario']} `{r['design']}` ×{r['threads']}: {r.get('failure')}" for r in excluded] + [""]
    failed = [r for r in results.rows if r["status"] not in ("ok", "excluded")]
    if failed:
        md += ["## Failed, crashed or hung", ""] + [
            f"- {r['scenario']} `{r['design']}` ×{r['threads']}: {r['status']}: {r.get('failure')}" for r in failed] + [""]
    with open(os.path.join(folder, "REPORT.md"), "w") as f:
        f.write("\n".join(md))


def conformance_section(results) -> list[str]:
    """The rule × design table `scripts/conformance` wrote beside the results file
    (conformance.md), when there is one: the table itself; its failures stay in the file."""
    path = os.path.join(os.path.dirname(os.path.abspath(results.paths[0])), "conformance.md")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        table = [line.rstrip("\n") for line in f if line.startswith("|")]
    if not table:
        return []
    return ["## Conformance", "",
            "Every rule of docs/CONFORMANCE.md on every design (`scripts/conformance`: ok, known = declared broken "
            "and shown, FAIL, STALE = declared but not shown); the checks' failures are in conformance.md beside "
            "the results file.", ""] + table + [""]


def history_section(results, folder) -> list[str]:
    """Change points over the runs of this machine kind: every results and profile file in the
    folder of the (first) results file, as `scripts/history` finds them, with a trend chart per
    scenario. A folder history cannot read is named in the report; the rest of it still stands."""
    source = os.path.dirname(os.path.abspath(results.paths[0]))
    shown = os.path.relpath(source)
    md = ["## History", ""]
    try:
        h = history.analyse(shown)
    except history.HistoryError as e:
        print(f"scripts/report: no history section: {e}", file=sys.stderr)
        return md + [f"No history: {e}", ""]
    runs = [f for f in h.files if f.kind == "results"]
    if len(runs) < 2 and len([f for f in h.files if f.has_profiles]) < 2:
        return md + [f"Only one run in `{shown}/`: no history yet (each `scripts/bench` adds one).", ""]
    md += [f"Every run and profile in `{shown}/` in commit order, as `scripts/history {shown}/` reads them; a change "
           f"point is the first run of a new regime ({_method(folder, 'History', 'how one is found and accepted')}).", ""]
    md += [history.render(h, "markdown").strip(), ""]
    if charts.history_instructions(h, results, os.path.join(folder, "history-instructions.svg")):
        md += ["![instructions per element over the commits](history-instructions.svg)", ""]
    if len(runs) >= 2:
        for scenario in results.scenarios():
            name = f"history-{scenario}.svg"
            if not results.is_floor(scenario) and charts.history_trend(h, scenario, os.path.join(folder, name)):
                md += [f"![{scenario} over the commits]({name})", ""]
    return md


def path_section(results, folder) -> list[str]:
    """Every path driver's exact counts per event, one table row per path and a column per
    design (the tool's order): instructions, synchronising instructions, allocations. Rows the
    tool marks not exact (a hand-off to a design's own executor) carry a *."""
    if not results.path_rows:
        return ["## Every path, counted exactly", "",
                "Not in these results (pass a `stepbench profile` file made with its paths).", ""]
    subjects = []  # the tool's order: the floors, then the designs
    for p in (results.catalog or {}).get("paths", []):
        subjects += [s for s in p.get("subjects", []) if s not in subjects]
    subjects += [p["design"] for p in results.path_rows if p["design"] not in subjects]
    designs = [d for d in subjects if any(p["design"] == d for p in results.path_rows)]
    order = [p["name"] for p in (results.catalog or {}).get("paths", [])]  # the tool's order
    for p in results.path_rows:
        if p["path"] not in order:
            order.append(p["path"])
    cell = {(p["path"], p["design"]): p for p in results.path_rows}
    md = ["## Every path, counted exactly", "",
          "Per event of each path, by `stepbench profile`: instructions / synchronising instructions / allocations; "
          "* follows the schedule, shown and not gated "
          f"({_method(folder, 'The regression gate and its baseline', 'what is counted and gated')}).", ""]
    md += ["| path | " + " | ".join(f"`{d}`" for d in designs) + " |", "|---|" + "---:|" * len(designs)]
    for path in order:
        cells = []
        for d in designs:
            p = cell.get((path, d))
            if p is None:
                cells.append("–")
                continue
            star = "" if p.get("exact", True) else "*"
            cells.append(f"{p['instructionsPerEvent']:,.0f} / {p['synchronisingPerEvent']:.1f} / "
                         f"{p['allocationsPerEvent']:.2f}{star}")
        md.append(f"| {path} | " + " | ".join(cells) + " |")
    return md + [""]


def split_section(results, folder) -> list[str]:
    """The tool's split of each design's instructions per event over the floor: the stepping
    API's part (the API floor − the floor) and the design's synchronisation (design − the API
    floor). The API floor's name is the catalog's."""
    if not results.cost_splits:
        return []
    api = (results.catalog or {}).get("apiFloorScenario") or "API floor"
    md = ["## What the API costs and what synchronisation costs", "",
          f"Instructions per event: *API* = {api} − floor, *synchronisation* = design − {api}, *sync. instr.* its "
          f"synchronising instructions over {api}'s; * follows the schedule "
          f"({_method(folder, 'What the API costs and what synchronisation costs', 'the split')}).", "",
          f"| path | design | instructions | floor | {api} | API | synchronisation | sync. instr. |",
          "|---|---|---:|---:|---:|---:|---:|---:|"]

    def num(v):
        return "–" if v is None else f"{v:,.0f}"
    for c in results.cost_splits:
        star = "" if c.get("exact", True) else "*"
        sync = c.get("synchronisingOverFloorStep")
        md.append(f"| {c['path']} | `{c['design']}` | {num(c['instructions'])} | {num(c.get('floor'))} | "
                  f"{num(c['floorStep'])} | {num(c.get('api'))} | {num(c['synchronisation'])}{star} | "
                  f"{'–' if sync is None else f'{sync:.1f}'} |")
    return md + [""]


def instruction_breakdown(results, profiles) -> list[str]:
    """Where each design's instructions per element go: exclusive instructions per element by
    function, inside the measured window (stepbench/2 profiles). Older files held inclusive
    counts of the whole process, which say nothing per element: they are named, not tabled."""
    md = [f"### Where the instructions go ({results.role('perElementScenario')}, exclusive instructions per element)", "",
          "Counted in the scenario's measured window, every thread (the asynchronous designs call the stepper on their own "
          "executor's thread); a row that says *whole process* comes from an older profile.", ""]
    for p in profiles:
        functions = [f for f in p.get("topFunctions", []) if f.get("instructionsPerElement") is not None]
        where = " (whole process)" if p.get("collection") == "wholeProcess" else ""
        name = p["scenario"] if results.is_floor(p["scenario"]) else p["design"]  # a floor is its own scenario
        md.append(f"**`{name}`** — {p['instructionsPerElement']:,.0f} instructions/element{where}")
        md.append("")
        if not functions:
            md += ["(this profile predates per-function counts; re-run `stepbench profile`)", ""]
            continue
        md += ["| instructions/element | function |", "|---:|---|"]
        md += [f"| {f['instructionsPerElement']:,.1f} | `{f['function'][:110]}` |" for f in functions[:8]]
        rest = p["instructionsPerElement"] - sum(f["instructionsPerElement"] for f in functions[:8])
        md += [f"| {rest:,.1f} | (all other functions) |", ""]
    return md


def main(argv=None):
    parser = argparse.ArgumentParser(prog="scripts/report", description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="+", help="results and profile files (`stepbench run`, `stepbench profile`)")
    parser.add_argument("--out", help="report folder (default results/<machine-id>/report)")
    parser.add_argument("--baseline", help="results file to compare against (needs `stepbench compare`)")
    parser.add_argument("--stepbench", help="the stepbench binary to ask (default: $STEPBENCH_BIN, else this checkout's build)")
    args = parser.parse_args(argv)
    with tool.using(args.stepbench):
        return _write(args)


def _write(args):
    try:
        tool.binary()  # the tool says what the numbers mean: no report without it
        results = load(args.results)
        out = os.path.abspath(args.out or os.path.join("results", results.machine_id, "report"))
        parent = os.path.dirname(out)
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".report-", dir=parent)
        try:
            build(args, results, staging)
            old = None
            if os.path.exists(out):
                old = tempfile.mkdtemp(prefix=".report-old-", dir=parent)
                os.rename(out, os.path.join(old, "report"))
            os.rename(staging, out)
            if old:
                shutil.rmtree(old)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    except (ResultsError, tool.ToolError) as e:
        print(f"scripts/report: {e}", file=sys.stderr)
        return 1
    print(f"report written to {os.path.relpath(out)}/REPORT.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
