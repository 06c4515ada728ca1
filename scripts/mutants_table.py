"""Prints scripts/mutants' table from `stepbench compare --exact-only --format json` outputs: for
each planted regression, the rows of its design the tool called a regression (its verdicts, not
ours), by the metric that caught them. Exit 0 when every mutant was caught, 2 when one was not,
1 on bad input.

    python3 scripts/mutants_table.py "NAME SECONDS DESIGN COMPARE.json" [...]
"""
from __future__ import annotations

import json
import sys

def caught(comparison: dict, design: str) -> dict[str, list[str]]:
    """The rows the tool called a regression, by metric (the mechanism that caught the mutant):
    'path-or-scenario design (baseline → current)'."""
    found: dict[str, list[str]] = {}
    for row in comparison["rows"]:
        if row["verdict"] != "regression" or row["design"] != design:
            continue
        mechanism = row["metric"]
        before, after = row.get("baseline"), row.get("current")
        change = f" ({before:g} → {after:g})" if before is not None and after is not None else ""
        found.setdefault(mechanism, []).append(f"{row['scenario']} {row['design']}{change}")
    return found


def attributed(comparison: dict, design: str) -> str:
    """The function the tool's attribution ranks first for the design's row whose instructions
    moved most, with its share of that row's Δ ("where it went", from the whole profiles), or
    "—" when the files hold none."""
    mine = [a for a in comparison.get("attributions") or [] if a["design"] == design and a.get("functions")]
    if not mine:
        return "—"
    a = max(mine, key=lambda a: (abs(a["current"] - a["baseline"]), a["target"]))
    first = a["functions"][0]
    changed = a.get("codeChanged") or []
    code = f"; code changed in {', '.join(f'`{k[:60]}`' for k in changed[:3])}" if changed else ""
    into = first.get("inlinedInto")
    inlined = f"; inlined into {', '.join(f'`{k[:60]}`' for k in into[:3])}{', …' if len(into) > 3 else ''}" if into else ""
    freed = first.get("freedIn")
    freeing = f"; with the freeing of what it allocates, in {', '.join(f'`{k[:60]}`' for k in freed[:3])}" if freed else ""
    return (f"`{first['key'][:80]}` {100 * first['share']:.0f}% of {a['target']}'s "
            f"{a['current'] - a['baseline']:+.1f} ({first['cause']}{inlined}{freeing}{code})")


def table(entries: list[tuple[str, int, str, dict]]) -> str:
    lines = ["| mutant | caught | by | rows (baseline → mutant, per element or event) | attributed to | seconds |",
             "|---|---|---|---|---|---|"]
    for name, seconds, design, comparison in entries:
        found = caught(comparison, design)
        rows = "; ".join(f"{r}" for m in found for r in found[m][:3])
        more = sum(len(v) for v in found.values()) - min(3, sum(len(v) for v in found.values()))
        if more > 0:
            rows += f"; … {more} more"
        lines.append(f"| {name} | {'yes' if found else '**no**'} | {', '.join(found) or '—'} | {rows or '—'} | "
                     f"{attributed(comparison, design)} | {seconds} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 1
    entries = []
    for arg in argv[1:]:
        try:
            name, seconds, design, path = arg.split(" ", 3)
            with open(path) as f:
                entries.append((name, int(seconds), design, json.load(f)))
        except (ValueError, OSError, json.JSONDecodeError) as error:
            print(f"mutants_table: bad entry '{arg}': {error}", file=sys.stderr)
            return 1
    print(table(entries))
    return 0 if all(caught(c, d) for _, _, d, c in entries) else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
