"""scripts/thresholds_policy.py: wall clock stays gated only in single-threaded benchmarks."""
import json

from scripts import thresholds_policy as tp


def test_wall_clock_is_removed_only_where_threads_hand_off(tmp_path):
    for name in ["sync-step_atomic", "sync-step_actor", "floor-sync", "floor-pingpong", "stale-storm_locked"]:
        (tmp_path / f"SteppingBenchmarks.{name}.p90.json").write_text(json.dumps({"mallocCountTotal": 20, "wallClock": 5}))
    assert tp.apply(str(tmp_path)) == ["floor-pingpong", "stale-storm_locked", "sync-step_actor"]
    kept = json.loads((tmp_path / "SteppingBenchmarks.sync-step_atomic.p90.json").read_text())
    dropped = json.loads((tmp_path / "SteppingBenchmarks.floor-pingpong.p90.json").read_text())
    assert kept == {"mallocCountTotal": 20, "wallClock": 5}
    assert dropped == {"mallocCountTotal": 20}
    assert tp.apply(str(tmp_path)) == []  # idempotent
