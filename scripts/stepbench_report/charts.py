"""SVG charts. Every plotted series carries an SVG id `series-<name>` so tests (and people
editing the SVG) can find it."""
import math

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from .results import floor_in  # noqa: E402


# The style key and legend word every floor is drawn under (a chart's, not a name the tool gives).
FLOOR = "floor"


class _ByDesign:
    """A per-design style value, given by the design's position in the tool's order of designs
    (``use_design_order``), so that no design is named here and a new one gets the next value;
    a design seen before the order is set takes the next free position. `floor` has its own."""

    def __init__(self, values, floor):
        self.values, self.floor = values, floor

    def get(self, design, default=None):
        if design == FLOOR:
            return self.floor
        if design not in _ORDER:
            _ORDER.append(design)
        return self.values[_ORDER.index(design) % len(self.values)]

    __getitem__ = get


_ORDER = []


def use_design_order(designs):
    """Fixes every chart's colours and markers to this order of designs (the tool's order)."""
    _ORDER[:] = list(designs)


COLORS = _ByDesign(["#7f7f7f", "#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                    "#bcbd22", "#ff7f0e"], floor="#000000")
MARKERS = _ByDesign(["s", "o", "^", "D", "v", "P", "X", "<", ">", "h"], floor="_")
DESIGN_RANK = _ByDesign(list(range(1000)), floor=1000)
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


def _log_axis(ax, formatter):
    """A log y axis with one tick style: labelled major ticks at 1, 2 and 5 per decade (more
    where the data span less than a decade, so that a short axis still has labels), each in
    `formatter`'s unit words (1k, 2 µs, 5 ms), and unlabelled minor ticks: matplotlib's own
    labels mixed "1k" with "9×10²" on axes shorter than a decade."""
    ax.set_yscale("log")
    low, high = ax.get_ylim()
    subs = (1.0, 2.0, 5.0) if high > 30 * max(low, 1e-12) else (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.yaxis.set_major_formatter(FuncFormatter(formatter))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _mark_oversubscribed(ax, results, threads_seen):
    """Shades the thread counts above the machine's cores: spinning threads then wait for the
    scheduler, and the suite shows those points without deciding on them."""
    cores = (results.machine or {}).get("cores") or 0
    over = sorted(t for t in threads_seen if cores and t > cores)
    if not over:
        return
    span = ax.axvspan(cores + 0.5, max(over) + 0.5, color="#999999", alpha=0.15,
                      label=f"oversubscribed (> {cores} cores): shown, not decided")
    span.set_gid("oversubscribed")


def _slant_design_names(ax):
    """Design names under bars, slanted: ten of them level ran into each other."""
    ax.tick_params(axis="x", labelrotation=20)
    plt.setp(ax.get_xticklabels(), ha="right", rotation_mode="anchor")


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
    # dots on a log axis (a bar's length from an arbitrary bottom would say nothing)
    for i, (d, m) in enumerate(zip(designs, medians)):
        dot = ax.errorbar([i], [m], yerr=[[err[0][i]], [err[1][i]]], fmt=MARKERS.get(d, "o"), capsize=4, markersize=8,
                          color=COLORS.get(d, "#333333"))
        dot.lines[0].set_gid(f"series-{d}")
    ax.set_xticks(range(len(designs)))
    ax.set_xticklabels(designs)
    ax.set_xlim(-0.6, len(designs) - 0.4)
    floor_name = results.floor_of(scenario)
    floor = results.ok_rows(floor_name)[0] if floor_name else None
    if floor:
        line = ax.axhline(floor["summary"]["elementsPerSecond"]["median"], linestyle="--", color=COLORS[FLOOR],
                          label=f"floor ({floor_name})")
        line.set_gid("series-floor")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.set_yscale("log")
    span = [v["ciLow"] for v in values] + [v["ciHigh"] for v in values]
    if floor:
        span.append(floor["summary"]["elementsPerSecond"]["median"])
    span = [v for v in span if v > 0]
    if span:
        ax.set_ylim(min(span) / 1.3, max(span) * 1.3)
    _log_axis(ax, _si)
    ax.set_ylabel(f"{results.unit(scenario)}s/s (log scale; higher is better)")
    ax.set_title(f"{scenario} ({threads} thread{'s' if threads > 1 else ''}): throughput per design (median, 95% CI)")
    _slant_design_names(ax)
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
        else:  # a stepbench/1 file: one single-thread floor row (scaled by N where N threads add work)
            xs = sorted(threads_seen)
            per = floor_rows[0]["summary"]["elementsPerSecond"]["median"]
            ys = [per * x if results.scales_with_threads(scenario) else per for x in xs]
        (line,) = ax.plot(xs, ys, linestyle="--", color=COLORS[FLOOR], label=f"floor ({floor_name})")
        line.set_gid("series-floor")
    _mark_oversubscribed(ax, results, threads_seen)
    _log_axis(ax, _si)
    ax.set_ylabel(f"{results.unit(scenario)}s/s (log scale; higher is better)")
    ax.set_xlabel("threads")
    ax.set_xticks(sorted(threads_seen) or [1])
    ax.set_title(f"{scenario}: throughput vs threads (median, 95% CI)", loc="left")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    _save(fig, path)


def _percentile_x(p):
    return -math.log10(1 - p / 100.0)


def latency_distribution(results, scenario, path):
    """Latency against percentile (50 … 99.99, log-spaced), one line per design."""
    fig, ax = plt.subplots(figsize=(7, 4.2))
    keys = [(50, "latencyP50"), (90, "latencyP90"), (99, "latencyP99"), (99.9, "latencyP999")]
    floor_name = results.floor_of(scenario)
    sources = [(d, scenario) for d in results.designs()] + ([(FLOOR, floor_name)] if floor_name else [])
    for design, source in sources:
        rows = [r for r in results.ok_rows(source) if design == FLOOR or r["design"] == design]
        if not rows:
            continue
        s = rows[0]["summary"]
        pts = [(p, s[k]["median"]) for p, k in keys if s.get(k)]
        p9999 = [rep["latency"]["p9999"] for rep in rows[0]["repetitions"] if rep.get("latency")]
        if p9999:
            pts.append((99.99, sorted(p9999)[len(p9999) // 2]))
        if not pts:
            continue
        label = f"{FLOOR} ({source})" if design == FLOOR else design
        (line,) = ax.plot([_percentile_x(p) for p, _ in pts], [v for _, v in pts], label=label,
                          color=COLORS.get(design), marker=MARKERS.get(design, "."),
                          linestyle="--" if design == FLOOR else "-", linewidth=1.6)
        line.set_gid(f"series-{design}")
    ticks = [50, 90, 99, 99.9, 99.99]
    ax.set_xticks([_percentile_x(p) for p in ticks])
    ax.set_xticklabels([f"p{p:g}" for p in ticks])
    _log_axis(ax, _duration)
    ax.set_xlabel("percentile (log-spaced tail)")
    ax.set_ylabel("latency (log scale; lower is better)")
    ax.set_title(f"{scenario}: latency distribution (median of repetitions)", loc="left")
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
    _slant_design_names(ax)
    _save(fig, path)


def instruction_bars(results, path):
    """Instructions per element (callgrind, exact) per design in the tool's per-element scenario;
    the floor dashed."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    scenario = results.role("perElementScenario")
    rows = [p for p in results.profiles if p["scenario"] == scenario]
    order = {d: i for i, d in enumerate(results.designs())}
    rows.sort(key=lambda p: order.get(p["design"], 99))
    designs = [p["design"] for p in rows]
    values = [p["instructionsPerElement"] for p in rows]
    log = bool(values) and max(values) > 20 * max(min(values), 1)  # one design dwarfs the others
    if log:  # dots on a log axis: a bar's length from an arbitrary bottom would say nothing
        for i, (d, v) in enumerate(zip(designs, values)):
            (dot,) = ax.plot([i], [v], marker=MARKERS.get(d, "o"), markersize=8, linestyle="none",
                             color=COLORS.get(d, "#333333"))
            dot.set_gid(f"series-{d}")
            ax.annotate(f"{v:,.0f}", (i, v), xytext=(0, 7), textcoords="offset points", ha="center", fontsize=9)
        ax.set_xticks(range(len(designs)))
        ax.set_xticklabels(designs)
    else:
        bars = ax.bar(designs, values, color=[COLORS.get(d, "#333333") for d in designs])
        for d, bar, v in zip(designs, bars, values):
            bar.set_gid(f"series-{d}")
            ax.annotate(f"{v:,.0f}", (bar.get_x() + bar.get_width() / 2, v), ha="center", va="bottom", fontsize=9)
    floor_name = results.floor_of(scenario, profiles=True)
    floor = [p for p in results.profiles if p["scenario"] == floor_name]
    if floor:
        line = ax.axhline(floor[0]["instructionsPerElement"], linestyle="--", color=COLORS[FLOOR],
                          label=f"floor ({floor_name})")
        line.set_gid("series-floor")
    api_name = (results.catalog or {}).get("apiFloorScenario")  # the API with no synchronisation
    api = [p for p in results.profiles if p["scenario"] == api_name]
    if api:
        line = ax.axhline(api[0]["instructionsPerElement"], linestyle=":", color=COLORS[FLOOR], linewidth=1.6,
                          label=f"{api_name}: the API, unsynchronised")
        line.set_gid("series-api-floor")
    if floor or api:
        ax.legend(loc="upper left", frameon=False)
    ax.set_title(f"{scenario}: instructions per element (callgrind, exact)")
    if log:
        ax.set_yscale("log")
        # the floors drawn as lines lie within the axis (floor-sync's 530 sat below it, in the
        # legend only)
        lines = [p[0]["instructionsPerElement"] for p in (floor, api) if p]
        ax.set_ylim(min(values + lines) / 1.5, max(values) * 2.5)
        _log_axis(ax, _si)
        ax.set_ylabel("instructions / element (log scale)")
    else:
        ax.set_ylabel("instructions / element")
        ax.set_ylim(0, max(values + [1]) * 1.18)
    _slant_design_names(ax)
    _save(fig, path)


def repetition_strips(results, scenario, threads, path):
    """Every repetition of every design (and the floor) as a point, time per element on a log
    scale: the distribution a median summarises. (Hollow points once marked a repetition the
    scheduler preempted or migrated; on these VMs that is nearly every one, so the marks carried
    nothing: the counts table gives context switches per element.)"""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    floor_name = results.floor_of(scenario)
    entries = [(d, results.row(scenario, d, threads)) for d in results.designs()]
    if floor_name:
        floor_threads = [r["threads"] for r in results.ok_rows(floor_name)]
        if floor_threads:
            t = threads if threads in floor_threads else floor_threads[0]
            entries.append((FLOOR, next(r for r in results.ok_rows(floor_name) if r["threads"] == t)))
    entries = [(d, r) for d, r in entries if r]
    for x, (design, row) in enumerate(entries):
        reps = row.get("repetitions") or []
        ys = [r["elapsedNanoseconds"] / r["elements"] for r in reps]
        n = len(ys)
        xs = [x + (0.5 - (i + 0.5) / n) * 0.5 if n > 1 else x for i in range(n)]
        color = COLORS.get(design, "#333333")
        points = ax.scatter(xs, ys, s=16, color=color, alpha=0.8, linewidths=0)
        points.set_gid(f"series-{design}")
    ax.set_xticks(range(len(entries)))
    ax.set_xticklabels([d for d, _ in entries])
    _slant_design_names(ax)
    ax.set_yscale("log")
    _log_axis(ax, _duration)
    ax.set_ylabel("time per element, each repetition")
    unit = f"{threads} thread{'s' if threads > 1 else ''}"
    ax.set_title(f"{scenario} ({unit}): every repetition")
    _save(fig, path)


def _history_x(ax, files):
    """x = a run's place in commit order, labelled with its short commit (* = dirty tree)."""
    ax.set_xticks(range(len(files)))
    ax.set_xticklabels([f.label for f in files], rotation=45, ha="right", fontsize=8)
    ax.set_xlim(-0.5, len(files) - 0.5)


def _mark_change_points(ax, marks):
    """One vertical line per change-point position (between the last run of the old regime and
    the first of the new), labelled once with its commit along the top (the caller leaves
    headroom there); each design's ratio after/before is written in the design's colour under
    its first new point, so several designs changing at one commit do not stack labels."""
    done = set()
    for x, commit, design, value, ratio in marks:
        if x not in done:
            done.add(x)
            line = ax.axvline(x - 0.5, color="#555555", linestyle=":", linewidth=1.2)
            line.set_gid(f"changepoint-{commit}")
            ax.annotate(commit, (x - 0.5, 0.985), xycoords=("data", "axes fraction"), fontsize=8, ha="center",
                        va="top", color="#333333", bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"})
        # below and right of the point: clear of the dotted line and of the segment rising into it
        text = ax.annotate(f"×{ratio:.2f}", (x, value), xytext=(3, -5), textcoords="offset points", fontsize=8,
                           ha="left", va="top", color=COLORS.get(design, "#333333"), fontweight="bold")
        text.set_gid(f"changepoint-{design}")


def history_trend(history, scenario, path):
    """The paired ratio to the floor of every design of `scenario` over the runs in commit order:
    one panel per thread count, designs as lines, the floor (ratio 1) dashed, called change
    points marked. Returns False (and writes nothing) when no design has a ratio here."""
    series = [s for s in history.series if s.scenario == scenario and s.metric == "ns_per_element_vs_floor"]
    if not series:
        return False
    # the runs that have this scenario's ratio (stepbench/1 runs had no floor of every shape)
    having = {f.name for s in series for f, _, _ in s.points}
    runs = [f for f in history.files if f.name in having]
    place = {f.name: i for i, f in enumerate(runs)}
    threads = sorted({s.threads for s in series})
    low = min(min(s.values) for s in series)
    high = max(max(s.values) for s in series)
    any_marks = False
    fig, axes = plt.subplots(1, len(threads), figsize=(4.6 * len(threads) + 2.0, 4.4), sharey=True, squeeze=False)
    for ax, t in zip(axes[0], threads):
        marks = []
        for s in sorted((s for s in series if s.threads == t), key=lambda s: DESIGN_RANK.get(s.design, 99)):
            xs = [place[f.name] for f, _, _ in s.points]
            (line,) = ax.plot(xs, s.values, color=COLORS.get(s.design, "#333333"), marker=MARKERS.get(s.design, "o"),
                              markersize=4, linewidth=1.4, label=s.design)
            line.set_gid(f"series-{s.design}")
            if s.status != "no-drift-estimate":
                marks += [(xs[c.index], s.points[c.index][0].short, s.design, s.values[c.index], c.ratio)
                          for c in s.change_points]
        floor = ax.axhline(1.0, linestyle="--", color=COLORS[FLOOR], linewidth=1.2, label="floor (= 1)")
        floor.set_gid("series-floor")
        ax.set_yscale("log")
        # headroom above for the change points' commit labels, room below for their ratios
        bottom, top = min(low, 1.0) / 1.4, high * 2.0
        ax.set_ylim(bottom, top)
        # 1-2-5 ticks when the range spans under two decades (else powers of ten), no minor labels
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0) if top / bottom < 100 else (1.0,)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}×"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        _history_x(ax, runs)
        _mark_change_points(ax, marks)
        any_marks = any_marks or bool(marks)
        ax.set_title(f"{t} thread{'s' if t > 1 else ''}", fontsize=10)
    axes[0][0].set_ylabel("ns/element ÷ floor, same round\n(median of repetitions; log scale; lower is better)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        for h, l in zip(*ax.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    axes[0][-1].legend(handles, labels, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    called = " (dotted: change point)" if any_marks else " (no change point)"
    fig.suptitle(f"{scenario}: ratio to its floor, runs in commit order{called}", fontsize=11)
    _save(fig, path)
    return True


def history_instructions(history, results, path):
    """Instructions per element (callgrind, exact) of the tool's per-element scenario and its
    floor over the profiles in commit order, the floor dashed, change points marked. False when
    fewer than two profiles."""
    scenario = results.role("perElementScenario")
    shown = (scenario, floor_in(results.catalog, scenario))
    series = [s for s in history.series if s.metric == "instructions_per_element" and s.scenario in shown]
    profiles = [f for f in history.files if f.has_profiles]
    if not series or len(profiles) < 2:
        return False
    place = {f.name: i for i, f in enumerate(profiles)}
    fig, ax = plt.subplots(figsize=(7.6, 4.2))
    marks = []
    def key(s):  # the floor is drawn as every chart draws floors
        return FLOOR if results.is_floor(s.scenario) else s.design
    for s in sorted(series, key=lambda s: DESIGN_RANK.get(key(s), 99)):
        xs = [place[f.name] for f, _, _ in s.points]
        floor = key(s) == FLOOR
        (line,) = ax.plot(xs, s.values, color=COLORS.get(key(s), "#333333"), marker=None if floor else MARKERS.get(key(s), "o"),
                          linestyle="--" if floor else "-", linewidth=1.4, markersize=5,
                          label=f"{FLOOR} ({s.scenario})" if floor else s.design)
        line.set_gid(f"series-{key(s)}")
        marks += [(xs[c.index], s.points[c.index][0].short, key(s), s.values[c.index], c.ratio) for c in s.change_points]
    _history_x(ax, profiles)
    _mark_change_points(ax, marks)
    top, bottom = max(max(s.values) for s in series), min(min(s.values) for s in series)
    if top > 20 * max(bottom, 1):  # one design dwarfs the others: a log scale keeps them apart
        ax.set_yscale("log")
        ax.set_ylim(max(bottom, 1) * 0.6, top * 2.5)  # headroom for the commit labels
        _log_axis(ax, _si)
        ax.set_ylabel("instructions / element (log scale)")
    else:
        ax.set_ylim(0, top * 1.15)  # headroom for the commit labels
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))
        ax.set_ylabel("instructions / element")
    ax.set_title(f"{scenario}: instructions per element, each profile in commit order (exact)", fontsize=11)
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    _save(fig, path)
    return True
