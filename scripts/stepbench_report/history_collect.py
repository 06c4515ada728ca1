"""scripts/history: a results folder as the tool reads it (`stepbench history series`): its runs in commit
order, the files left out, and every series with what its numbers mean, its change points as the
tool found them (and what each file says about how it measured). Nothing is derived here."""
from __future__ import annotations

from .history_cause import FILE_SETTINGS
from .history_model import ChangePoint, HistoryError, RunFile, Series
from .tool import ToolError, ask


def collect(folder, noise="default", min_effect=None, data=None):
    """(runs, skipped, series with their change points, the noise profile used, machine id, the
    minimum effect searched with, the method's constants) of `folder`. noise: a profile's path,
    "default" for the folder's noise.json if any, or None for none; min_effect: None for the
    tool's default; data: the tool's answer when already asked (`stepbench history series` of the
    folder with the defaults). Raises HistoryError with the tool's message."""
    if data is None:
        arguments = ["history", "series", folder] + ([] if min_effect is None else ["--min-effect", str(min_effect)])
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
    # what each file says about how it measured, as the tool read it (FILE_SETTINGS)
    settings = [{key: (r.get("settings") or {}).get(key) for _, key in FILE_SETTINGS} for r in data["runs"]]
    series = [Series(scenario=s["scenario"], design=s["design"], threads=s["threads"], metric=s["metric"],
                     exact=s["exact"], tolerance=s.get("tolerance"), drift_sd=s.get("driftSD"),
                     points=[(runs[p["run"]], p["value"], p.get("logs")) for p in s["points"]],
                     measurements=[{**{m["name"]: m["value"] for m in p["measurement"]}, **settings[p["run"]]}
                                   for p in s["points"]],
                     status=s["detection"]["status"], sampling_sd=s["detection"].get("samplingSD"),
                     change_points=[ChangePoint(index=c["index"], before=c["before"], after=c["after"],
                                                p_value=c["pValue"], regimes=tuple(c["regimes"]),
                                                threshold=c.get("threshold"))
                                    for c in s["detection"]["changePoints"]])
              for s in data["series"]]
    return runs, data["skipped"], series, data.get("noiseProfile"), data["machineId"], data["minEffect"], data["method"]

