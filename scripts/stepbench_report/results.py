"""Reading stepbench/2 (and /1) results files, with errors that name the file and the problem."""
import json
import re
from dataclasses import dataclass, field

SCHEMA = "stepbench/2"
# Schemas read: /2 only added fields to /1 (see results/README.md).
READABLE_SCHEMAS = ("stepbench/2", "stepbench/1")
DESIGN_ORDER = ["seed", "locked", "mutex", "atomic", "actor", "actor-stream"]
SCENARIO_ORDER = ["sync-step", "async-step", "stale-storm", "cancel-race", "fan-out",
                  "pace-jitter", "floor-sync", "floor-pingpong", "floor-async", "floor-stale-storm",
                  "floor-cancel-race", "floor-fan-out", "floor-pace"]
# Each scenario's own floor (ScenarioKind.floor), and the floors stepbench/1 files compared to.
FLOOR_OF = {"sync-step": "floor-sync", "async-step": "floor-async", "stale-storm": "floor-stale-storm",
            "cancel-race": "floor-cancel-race", "fan-out": "floor-fan-out", "pace-jitter": "floor-pace"}
LEGACY_FLOOR_OF = {"sync-step": "floor-sync", "stale-storm": "floor-sync", "fan-out": "floor-sync",
                   "async-step": "floor-pingpong"}


def preset(configuration):
    """How much a run measured ("quick", "full"): `configuration.preset`, or `profile` in files
    written before it was called a preset."""
    return configuration.get("preset", configuration.get("profile"))


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

    @property
    def machine_id(self):
        slug = re.sub(r"[^a-z0-9]+", "-", self.machine.get("cpuModel", "").lower()).strip("-")
        return f"{slug or 'unknown-cpu'}-{self.machine.get('cores', 0)}c"

    def ok_rows(self, scenario=None):
        return [r for r in self.rows if r.get("status") == "ok" and r.get("summary")
                and (scenario is None or r["scenario"] == scenario)]

    def row(self, scenario, design, threads):
        for r in self.ok_rows(scenario):
            if r["design"] == design and r["threads"] == threads:
                return r
        return None

    def floor_of(self, scenario):
        """The floor these results compare `scenario` to: its own, or a stepbench/1 file's."""
        for name in (FLOOR_OF.get(scenario), LEGACY_FLOOR_OF.get(scenario)):
            if name and self.ok_rows(name):
                return name
        return None

    def designs(self):
        seen = {r["design"] for r in self.rows if r["design"] != "floor"}
        return [d for d in DESIGN_ORDER if d in seen] + sorted(seen - set(DESIGN_ORDER))

    def scenarios(self):
        seen = {r["scenario"] for r in self.rows}
        return [s for s in SCENARIO_ORDER if s in seen] + sorted(seen - set(SCENARIO_ORDER))


def _load_one(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ResultsError(f"{path}: cannot read ({e.strerror}); pass a results file written by `stepbench run`")
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise ResultsError(f"{path}: not a JSON results file ({e})")
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: not a results file (top level is not an object)")
    schema = data.get("schema")
    if schema not in READABLE_SCHEMAS:
        found = f"'{schema}'" if schema is not None else "missing"
        raise ResultsError(f"{path}: schema is {found}, expected {' or '.join(repr(s) for s in READABLE_SCHEMAS)}; re-run `stepbench run` "
                           f"or use a report script of the matching version")
    for key in ("machine", "configuration", "rows"):
        if key not in data:
            raise ResultsError(f"{path}: malformed {SCHEMA} file: no '{key}'")
    if not isinstance(data["rows"], list):
        raise ResultsError(f"{path}: malformed {SCHEMA} file: 'rows' is not a list")
    for i, row in enumerate(data["rows"]):
        for key in ("scenario", "design", "threads", "status"):
            if not isinstance(row, dict) or key not in row:
                raise ResultsError(f"{path}: malformed {SCHEMA} file: row {i} has no '{key}'")
        if row["status"] == "ok" and "nsPerElement" not in (row.get("summary") or {}):
            raise ResultsError(f"{path}: malformed {SCHEMA} file: row {i} is ok but has no summary")
    return data


def load(paths):
    """Loads one or more files; rows of later files replace the same (scenario, design,
    threads) of earlier ones. The machine and configuration are the last file's."""
    if not paths:
        raise ResultsError("no results file given; pass e.g. results/<machine-id>/latest.json")
    merged = {}
    profiles = {}
    last = None
    for path in paths:
        data = _load_one(path)
        if last is not None and data["machine"].get("cpuModel") != last["machine"].get("cpuModel"):
            raise ResultsError(f"{path}: made on '{data['machine'].get('cpuModel')}', the others on "
                               f"'{last['machine'].get('cpuModel')}'; report one machine kind at a time")
        for row in data["rows"]:
            merged[(row["scenario"], row["design"], row["threads"])] = row
        for p in data.get("profiles") or []:
            profiles[(p["scenario"], p["design"])] = p
        # a profile-only file contributes its instruction counts, not its placeholder config
        if data["rows"] or last is None:
            last = data
    return Results(paths=list(paths), machine=last["machine"], configuration=last["configuration"],
                   created_at=last.get("createdAt", "?"), rows=list(merged.values()),
                   profiles=list(profiles.values()), harness_warnings=list(last.get("harnessWarnings") or []))
