"""SVG charts. Every plotted series carries an SVG id `series-<name>` so tests (and people
editing the SVG) can find it."""
import math

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402


COLORS = {"seed": "#7f7f7f", "locked": "#1f77b4", "mutex": "#2ca02c", "atomic": "#d62728",
          "actor": "#9467bd", "actor-stream": "#8c564b", "floor": "#000000"}
MARKERS = {"seed": "s", "locked": "o", "mutex": "^", "atomic": "D", "actor": "v", "actor-stream": "P"}
plt.rcParams.update({"svg.fonttype": "none", "font.size": 10, "axes.grid": True, "grid.alpha": 0.3,
                     "svg.hashsalt": "stepbench"})


def _si(value, _pos=None):
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:g}{unit}"
    return f"{value:g}"


def _duration(value, _pos=None):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if value >= scale:
            return f"{value / scale:g} {unit}"
    return f"{value:g} ns"


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def throughput_single(results, scenario, path, threads):
    """A scenario measured at one thread count: one bar per design, the floor dashed."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    designs = [d for d in results.designs() if results.row(scenario, d, threads)]
    values = [results.row(scenario, d, threads)["summary"]["elementsPerSecond"] for d in designs]
    medians = [v["median"] for v in values]
    err = [[m - v["ciLow"] for m, v in zip(medians, values)], [v["ciHigh"] - m for m, v in zip(medians, values)]]
    bars = ax.bar(designs, medians, yerr=err, capsize=4, color=[COLORS.get(d, "#333333") for d in designs])
    for d, bar in zip(designs, bars):
        bar.set_gid(f"series-{d}")
    floor_name = results.floor_of(scenario)
    floor = results.ok_rows(floor_name)[0] if floor_name else None
    if floor:
        line = ax.axhline(floor["summary"]["elementsPerSecond"]["median"], linestyle="--", color=COLORS["floor"],
                          label=f"floor ({floor_name})")
        line.set_gid("series-floor")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(_si))
    unit = "rounds/s" if scenario == "cancel-race" else "elements/s"
    ax.set_ylabel(f"{unit} (log scale; higher is better)")
    ax.set_title(f"{scenario} ({threads} thread{'s' if threads > 1 else ''}): throughput per design (median, 95% CI)")
    _save(fig, path)


def throughput_vs_threads(results, scenario, path):
    """Elements per second against threads, one line per design, the floor dashed. A scenario
    measured at a single thread count gets bars instead (a one-point line says nothing)."""
    counts = sorted({r["threads"] for r in results.ok_rows(scenario)})
    if len(counts) == 1:
        return throughput_single(results, scenario, path, counts[0])
    fig, ax = plt.subplots(figsize=(7, 4.2))
    threads_seen = set()
    for design in results.designs():
        rows = sorted((r for r in results.ok_rows(scenario) if r["design"] == design), key=lambda r: r["threads"])
        if not rows:
            continue
        xs = [r["threads"] for r in rows]
        ys = [r["summary"]["elementsPerSecond"]["median"] for r in rows]
        lo = [y - r["summary"]["elementsPerSecond"]["ciLow"] for y, r in zip(ys, rows)]
        hi = [r["summary"]["elementsPerSecond"]["ciHigh"] - y for y, r in zip(ys, rows)]
        threads_seen.update(xs)
        line = ax.errorbar(xs, ys, yerr=[lo, hi], label=design, color=COLORS.get(design), marker=MARKERS.get(design, "o"),
                           capsize=3, linewidth=1.6)
        line.lines[0].set_gid(f"series-{design}")
    floor_name = results.floor_of(scenario)
    floor_rows = sorted(results.ok_rows(floor_name), key=lambda r: r["threads"]) if floor_name else []
    if floor_rows and threads_seen:
        if {r["threads"] for r in floor_rows} >= threads_seen:  # a floor of the scenario's own shape
            xs = sorted(threads_seen)
            ys = [next(r for r in floor_rows if r["threads"] == x)["summary"]["elementsPerSecond"]["median"] for x in xs]
        else:  # a stepbench/1 file: one floor-sync row (fan-out's N pipelines scale it by N)
            xs = sorted(threads_seen)
            per = floor_rows[0]["summary"]["elementsPerSecond"]["median"]
            ys = [per * x if scenario == "fan-out" else per for x in xs]
        (line,) = ax.plot(xs, ys, linestyle="--", color=COLORS["floor"], label=f"floor ({floor_name})")
        line.set_gid("series-floor")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(_si))
    unit = "rounds/s" if scenario == "cancel-race" else "elements/s"
    ax.set_ylabel(f"{unit} (log scale; higher is better)")
    ax.set_xlabel("threads")
    ax.set_xticks(sorted(threads_seen) or [1])
    ax.set_title(f"{scenario}: throughput vs threads (median, 95% CI)")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    _save(fig, path)


def _percentile_x(p):
    return -math.log10(1 - p / 100.0)


def latency_distribution(results, scenario, path):
    """Latency against percentile (50 … 99.99, log-spaced), one line per design."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    keys = [(50, "latencyP50"), (90, "latencyP90"), (99, "latencyP99"), (99.9, "latencyP999")]
    for design in results.designs() + ["floor"]:
        source = scenario if design != "floor" else results.floor_of(scenario)
        rows = [r for r in results.ok_rows(source) if r["design"] == design] if source else []
        if not rows:
            continue
        s = rows[0]["summary"]
        pts = [(p, s[k]["median"]) for p, k in keys if s.get(k)]
        p9999 = [rep["latency"]["p9999"] for rep in rows[0]["repetitions"] if rep.get("latency")]
        if p9999:
            pts.append((99.99, sorted(p9999)[len(p9999) // 2]))
        if not pts:
            continue
        label = f"floor ({source})" if design == "floor" else design
        (line,) = ax.plot([_percentile_x(p) for p, _ in pts], [v for _, v in pts], label=label,
                          color=COLORS.get(design), marker=MARKERS.get(design, "."),
                          linestyle="--" if design == "floor" else "-", linewidth=1.6)
        line.set_gid(f"series-{design}")
    ticks = [50, 90, 99, 99.9, 99.99]
    ax.set_xticks([_percentile_x(p) for p in ticks])
    ax.set_xticklabels([f"p{p:g}" for p in ticks])
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(_duration))
    ax.set_xlabel("percentile (log-spaced tail)")
    ax.set_ylabel("latency (log scale; lower is better)")
    ax.set_title(f"{scenario}: latency distribution (median of repetitions)")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    _save(fig, path)


def per_element_bars(results, scenario, key, title, ylabel, path):
    """One bar per design of a per-element metric (allocations, instructions)."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    designs = [d for d in results.designs() if results.row(scenario, d, 1) or results.row(scenario, d, 2)]
    values = []
    for d in designs:
        row = results.row(scenario, d, 1) or results.row(scenario, d, 2)
        values.append(row["summary"][key]["median"] if row["summary"].get(key) else 0.0)
    bars = ax.bar(designs, values, color=[COLORS.get(d, "#333333") for d in designs])
    for d, bar, v in zip(designs, bars, values):
        bar.set_gid(f"series-{d}")
        ax.annotate(f"{v:.2f}" if v < 100 else f"{v:.0f}", (bar.get_x() + bar.get_width() / 2, v),
                    ha="center", va="bottom", fontsize=9)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(0, max(values + [1]) * 1.18)
    _save(fig, path)


def instruction_bars(results, path):
    """Instructions per element (callgrind, exact) per design, sync-step; the floor dashed."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    rows = [p for p in results.profiles if p["scenario"] == "sync-step"]
    order = {d: i for i, d in enumerate(results.designs() + ["actor"])}
    rows.sort(key=lambda p: order.get(p["design"], 99))
    designs = [p["design"] for p in rows]
    values = [p["instructionsPerElement"] for p in rows]
    bars = ax.bar(designs, values, color=[COLORS.get(d, "#333333") for d in designs])
    for d, bar, v in zip(designs, bars, values):
        bar.set_gid(f"series-{d}")
        ax.annotate(f"{v:,.0f}", (bar.get_x() + bar.get_width() / 2, v), ha="center", va="bottom", fontsize=9)
    floor = [p for p in results.profiles if p["scenario"] == "floor-sync"]
    if floor:
        line = ax.axhline(floor[0]["instructionsPerElement"], linestyle="--", color=COLORS["floor"], label="floor (floor-sync)")
        line.set_gid("series-floor")
        ax.legend(loc="upper left", frameon=False)
    ax.set_ylabel("instructions / element")
    ax.set_title("sync-step: instructions per element (callgrind, exact)")
    ax.set_ylim(0, max(values + [1]) * 1.18)
    _save(fig, path)


def repetition_strips(results, scenario, threads, path):
    """Every repetition of every design (and the floor) as a point, ns/element on a log scale:
    the distribution a median summarises. Hollow: the scheduler preempted or migrated a thread
    during that repetition (stepbench/2 `scheduling`)."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    floor_name = results.floor_of(scenario)
    entries = [(d, results.row(scenario, d, threads)) for d in results.designs()]
    if floor_name:
        floor_threads = [r["threads"] for r in results.ok_rows(floor_name)]
        if floor_threads:
            t = threads if threads in floor_threads else floor_threads[0]
            entries.append(("floor", results.row(floor_name, "floor", t)))
    entries = [(d, r) for d, r in entries if r]
    for x, (design, row) in enumerate(entries):
        reps = row.get("repetitions") or []
        ys = [r["elapsedNanoseconds"] / r["elements"] for r in reps]
        disturbed = [bool(r.get("scheduling") and (r["scheduling"]["involuntarySwitches"] or r["scheduling"]["migrations"]))
                     for r in reps]
        n = len(ys)
        xs = [x + (0.5 - (i + 0.5) / n) * 0.5 if n > 1 else x for i in range(n)]
        color = COLORS.get(design, "#333333")
        faces = ["none" if d else color for d in disturbed]
        points = ax.scatter(xs, ys, s=22, facecolors=faces, edgecolors=color, linewidths=1.2)
        points.set_gid(f"series-{design}")
    ax.set_xticks(range(len(entries)))
    ax.set_xticklabels([d for d, _ in entries])
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(_duration))
    ax.set_ylabel("ns per element, each repetition")
    unit = f"{threads} thread{'s' if threads > 1 else ''}"
    ax.set_title(f"{scenario} ({unit}): every repetition (hollow: preempted or migrated)")
    _save(fig, path)
