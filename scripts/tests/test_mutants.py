"""scripts/mutants: its table reads the tool's verdicts, and every planted regression still applies."""
import json
import os
import subprocess

from scripts import mutants_table as mt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def comparison(*rows):
    return {"rows": [dict(scenario=s, design=d, threads=1, metric=m, exact=True, baseline=a, current=b, verdict=v)
                     for s, d, m, a, b, v in rows]}


def test_table_names_the_mechanism_that_caught_each_mutant():
    caught = comparison(("deferred-more", "atomic", "synchronising_instructions_per_event", 22, 24, "regression"),
                        ("deferred-more", "atomic", "instructions_per_event", 1431.5, 1470, "regression"),
                        ("sync-more", "atomic", "instructions_per_event", 802.7, 802.7, "unchanged"))
    missed = comparison(("sync-more", "atomic", "instructions_per_event", 802.7, 802.9, "unchanged"))
    text = mt.table([("two-exchanges", 95, caught), ("invisible", 80, missed)])
    lines = text.splitlines()
    assert lines[2].startswith("| two-exchanges | yes | synchronising_instructions_per_event, instructions_per_event |")
    assert "deferred-more atomic (22 → 24)" in lines[2] and "sync-more" not in lines[2]
    assert lines[3].startswith("| invisible | **no** | — |")


def test_bad_entry_is_an_error(tmp_path, capsys):
    assert mt.main(["mutants_table.py", "name-without-seconds"]) == 1
    assert "bad entry" in capsys.readouterr().err
    path = tmp_path / "c.json"
    path.write_text(json.dumps(comparison()))
    assert mt.main(["mutants_table.py", f"ok 3 {path}"]) == 0


def test_every_patch_applies_to_this_tree():
    patches = sorted(p for p in os.listdir(os.path.join(ROOT, "scripts", "mutants.d")) if p.endswith(".patch"))
    assert len(patches) >= 6
    for patch in patches:
        with open(os.path.join(ROOT, "scripts", "mutants.d", patch)) as f:
            assert f.readline().startswith("# "), f"{patch}: the first line must say what it plants"
        result = subprocess.run(["git", "apply", "--check", os.path.join("scripts", "mutants.d", patch)],
                                cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0, f"{patch} no longer applies: {result.stderr}"
