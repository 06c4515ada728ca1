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
    missed = comparison(("sync-more", "atomic", "instructions_per_event", 802.7, 802.9, "unchanged"),
                        ("cancel-race", "seed", "allocations_per_element", 93, 135, "regression"))  # not its design
    text = mt.table([("two-exchanges", 95, "atomic", caught), ("invisible", 80, "atomic", missed)])
    lines = text.splitlines()
    assert lines[2].startswith("| two-exchanges | yes | synchronising_instructions_per_event, instructions_per_event |")
    assert "deferred-more atomic (22 → 24)" in lines[2] and "sync-more" not in lines[2]
    assert lines[3].startswith("| invisible | **no** | — |")


def test_exit_status_says_whether_every_mutant_was_caught(tmp_path, capsys):
    assert mt.main(["mutants_table.py", "name-without-seconds"]) == 1
    assert "bad entry" in capsys.readouterr().err
    hit, miss = tmp_path / "hit.json", tmp_path / "miss.json"
    hit.write_text(json.dumps(comparison(("stale-promise", "actor", "instructions_per_event", 86, 90, "regression"))))
    miss.write_text(json.dumps(comparison()))
    assert mt.main(["mutants_table.py", f"a 3 actor {hit}"]) == 0
    assert mt.main(["mutants_table.py", f"a 3 actor {hit}", f"b 4 atomic {miss}"]) == 2


def test_every_patch_applies_to_this_tree():
    patches = sorted(p for p in os.listdir(os.path.join(ROOT, "scripts", "mutants.d")) if p.endswith(".patch"))
    assert len(patches) >= 6
    for patch in patches:
        with open(os.path.join(ROOT, "scripts", "mutants.d", patch)) as f:
            assert f.readline().startswith("# "), f"{patch}: the first line must say what it plants"
        result = subprocess.run(["git", "apply", "--check", os.path.join("scripts", "mutants.d", patch)],
                                cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0, f"{patch} no longer applies: {result.stderr}"


def test_table_names_the_function_the_attribution_ranks_first():
    caught = comparison(("sync-more", "mutex", "instructions_per_event", 700, 706, "regression"))
    caught["attributions"] = [
        {"target": "sync-more", "design": "mutex", "baseline": 700, "current": 706, "remainder": 0.0,
         "functions": [{"key": "swift_retain", "exclusive": 5.0, "inclusive": 5.0, "share": 0.83,
                        "cause": "called more often"},
                       {"key": "MutexSteppingSubscriber.receive(_:)", "exclusive": 1.0, "inclusive": 6.0,
                        "share": 0.17, "cause": "cost per call"}], "edges": [], "runtimeCalls": []},
        {"target": "sync-more", "design": "atomic", "baseline": 1, "current": 90, "remainder": 0.0,
         "functions": [{"key": "elsewhere", "exclusive": 89, "inclusive": 89, "share": 1, "cause": "cost per call"}],
         "edges": [], "runtimeCalls": []}]
    line = mt.table([("retain", 60, "mutex", caught)]).splitlines()[2]
    assert "`swift_retain` 83% of sync-more's +6.0 (called more often)" in line, line
    assert "elsewhere" not in line  # another design's attribution
    assert "| — |" in mt.table([("old", 60, "mutex", comparison())]).splitlines()[2]  # files without whole profiles


def test_table_says_a_function_is_charged_with_the_freeing_of_what_it_allocates():
    caught = comparison(("subscribe-complete", "locked", "instructions_per_event", 5132, 5649, "regression"))
    caught["attributions"] = [
        {"target": "subscribe-complete", "design": "locked", "baseline": 5132, "current": 5649, "remainder": 26.0,
         "functions": [{"key": "Locked.receive(subscription:)", "exclusive": 23.0, "inclusive": 243.0, "share": 0.95,
                        "cause": "its calls changed", "freedIn": ["Locked.__deallocating_deinit"]}],
         "edges": [], "runtimeCalls": []}]
    line = mt.table([("allocation", 77, "locked", caught)]).splitlines()[2]
    assert ("`Locked.receive(subscription:)` 95% of subscribe-complete's +517.0 (its calls changed; with the freeing "
            "of what it allocates, in `Locked.__deallocating_deinit`)") in line, line
