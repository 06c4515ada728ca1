"""`stepbench conform`: the conformance kit's rule × design table, from the real command. The
designs and the rules they declare broken come from the tool's catalog (`list --format json`)."""
import json
import subprocess

from scripts.tests.test_export import stepbench


def catalog():
    done = subprocess.run([stepbench(), "list", "--format", "json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_conform_table_marks_declared_known_issues_and_exits_0():
    cat = catalog()
    reference = cat["referenceDesign"]
    declared = cat["knownIssues"][reference]
    assert declared, "the reference port declares the rules the original breaks"
    clean = next(d for d in cat["designs"] if d not in cat["knownIssues"] and d not in cat["asynchronousDesigns"])
    rules = ["D1"] + declared[:1]
    done = subprocess.run(
        [stepbench(), "conform", "--design", f"{clean},{reference}", "--rule", ",".join(rules), "--format", "markdown"],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("|")]
    assert lines[0] == f"| rule | {clean} | {reference} |"
    cells = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:4]] for line in lines[2:]}
    assert cells["D1"] == ["ok", "ok"]
    assert cells[declared[0]] == ["ok", "known"]
    assert f"{reference} {declared[0]}" in done.stdout, "the known issue is explained under the table"


def test_conform_json_gives_each_cell_its_verdict_kind_and_failures_and_names_the_measured_rules():
    cat = catalog()
    reference = cat["referenceDesign"]
    declared = cat["knownIssues"][reference][0]
    clean = next(d for d in cat["designs"] if d not in cat["knownIssues"] and d not in cat["asynchronousDesigns"])
    done = subprocess.run(
        [stepbench(), "conform", "--design", f"{clean},{reference}", "--rule", f"D1,{declared}", "--format", "json"],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["schema"] == "stepbench-conformance/2" and verdict["conforms"] is True
    assert verdict["designs"] == [clean, reference]
    cells = {(rule["id"], cell["design"]): cell for rule in verdict["rules"] for cell in rule["cells"]}
    assert cells[("D1", clean)]["verdict"] == "passed" and cells[("D1", clean)]["kind"] == "required"
    assert cells[("D1", clean)]["checks"] and cells[("D1", clean)]["failures"] == []
    assert all(c["kind"] == "required" and "rounds" not in c for c in cells[("D1", clean)]["checks"])
    known = cells[(declared, reference)]
    assert known["verdict"] == "known issue" and known["kind"] == "known issue" and known["conforms"] is True
    assert known["knownIssue"]["reason"] and known["failures"], "the failures that show the known issue"
    assert [m["id"] for m in verdict["measured"]] == ["R2"], "R2 is measured, and says so instead of being absent"


def test_conform_refuses_a_measured_rule():
    done = subprocess.run([stepbench(), "conform", "--rule", "R2"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "measured" in done.stderr and "R2" in done.stderr


def test_conform_refuses_an_unknown_rule():
    done = subprocess.run([stepbench(), "conform", "--rule", "Z9"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "unknown rule 'Z9'" in done.stderr and "D1" in done.stderr


def test_a_committed_table_is_drawn_from_its_committed_verdict():
    """Every results/<machine-id>/conformance.md that has a conformance.json beside it is exactly
    what `conform --from` draws from that verdict (scripts/conformance writes both so)."""
    import glob
    import os
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    verdicts = glob.glob(os.path.join(root, "results", "*", "conformance.json"))
    assert verdicts, "no committed conformance verdict: scripts/conformance writes results/<machine-id>/conformance.json"
    for verdict in verdicts:
        drawn = subprocess.run([stepbench(), "conform", "--from", verdict, "--format", "markdown"],
                               capture_output=True, text=True, timeout=60)
        assert drawn.returncode in (0, 2), drawn.stderr
        table = open(os.path.join(os.path.dirname(verdict), "conformance.md")).read()
        assert drawn.stdout == table + "\n" or drawn.stdout == table, f"{verdict}: the committed table is not drawn from it"


def test_conform_from_a_file_that_is_not_a_verdict_says_so(tmp_path):
    bad = tmp_path / "not-a-verdict.json"
    bad.write_text('{"schema": "stepbench/2"}')
    done = subprocess.run([stepbench(), "conform", "--from", str(bad)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "not a conformance verdict" in done.stderr, done.stderr


def test_conform_marks_a_stochastic_check_with_its_rounds_and_says_so_under_the_table(tmp_path):
    cat = catalog()
    clean = next(d for d in cat["designs"] if d not in cat["knownIssues"] and d not in cat["asynchronousDesigns"])
    verdict = tmp_path / "verdict.json"
    done = subprocess.run(
        [stepbench(), "conform", "--design", clean, "--rule", "C7", "--format", "json", "--output", str(verdict)],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    checks = {c["name"]: c for c in json.loads(verdict.read_text())["rules"][0]["cells"][0]["checks"]}
    assert checks["cancel-after-subscribe"] == {
        "name": "cancel-after-subscribe", "torture": True, "kind": "stochastic", "rounds": 500}
    drawn = subprocess.run([stepbench(), "conform", "--from", str(verdict), "--format", "markdown"],
                           capture_output=True, text=True, timeout=60)
    assert drawn.returncode == 0, drawn.stderr
    assert "Stochastic checks: cancel-after-subscribe (C7, 500 rounds)." in drawn.stdout


def test_conform_from_a_verdict_of_the_older_schema_says_to_write_it_again(tmp_path):
    old = tmp_path / "old.json"
    old.write_text('{"schema": "stepbench-conformance/1", "designs": [], "conforms": true, "rules": [], "measured": []}')
    done = subprocess.run([stepbench(), "conform", "--from", str(old)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout
    assert "stepbench-conformance/1" in done.stderr and "scripts/conformance" in done.stderr, done.stderr
