"""scripts/thresholds_policy.py: only exact malloc counts stay gated."""
import json

from scripts import thresholds_policy as tp

CATALOG = {"designs": [], "scenarios": [], "benchmarks": [
    {"name": n, "exactAllocations": e} for n, e in
    [("sync-step_atomic", True), ("sync-step_actor", False), ("floor-pingpong", True), ("cancel-race_locked", False)]]}


def test_only_exact_malloc_counts_stay(tmp_path):
    for name in ["sync-step_atomic", "sync-step_actor", "floor-pingpong", "cancel-race_locked", "renamed-away"]:
        (tmp_path / f"SteppingBenchmarks.{name}.p90.json").write_text(json.dumps({"mallocCountTotal": 20, "wallClock": 5}))
    trimmed, deleted = tp.apply(str(tmp_path), CATALOG)
    assert trimmed == ["floor-pingpong", "sync-step_atomic"]
    assert deleted == ["cancel-race_locked", "renamed-away", "sync-step_actor"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "SteppingBenchmarks.floor-pingpong.p90.json", "SteppingBenchmarks.sync-step_atomic.p90.json"]
    assert json.loads((tmp_path / "SteppingBenchmarks.sync-step_atomic.p90.json").read_text()) == {"mallocCountTotal": 20}
    assert tp.apply(str(tmp_path), CATALOG) == ([], [])  # idempotent
