"""scripts/figures: the measured figures of README.md and docs/*.md, written by the tool.

Usage: scripts/figures [--check] [DOC.md ...]     (default: README.md and docs/*.md)

A figure is written once, in the committed results; a document quotes it only inside a block

    <!-- figures:NAME from FILE [FILE ...] -->
    ... (generated: never edit by hand) ...
    <!-- /figures:NAME -->

whose content this command (re)writes from FILES (paths from the repository root; results and
profile files as `stepbench show document` reads them, or a conformance.md). NAME is one of RENDERERS.
The block's first line names its source: each file's commit and date. Every document is
rewritten atomically (temporary file, then rename), and only when a block changed. A block
naming a missing file or an unknown NAME, or one left open, is an error naming the document and
its line, and nothing is written.

--check writes nothing: exit 1 naming each block that differs from what the files give (the
document, the block and the first differing line), each table outside a block that quotes
measured values (see ``measured_tables``), and each results file a block names that is no run of
the code as it stands (``stale_sources``: a dirty tree, or measured code changed since its
commit). Exit 0: every figure agrees.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from . import history_cause, tool
from .results import ResultsError, floor_in, load

OPEN = re.compile(r"^<!-- figures:(?P<name>[a-z0-9-]+) from (?P<files>\S.*?) -->$")
CLOSE = re.compile(r"^<!-- /figures:(?P<name>[a-z0-9-]+) -->$")


class FiguresError(Exception):
    """A document or block that cannot be rendered: the message names the document and line."""


@dataclass
class Block:
    document: str
    name: str
    files: list
    #: 0-based indexes of the open and close markers in the document's lines
    start: int
    end: int

    def where(self):
        return f"{os.path.relpath(self.document)}:{self.start + 1}"


# ---------------------------------------------------------------------------------------------
# Finding blocks


def blocks(document, lines):
    """The figure blocks of `document` (its `lines`), checked: a known name, files that exist,
    each block closed by its own name before another opens."""
    found, current = [], None
    for i, line in enumerate(lines):
        opened, closed = OPEN.match(line.rstrip("\n")), CLOSE.match(line.rstrip("\n"))
        if opened:
            if current:
                raise FiguresError(f"{os.path.relpath(document)}:{i + 1}: block '{opened['name']}' opens inside "
                                   f"'{current.name}' (opened at line {current.start + 1}); close that one first")
            current = _opened(document, i, opened)
        elif closed:
            if not current or closed["name"] != current.name:
                raise FiguresError(f"{os.path.relpath(document)}:{i + 1}: '<!-- /figures:{closed['name']} -->' closes "
                                   f"no open block of that name")
            current.end = i
            found.append(current)
            current = None
    if current:
        raise FiguresError(f"{current.where()}: block '{current.name}' is never closed "
                           f"(add '<!-- /figures:{current.name} -->')")
    return found


def _opened(document, index, match):
    name, files = match["name"], match["files"].split()
    if name not in RENDERERS:
        raise FiguresError(f"{os.path.relpath(document)}:{index + 1}: unknown block 'figures:{name}'; "
                           f"known: {', '.join(sorted(RENDERERS))}")
    for f in files:
        if not os.path.exists(os.path.join(tool.ROOT, f)):
            raise FiguresError(f"{os.path.relpath(document)}:{index + 1}: block '{name}' names {f}, which does not "
                               f"exist (paths are from the repository root)")
    return Block(document, name, files, index, -1)


# ---------------------------------------------------------------------------------------------
# Sources and provenance


class Sources:
    """The files one block names, read as every command reads them (`stepbench show document`), cached
    across blocks: results files combined into one Results, a conformance.md by its table."""

    _cache: dict = {}

    def __init__(self, files):
        self.files = files
        self.results_files = [f for f in files if f.endswith(".json")]
        self.tables = [f for f in files if not f.endswith(".json")]

    @property
    def results(self):
        if not self.results_files:
            raise ResultsError("this block needs a results file (`stepbench run` or `stepbench profile`)")
        return self._load(tuple(self.results_files))

    @classmethod
    def _load(cls, files):
        if files not in cls._cache:
            cls._cache[files] = load([os.path.join(tool.ROOT, f) for f in files])
        return cls._cache[files]

    def provenance(self):
        """One line: each file's commit and date (a results file's machine.gitCommit and
        createdAt, `(dirty)` when its tree was; another file's last commit in git)."""
        parts = []
        for f in self.files:
            if f.endswith(".json"):
                r = self._load((f,))
                commit = (r.machine.get("gitCommit") or "?")[:7]
                dirty = " (dirty)" if r.machine.get("gitDirty") else ""
                parts.append(f"`{f}`: run at `{commit}`{dirty}, {r.created_at[:10]}")
            else:
                parts.append(f"`{f}`: committed at {_last_commit(f)}")
        return "Generated by `scripts/figures` from " + "; ".join(parts) + "."

    def table(self):
        """The Markdown table of the (one) non-JSON file: its lines that start with '|'."""
        with open(os.path.join(tool.ROOT, self.tables[0])) as f:
            return [line.rstrip("\n") for line in f if line.startswith("|")]


def _last_commit(path):
    done = subprocess.run(["git", "-C", tool.ROOT, "log", "-1", "--format=`%h`, %cs", "--", path],
                          capture_output=True, text=True)
    return done.stdout.strip() or "an uncommitted version"


# ---------------------------------------------------------------------------------------------
# Reading the results: what a cell shows


def fmt(v):
    """A timing or count as the docs print it: thousands separated, one decimal under 100."""
    if v is None:
        return "–"
    return f"{v:,.0f}" if abs(v) >= 100 or float(v).is_integer() else f"{v:.1f}"


def fmt_ci(stat):
    return f"{fmt(stat['median'])} [{fmt(stat['ciLow'])}, {fmt(stat['ciHigh'])}]"


def median(results, scenario, design, threads, key):
    row = results.row(scenario, design, threads)
    stat = row and row["summary"].get(key)
    return stat["median"] if stat else None


def instructions(results, scenario, design):
    """Instructions per element of `design` in `scenario`'s profile (callgrind, exact)."""
    return next((p["instructionsPerElement"] for p in results.profiles
                 if p["scenario"] == scenario and p["design"] == design), None)


def status(results, scenario, design, threads):
    """'excluded', 'failed', … when the row exists but measured nothing; else None."""
    return next((r["status"] for r in results.rows if r["scenario"] == scenario and r["design"] == design
                 and r["threads"] == threads and r["status"] != "ok"), None)


def catalog(results, key, default=None):
    """A catalog entry: the files' catalog (what they were written with), else the tool's."""
    for c in (results.catalog, results.tool_catalog):
        if (c or {}).get(key) is not None:
            return c[key]
    return default


def direct_scenario(results):
    """The scenario of the peers' direct rows (each peer's library with no stepper contract), as
    the tool names it; None from a tool that has none."""
    return catalog(results, "directScenario")


def peers(results):
    """The designs that stand for what Swift already ships (PEERS.md), in the results' order: the
    catalog's `peers` (the designs registered with a direct row); none from a tool that names none."""
    listed = catalog(results, "peers") or []
    return [d for d in results.designs() if d in listed]


def ranking_pair(results, scenario, threads, metric, a, b):
    """The tool's round-by-round comparison of designs `a` and `b` (`stepbench show ranking`), or None."""
    ranking = results.rankings.get((scenario, threads, metric, "all"))
    for p in (ranking or {}).get("pairs", []):
        if {p["faster"], p["slower"]} == {a, b}:
            return p
    return None


def decided_faster(pair):
    """The design the rounds separate as faster (the interval of the pair's ratio clear of 1),
    or None for a tie. A reversed pair is one whose medians and rounds disagree: the rounds
    decide."""
    if not pair:
        return None
    return pair["slower"] if pair.get("reversed") else pair["faster"] if pair.get("separated") else None


def interval(pair):
    return f"{pair['ratio']:.2f}× [{pair['ciLow']:.2f}–{pair['ciHigh']:.2f}]" if pair and pair.get("ratio") else "too few rounds"


# ---------------------------------------------------------------------------------------------
# What a row of a table is

@dataclass
class Measure:
    """One row of a designs table: a scenario at a thread count, and what is shown of it."""
    scenario: str
    threads: int
    key: str          # a summary key, or "instructions" (the profile's, exact)
    label: str        # the metric, named in the row so that one label means one metric
    metric: str = ""  # the ranking's metric ("ns_per_element", "latency_p50"); "" for exact counts

    def value(self, results, design):
        if self.key == "instructions":
            return instructions(results, self.scenario, design)
        return median(results, self.scenario, design, self.threads, self.key)

    def stat(self, results, design):
        row = results.row(self.scenario, design, self.threads)
        return row and row["summary"].get(self.key)

    def cell(self, results, design, with_ci=False):
        if self.key == "allocationsPerElement":
            v = self.value(results, design)
            return f"{v:.2f}" if v is not None else (status(results, self.scenario, design, self.threads) or "–")
        if with_ci and self.key != "instructions" and self.stat(results, design):
            return fmt_ci(self.stat(results, design))
        v = self.value(results, design)
        return fmt(v) if v is not None else (status(results, self.scenario, design, self.threads) or "–")

    def row_name(self):
        return f"{self.scenario} ×{self.threads}, {self.label}"


def measures(results, wide=False):
    """The rows of the designs tables, on the scenarios the tool names for each question: the
    per-element question (one thread: time, exact instructions, allocations), the cross-thread
    question's p50 at 2 threads and the cancel question's p50 at 2 threads; `wide` adds the
    asynchronous designs' verdict (hand-offs that park) and the contended scenarios at 2 threads."""
    per_element, cross = results.role("perElementScenario"), results.role("crossThreadScenario")
    parked, cancel = catalog(results, "asynchronousVerdictScenario"), results.role("cancelScenario")
    out = [Measure(per_element, 1, "nsPerElement", "ns/element", "ns_per_element"),
           Measure(per_element, 1, "instructions", "instructions/element (exact, callgrind)"),
           Measure(per_element, 1, "allocationsPerElement", "allocations/element"),
           Measure(cross, 2, "latencyP50", "p50 ns, `.more` → next input", "latency_p50")]
    if wide:
        out.append(Measure(parked, 2, "latencyP50", "p50 ns, `.more` → next input (hand-offs park)", "latency_p50"))
    out.append(Measure(cancel, 2, "latencyP50", "p50 ns, cancel → upstream cancelled", "latency_p50"))
    if wide:
        scales = {x["name"]: x.get("throughputScalesWithThreads") for x in catalog(results, "scenarios", [])}
        out += [Measure(contended, 2, "nsPerElement", "aggregate ns/element" if scales.get(contended) else "ns/element",
                        "ns_per_element")
                for contended in results.role("contendedScenarios") or []]
    return [m for m in out if m.scenario is not None
            and (m.key == "instructions" and results.profiles or results.ok_rows(m.scenario))]


def verdict_of(results, m):
    """The tool's verdict of the question row `m` measures (`stepbench show document`'s `verdicts`), or None."""
    return next((v for (sc, t, metric, _), v in results.verdicts.items()
                 if (sc, t, metric) == (m.scenario, m.threads, m.metric)), None) if m.metric else None


def best_decided(results, m, designs):
    """The designs the tool decides lead row `m` among the designs without the peers
    (`designs`), as a set: for exact instructions their fewest (`fewest`); for a timing the
    question's verdict (its winner, or the designs equivalent within the margin), where the
    question is one the verdict asks, else the ranking's best (separated round by round from
    every other); empty where it decides none, and on allocations."""
    values = {d for d in designs if m.value(results, d) is not None}
    if m.key == "instructions":
        decision = results.fewest.get((m.scenario, "designs")) or {}
    elif m.metric:
        v = verdict_of(results, m)
        if v is not None:
            return set(v["leaders"]) if v["decided"] and set(v["leaders"]) <= values else set()
        decision = results.rankings.get((m.scenario, m.threads, m.metric, "designs")) or {}
    else:  # allocations: the table says what they are, and decides nothing on them
        return set()
    return {decision["best"]} if decision.get("best") in values and values <= {
        s["design"] for s in decision.get("standings", [])} else set()


def floor_cell(results, m, with_ci=False):
    """The row's floor: the scenario's own (the catalog's), and for the per-element question the
    API floor (the stepping API with no synchronisation) beside it."""
    parts = []
    for floor in (floor_in(results.catalog, m.scenario),
                  catalog(results, "apiFloorScenario") if m.scenario == results.role("perElementScenario") else None):
        if not floor:
            continue
        probe = Measure(floor, m.threads, m.key, m.label, m.metric)
        value = probe.cell(results, "floor", with_ci)
        if value != "–":
            parts.append(f"{floor} {value}")
    return "; ".join(parts)


def designs_table(results, wide=False):
    designs = [d for d in results.designs() if d not in peers(results)]
    out = ["Medians of the run's repetitions" + (" [95% interval]" if wide else "")
           + "; **bold**: the fewest exact instructions, or the question's decided answer (the tool's verdict: the "
             "fastest, separated round by round from every other design, or the designs equivalent within the "
             "margin); no bold: not decided by this run.", "",
           "| | " + " | ".join(f"`{d}`" for d in designs) + " | own floor |",
           "|---|" + "---:|" * len(designs) + "---|"]
    for m in measures(results, wide):
        best = best_decided(results, m, designs)
        cells = [m.cell(results, d, wide) for d in designs]
        cells = [f"**{c}**" if d in best else c for d, c in zip(designs, cells)]
        out.append(f"| {m.row_name()} | " + " | ".join(cells) + f" | {floor_cell(results, m, wide)} |")
    return out


# ---------------------------------------------------------------------------------------------
# Blocks: each renders lines from Sources


def render_designs(sources):
    """README "What the numbers say": the designs on the questions the report answers, and
    what the files say of them."""
    return designs_table(sources.results) + [""] + designs_said(sources)


def render_method_designs(sources):
    """METHOD.md: every scenario the method discusses, with the 95% intervals."""
    return designs_table(sources.results, wide=True) + [""] + designs_said(sources)


def designs_said(sources):
    """The claims under the designs table, one paragraph, each from the files: the default
    design's instructions over the API floor, and who is faster round by round on each timed
    question."""
    r = sources.results
    default = catalog(r, "defaultDesign")
    lines = []
    split = next((c for c in r.cost_splits if c["path"] == r.role("perElementScenario") and c["design"] == default), None)
    if split:
        api = catalog(r, "apiFloorScenario") or "the API floor"
        lines.append(f"`{default}`, the default, costs {fmt(split['synchronisation'])} instructions per element over "
                     f"`{api}` in {split['path']} ({fmt(split['instructions'])} against {fmt(split['floorStep'])}); "
                     f"`{api}` (the stepping API, unsynchronised) is itself {fmt(split['api'])} over a plain subscriber "
                     f"({fmt(split['floor'])}).")
    designs = [d for d in r.designs() if d not in peers(r)]
    said = [_round_by_round(r, m, designs) for m in measures(r) if m.metric]
    lines.append("Round by round (`stepbench show ranking`: the fastest median against the next, 95% interval of their "
                 "ratio): " + "; ".join(s for s in said if s) + ".")
    return [" ".join(lines)]  # one paragraph


def _round_by_round(results, m, designs):
    ranking = results.rankings.get((m.scenario, m.threads, m.metric, "designs")) or {}
    ranked = [s["design"] for s in ranking.get("standings", []) if s["design"] in designs]  # the tool's order
    if len(ranked) < 2:
        return ""
    first, second = ranked[:2]
    pair = ranking_pair(results, m.scenario, m.threads, m.metric, first, second)
    winner = decided_faster(pair)
    what = f"{m.scenario} ×{m.threads} {'p50' if m.metric == 'latency_p50' else 'ns/element'}"
    v = verdict_of(results, m)
    if not winner and v is not None and v["outcome"] == "equivalent" and second in v["leaders"]:
        return f"{what}: `{first}` and `{second}` are equivalent within ±{v['margin']:.0%} ({interval(pair)})"
    if not winner and v is not None:
        return f"{what}: not decided between `{first}` and `{second}` ({interval(pair)})"
    if winner:
        loser = second if winner == first else first
        return f"{what}: `{winner}` is faster than `{loser}` ({interval(pair)})"
    return f"{what}: `{first}` and `{second}` tie ({interval(pair)})"


def _paragraphs(lines):
    out = []
    for line in lines:
        out += [line, ""]
    return out[:-1]


class PeerRows:
    """Each peer on the per-element question, beside the default design: its time, the ratio,
    the rounds' verdict, and (where the files have the direct rows) the library used directly
    and the bridge to the stepper contract."""

    def __init__(self, results):
        self.r = results
        self.scenario = results.role("perElementScenario")
        self.default = catalog(results, "defaultDesign")
        self.peers = peers(results)
        self.direct = direct_scenario(results)
        self.bridges = {b["design"]: b for b in results.bridges}  # the tool's split
        self.has_direct = any(p in self.bridges for p in self.peers)

    def ns(self, design):
        return median(self.r, self.scenario, design, 1, "nsPerElement")

    def ratio(self, peer):
        base, value = self.ns(self.default), self.ns(peer)
        return value / base if base and value else None

    def pair(self, peer):
        return ranking_pair(self.r, self.scenario, 1, "ns_per_element", self.default, peer)

    def bridge(self, peer):
        """The tool's split of `peer` (``BridgeSplit``: its direct row and its bridge), or {}."""
        return self.bridges.get(peer, {})


def round_share(bridge):
    """A bridge's share of its direct row round by round with its 95% interval (the tool's
    ``BridgeSplit``), in whole per cent ("0%", never "-0%"); – with too few rounds."""
    if bridge.get("roundShare") is None:
        return "–"
    low, mid, high = (round(100 * bridge[k]) for k in ("roundShareLow", "roundShare", "roundShareHigh"))
    return f"{mid}% [{low}%, {high}%]"


def render_peers(sources):
    """README and PEERS.md: each peer against the default design on the per-element question,
    and its split into the library's cost and the bridge's once the files have direct rows."""
    p = PeerRows(sources.results)
    head = f"| peer | {p.scenario} ×1, ns/element | × `{p.default}` | round by round |"
    rule = "|---|---:|---:|---|"
    if p.has_direct:
        head += (" direct, ns/element | bridge (peer − direct), ns | bridge / direct | round by round |"
                 " the same in instructions |")
        rule += "---:|---:|---:|---:|---:|"
    legend = (f"Medians of the run's repetitions; × `{p.default}`: the peer's median over `{p.default}`'s; round by "
              "round: `stepbench show ranking`'s 95% interval of their ratio, a verdict only where it clears 1.")
    if p.has_direct:
        legend += (f" Direct: the peer's library consuming the same upstream with no stepper contract "
                   f"({p.direct}); the bridge is what the stepper contract adds: by medians, round by round with its "
                   "95% interval (one that holds 0 does not separate the peer from its library), and in exact "
                   "instructions (the profile).")
    out = [legend, "", head, rule,
           f"| `{p.default}` (the default) | {fmt(p.ns(p.default))} | 1 | |" + (" | | | | |" if p.has_direct else "")]
    for peer in p.peers:
        winner = decided_faster(p.pair(peer))
        verdict = f"`{winner}` faster, {interval(p.pair(peer))}" if winner else f"tie, {interval(p.pair(peer))}"
        ratio = p.ratio(peer)
        line = f"| `{peer}` | {p.ns(peer) and fmt(p.ns(peer)) or status(p.r, p.scenario, peer, 1) or '–'} | " \
               f"{f'{ratio:.1f}×' if ratio else '–'} | {verdict} |"
        if p.has_direct:
            b = p.bridge(peer)
            instructions = b.get("bridgeInstructionShare")
            line += (f" {fmt(b['directNsPerElement'])} | {fmt(b['bridgeNsPerElement'])} | {b['bridgeShare']:.0%} | "
                     f"{round_share(b)} | {'–' if instructions is None else f'{instructions:.0%}'} |" if b else
                     " – | – | – | – | – |")
        out.append(line)
    return out + [""] + peers_said(sources)


def peers_said(sources):
    """The one-line claim about the peers, decided: the ratio range over the peers the rounds
    separate from the default design, and the ties named."""
    p = PeerRows(sources.results)
    beaten = [peer for peer in p.peers if decided_faster(p.pair(peer)) == p.default and p.ratio(peer)]
    others = [peer for peer in p.peers if peer not in beaten]
    lines = []
    if beaten:
        ratios = sorted(p.ratio(peer) for peer in beaten)
        span = f"{ratios[0]:.1f}×" if len(ratios) == 1 else f"{ratios[0]:.1f}–{ratios[-1]:.1f}×"
        lines.append(f"In {p.scenario} ×1 `{p.default}` is faster round by round than "
                     + ", ".join(f"`{x}`" for x in beaten) + f": each peer takes {span} its time per element"
                     + (f"; not decided against " + ", ".join(f"`{x}`" for x in others) if others else "") + ".")
    elif p.peers:
        lines.append(f"In {p.scenario} ×1 the rounds separate `{p.default}` from no peer.")
    shares = [(peer, p.bridge(peer)) for peer in p.peers if p.bridge(peer)]

    def separated(b):  # the rounds separate the peer from its library (the tool's interval clears 0)
        return b.get("roundShareLow") is not None and (b["roundShareLow"] > 0 or b["roundShareHigh"] < 0)

    def exact(b):
        return (f", {b['bridgeInstructionShare']:.0%} in instructions" if b.get("bridgeInstructionShare") is not None
                else "")
    timed = [(peer, b) for peer, b in shares if separated(b)]
    if timed:
        lines.append("The bridge to the stepper contract costs " + ", ".join(
            f"`{peer}` {fmt(b['bridgeNsPerElement'])} ns ({b['bridgeShare']:.0%} of its direct row" + exact(b) + ")"
            for peer, b in timed) + ".")
    untimed = [(peer, b) for peer, b in shares if not separated(b)]
    if untimed:
        lines.append("The rounds do not separate " + ", ".join(f"`{peer}`" for peer, _ in untimed)
                     + " from " + ("its" if len(untimed) == 1 else "their") + " library in time ("
                     + "; ".join(f"`{peer}` {round_share(b)}" + exact(b) for peer, b in untimed) + ").")
    return _paragraphs(lines)


#: The runtime's generic-metadata look-ups, by the function names callgrind gives them.
METADATA = re.compile(r"getGenericMetadata|MetadataCacheKey|GenericCacheEntry|swift::Metadata")


def render_peers_detail(sources):
    """PEERS.md: the default design and every peer on each question the designs are measured
    on, with the exact counts and the share of the runtime's generic-metadata look-ups."""
    r = sources.results
    shown = [catalog(r, "defaultDesign")] + peers(r)
    out = ["Medians of the run's repetitions; \"excluded\": the design declares breaking the rule the scenario "
           "races fatal (below).", "",
           "| | " + " | ".join(f"`{d}`" for d in shown) + " |", "|---|" + "---:|" * len(shown)]
    for m in measures(r, wide=True):
        out.append(f"| {m.row_name()} | " + " | ".join(m.cell(r, d) for d in shown) + " |")
        if m.key == "instructions":
            out.append(f"| of which the runtime's generic-metadata look-ups (among the top functions) | "
                       + " | ".join(_metadata(r, m.scenario, d) for d in shown) + " |")
    return out


def _metadata(results, scenario, design):
    profile = next((p for p in results.profiles if p["scenario"] == scenario and p["design"] == design), None)
    if not profile:
        return "–"
    total = sum(f.get("instructionsPerElement") or 0 for f in profile.get("topFunctions", [])
                if METADATA.search(f["function"]))
    return f"≥ {fmt(total)}" if total else "0"


def render_api_split(sources):
    """METHOD.md "What the API costs": instructions per event of each path for the plain floor,
    the API floor (its part over the floor) and each exactly counted design over the API floor,
    its synchronising instructions over the API floor's in brackets."""
    r = sources.results
    api = catalog(r, "apiFloorScenario")
    splits = [c for c in r.cost_splits if c.get("exact", True)]
    designs = [d for d in r.designs() if d not in peers(r) and any(c["design"] == d for c in splits)
               and d != catalog(r, "referenceDesign")]
    order = [p["name"] for p in catalog(r, "paths", [])]
    paths = sorted({c["path"] for c in splits}, key=lambda x: (x in order, order.index(x) if x in order else -1))
    out = [f"Instructions per event (`stepbench profile`'s `costSplits`); the designs' columns are over {api}, in "
           f"brackets their synchronising instructions over {api}'s.", "",
           f"| path | floor | {api} (API) | " + " | ".join(f"`{d}`" for d in designs) + " |",
           "|---|---:|---:|" + "---:|" * len(designs)]
    for path in paths:
        cell = {c["design"]: c for c in splits if c["path"] == path}
        any_split = next(iter(cell.values()))
        api_cell = fmt(any_split["floorStep"]) + (f" (+{fmt(any_split['api'])})" if any_split.get("api") is not None else "")
        cells = []
        for d in designs:
            c = cell.get(d)
            sync = c and c.get("synchronisingOverFloorStep")
            cells.append("–" if not c else f"+{fmt(c['synchronisation'])}" + (f" ({fmt(sync)})" if sync is not None else ""))
        out.append(f"| {path} | {fmt(any_split.get('floor'))} | {api_cell} | " + " | ".join(cells) + " |")
    return out


def render_api_targets(sources):
    """METHOD.md "Against the targets": each target of "What the API costs", met or not, as the
    tool decides them (`stepbench show document`'s `targets`: the limits are the tool's)."""
    out = ["", "| target | now |", "|---|---|"]
    for t in sources.results.targets:
        out.append(f"| {t['target']} | {_target_cell(t)} |")
    return out


def _target_cell(t):
    """'met: +66 (1,057 against 991)', '**not met**: 1.62× (…)', or why there is no verdict."""
    if not t["measured"] and t["kind"] in ("overFloor", "synchronising", "times"):
        return "not in these files"
    if t.get("met") is None or t.get("value") is None:
        return "–"
    verdict, v = "met" if t["met"] else "**not met**", t["value"]
    return {"overFloor": lambda: f"{verdict}: +{fmt(v)} ({fmt(t['instructions'])} against {fmt(t['floorStep'])})",
            "synchronising": lambda: f"{verdict}: {fmt(v)}",
            "times": lambda: f"{verdict}: {v:.2f}× ({fmt(t['a'])} against {fmt(t['b'])} ns)",
            "allocations": lambda: f"{verdict}: {v:.2f}",
            "ratioToFloor": lambda: f"{verdict}: {v:.2f}×"}[t["kind"]]()


def render_conformance(sources):
    """The rule × design table `scripts/conformance` wrote (conformance.md), as it wrote it."""
    return [""] + sources.table()


RENDERERS = {
    "designs": render_designs,
    "method-designs": render_method_designs,
    "peers": render_peers,
    "peers-detail": render_peers_detail,
    "api-split": render_api_split,
    "api-targets": render_api_targets,
    "conformance": render_conformance,
}


def render(block):
    """The block's content lines (between its markers): the provenance, then the rendered lines
    (a legend first continues its paragraph). A comment line ends its own HTML block and may
    interrupt a paragraph, so the markers need no blank lines around them."""
    sources = Sources(block.files)
    try:
        body = RENDERERS[block.name](sources)
        return [sources.provenance()] + body
    except (ResultsError, tool.ToolError) as e:
        raise FiguresError(f"{block.where()}: block '{block.name}': {e}")


# ---------------------------------------------------------------------------------------------
# Tables outside blocks

#: A table row quotes a measured value when some cell holds a figure only a measurement gives:
#: anywhere in a cell, a number with thousands separators (1,057), a duration (2.4 µs, 80 ns)
#: or a ratio (25×, ×1.27); or a cell that is a figure by itself with a decimal or an interval
#: (93.8, **0.00**, +66.5, 584 [524, 669]). Integers alone (rule ids, threads, "3 compare-exchanges": counts the code
#: fixes) and decimals inside prose cells (a version, a 0.2 s budget) are not.
MEASURED = re.compile(r"(?<![\w.,])(\d{1,3}(,\d{3})+(?![\d.])|\d+(\.\d+)?\s?(ns|µs|us|ms)\b|\d+(\.\d+)?×|×\s?\d)")
FIGURE_CELL = re.compile(r"^\**[+≥~−-]?(\d+\.\d+\**(\s*\[[^\]]*\])?|\d+\**\s*\[[^\]]*\])$")


def quotes_measurement(row):
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    return any(MEASURED.search(c) or FIGURE_CELL.match(c) for c in cells)


#: The line (the nearest non-blank one) before a table whose figures are a method fact measured
#: at a named commit, not the current results: `<!-- measured at <commit>: why -->`.
MEASURED_AT = re.compile(r"^<!-- measured at (?P<commit>[0-9a-f]{7,40})\b.*-->$")


def measured_tables(document, lines):
    """(line, text) of the first row that quotes a measured figure in each table outside every
    figures block and every fenced code block, unless the table is marked `measured at`."""
    inside = set()
    for b in blocks(document, lines):
        inside.update(range(b.start, b.end + 1))
    found, fenced, table_start, flagged = [], False, None, False
    for i, raw in enumerate(lines):
        line = raw.rstrip("\n")
        if line.startswith("```"):
            fenced = not fenced
        is_row = line.startswith("|") and not fenced and i not in inside
        if not is_row:
            table_start, flagged = None, False
            continue
        if table_start is None:
            table_start, flagged = i, _marked(lines, i)
        if not flagged and quotes_measurement(line):
            found.append((i + 1, line))
            flagged = True
    return found


def _marked(lines, index):
    for j in range(index - 1, -1, -1):
        if lines[j].strip():
            return bool(MEASURED_AT.match(lines[j].strip()))
    return False


#: A measured figure in prose: a duration in ns or µs, a ratio with decimals (1.25×, ×1.27) or
#: a whole one (25×), or a count of instructions (1,058 instructions). Milliseconds and seconds
#: in prose are settings here (a 20 ms request, a 0.2 s budget), a bare count is a setting or a
#: tally (4,000 inputs, 9,800 series), and ×2 after a scenario is its thread count.
MEASURED_IN_PROSE = re.compile(
    r"(?<![\w.,])(\d[\d,]*(\.\d+)?\s?(ns|µs|us)\b|\d+(\.\d+)?×(?!\s?\d)|×\d+\.\d+|\d[\d,]*\s+instructions\b)")
#: A commit named in prose (`8a3d099`, "at 41a2c91"): 7 to 40 hex digits, at least one a digit.
COMMIT = re.compile(r"(?<![\w/])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/])")


def measured_prose(document, lines):
    """(line, text) of each paragraph outside every figures block, fenced code block and table
    that names a measured figure (``MEASURED_IN_PROSE``) without naming the commit it was
    measured at: a paragraph may record a measurement of the past as a dated fact, but today's
    figures and winners are the blocks' (drawn from the committed run)."""
    inside = set()
    for b in blocks(document, lines):
        inside.update(range(b.start, b.end + 1))
    found, fenced, paragraph = [], False, []

    def close():
        text = " ".join(lines[j] for j in paragraph)
        hit = MEASURED_IN_PROSE.search(text)
        if hit and not COMMIT.search(text):
            line = next(j for j in paragraph if MEASURED_IN_PROSE.search(lines[j])) if any(
                MEASURED_IN_PROSE.search(lines[j]) for j in paragraph) else paragraph[0]
            found.append((line + 1, lines[line].strip()))
        paragraph.clear()

    for i, raw in enumerate(lines):
        line = raw.strip()
        if line.startswith("```"):
            fenced = not fenced
            close()
            continue
        if fenced or i in inside or not line or line.startswith("|") or line.startswith("<!--") or line.startswith("#"):
            close()
            continue
        paragraph.append(i)
    close()
    return found


# ---------------------------------------------------------------------------------------------
# Updating and checking documents


def documents():
    """README.md and every docs/*.md of the checkout."""
    return [os.path.join(tool.ROOT, "README.md")] + sorted(glob.glob(os.path.join(tool.ROOT, "docs", "*.md")))


def rendered(document):
    """The document's lines with every block re-rendered, and its blocks."""
    with open(document) as f:
        lines = f.read().split("\n")
    found = blocks(document, lines)
    out, last = [], 0
    for b in found:
        out += lines[last:b.start + 1] + render(b)
        last = b.end
    return lines, out + lines[last:], found


def differences(document):
    """For each block whose content differs from what its files give: (block, line, expected,
    found), the first differing line (1-based, in the document as it is)."""
    lines, fresh, found = rendered(document)
    out = []
    for b in found:
        want, have = render(b), lines[b.start + 1:b.end]
        for k in range(max(len(want), len(have))):
            w = want[k] if k < len(want) else "(nothing)"
            h = have[k] if k < len(have) else "(nothing)"
            if w != h:
                out.append((b, b.start + 2 + k, w, h))
                break
    return out


def write_atomically(path, text):
    """Temporary file in the same folder, then rename: a reader sees the old or the new file."""
    folder = os.path.dirname(path)
    fd, temporary = tempfile.mkstemp(prefix=".figures-", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(temporary, os.stat(path).st_mode & 0o777)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def update(paths):
    """Re-renders every block of `paths`; all are rendered before any is written, so an error
    writes nothing. Returns the documents that changed."""
    fresh = {}
    for path in paths:
        lines, out, _ = rendered(path)
        if out != lines:
            fresh[path] = "\n".join(out)
    for path, text in fresh.items():
        write_atomically(path, text)
    return list(fresh)


def measured_changes(commit, head="HEAD", root=None):
    """The paths of measured code (the library, the peers, the scenarios and the harness that
    measures: ``history_cause.kind_of``, the rule `scripts/history` judges change points by)
    that changed between `commit` and `head`, or None when git does not know `commit`."""
    root = root or tool.ROOT
    done = subprocess.run(["git", "-C", root, "diff", "--name-only", commit, head], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    return [p for p in done.stdout.split() if history_cause.kind_of(p) is not None]


def stale_sources(path, root=None):
    """For each results or profile file the blocks of `path` name: a message when it is no
    run of the code as it stands — made from a dirty tree, of a commit git does not know, or of
    a commit after which measured code changed (re-run scripts/bench and commit its run)."""
    with open(path) as f:
        lines = f.read().split("\n")
    named = dict.fromkeys(f for b in blocks(path, lines) for f in b.files if f.endswith(".json"))
    problems = []
    for name in named:
        machine = load([os.path.join(root or tool.ROOT, name)]).machines[0]
        commit = machine.get("gitCommit", "")
        if machine.get("gitDirty"):
            problems.append(f"{name} was measured on a tree with uncommitted changes (at {commit[:10]}): no published "
                            f"figure comes from one; re-run scripts/bench on a clean checkout and commit its run")
            continue
        changed = measured_changes(commit, root=root)
        if changed is None:
            problems.append(f"{name} was measured at {commit[:10]}, a commit this repository does not know: "
                            f"re-run scripts/bench and commit its run")
        elif changed:
            shown = ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
            problems.append(f"{name} was measured at {commit[:10]}; measured code changed since ({shown}): its "
                            f"figures describe code that no longer exists. Re-run scripts/bench on this machine kind "
                            f"and commit its run")
    return problems


def check(paths):
    """Every disagreement, one message per line (empty: every figure agrees)."""
    problems = []
    stale = {}
    for path in paths:
        shown = os.path.relpath(path)
        for problem in stale_sources(path):
            if problem not in stale:
                stale[problem] = shown
                problems.append(f"{shown}: {problem}")
        for b, line, want, have in differences(path):
            problems.append(f"{shown}:{line}: block '{b.name}' disagrees with {' '.join(b.files)}:\n"
                            f"    expected: {want}\n    found:    {have}")
        with open(path) as f:
            lines = f.read().split("\n")
        for line, text in measured_prose(path, lines):
            problems.append(f"{shown}:{line}: prose outside any figures block names a measured figure without the "
                            f"commit it was measured at (quote today's figures through a block, or date the "
                            f"measurement: 'measured at <commit>'):\n    {text[:160]}")
        for line, text in measured_tables(path, lines):
            problems.append(f"{shown}:{line}: a table outside any figures block quotes measured values "
                            f"(make it a block, link the report, or mark it `<!-- measured at COMMIT: why -->`):\n"
                            f"    {text[:160]}")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(prog="scripts/figures", description=__doc__.split("\n")[0])
    parser.add_argument("documents", nargs="*", help="Markdown files (default: README.md and docs/*.md)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a figure disagrees")
    parser.add_argument("--stepbench", help="the stepbench binary to ask (default: $STEPBENCH_BIN, else this checkout's build)")
    args = parser.parse_args(argv)
    paths = [os.path.abspath(p) for p in args.documents] or documents()
    with tool.using(args.stepbench):
        try:
            if args.check:
                problems = check(paths)
                for p in problems:
                    print(f"scripts/figures: {p}", file=sys.stderr)
                return 1 if problems else 0
            for path in update(paths):
                print(f"scripts/figures: rewrote {os.path.relpath(path)}", file=sys.stderr)
        except (FiguresError, tool.ToolError) as e:
            print(f"scripts/figures: {e}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
