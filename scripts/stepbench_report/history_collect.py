"""scripts/history: a results folder as the tool reads it (`stepbench series`): its runs in commit
order, the files left out, and every series with what its numbers mean. Nothing is derived here."""
from __future__ import annotations

from .history_model import HistoryError, RunFile, Series
from .tool import ToolError, ask


def collect(folder, noise="default"):
    """(runs, skipped, series, the noise profile used, machine id, the default minimum effect) of `folder`.
    noise: a profile's path, "default" for the folder's noise.json if any, or None for none.
    Raises HistoryError with the tool's message."""
    arguments = ["series", folder]
    if noise is None:
        arguments.append("--no-noise")
    elif noise != "default":
        arguments += ["--noise", noise]
    try:
        data = ask(*arguments)
    except ToolError as e:
        raise HistoryError(str(e))
    runs = [RunFile(name=r["file"], kind=r["kind"], has_profiles=r["hasProfiles"], schema=r["schema"],
                    commit=r["commit"], dirty=r["dirty"], created_at=r["createdAt"],
                    commit_time=None if r.get("commitTime") is None else float(r["commitTime"]),
                    ordered_by=r["orderedBy"], index=i)
            for i, r in enumerate(data["runs"])]
    series = [Series(scenario=s["scenario"], design=s["design"], threads=s["threads"], metric=s["metric"],
                     exact=s["exact"], tolerance=s.get("tolerance"), drift_sd=s.get("driftSD"),
                     points=[(runs[p["run"]], p["value"], p.get("logs")) for p in s["points"]],
                     measurements=[{m["name"]: m["value"] for m in p["measurement"]} for p in s["points"]])
              for s in data["series"]]
    return runs, data["skipped"], series, data.get("noiseProfile"), data["machineId"], data["defaultMinEffect"]
