"""Off a terminal (a pipe, a log) the loop prints what each step adds as it finishes and one line per
generation: before, every step repeated the generation's figures ("gen 1 train done", "gen 1 gate
done", "gen 1 promote done", ... each with games, rows, loss, gate, minutes), the gate's line even
with the gate off."""

from __future__ import annotations

from flows.cli.loop import new_lines


def generation(gate: dict, promoted: bool, threshold_after: float = -0.9, ladder: dict | None = None) -> list[dict]:
    champion = {"name": "gozero-9x9", "version": 1, "uri": "models:/gozero-9x9/1"}
    steps = [("start", {"champion": champion, "resign_threshold": -0.9}),
             ("selfplay", {"games": 200, "rows": 9876, "mean_length": 49.4}),
             ("train", {"candidate": 2, "metrics": {"train/loss": 2.5, "val/policy_top1": 0.45, "val/value_mse": 0.31}}),
             ("gate", gate), ("promote", {"promoted": promoted, "champion": 2 if promoted else 1}),
             ("calibrate", {"resign_threshold": threshold_after}), ("ladder", ladder or {"played": False})]
    return [{"generation": 1, "step": step, "seconds": 60.0, "cpu_seconds": 90.0, **facts} for step, facts in steps]


def test_with_the_gate_off_only_what_steps_add_and_a_generation_line():
    lines = new_lines(generation({"passed": True, "rule": "off", "games": 0, "win_rate": None}, True), set())
    assert lines == ["gen 1 selfplay: 200 games, 9,876 rows, mean length 49.4",
                     "gen 1 train: candidate 2, loss 2.5000, val top1 0.4500, val mse 0.3100",
                     "gen 1 done: champion gozero-9x9/1, 200 games, 9,876 rows, candidate 2, gate off, promoted, "
                     "7.0 min (10.5 CPU min)"]


def test_a_gate_a_promotion_a_new_resign_threshold_and_ladder_games_each_say_their_news():
    gate = {"passed": True, "rule": "sprt", "games": 100, "win_rate": 0.57}
    records = generation(gate, True, threshold_after=-0.8, ladder={"played": True, "elo": 120.4, "elo_stderr": 20.0})
    lines = new_lines(records, set())
    assert lines[2:6] == ["gen 1 gate: 57.0% of 100 games (sprt rule): passed", "gen 1 promote: champion 2",
                          "gen 1 calibrate: resign threshold -0.900 -> -0.800", "gen 1 ladder: Elo +120 ± 39 (95 %)"]
    assert lines[6].startswith("gen 1 done: champion gozero-9x9/1, ") and "gate passed 57% of 100" in lines[6]


def test_each_record_is_said_once_as_records_arrive():
    records = generation({"passed": False, "rule": "fixed", "games": 40, "win_rate": 0.4}, False)
    seen: set = set()
    first = new_lines(records[:3], seen)
    rest = new_lines(records, seen)
    assert len(first) == 2 and not set(first) & set(rest)
    assert rest[0] == "gen 1 gate: 40.0% of 40 games (fixed rule): failed"  # the failed promotion adds nothing
    assert rest[1].startswith("gen 1 done:") and "kept the champion" in rest[1]
