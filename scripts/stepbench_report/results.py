"""Results files as the tool reads them (`stepbench show document`), and what the report asks of them."""
from dataclasses import dataclass, field

from . import tool

def floor_in(catalog, scenario):
    """The floor scenario `catalog` (what a results file was written with) compares `scenario` to, or None."""
    return next((s.get("floor") for s in (catalog or {}).get("scenarios", []) if s.get("name") == scenario), None)


def in_order(names, catalog_order=()):
    """`names` (an iterable, in the order first seen) ordered as the catalog lists them, then
    the rest in the order first seen: the order stepbench wrote its rows in."""
    seen = list(dict.fromkeys(names))
    listed = [n for n in catalog_order if n in seen]
    return listed + [n for n in seen if n not in listed]


class ResultsError(Exception):
    """A results file that cannot be used: the message names the file and what to do."""


@dataclass
class Results:
    paths: list
    machine: dict
    configuration: dict
    created_at: str
    rows: list = field(default_factory=list)
    profiles: list = field(default_factory=list)
    harness_warnings: list = field(default_factory=list)
    #: the catalog the files were written with (for older files, today's with the floors of their time)
    catalog: dict = None
    #: the files' machine kind, as the tool names it
    machine_id: str = None
    #: the tool's own catalog (`stepbench list --format json`): the questions a report answers and
    #: what each scenario is (a floor, its unit of work, whether throughput grows with threads)
    tool_catalog: dict = None
    #: `stepbench profile`'s exact counts per event of each (path, design), as the tool wrote them
    path_rows: list = field(default_factory=list)
    #: `stepbench profile`'s split of each design's instructions per event (the API's part, the design's)
    cost_splits: list = field(default_factory=list)
    #: the tool's rankings (`stepbench show ranking`) of each file by (scenario, threads, metric, field:
    #: "all", "designs" without the peers, "asynchronous"), each with its decision (first, best,
    #: ties, ahead); a later file's replace an earlier's
    rankings: dict = field(default_factory=dict)
    #: the tool's fewest exact instructions of each profiled scenario by (scenario, field)
    #: (`stepbench show document`'s `fewest`: decided unless another design counts as few)
    fewest: dict = field(default_factory=dict)
    #: the design targets of "What the API costs", each decided by the tool (`targets`)
    targets: list = field(default_factory=list)
    #: the rows below their own floor with the tool's cause, by (scenario, design, threads,
    #: metric) (`belowFloor`), and the smallest count per element a verdict names (`countNamed`)
    below_floor: dict = field(default_factory=dict)
    count_named: float | None = None
    #: each file's own machine fingerprint (its commit and dirty flag), in the order of `paths`:
    #: `machine` is the first file's with rows, and a combined report draws from every file
    machines: list = field(default_factory=list)
    #: each peer's split into its library (its direct row) and its bridge to the stepper contract,
    #: as the tool computes it (`stepbench show document`'s `bridges`)
    bridges: list = field(default_factory=list)
    #: each peer's direct row beside its plain program and the parts of their difference
    #: (`stepbench show document`'s `plains`)
    plains: list = field(default_factory=list)
    #: the tool's answer to each question of the run by (scenario, threads, metric, field)
    #: (`stepbench show document`'s `verdicts`: winner, equivalent within the margin, open or alone)
    verdicts: dict = field(default_factory=dict)
    #: the equivalence margin the verdicts use (the tool's `equivalenceMargin`)
    equivalence_margin: float | None = None
    #: what else ran while the run timed (`quietness`), and whether that disturbed it
    quietness: dict | None = None
    disturbed: bool = False
    #: the cores' worth of CPU other processes kept busy while the run timed (the tool's)
    other_cores: float | None = None
    #: the rounds `run --decide` added to open questions (`addedRounds`), in order
    added_rounds: list = field(default_factory=list)
    #: everything else the report draws, as the tool answered it in the same call
    #: (`stepbench show report`: the comparison, the conformance verdict, the history), when the
    #: files were loaded for a report (``load_report``); None when loaded alone (``load``)
    report: dict | None = None


    def ok_rows(self, scenario=None):
        return [r for r in self.rows if r.get("status") == "ok" and r.get("summary")
                and (scenario is None or r["scenario"] == scenario)]

    def row(self, scenario, design, threads):
        for r in self.ok_rows(scenario):
            if r["design"] == design and r["threads"] == threads:
                return r
        return None

    def role(self, key):
        """The scenario (or list of them) the tool names for a report's question, e.g.
        "perElementScenario"; None (or []) when the tool names none."""
        return (self.tool_catalog or {}).get(key)

    def facts(self, scenario):
        """What the tool says the scenario is (its catalog entry; the files' when the tool no
        longer has it; {} when neither does)."""
        for catalog in (self.tool_catalog, self.catalog):
            for s in (catalog or {}).get("scenarios", []):
                if s.get("name") == scenario:
                    return s
        return {}

    def is_floor(self, scenario):
        return bool(self.facts(scenario).get("isFloor"))

    def unit(self, scenario):
        """What one unit of the scenario's work is: "element" or "round"."""
        return self.facts(scenario).get("unit", "element")

    def scales_with_threads(self, scenario):
        return bool(self.facts(scenario).get("throughputScalesWithThreads"))

    def floor_of(self, scenario, profiles=False):
        """The floor these results compare `scenario` to (see ``floor_in``), if they hold it
        (its rows, or with `profiles` its instruction counts)."""
        name = floor_in(self.catalog, scenario)
        held = any(p["scenario"] == name for p in self.profiles) if profiles else bool(self.ok_rows(name))
        return name if name and held else None

    def designs(self):
        """Every design (not the floors), in the tool's order."""
        names = [r["design"] for r in self.rows if not self.is_floor(r["scenario"])] + \
            [p["design"] for p in self.profiles if not self.is_floor(p["scenario"])]
        return in_order(names, (self.catalog or {}).get("designs", ()))

    def scenarios(self):
        return in_order((r["scenario"] for r in self.rows),
                        [s["name"] for s in (self.catalog or {}).get("scenarios", [])])

    def asynchronous_designs(self):
        """The designs that deliver on their own executor (from the catalog; none if absent)."""
        return list((self.catalog or {}).get("asynchronousDesigns", []))


def load(paths):
    """Loads one or more results files of one machine kind as the tool reads them (`stepbench
    read`): each checked (its problem named), several combined by the rule `compare` and the CI
    gate use (each row, profile and path measured by one file only; two that measured the same
    are refused, naming both), with the catalog they were written with, their machine kind and
    each file's rankings."""
    if not paths:
        raise ResultsError("no results file given; pass e.g. results/<machine-id>/latest.json")
    try:
        tool_catalog = tool.catalog()
    except tool.ToolError as e:
        raise ResultsError(f"the tool's catalog: {e}")
    try:
        document = tool.ask("show", "document", *paths)
    except tool.ToolError as e:
        raise ResultsError(str(e))
    machines = [document["results"]["machine"]] if len(paths) == 1 else [_machine(p) for p in paths]
    return _results(document, tool_catalog, machines)


#: The report document's schema (`stepbench show report`) these scripts read.
REPORT_SCHEMA = "stepbench-report/1"


def load_report(paths, baseline=None):
    """The files as ``load`` reads them, and everything else a report draws, from one call of the
    tool (`stepbench show report`): what this run is compared with (the baseline given, else the
    previous run of its folder) and the comparison, the conformance verdict beside it and the
    folder's history, kept as the result's `report`."""
    if not paths:
        raise ResultsError("no results file given; pass e.g. results/<machine-id>/latest.json")
    try:
        data = tool.ask("show", "report", *paths, *(["--baseline", baseline] if baseline else []),
                        "--repository", tool.ROOT)
    except tool.ToolError as e:
        raise ResultsError(str(e))
    if data.get("schema") != REPORT_SCHEMA:
        raise ResultsError(f"{tool.binary()} answered `stepbench show report` with schema {data.get('schema')!r}, "
                           f"these scripts read {REPORT_SCHEMA!r}: build this checkout's "
                           "(`swift build -c release --package-path Benchmarks --product stepbench`)")
    try:
        tool_catalog = tool.checked_catalog(data["catalog"])
    except tool.ToolError as e:
        raise ResultsError(f"the tool's catalog: {e}")
    results = _results(data["document"], tool_catalog, data["machines"])
    results.report = data
    return results


def _results(document, tool_catalog, machines):
    """Results from the tool's document of the files (`stepbench show document`)."""
    data = document["results"]
    return Results(paths=document["files"], machine=data["machine"], configuration=data["configuration"],
                   created_at=data.get("createdAt", "?"), rows=data["rows"], profiles=data.get("profiles") or [],
                   harness_warnings=list(data.get("harnessWarnings") or []), catalog=document["catalog"],
                   tool_catalog=tool_catalog, machine_id=document["machineID"], path_rows=data.get("paths") or [],
                   cost_splits=data.get("costSplits") or [], machines=machines, bridges=document.get("bridges") or [], plains=document.get("plains") or [],
                   rankings={(r["scenario"], r["threads"], r["metric"], r.get("field", "all")): r
                             for r in document["rankings"]},
                   fewest={(f["scenario"], f["field"]): f for f in document.get("fewest") or []},
                   targets=document.get("targets") or [],
                   below_floor={(b["scenario"], b["design"], b["threads"], b["metric"]): b
                                for b in document.get("belowFloor") or []},
                   count_named=document["countNamed"],
                   verdicts={(v["scenario"], v["threads"], v["metric"], v["field"]): v
                             for v in document.get("verdicts") or []},
                   equivalence_margin=document.get("equivalenceMargin"), quietness=document.get("quietness"),
                   disturbed=bool(document.get("disturbed")), other_cores=document.get("otherCores"), added_rounds=data.get("addedRounds") or [])


def _machine(path):
    """One file's machine fingerprint, as the tool reads the file alone."""
    try:
        return tool.ask("show", "document", path)["results"]["machine"]
    except tool.ToolError as e:
        raise ResultsError(str(e))
