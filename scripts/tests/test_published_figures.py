"""Each figure written once, by the tool: every measured figure of README.md and docs/*.md sits in
a generated block (scripts/figures) that agrees with the committed files it names, or in a table
marked as measured at a named commit."""
import copy
import json
import os
import pathlib
import re
import subprocess

import pytest

from scripts.stepbench_report import figures, tool
from scripts.stepbench_report.results import load

ROOT = pathlib.Path(tool.ROOT)
DOCUMENTS = [pathlib.Path(p) for p in figures.documents()]
LATEST = "results/amd-epyc-2c/2026-11-27T080413Z.json"


def lines_of(path):
    return path.read_text().split("\n")


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_block_agrees_with_the_files_it_names(document):
    found = figures.differences(str(document))
    assert not found, "\n".join(
        f"{document.relative_to(ROOT)}:{line}: block '{b.name}' disagrees with {' '.join(b.files)} "
        f"(run scripts/figures):\n  expected: {want}\n  found:    {have}" for b, line, want, have in found)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_no_table_outside_a_block_quotes_measured_values(document):
    found = figures.measured_tables(str(document), lines_of(document))
    assert not found, "\n".join(
        f"{document.relative_to(ROOT)}:{line}: a table outside any figures block quotes measured values "
        f"(make it a block, link the report, or mark it <!-- measured at COMMIT: why -->): {text[:120]}"
        for line, text in found)


def test_the_published_figures_are_blocks():
    """README and PEERS.md show the designs and the peers from the committed run; METHOD.md its
    tables: a document that dropped a block would pass the tests above by quoting nothing."""
    names = {p.name: {b.name for b in figures.blocks(str(p), lines_of(p))} for p in DOCUMENTS}
    assert {"designs", "peers"} <= names["README.md"]
    assert {"peers", "peers-detail", "conformance"} <= names["PEERS.md"]
    assert {"method-designs", "api-split", "api-targets"} <= names["METHOD.md"]


def test_a_table_marked_measured_at_names_a_commit_git_knows():
    for document in DOCUMENTS:
        for i, line in enumerate(lines_of(document)):
            marked = figures.MEASURED_AT.match(line.strip())
            if marked:
                done = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{marked['commit']}^{{commit}}"])
                assert done.returncode == 0, f"{document.name}:{i + 1}: no commit {marked['commit']}"


def test_a_planted_disagreement_is_named(tmp_path):
    """An edited figure inside a block fails, naming the document, the block and the line."""
    readme = lines_of(ROOT / "README.md")
    block = next(b for b in figures.blocks(str(ROOT / "README.md"), readme) if b.name == "designs")
    row = next(i for i in range(block.start, block.end) if readme[i].startswith("| sync-step ×1, ns/element"))
    cells = readme[row].split("|")
    cells[2] = " 1,234 "  # the first design's figure
    planted = readme[row] = "|".join(cells)
    copy_ = tmp_path / "README.md"
    copy_.write_text("\n".join(readme))
    found = figures.differences(str(copy_))
    assert [(b.name, line) for b, line, _, _ in found] == [("designs", row + 1)]
    assert found[0][3] == planted


def test_heuristic_tells_measurements_from_method_tables():
    measured = ["| sync-step, ns/element | 542 | **93.8** |", "| a | 2.4 µs |", "| a | 25× |",
                "| a | 1,057 |", "| x | ×1.27 [1.21, 1.34] |", "| a | 584 [524, 669] |"]
    method = ["| D1 | ok | known |", "| `scripts/bench` | Swift 6.3, a 0.2 s budget, 5m27s |",
              "| `atomic` | 3 compare-exchanges + 8 | 0 |", "| peer | OpenCombine 0.14.0's `.values` |",
              "|---|---:|"]
    assert all(figures.quotes_measurement(r) for r in measured)
    assert not any(figures.quotes_measurement(r) for r in method)


def test_errors_name_the_document_and_line(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("# x\n\n<!-- figures:nonsense from results/amd-epyc-2c/2026-11-27T080413Z.json -->\n<!-- /figures:nonsense -->\n")
    with pytest.raises(figures.FiguresError, match=r"doc\.md:3: unknown block 'figures:nonsense'"):
        figures.update([str(doc)])
    doc.write_text("<!-- figures:peers from results/amd-epyc-2c/missing.json -->\n<!-- /figures:peers -->\n")
    with pytest.raises(figures.FiguresError, match=r"doc\.md:1: .*missing\.json, which does not exist"):
        figures.update([str(doc)])
    doc.write_text(f"<!-- figures:peers from {LATEST} -->\ntext\n")
    with pytest.raises(figures.FiguresError, match=r"doc\.md:1: block 'peers' is never closed"):
        figures.update([str(doc)])


def test_update_writes_the_block_and_then_nothing(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(f"# x\n<!-- figures:peers from {LATEST} -->\nstale\n<!-- /figures:peers -->\nafter\n")
    assert figures.update([str(doc)]) == [str(doc)]
    text = doc.read_text()
    assert "stale" not in text and text.endswith("<!-- /figures:peers -->\nafter\n")
    assert "Generated by `scripts/figures` from `results/amd-epyc-2c/2026-11-27T080413Z.json`: run at `9724686`" in text
    assert figures.update([str(doc)]) == [] and figures.differences(str(doc)) == []


def with_direct_rows(tmp_path, share):
    """The committed run with a direct row per peer, written as a file the tool reads: a copy of
    the peer's per-element row in the tool's direct scenario, every time scaled by 1 / (1 + share),
    so that the tool's split (`stepbench show document`'s bridges) gives each bridge `share` of its direct row."""
    plain = load([str(ROOT / LATEST)])
    data = json.loads((ROOT / LATEST).read_text())
    scenario = plain.role("perElementScenario")
    for peer in figures.peers(plain):
        row = copy.deepcopy(next(r for r in data["rows"] if r["scenario"] == scenario and r["design"] == peer
                                 and r["threads"] == 1))
        row["scenario"] = figures.direct_scenario(plain)
        for k in ("median", "ciLow", "ciHigh"):
            row["summary"]["nsPerElement"][k] /= 1 + share
        for rep in row["repetitions"]:
            rep["elapsedNanoseconds"] = int(rep["elapsedNanoseconds"] / (1 + share))
        data["rows"].append(row)
    path = tmp_path / "with-direct.json"
    path.write_text(json.dumps(data))
    return load([str(path)])


class Fixed:
    """Sources holding one Results, for rendering a block from files already read."""

    def __init__(self, results):
        self.results = results


def test_peers_show_the_tools_bridge_split_only_when_the_files_have_direct_rows(tmp_path):
    results = load([str(ROOT / LATEST)])
    plain = figures.render_peers(Fixed(results))
    assert "bridge" not in "\n".join(plain)
    peers = figures.peers(results)
    assert peers and figures.catalog(results, "defaultDesign") not in peers
    direct = with_direct_rows(tmp_path, 0.25)
    assert sorted(b["design"] for b in direct.bridges) == sorted(peers)  # the tool's split, one per peer
    split = figures.render_peers(Fixed(direct))
    head = next(line for line in split if line.startswith("| peer |"))
    assert "direct, ns/element" in head and "bridge (peer − direct), ns" in head and "bridge / direct" in head
    rows = [line.split("|") for line in split if any(line.startswith(f"| `{p}` |") for p in peers)]
    share = head.split("|").index(" bridge / direct ")
    assert len(rows) == len(peers) and all(r[share].strip() == "25%" for r in rows), rows
    assert any("costs" in line and "(25% of its direct row)" in line for line in split)


def test_a_ratio_is_claimed_only_where_the_rounds_decide_it():
    results = load([str(ROOT / LATEST)])
    peers = figures.peers(results)
    pair = figures.ranking_pair(results, "sync-step", 1, "ns_per_element", "atomic", peers[0])
    pair["separated"] = False  # the rounds no longer separate the first peer from atomic
    said = " ".join(figures.peers_said(Fixed(results)))
    claimed = said.split(":")[0]
    assert f"`{peers[0]}`" not in claimed and f"not decided against `{peers[0]}`" in said


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_the_published_runs_are_of_the_code_as_it_stands(document):
    """Every results file a block names is a clean run of a commit after which no measured code
    (the library, the peers, the scenarios, the harness) changed: whoever changes measured code
    re-runs scripts/bench on their machine kind and commits the run."""
    found = figures.stale_sources(str(document))
    assert not found, "\n".join(found)


def _clone(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", str(ROOT), str(clone)], check=True)
    for k, v in (("user.email", "test@example.invalid"), ("user.name", "test")):
        subprocess.run(["git", "-C", str(clone), "config", k, v], check=True)
    return clone


def test_a_planted_stale_run_is_named(tmp_path):
    """A change to the library committed after the published run's commit fails the check,
    naming the file and the changed source; a change to the docs alone does not."""
    clone = _clone(tmp_path)
    readme = str(clone / "README.md")
    assert figures.stale_sources(readme, root=str(clone)) == []
    (clone / "docs" / "METHOD.md").write_text((clone / "docs" / "METHOD.md").read_text() + "\n")
    subprocess.run(["git", "-C", str(clone), "commit", "-qam", "docs only"], check=True)
    assert figures.stale_sources(readme, root=str(clone)) == []
    source = clone / "Sources" / "Stepping" / "SteppingDesign.swift"
    source.write_text(source.read_text() + "\n// a planted change of measured code\n")
    subprocess.run(["git", "-C", str(clone), "commit", "-qam", "planted"], check=True)
    found = figures.stale_sources(readme, root=str(clone))
    assert found and all("Sources/Stepping/SteppingDesign.swift" in f and "Re-run scripts/bench" in f for f in found)


def test_a_planted_dirty_run_is_named(tmp_path):
    clone = _clone(tmp_path)
    readme = clone / "README.md"
    named = [f for b in figures.blocks(str(readme), lines_of(readme)) for f in b.files if f.endswith(".json")]
    data = json.loads((clone / named[0]).read_text())
    data["machine"]["gitDirty"] = True
    (clone / named[0]).write_text(json.dumps(data))
    found = figures.stale_sources(str(readme), root=str(clone))
    assert any(named[0] in f and "uncommitted changes" in f for f in found)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_no_prose_outside_a_block_names_a_figure_of_today(document):
    found = figures.measured_prose(str(document), lines_of(document))
    assert not found, "\n".join(f"{document.relative_to(ROOT)}:{line}: {text[:120]}" for line, text in found)


def test_a_planted_number_in_prose_is_named(tmp_path):
    """A figure written into prose by hand fails --check, naming the line; the same sentence
    dated with the commit it was measured at passes."""
    planted = tmp_path / "PLANTED.md"
    planted.write_text("# A document\n\nOn this machine `atomic` takes 213 ns per element, 1.25× faster than `mutex`.\n")
    found = figures.measured_prose(str(planted), lines_of(planted))
    assert [line for line, _ in found] == [3]
    planted.write_text("# A document\n\nMeasured at b362855: `atomic` took 213 ns per element.\n")
    assert figures.measured_prose(str(planted), lines_of(planted)) == []


def _bold_by_row(document, block_name):
    """{row name: the designs set in bold} of the designs table in `document`'s block."""
    lines = lines_of(document)
    block = next(b for b in figures.blocks(str(document), lines) if b.name == block_name)
    table = [line for line in lines[block.start:block.end] if line.startswith("|")]
    header = [c.strip().strip("`") for c in table[0].strip("|").split("|")]
    out = {}
    for line in table[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[cells[0]] = {header[i] for i, c in enumerate(cells) if i and c.startswith("**")}
    return block, out


def test_one_winner_per_question_everywhere():
    """README's designs block, METHOD's and the committed report's verdict name, for each question
    the tool decides, the designs its verdict names (its winner, or the designs equivalent within
    the margin), and none where it decides none."""
    readme_block, readme = _bold_by_row(ROOT / "README.md", "designs")
    _, method = _bold_by_row(ROOT / "docs" / "METHOD.md", "method-designs")
    results = load([str(ROOT / f) for f in readme_block.files])
    designs = [d for d in results.designs() if d not in figures.peers(results)]
    checked = 0
    for m in figures.measures(results):
        v = figures.verdict_of(results, m)
        if v is None:
            continue
        leaders = set(v["leaders"]) if v["decided"] else set()
        want = leaders if leaders <= set(designs) else set()
        assert readme.get(m.row_name()) == want, (m.row_name(), readme.get(m.row_name()), v)
        assert method.get(m.row_name()) == want, (m.row_name(), method.get(m.row_name()), v)
        checked += 1
    assert checked >= 3
    report = (ROOT / os.path.dirname(readme_block.files[0]) / "report" / "REPORT.md").read_text()
    lines = report.split("## Verdict")[1].split("\n## ")[0].splitlines()
    for v in results.verdicts.values():
        where = f"{v['scenario']} ×{v['threads']}"
        line = next(x for x in lines if where in x or (v["role"] == "perElement" and "Synchronous `.more`" in x))
        said = (line.split(f"{where}: ")[1].split(";")[0].split(". ")[0] if v["role"] == "contended"
                else line.split("**")[1])
        if v["decided"]:
            assert "not decided" not in said and all(f"`{d}`" in said for d in v["leaders"]), (said, v)
        else:
            assert "not decided" in said, (said, v)


def test_the_readme_stays_a_guide():
    """README.md is a guide, not the reference (issue 51): at most 1,500 words outside its
    generated blocks (code and tables count), and the quick start within its first 30 lines;
    what grows goes to docs/ (COMMANDS.md, METHOD.md) and the report."""
    text = (ROOT / "README.md").read_text()
    outside = re.sub(r"<!-- figures:(\S+).*?-->.*?<!-- /figures:\1 -->", "", text, flags=re.S)
    words = len(outside.split())
    assert words <= 1500, f"README.md has {words} words outside its generated blocks (at most 1,500): move reference to docs/"
    first = text.split("\n")[:30]
    assert "## Quick start" in first, "README.md's quick start must begin within its first 30 lines"
