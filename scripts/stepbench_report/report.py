"""scripts/report: REPORT.md and SVG charts from results and profile files.

Usage: scripts/report [--out DIR] [--baseline FILE] [--stepbench PATH] RESULTS.json [MORE.json ...]
Writes DIR (default results/<machine-id>/report/) atomically: into a temporary folder first,
renamed into place only when everything was written. Bad input writes nothing.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field

from . import charts, figures, history, tool
from .results import ResultsError, load_report

def _fmt_ns(v):
    return f"{v:,.0f} ns" if v >= 100 else f"{v:.1f} ns"


def _fmt_interval(p):
    return f"{p['ratio']:.2f}× [{p['ciLow']:.2f}–{p['ciHigh']:.2f}]"


_RANKED = {"nsPerElement": "ns_per_element", "latencyP50": "latency_p50"}
_FLOOR_RATIO = {"nsPerElement": "ratioToFloor", "latencyP50": "latencyP50RatioToFloor"}


@dataclass
class Contest:
    """One question of the verdict as the tool's ranking (`stepbench show ranking`) decides it: `first`
    is the row of the ranking's first standing (lowest median); `decided` holds where the ranking
    names it best (separated round by round from every other row it ranked); `ties` and `ahead`
    are the ranking's own lists, drawn with each pair's interval."""
    first: dict
    decided: bool
    ties: list
    ahead: list
    #: Why else `first` cannot be named: a time below its own floor that nothing explains.
    doubts: list = field(default_factory=list)
    #: The designs the tool's verdict finds equivalent to `first` within its margin (a decided
    #: tie), each drawn with its pair's interval.
    equivalent: list = field(default_factory=list)
    #: The tool's verdict of the question (`stepbench show document`'s `verdicts`), if it asked it.
    verdict: dict | None = None

    def why_undecided(self):
        """Why no winner, in words, with each pair's interval (see INTERVALS)."""
        parts = []
        if self.ties:
            shown = self.ties[:3] + ([f"{len(self.ties) - 3} more"] if len(self.ties) > 3 else [])
            v = self.verdict
            if v:
                could = f"; its rounds could tell {v['detectable']:.2f}× apart" if v.get("detectable") else ""
                parts.append(f"after {v['rounds']} rounds they neither separate it from {', '.join(shown)} nor put "
                              f"{'it' if len(self.ties) == 1 else 'them'} within ±{v['margin']:.0%} of it{could}")
            else:
                parts.append(f"the rounds do not separate it from {', '.join(shown)}")
        if self.ahead:
            parts.append(f"round by round {', '.join(self.ahead)} {'is' if len(self.ahead) == 1 else 'are'} faster "
                         f"(the medians and the rounds disagree)")
        return "; ".join(parts + self.doubts)

    def doubt_below_floor(self, results, key):
        """The cause of `first`'s time below its own floor (None when it is not below), and a
        doubt that leaves it unnamed when nothing explains it: no design can beat doing nothing."""
        cause = below_floor(results, self.first, key)
        entry = _below_floor_entry(results, self.first, key)
        if entry and not entry["decided"]:
            self.decided = False
            self.doubts.append("its time lies below its own floor's and nothing measured explains it")
        return cause


# What a pair's numbers are, said once under the verdict.
INTERVALS = ("In a tie, `x` (r× [low–high]) is x's time over the named design's, round by round (the run measures every "
             "design in the same rounds), with its 95% interval; a winner is named only where every such interval lies "
             "above 1, an equivalence only where each lies inside the tool's margin, and a question neither decides is "
             "not decided (`stepbench show document`'s verdicts, on `stepbench show ranking`'s pairs).")


def contest(results, scenario, threads, key="nsPerElement", among="all"):
    """The Contest of `scenario` ×`threads` on `key` over the tool's ranking of the field `among`
    ("all": designs and peers; "asynchronous": the designs that deliver on their own executor), or
    None when no row of it measured it. A lone row is decided: there is nothing to compare it
    with; several rows the tool did not rank are not (the lowest median is shown, undecided)."""
    members = set(results.asynchronous_designs()) if among == "asynchronous" else None
    rows = {r["design"]: r for r in results.ok_rows(scenario)
            if r["threads"] == threads and r["summary"].get(key) and (members is None or r["design"] in members)}
    if not rows:
        return None
    ranking = results.rankings.get((scenario, threads, _RANKED[key], among))
    if len(rows) == 1 or not ranking or ranking.get("first") not in rows:
        first = sorted(rows.values(), key=lambda r: r["summary"][key]["median"])[0]
        return Contest(first, len(rows) == 1, [], [])
    pairs = {p["slower"]: p for p in ranking["pairs"] if p["faster"] == ranking["first"]}

    def shown(design):
        p = pairs.get(design)
        return (f"`{design}` ({_fmt_interval(p)})" if p and p.get("ratio") is not None
                else f"`{design}` ({p['rounds'] if p else 0} rounds: too few to tell)")
    verdict = results.verdicts.get((scenario, threads, _RANKED[key], among))
    if verdict and verdict["first"] == ranking["first"]:
        # the tool's answer: a winner, the first with its equivalents, or open (its open pairs)
        return Contest(rows[ranking["first"]], verdict["decided"], [shown(d) for d in verdict["open"]],
                       [shown(d) for d in ranking.get("ahead", []) if d in verdict["open"]],
                       equivalent=[shown(d) for d in verdict["leaders"][1:]], verdict=verdict)
    return Contest(rows[ranking["first"]], ranking.get("best") is not None,
                   [shown(d) for d in ranking.get("ties", [])], [shown(d) for d in ranking.get("ahead", [])])


def leaders(c):
    """The designs a decided Contest names: its winner, or the first and its equivalents."""
    return (c.verdict or {}).get("leaders") or [c.first["design"]]


def floor_row(results, row):
    """The floor row `row` is compared to (the tool's rule: its floor at the same threads, else
    the floor's one thread count), or None."""
    floor = results.floor_of(row["scenario"])
    rows = results.ok_rows(floor) if floor else []
    same = [r for r in rows if r["threads"] == row["threads"]]
    return (same or (rows if len(rows) == 1 else [None]))[0]


def _below_floor_entry(results, row, key):
    """The tool's entry for `row` below its own floor on `key` (`stepbench show document`'s
    `belowFloor`), or None when it is not below."""
    return results.below_floor.get((row["scenario"], row["design"], row["threads"], _RANKED[key]))


def below_floor(results, row, key="nsPerElement"):
    """Why `row` measured below its own floor on `key` (None when it did not), as the tool
    decided it (`belowFloor`: its harness warning; the counts the floor exceeds the row by; an
    interval that still reaches the floor's median; else unexplained, and so not decided). No
    design can beat doing nothing, so no such number is printed without one of these."""
    entry = _below_floor_entry(results, row, key)
    if entry is None:
        return None
    text = f"{entry['ratio']:.2f}× its floor"
    if entry["flagged"]:
        text += ", which the tool flags as a harness defect"
    cause, floor = entry["cause"], entry.get("floorMedian")
    if cause == "floor-missing":
        return text + ", unexplained: the floor's row is not in these results; not decided"
    if cause == "counts":
        more = [f"{_count_label(c['metric'])} ({c['floor']:.3g} vs {c['row']:.3g})" for c in entry["counts"]]
        return text + f", which counted more {' and '.join(more)} than this row: no lower bound for it"
    if cause == "not-separated-in-rounds":
        return text + (f", not separated from it round by round: the ratio's interval "
                       f"[{entry['roundLow']:.2f}–{entry['roundHigh']:.2f}] reaches 1")
    if cause == "not-separated":
        return text + f", not separated from it: its interval [{_fmt_ns(entry['ciLow'])}–{_fmt_ns(entry['ciHigh'])}] " \
            f"holds the floor's {_fmt_ns(floor)}"
    return text + (f", unexplained: the counts show no cause and the interval lies below the floor's "
                   f"{_fmt_ns(floor)}; not decided" if floor is not None else
                   ", unexplained: the counts show no cause; not decided")


def _count_label(metric):
    return metric.replace("_per_element", "").replace("_", " ")


def _headline(question, c, stats):
    """One consistent statement: the winner with its numbers, or "no decided winner" with the
    median-best's numbers and why the rounds leave it undecided."""
    name = f"`{c.first['design']}`"
    if c.decided and c.equivalent:
        names = ", ".join([name] + [e.split(" ")[0] for e in c.equivalent])
        margin = c.verdict["margin"]
        return (f"**{question}: {names}, equivalent within ±{margin:.0%}** — by median {name}, {stats}; "
                f"round by round {', '.join(c.equivalent)} within ±{margin:.0%} of it "
                f"({c.verdict['rounds']} rounds).")
    if c.decided:
        return f"**{question}: {name}** — {stats}."
    if c.verdict:
        return f"**{question}: not decided** — by median {name}, {stats}; {c.why_undecided()}."
    return f"**{question}: no decided winner** — by median {name}, {stats}; {c.why_undecided()}."


def _exact(c):
    """The per-element question's exact instructions (the tool's verdict carries them from the
    profile): the first's, against its equivalents' or open rivals', else the runner-up's."""
    counts = {e["design"]: e["instructionsPerElement"] for e in (c.verdict or {}).get("exact") or []}
    first = c.first["design"]
    if first not in counts:
        return ""
    v = c.verdict
    others = [d for d in (v["leaders"][1:] + v["open"]) if d in counts] or [d for d in counts if d != first][:1]
    said = ", ".join(f"`{d}` {counts[d]:,.0f} ({counts[d] - counts[first]:+,.0f})" for d in others)
    return f"; exact (callgrind): `{first}` {counts[first]:,.0f} instructions/element" + (f" against {said}" if said else "")


def _floor_note(results, c, key, plain):
    """`plain` (the row's ratio to its floor, said as the verdict says it), or the row's
    below-floor cause where it measured below its floor."""
    cause = c.doubt_below_floor(results, key)
    return f" ({cause})" if cause else plain


def verdict(results, winners=None):
    """Three lines or four: which design for which load, and why (from the numbers). Which
    scenario answers which question is the tool's (its catalog's roles); a winner is named only
    where the tool's rounds decide it (see Contest), never from an oversubscribed row, and a
    row below its floor carries its cause. `winners` collects each decided (question, design)."""
    winners = [] if winners is None else winners
    lines = []
    per_element, cross_thread = results.role("perElementScenario"), results.role("crossThreadScenario")
    c = contest(results, per_element, 1) if per_element else None
    if c:
        s = c.first["summary"]
        stats = f"{_fmt_ns(s['nsPerElement']['median'])}/element"
        if s.get("ratioToSeed"):
            stats += f", {1 / s['ratioToSeed']:.1f}× faster than `{results.role('referenceDesign')}`"
        if s.get("ratioToFloor"):
            stats += _floor_note(results, c, "nsPerElement", f", {s['ratioToFloor']:.1f}× its floor (the same "
                                 f"upstream into a plain subscriber)")
        stats += f", {s['allocationsPerElement']['median']:.2f} allocations/element" + _exact(c)
        lines.append(_headline("Synchronous `.more` (one thread)", c, stats))
        if c.decided:
            winners += [(f"{per_element} ×1", d) for d in leaders(c)]
    c = contest(results, cross_thread, 2, "latencyP50") if cross_thread else None
    if c:
        s = c.first["summary"]
        stats = f"p50 latency {_fmt_ns(s['latencyP50']['median'])} from `.more` to the next input"
        if s.get("latencyP50RatioToFloor"):
            stats += _floor_note(results, c, "latencyP50", f" ({s['latencyP50RatioToFloor']:.2f}× its own floor, "
                                 f"the same hand-offs without a stepping subscriber)")
        stats += f", p99 {_fmt_ns(s['latencyP99']['median'])}"
        lines.append(_headline(f"Promise fulfilled on another thread ({cross_thread} ×2, p50 latency)", c, stats))
        if c.decided:
            winners += [(f"{cross_thread} ×{c.first['threads']} (p50 latency)", d) for d in leaders(c)]
    line = contention_verdict(results, winners)
    if line:
        lines.append(line)
    line = parked_verdict(results, winners)
    if line:
        lines.append(line)
    line = cancel_verdict(results, winners)
    if line:
        lines.append(line)
    asynchronous = [(d, results.row(per_element, d, 1)) for d in results.asynchronous_designs()]
    asynchronous = [(d, r) for d, r in asynchronous if r]
    first = contest(results, per_element, 1) if per_element else None
    if asynchronous and first and len(lines) < 3:
        base = first.first
        parts = ", ".join(f"`{d}` {_fmt_ns(r['summary']['nsPerElement']['median'])} "
                          f"({r['summary']['nsPerElement']['median'] / base['summary']['nsPerElement']['median']:.1f}× "
                          f"`{base['design']}`, {r['summary']['allocationsPerElement']['median']:.2f} allocations)"
                          for d, r in asynchronous)
        lines.append(f"**Delivered on their own executor** ({per_element}, per element): {parts}.")
    return lines[:5]


def cancel_verdict(results, decided=None):
    """`cancel()` racing the inputs (the catalog's cancelScenario), by p50 latency from `cancel()`
    to upstream cancelled, at the threads the tool asks it (its verdict). `decided` collects the
    decided (scenario ×threads, design)s."""
    scenario = results.role("cancelScenario")
    asked = [k for k in results.verdicts if k[0] == scenario and k[2] == _RANKED["latencyP50"] and k[3] == "all"]
    c = contest(results, scenario, asked[0][1], "latencyP50") if asked else None
    if not c:
        return None
    s = c.first["summary"]
    stats = f"p50 {_fmt_ns(s['latencyP50']['median'])} from `cancel()` to upstream cancelled"
    if s.get("latencyP50RatioToFloor"):
        stats += _floor_note(results, c, "latencyP50", f" ({s['latencyP50RatioToFloor']:.2f}× its floor)")
    if c.decided and decided is not None:
        decided += [(f"{scenario} ×{c.first['threads']} (p50 latency)", d) for d in leaders(c)]
    return _headline(f"Cancel racing the inputs ({scenario} ×{c.first['threads']}, p50 latency)", c, stats)


def contention_verdict(results, decided=None):
    """Each contended scenario at its largest thread count within the machine's cores (an
    oversubscribed row is shown and never decided): the winner the rounds decide there, or why
    none; the headline names a design only where every scenario decides the same one. `decided`
    collects each decided (scenario ×threads, design)."""
    parts, winners = [], []
    for scenario in results.role("contendedScenarios") or []:
        rows = results.ok_rows(scenario)
        threads = max((r["threads"] for r in rows if not r.get("oversubscribed")), default=None)
        c = contest(results, scenario, threads) if threads else None
        if not c:
            continue
        s = c.first["summary"]
        stats = (f"`{c.first['design']}` {_fmt_ns(s['nsPerElement']['median'])}/element"
                 + (f" ({cause})" if (cause := c.doubt_below_floor(results, "nsPerElement")) else ""))
        if c.decided and c.equivalent:
            stats += f", {', '.join(c.equivalent)} within ±{c.verdict['margin']:.0%} of it (equivalent)"
        undecided = "not decided" if c.verdict else "no decided winner"
        parts.append(f"{scenario} ×{threads}: " + (stats if c.decided else
                                                   f"{undecided}, by median {stats}; {c.why_undecided()}"))
        winners.append(c.first["design"] if c.decided and not c.equivalent else None)
        if c.decided and decided is not None:
            decided += [(f"{scenario} ×{threads}", d) for d in leaders(c)]
    if not parts:
        return None
    over = sorted({r["threads"] for sc in results.role("contendedScenarios") or [] for r in results.ok_rows(sc)
                   if r.get("oversubscribed")})
    who = f"`{winners[0]}`" if None not in winners and len(set(winners)) == 1 else "no single winner"
    note = f" ×{', ×'.join(map(str, over))}: oversubscribed, shown in the table and not decided." if over else ""
    return f"**Under contention: {who}** — " + "; ".join(parts) + "." + note


def parked_verdict(results, decided=None):
    """The designs that deliver on their own executor, on the scenario whose hand-offs park (the
    catalog's asynchronousVerdictScenario), by p50 latency among themselves. `decided` collects
    a decided (scenario ×threads, design)."""
    parked = (results.catalog or {}).get("asynchronousVerdictScenario")
    rows = [r for d in results.asynchronous_designs() for r in results.ok_rows(parked) if r["design"] == d] if parked else []
    rows = [r for r in rows if r["summary"].get("latencyP50") and not r.get("oversubscribed")]
    if not rows:
        return None
    c = contest(results, parked, max(r["threads"] for r in rows), "latencyP50", among="asynchronous")
    s = c.first["summary"]
    stats = f"p50 latency {_fmt_ns(s['latencyP50']['median'])}"
    if s.get("latencyP50RatioToFloor"):
        stats += _floor_note(results, c, "latencyP50", f" ({s['latencyP50RatioToFloor']:.2f}× its floor, which parks alike)")
    wakes = ", ".join(f"`{r['design']}` {r['summary']['counts'][m]:.2f} {_count_label(m)}"
                      for r in rows for m in (results.catalog or {}).get("countMetrics", [])
                      if (r["summary"].get("counts") or {}).get(m, 0) >= results.count_named and "switches" not in m)
    floor = floor_row(results, c.first)
    if c.decided and decided is not None:
        decided += [(f"{parked} ×{c.first['threads']} (p50 latency)", d) for d in leaders(c)]
    return (_headline(f"Delivered on their own executor, promise fulfilled on another thread ({parked} "
                      f"×{c.first['threads']}, hand-offs that park)", c, stats)
            + (f" Per element: {wakes}." if wakes else "")
            + (f" The floor's p50 is {_fmt_ns(floor['summary']['latencyP50']['median'])}."
               if floor and floor["summary"].get("latencyP50") else ""))


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
    """Three narrow design × scenario tables and the notes under them: the median ns/element (★
    the winner the tool's rounds decide, none in an oversubscribed row or a tie), each over the
    reference design's, and each over its own floor († below it, with the cause, `below_floor`,
    noted under the tables). One number per cell, so that no table needs scrolling to read one."""
    designs = results.designs()
    reference = results.role("referenceDesign")
    header = ["| scenario | threads | " + " | ".join(f"`{d}`" for d in designs) + " |",
              "|---|---|" + "---:|" * len(designs)]
    tables = {"ns": [], "seed": [], "floor": []}
    notes = []
    for scenario in results.scenarios():
        if results.is_floor(scenario):
            continue
        for threads in sorted({r["threads"] for r in results.ok_rows(scenario)}):
            over = any(r.get("oversubscribed") for r in results.ok_rows(scenario) if r["threads"] == threads)
            # a star answers a question decided on time per element (the tool's verdict), never
            # one decided on a latency (there, a time per round would name another design)
            asked = (scenario, threads, _RANKED["nsPerElement"], "all") in results.verdicts or not results.verdicts
            c = None if over or not asked else contest(results, scenario, threads)
            cells = {k: [] for k in tables}
            for d in designs:
                row = results.row(scenario, d, threads)
                if not row:
                    failed = [r for r in results.rows if r["scenario"] == scenario and r["design"] == d
                              and r["threads"] == threads and r["status"] != "ok"]
                    for k in tables:
                        cells[k].append(failed[0]["status"].upper() if failed else "–")
                    continue
                s = row["summary"]
                median = s["nsPerElement"]["median"]
                ns = f"{median:,.0f}" if median >= 100 else f"{median:.1f}"
                cells["ns"].append(f"**{ns}** ★" if c and c.decided and d in leaders(c) else ns)
                ratio = s.get("ratioToSeed")
                cells["seed"].append("–" if ratio is None else f"{ratio:.2f}×")
                ratio = s.get("ratioToFloor")
                floor = "–" if ratio is None else f"{ratio:.{2 if ratio < 1 else 1}f}×"
                cause = below_floor(results, row)
                if cause:
                    floor += " †"
                    notes.append(f"- {scenario} ×{threads} `{d}`: {cause}.")
                cells["floor"].append(floor)
            label = f"| {scenario} | {threads}{' (oversubscribed)' if over else ''} | "
            for k in tables:
                tables[k].append(label + " | ".join(cells[k]) + " |")
    out = ["Median ns per element:", ""] + header + tables["ns"]
    out += ["", f"Over `{reference}`'s median:", ""] + header + tables["seed"]
    out += ["", "Over its own floor's median:", ""] + header + tables["floor"]
    if notes:
        out += ["", "† Below its own floor, which does the same work without a stepping subscriber (no design can "
                "beat it); what the results say about each:", ""] + notes
    return out


def cost_section(results, folder, winners) -> list[str]:
    """What the decided winners' cost is made of: the tool's split of each one's instructions per
    element on the per-element scenario (exact, callgrind) into its floor, the stepping API's part
    and its synchronisation, with the reference design beside them for scale."""
    per_element = results.role("perElementScenario")
    reference = results.role("referenceDesign")
    md = ["## What the winners' cost is made of", ""]
    splits = {c["design"]: c for c in results.cost_splits if c["path"] == per_element}
    designs = list(dict.fromkeys(d for _, d in winners))
    if not designs:
        return md + ["No design is decided above, so there is no winner's cost to split.", ""]
    if not splits:
        return md + [f"Not in these results: pass a `stepbench profile` file too (its split of {per_element}'s "
                     "instructions per element).", ""]
    api = (results.catalog or {}).get("apiFloorScenario") or "API floor"
    md += [f"{per_element}, instructions per element (exact, callgrind): the floor (the same upstream into a plain "
           f"subscriber), *API* = {api} − floor, *synchronisation* = design − {api}; every path and design in "
           f"the tables below ({_method(folder, 'What the API costs and what synchronisation costs', 'the split')}).",
           "", "| design | decided in | instructions | floor | API | synchronisation |", "|---|---|---:|---:|---:|---:|"]
    for d in designs + ([reference] if reference and reference not in designs else []):
        c = splits.get(d)
        won = ", ".join(q for q, w in winners if w == d) or "(the reference)"
        if c is None:
            md.append(f"| `{d}` | {won} | – | – | – | – |")
            continue
        star = "" if c.get("exact", True) else "*"
        md.append(f"| `{d}` | {won} | {_num(c['instructions'])} | {_num(c.get('floor'))} | {_num(c.get('api'))} | "
                  f"{_num(c['synchronisation'])}{star} |")
    if any(not splits[d].get("exact", True) for d in designs if d in splits):
        md += ["", "\\* follows the schedule (the design hands work to another thread): not exact."]
    return md + [""]


def lineage(base_commit, head_commit):
    """Words on what lies between a baseline's commit and this run's: how many commits, and
    whether measured code changed (``figures.measured_changes``); None when git cannot tell."""
    if not base_commit or not head_commit:
        return None
    if base_commit == head_commit:
        return "the same commit"
    done = subprocess.run(["git", "-C", tool.ROOT, "rev-list", "--count", f"{base_commit}..{head_commit}"],
                          capture_output=True, text=True)
    changed = figures.measured_changes(base_commit, head_commit)
    if done.returncode != 0 or changed is None:
        return None
    n = int(done.stdout.strip() or 0)
    code = (f"measured code changed in {len(changed)} file{'' if len(changed) == 1 else 's'}" if changed
            else "no measured code changed")
    return f"{n} commit{'' if n == 1 else 's'} before this run's; {code}"


def comparison(args, results):
    """This run against the baseline given, else the previous run of its folder's history, as
    `stepbench compare` decides it: (words naming what it was compared with, the tool's JSON
    document, what lies between the two commits in words or None), or None when there is
    nothing to compare with. The tool chose the run and compared it in the call that read the
    files (`stepbench show report`; its rule: `PreviousRun` in the tool)."""
    report = results.report or {}
    if "comparison" not in report:
        return None
    against = report["against"]
    words = (f"the previous run, {os.path.relpath(against[0])}" if report["againstPrevious"]
             else f"the baseline {os.path.relpath(args.baseline)}")
    document = report["comparison"]
    head = (results.machines[0] if results.machines else results.machine).get("gitCommit")
    return words, document, lineage(document.get("baselineCommit"), head)


def _shown(r):
    """A compared row in words: what, and its ratio with the tool's interval."""
    interval = (_fmt_interval(r) if r.get("ciLow") is not None
                else f"{r['ratio']:.3f}×" if r.get("ratio") is not None else r["verdict"])
    return f"{r['scenario']} `{r['design']}` ×{r['threads']} {r['metric']} {interval}"


def change_section(compared) -> list[str]:
    """Did this run make anything slower? The tool's verdicts of `comparison`, counted, and the
    slower rows listed with their effect and interval."""
    md = ["## Did anything get slower?", ""]
    if compared is None:
        return md + ["No baseline given and no earlier run in this run's folder: nothing to compare it with "
                     "(an earlier run counts when its preset, threads, warm-up, elements and repetition budget are "
                     "this run's; `scripts/report --baseline OLD.json NEW.json`; each `scripts/bench` adds a run).", ""]
    words, document = compared[:2]
    rows = document["rows"]
    commit = (document.get("baselineCommit") or "?")[:10]
    between = compared[2] if len(compared) > 2 else None
    both = [r for r in rows if not r["verdict"].startswith("only-in-")]
    slower = [r for r in rows if r["verdict"] in ("regression", "failed")]
    faster = [r for r in rows if r["verdict"] == "improvement"]
    tally = ", ".join(f"{n} {v}" for v, n in Counter(r["verdict"] for r in both).most_common())
    alone = Counter(r["verdict"] for r in rows if r["verdict"].startswith("only-in-"))
    how = ("its 95% interval widened by this machine kind's noise profile" if document.get("noiseProfile")
           else "its 95% interval; no noise profile, so no timing row can be called slower")
    head = (f"**{len(slower)} row{'' if len(slower) == 1 else 's'} slower**" if slower
            else f"**No row slower** of the {len(both)} both runs measured")
    md.append(f"{head} against {words} (commit `{commit}`{f': {between}' if between else ''}): "
              f"`stepbench compare` decides each row on {how}. "
              f"{len(both)} rows in both: {tally or 'none'}"
              + (f"; {alone['only-in-current']} only in this run" if alone["only-in-current"] else "")
              + (f", {alone['only-in-baseline']} only in the other" if alone["only-in-baseline"] else "") + ".")
    if slower:
        md += [""] + [f"- slower: {_shown(r)}" for r in slower[:6]]
        if len(slower) > 6:
            md.append(f"- and {len(slower) - 6} more (the table under Regressions)")
    if faster:
        md += ["", "Faster: " + "; ".join(_shown(r) for r in faster[:4])
               + (f"; and {len(faster) - 4} more" if len(faster) > 4 else "") + "."]
    return md + [""]


def regression_section(compared):
    """Every row of `comparison` both runs measured, with the tool's verdict; the rows only one
    of them measured are counted, not listed."""
    if compared is None:
        return ["No baseline given and no earlier run to compare with (`scripts/report --baseline OLD.json NEW.json` "
                "adds the regression table)."]
    words, document = compared[:2]
    rows = document["rows"]
    both = [r for r in rows if not r["verdict"].startswith("only-in-")]

    def value(v):
        return "–" if v is None else _num(v) if abs(v) >= 100 else f"{v:.3g}"
    md = [f"This run against {words}: every row both measured, with `stepbench compare`'s verdict "
          f"({len(rows) - len(both)} rows only one of them measured are left out).", "",
          "| scenario | design | threads | metric | baseline | current | ratio | 95% CI | verdict |",
          "|---|---|---|---|---:|---:|---:|---|---|"]
    for r in both:
        ci = f"[{r['ciLow']:.3f}, {r['ciHigh']:.3f}]" if r.get("ciLow") is not None else ("exact" if r.get("exact") else "–")
        ratio = "–" if r.get("ratio") is None else f"{r['ratio']:.3f}"
        md.append(f"| {r['scenario']} | `{r['design']}` | {r['threads']} | {r['metric']} | {value(r.get('baseline'))} | "
                  f"{value(r.get('current'))} | {ratio} | {ci} | {r['verdict']} |")
    return md


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


def quietness_section(results) -> list[str]:
    """What else ran while the run timed, as the tool measured it (`quietness`): a verdict drawn
    while others kept the machine busy says so."""
    q = results.quietness
    if not q:
        return []
    load = " → ".join(f"{x:.2f}" for x in q.get("loadAverage") or [])
    busy = results.other_cores or 0
    said = (f"other processes kept {busy:.2f} cores busy over the {q['seconds']:.0f} s it timed"
            + (f" (load average {load})" if load else ""))
    if results.disturbed:
        return [f"**The machine was busy while this run timed**: {said}. The verdicts above may be the load's; "
                "run `scripts/bench` again on a quiet machine.", ""]
    lines = [f"While this run timed, {said}: a quiet machine."]
    if results.added_rounds:
        per = {}
        for a in results.added_rounds:
            key = f"{a['scenario']} ×{a['threads']}"
            rounds, designs = per.get(key, (0, a["designs"]))
            per[key] = (rounds + a["rounds"], designs)
        lines[0] += (" After its first pass it added rounds to the questions still open, between their contenders "
                     "alone (`stepbench run --decide`): "
                     + "; ".join(f"{k}, {n} rounds of {', '.join(f'`{d}`' for d in ds)}" for k, (n, ds) in per.items())
                     + ".")
    return lines + [""]


def build(args, results, folder):
    charts.use_design_order(results.designs())  # every chart colours a design alike
    m = results.machine
    made_by = ", ".join(f"{os.path.relpath(p)} (commit `{f.get('gitCommit', '?')[:10]}`{', dirty' if f.get('gitDirty') else ''})"
                        for p, f in zip(results.paths, results.machines))
    md = [f"# StepBench report — {m.get('cpuModel')} ({m.get('cores')} cores)", "",
          f"Produced by `scripts/report` from {made_by}: {m.get('buildConfiguration')} build, {m.get('swiftVersion')}, "
          f"{m.get('kernel')}, allocator {m.get('allocator')}; created {results.created_at}; "
          f"preset {results.configuration.get('preset')}, {results.configuration.get('repetitions')} repetitions in shuffled rounds (order seed {results.configuration.get('orderSeed', '–')}); "
          f"hand-off {results.configuration.get('handoff')}.", "", "## Verdict", ""]
    winners = []
    md += [f"{i + 1}. {line}" for i, line in enumerate(verdict(results, winners))] + ["", INTERVALS, ""]
    md += quietness_section(results)
    md += cost_section(results, folder, winners)
    compared = comparison(args, results)
    md += change_section(compared)
    per_round = ", ".join(x for x in results.scenarios() if results.unit(x) != "element" and not results.is_floor(x))
    md += [f"## Speed relative to `{results.role('referenceDesign')}` and to the floor", "",
           f"Median ns/element in every row{f' ({per_round}: per round)' if per_round else ''}, never a latency (p50 latency "
           f"is in the verdict and the latency charts); ★ = the verdict's answer where its question is decided on "
           f"time per element: the winner separated from every other round by round, or the designs equivalent within "
           f"the margin (none in an open question, an oversubscribed row or a row not asked on time per element). Then each over "
           f"`{results.role('referenceDesign')}`'s, and over the scenario's own floor "
           f"({_method(folder, 'How it measures', 'a floor of its shape')}).", ""]
    md += relative_table(results)
    md += ["", "Oversubscribed: more threads than cores, shown and never decided "
           f"({_method(folder, 'Reading a verdict', 'reading a verdict')}).", ""]
    # Each scenario's charts under one heading, the chart of the metric its verdict is decided on
    # first (a latency for the questions decided on p50), the other after it.
    md += ["## Throughput and latency, per scenario", "",
           "Each scenario's verdict metric first: the latency distribution where the verdict decides on p50 "
           "latency, else throughput against threads (oversubscribed thread counts shaded).", ""]
    by_latency = {v["scenario"] for v in results.verdicts.values() if v["metric"] == _RANKED["latencyP50"]}
    for scenario in results.scenarios():
        if results.is_floor(scenario) or not results.ok_rows(scenario):
            continue
        shown = [f"throughput-{scenario}.svg"]
        charts.throughput_vs_threads(results, scenario, os.path.join(folder, shown[0]))
        if any(r["summary"].get("latencyP50") for r in results.ok_rows(scenario)):
            name = f"latency-{scenario}.svg"
            charts.latency_distribution(results, scenario, os.path.join(folder, name))
            shown = [name] + shown if scenario in by_latency else shown + [name]
        md += [f"### {scenario}", ""] + [f"![{scenario} {n.split('-')[0]}]({n})" for n in shown] + [""]
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
    md += runtime_section(results)
    md += mutant_section(results, folder)
    md += split_section(results, folder)
    md += bridge_section(results)
    md += plain_section(results)
    md += ["## Repetitions and the scheduler", "",
           "One point per repetition (time per element, log scale); what the scheduler did in them (context "
           f"switches per element) is in the table below ({_method(folder, 'How it measures', 'the scheduler, per repetition')}).", ""]
    for scenario in results.scenarios():
        if results.is_floor(scenario) or not results.ok_rows(scenario):
            continue
        threads = min(r["threads"] for r in results.ok_rows(scenario))
        name = f"repetitions-{scenario}.svg"
        charts.repetition_strips(results, scenario, threads, os.path.join(folder, name))
        md += [f"![{scenario} repetitions]({name})", ""]
    md += ["## What contention did, per element", "",
           "Per element: the scenario's own side count, context switches, and what a counting build of the designs "
           f"counts ({_method(folder, 'How it measures', 'contention counts')}).", ""]
    md += counts_table(results) + [""]
    warnings = results.harness_warnings
    if warnings:
        md += ["**Harness warnings** (a design faster than its own floor: the harness, not the design):", ""]
        md += [f"- {w}" for w in warnings] + [""]
    md += history_section(results, folder)
    md += conformance_section(results)
    md += ["## Regressions", ""] + regression_section(compared) + [""]
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
    """The rule × design table of the conformance verdict `scripts/conformance` wrote beside the
    results file (conformance.json), when there is one, read through the tool (`stepbench conform
    --from`, which gives each cell its word); the failures stay in conformance.md beside it."""
    verdict = (results.report or {}).get("conformance")
    if verdict is None:
        return []
    table = ["| rule | " + " | ".join(verdict["designs"]) + " |", "|" + "---|" * (len(verdict["designs"]) + 1)]
    table += [f"| {rule['id']} | " + " | ".join(cell["mark"] for cell in rule["cells"]) + " |" for rule in verdict["rules"]]
    stochastic = list(dict.fromkeys(
        f"{c['name']} ({rule['id']}" + (f", {c['rounds']} rounds)" if c.get("rounds") else ")")
        for rule in verdict["rules"] for cell in rule["cells"] for c in cell["checks"] if c.get("kind") == "stochastic"))
    return ["## Conformance", "",
            "Every rule of docs/CONFORMANCE.md on every design (`scripts/conformance`: ok, ok* = declared broken at "
            "times and not shown in this run, known = declared broken and shown, FAIL, STALE = declared but not "
            "shown); the checks' failures are in conformance.md beside the results file."
            + (f" Stochastic checks (a design with the fault can pass one run): {', '.join(stochastic)}." if stochastic else ""),
            ""] + table + [""]


def history_section(results, folder) -> list[str]:
    """Change points over the runs of this machine kind: every results and profile file in the
    folder of the (first) results file, as `scripts/history` finds them, with a trend chart per
    scenario. A folder history cannot read is named in the report; the rest of it still stands."""
    source = os.path.dirname(os.path.abspath(results.paths[0]))
    shown = os.path.relpath(source)
    md = ["## History", ""]
    report = results.report or {}
    try:
        if "historyError" in report:  # what the tool said of the folder, in the report's one call
            raise history.HistoryError(report["historyError"])
        h = history.analyse(shown, series=report.get("history"))
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


def runtime_section(results) -> list[str]:
    """Per path and design, the runtime's calls per event (retains, releases, allocations,
    exclusivity checks, metadata, casts, lock calls), each placed at the callers that make it,
    from the tool's whole profile of the path (callgrind's call edges). Nothing for files
    written before whole profiles were kept."""
    rows = [p for p in results.path_rows if p.get("callProfile")]
    if not rows:
        return []
    order = [p["name"] for p in (results.catalog or {}).get("paths", [])]
    subjects = []
    for p in (results.catalog or {}).get("paths", []):
        subjects += [s for s in p.get("subjects", []) if s not in subjects]

    def rank(p):
        return (order.index(p["path"]) if p["path"] in order else len(order),
                subjects.index(p["design"]) if p["design"] in subjects else len(subjects), p["design"])

    md = ["### The runtime's calls on every path, and who makes them", "",
          "Per event of each path, from its whole profile (callgrind's call edges, the two windows' difference): "
          "the runtime's retains, releases, allocations, deallocations, exclusivity checks, metadata lookups, casts "
          "and lock calls, each with the functions that call it (at most three, most first). A path and design "
          "that makes none is left out; `stepbench compare` of two profiles says which of them moved.", "",
          "| path | design | runtime calls per event (callers) |", "|---|---|---|"]
    for p in sorted(rows, key=rank):
        by_kind = {}
        for call in p["callProfile"]["runtimeCalls"]:
            by_kind.setdefault(call["kind"], []).append(call)
        if not by_kind:
            continue
        cells = []
        for kind, calls in by_kind.items():
            total = sum(c["callsPerEvent"] for c in calls)
            # the tool's summary keeps each kind's busiest callers and one "(other callers)" entry
            others = sum(c["callsPerEvent"] for c in calls if c["caller"] == _OTHER_CALLERS)
            named = [c for c in calls if c["caller"] != _OTHER_CALLERS]
            callers = sorted(named, key=lambda c: (-c["callsPerEvent"], c["caller"]))[:3]
            others += sum(c["callsPerEvent"] for c in named if c not in callers)
            cells.append(f"{kind} {total:.2f} (" + ", ".join(
                [f"`{_short(c['caller'])}` {c['callsPerEvent']:.2f}" for c in callers]
                + ([f"others {others:.2f}"] if others >= 0.005 else [])) + ")")
        md.append(f"| {p['path']} | `{p['design']}` | " + "; ".join(cells) + " |")
    return md + [""]


def mutant_section(results, folder) -> list[str]:
    """A planted regression and where the tool says it went: for each mutant `scripts/mutants --keep`
    left in the results' folder (mutants/NAME/: the comparison `NAME.compare.json` of HEAD's exact
    counts with the mutant's, and a differential flame graph of each moved row), the function the
    attribution charges first for each moved row, and the graph of the row that moved most, copied
    beside the report. Nothing when no mutant was kept there."""
    base = os.path.join(os.path.dirname(os.path.abspath(results.paths[0])), "mutants")
    if not os.path.isdir(base):
        return []
    md, graphs = [], []
    for name in sorted(os.listdir(base)):
        compared = os.path.join(base, f"{name}.compare.json")
        if not os.path.isdir(os.path.join(base, name)) or not os.path.isfile(compared):
            continue
        with open(compared) as f:
            comparison = json.load(f)
        moved = [a for a in comparison.get("attributions") or [] if a.get("functions")]
        if not moved:
            continue
        moved.sort(key=lambda a: (-abs(a["current"] - a["baseline"]), a["target"], a["design"]))
        if not md:
            md = ["### Where a planted regression went", "",
                  "A mutant of `scripts/mutants.d/` measured beside the commit it patches (`scripts/mutants --only NAME "
                  f"--keep {os.path.relpath(base)}`), and what `stepbench compare` charges each moved row to: a function's "
                  "own instructions and what the calls it makes more or less often cost "
                  f"({_method(folder, 'Where a count went', 'where a count went')}). The graph: the row that moved most, "
                  "widths of the mutant's build, red where a frame's own instructions grew, blue where they fell (hover a "
                  "frame for its counts); redrawn by `stepbench compare --exact-only --flame-graphs OUT "
                  f"{os.path.relpath(base)}/head.json {os.path.relpath(base)}/{name}.json`.", "",
                  "| mutant | row | instructions per event | charged first | share | cause | what changed |",
                  "|---|---|---|---|---|---|---|"]
        for a in moved:
            first = a["functions"][0]
            into = first.get("inlinedInto")
            inlined = f" (inlined into {len(into)} function{'s' if len(into) > 1 else ''})" if into else ""
            md.append(f"| `{name}` | {a['target']} `{a['design']}` | {a['baseline']:g} → {a['current']:g} | "
                      f"`{_short(first['key'])}`{inlined} | {100 * first['share']:.0f}% | {first['cause']} | "
                      f"{_what_changed(a)} |")
        top = moved[0]
        graph = f"flame-{''.join(c if c.isalnum() or c in '-_' else '_' for c in top['target'] + '_' + top['design'])}.svg"
        source = os.path.join(base, name, graph)
        if os.path.isfile(source):
            shutil.copyfile(source, os.path.join(folder, f"mutant-{name}-{graph}"))
            graphs += [f"![{name}: {top['target']} {top['design']}](mutant-{name}-{graph})", ""]
    return md + [""] + graphs if md else []


def _what_changed(attribution) -> str:
    """The row's Attribution.change: the functions whose machine code changed between the two builds
    (at most two named), or what else moved it; "—" for a comparison from before it was told."""
    change = attribution.get("change")
    if change == "code changed" and attribution.get("codeChanged"):
        keys = attribution["codeChanged"]
        named = ", ".join(f"`{_short(k, 50)}`" for k in keys[:2])
        return f"code of {named}" + (f" and {len(keys) - 2} more" if len(keys) > 2 else "")
    return change or "—"


_OTHER_CALLERS = "(other callers)"  # CallProfile.otherCallers: the callers a summary leaves out


def _short(name, width=70):
    """A function's key for a table cell: whole if it fits, else its end (the most specific part)."""
    name = name.replace("|", "\\|")
    return name if len(name) <= width else "…" + name[-(width - 1):]


def _num(v):
    """A count in a table: thousands separated, whole; – where there is none."""
    return "–" if v is None else f"{v:,.0f}"


def bridge_section(results) -> list[str]:
    """Each peer's cost split into its library (its direct row: the same library on the same
    upstream with no stepper contract) and its bridge to the stepper contract (the peer minus
    its direct row), as the tool computes it (`stepbench show document`'s bridges)."""
    if not results.bridges:
        return []

    def share(v):
        return "–" if v is None else f"{v:.0%}"
    md = ["## The peers: their library and their bridge", "",
          f"Per element, {results.role('perElementScenario')} ×1 against {results.role('directScenario')} (the peer's "
          "library on the same upstream with no stepper contract): median ns; the bridge (the difference: what keeping "
          "the stepper contract adds to the library) over the direct row by medians and round by round, with its 95% "
          "interval (an interval that holds 0 does not separate the peer from its library); instructions: exact, from "
          "the profile.", "",
          "| peer | peer, ns | direct, ns | bridge, ns | bridge / direct | round by round | peer, instructions "
          "| direct, instructions | bridge / direct, instructions |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for b in results.bridges:
        md.append(f"| `{b['design']}` | {_num(b['nsPerElement'])} | {_num(b['directNsPerElement'])} | "
                  f"{_num(b['bridgeNsPerElement'])} | {share(b['bridgeShare'])} | {figures.round_share(b)} | "
                  f"{_num(b.get('instructionsPerElement'))} | {_num(b.get('directInstructionsPerElement'))} | "
                  f"{share(b.get('bridgeInstructionShare'))} |")
    return md + [""]


def plain_section(results) -> list[str]:
    """Each peer's direct row beside its library in a plain program (as its users write it, on
    `(0..<n).publisher`), and, where the two differ by more than the tool's margin, what the
    difference is made of, from the rows the run measured (`stepbench show document`'s plains)."""
    if not results.plains:
        return []
    md = ["## The direct rows beside a plain program", "",
          "Per element, median ns: each peer's direct row (its library on the suite's upstream, inside the harness), "
          "the same library in a plain program written as its users write it (on `(0..<n).publisher`, started and "
          "awaited as a user's code is: `plain-sync`), and that program on the suite's upstream (`plain-upstream`). "
          "The difference is made of the upstream (plain − plain on the suite's upstream) and the rest (the program "
          "against the harness's consumer: plain on the suite's upstream − direct).", "",
          "| peer | direct | plain | plain / direct | plain on the suite's upstream | the upstream | the rest |",
          "|---|---:|---:|---:|---:|---:|---:|"]
    said = []
    for p in results.plains:
        md.append(f"| `{p['design']}` | {_num(p['directNsPerElement'])} | {_num(p['plainNsPerElement'])} | "
                  f"{p['ratio']:.2f}× | {_num(p['plainUpstreamNsPerElement'])} | {p['upstreamNsPerElement']:+,.0f} | "
                  f"{p['restNsPerElement']:+,.0f} |")
        if p["explained"]:
            gap = p["plainNsPerElement"] - p["directNsPerElement"]
            said.append(f"- `{p['design']}`'s plain program differs from its direct row by {gap:+,.0f} ns per element "
                        f"({p['ratio']:.2f}×): {p['upstreamNsPerElement']:+,.0f} is the upstream (`(0..<n).publisher` "
                        f"against the suite's) and {p['restNsPerElement']:+,.0f} the rest (the program against the "
                        f"harness's consumer).")
    return md + ([""] + said if said else []) + [""]


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
    for c in results.cost_splits:
        star = "" if c.get("exact", True) else "*"
        sync = c.get("synchronisingOverFloorStep")
        md.append(f"| {c['path']} | `{c['design']}` | {_num(c['instructions'])} | {_num(c.get('floor'))} | "
                  f"{_num(c['floorStep'])} | {_num(c.get('api'))} | {_num(c['synchronisation'])}{star} | "
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
        whole = (p.get("callProfile") or {}).get("functions")
        functions = ([{"function": f["key"], "instructionsPerElement": f["exclusivePerEvent"],
                       "inclusive": f["inclusivePerEvent"]} for f in whole] if whole else
                     [f for f in p.get("topFunctions", []) if f.get("instructionsPerElement") is not None])
        where = " (whole process)" if p.get("collection") == "wholeProcess" else ""
        name = p["scenario"] if results.is_floor(p["scenario"]) else p["design"]  # a floor is its own scenario
        md.append(f"**`{name}`** — {p['instructionsPerElement']:,.0f} instructions/element{where}")
        md.append("")
        if not functions:
            md += ["(this profile predates per-function counts; re-run `stepbench profile`)", ""]
            continue
        if whole:
            md += ["| instructions/element | inclusive | function |", "|---:|---:|---|"]
            md += [f"| {f['instructionsPerElement']:,.1f} | {f['inclusive']:,.1f} | `{_short(f['function'], 110)}` |"
                   for f in functions[:8]]
        else:
            md += ["| instructions/element | function |", "|---:|---|"]
            md += [f"| {f['instructionsPerElement']:,.1f} | `{f['function'][:110]}` |" for f in functions[:8]]
        rest = p["instructionsPerElement"] - sum(f["instructionsPerElement"] for f in functions[:8])
        md += [f"| {rest:,.1f} | | (all other functions) |" if whole else f"| {rest:,.1f} | (all other functions) |", ""]
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
        results = load_report(args.results, args.baseline)
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
