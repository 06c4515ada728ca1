"""The command tree (issue 51): every old name still runs, as its new command. The old name's
output and exit status are the new command's, and its stderr says the new name first."""
import json
import os
import shutil
import subprocess

import pytest

from scripts.tests.test_export import FIXTURE, stepbench
from scripts.tests.test_malloc_agreement import row, write_bench, write_results

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
DETECT = json.dumps({"minEffect": 0.05, "series": [
    {"key": "k", "exact": True, "driftSD": None, "tolerance": {"relative": 0.005},
     "values": [100, 100, 100, 110, 110, 110]}]})


def one_design_noise(tmp_path):
    """The noise fixture's rows of one design: `calibrate` runs 100 trials a row, 3 s each in a
    debug build, and the rename is as well shown on one row as on four."""
    with open(os.path.join(FIXTURES, "noise.json")) as f:
        profile = json.load(f)
    profile["entries"] = [e for e in profile["entries"] if e["design"] == "atomic"]
    path = tmp_path / "noise.json"
    path.write_text(json.dumps(profile))
    return str(path)


def arguments(tmp_path):
    """(old words, new words, the arguments both take, stdin) for every renamed command."""
    history = tmp_path / "history"
    shutil.copytree(os.path.join(FIXTURES, "history"), history)
    bench = write_bench(tmp_path, {"sync-step_atomic": 20})
    results = write_results(tmp_path, [row("sync-step", "atomic", [22, 22, 22])])
    return [
        (["read"], ["show", "document"], [FIXTURE], None),
        (["rank"], ["show", "ranking"], [FIXTURE], None),
        (["export"], ["show", "export"], ["--format", "csv", FIXTURE], None),
        (["machine"], ["show", "machine"], [FIXTURE], None),
        (["paired"], ["compare", "--paired"], [FIXTURE] * 6, None),
        (["calibrate"], ["noise", "calibrate"], [one_design_noise(tmp_path), "--trials", "100"], None),
        (["agree"], ["gate", "agree"], [bench, results], None),
        (["series"], ["history", "series"], [str(history), "--no-noise"], None),
        (["detect"], ["history", "detect"], ["-"], DETECT),
    ]


def test_every_old_name_runs_its_new_command_and_names_it(tmp_path):
    for old, new, rest, stdin in arguments(tmp_path):
        by_new = subprocess.run([stepbench(), *new, *rest], input=stdin, capture_output=True, text=True, timeout=300)
        by_old = subprocess.run([stepbench(), *old, *rest], input=stdin, capture_output=True, text=True, timeout=300)
        assert by_new.stdout, f"`stepbench {' '.join(new)}` printed nothing: {by_new.stderr}"
        assert (by_old.returncode, by_old.stdout) == (by_new.returncode, by_new.stdout), " ".join(old)
        note = f"stepbench {old[0]}: renamed `stepbench {' '.join(new)}`; this name will go\n"
        assert by_old.stderr == note + by_new.stderr, " ".join(old)
        assert note not in by_new.stderr


def test_the_help_lists_a_dozen_commands_at_most_and_no_old_name():
    done = subprocess.run([stepbench(), "help"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    listed = [line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ") and line.strip()
              and not line.startswith("   ") and line.split()[0].isalpha()]
    assert 0 < len(listed) <= 12, listed
    for old in ["read", "rank", "export", "machine", "paired", "calibrate", "agree", "series", "detect"]:
        assert old not in listed, f"{old} still listed: {listed}"


@pytest.mark.parametrize("group, default", [(["show"], ["show", "document"]), (["history"], ["history", "series"])])
def test_a_group_without_a_subcommand_runs_its_default(tmp_path, group, default):
    target = FIXTURE if group == ["show"] else os.path.join(FIXTURES, "history")
    extra = [] if group == ["show"] else ["--no-noise"]
    by_group = subprocess.run([stepbench(), *group, target, *extra], capture_output=True, text=True)
    by_default = subprocess.run([stepbench(), *default, target, *extra], capture_output=True, text=True)
    assert by_group.returncode == 0, by_group.stderr
    assert by_group.stdout == by_default.stdout
