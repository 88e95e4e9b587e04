"""A minute budget sized to the machine: a generation starts only if the loop's learning so far plus
what its last generation took stays within the budget (`flows.zero_loop.is_budget_spent`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from flows.zero_loop import is_budget_spent
from storage import loops


def record_generation(data: Path, generation: int, selfplay_s: float, train_s: float, gate_s: float) -> None:
    for step, seconds in (("start", 0.0), ("selfplay", selfplay_s), ("train", train_s), ("gate", gate_s),
                          ("ladder", 600.0)):  # the ladder only measures: never counted
        loops.record_step(data, "budget", generation, step, {"seconds": seconds, "cpu_seconds": seconds})


def test_the_next_generation_starts_only_if_the_last_ones_time_still_fits(tmp_path: Path):
    assert not is_budget_spent(tmp_path, "budget", 1, 0.5)  # the first always starts
    record_generation(tmp_path, 1, 150.0, 30.0, 0.0)  # 3.0 minutes
    assert not is_budget_spent(tmp_path, "budget", 2, 6.0)  # 3 + 3 = 6 fits
    assert is_budget_spent(tmp_path, "budget", 2, 5.9)
    record_generation(tmp_path, 2, 30.0, 30.0, 0.0)  # a faster generation: 1 minute
    assert not is_budget_spent(tmp_path, "budget", 3, 5.0)  # 4 + 1 = 5: the last one's time predicts
    assert is_budget_spent(tmp_path, "budget", 3, 4.9)


def test_a_begun_generation_is_finished_whatever_the_budget(tmp_path: Path):
    record_generation(tmp_path, 1, 600.0, 60.0, 0.0)
    loops.record_step(tmp_path, "budget", 2, "start", {"seconds": 0.1})
    assert not is_budget_spent(tmp_path, "budget", 2, 1.0)
    assert is_budget_spent(tmp_path, "budget", 3, 1.0)


def test_gozero_run_says_why_the_loop_stopped_short(tmp_path: Path):
    from flows.cli.loop import budget_stop_line
    from tasks.app.loop_settings import LoopSettings

    record_generation(tmp_path, 1, 200.0, 46.0, 0.0)  # 4.1 minutes
    line = budget_stop_line(tmp_path, LoopSettings(loop="budget", generations=4), 10.0)
    assert line is not None and "after generation 1 of 4" in line and "about 4.1 minutes" in line
    assert "10-minute budget" in line and "--minutes 0" in line
    assert budget_stop_line(tmp_path, LoopSettings(loop="budget", generations=1), 10.0) is None


def test_a_candidate_trains_from_the_champion_or_from_the_previous_candidate(tmp_path: Path, monkeypatch):
    """train_from latest: AlphaGo Zero's continual training, the steps of a candidate that failed its
    gate are kept; champion (the default, as loops recorded before it): each candidate starts anew."""
    import flows.zero_loop
    from flows.zero_loop import train_start
    from tasks.app.loop_settings import LoopSettings, loop_record
    from tasks.app.models import ModelRef

    candidates = {1: ModelRef("gozero-9x9", 4), 2: ModelRef("gozero-9x9", 5)}
    monkeypatch.setattr(flows.zero_loop, "loop_version", lambda settings, data, generation: candidates.get(generation))
    champion = ModelRef("gozero-9x9", 3)
    latest = LoopSettings(train_from="latest")
    assert train_start(latest, tmp_path, 1, champion) == champion  # generation 1: nothing before it
    assert train_start(latest, tmp_path, 3, champion) == candidates[2]  # the failed candidate's weights
    assert train_start(latest, tmp_path, 4, champion) == champion  # no candidate 3 registered: the champion
    assert train_start(LoopSettings(), tmp_path, 3, champion) == champion
    resolved = LoopSettings().resolved(None)
    assert "train_from" not in loop_record(resolved)  # old loops' records resume unchanged
    assert loop_record(dataclasses.replace(resolved, train_from="latest"))["train_from"] == "latest"
    from tasks.app.loop_settings import RESUMABLE

    assert "train_from" in RESUMABLE  # a stalled loop may switch to continual training on a rerun


def test_a_cpu_budget_stops_starting_generations_once_the_learning_spent_it(tmp_path: Path):
    from flows.zero_loop import is_cpu_spent

    assert not is_cpu_spent(tmp_path, "budget", 1, 0.1)
    record_generation(tmp_path, 1, 180.0, 90.0, 90.0)  # 360 CPU s of learning; its ladder's 600 s only measure
    assert not is_cpu_spent(tmp_path, "budget", 2, 0.11)
    assert is_cpu_spent(tmp_path, "budget", 2, 0.1)
    loops.record_step(tmp_path, "budget", 2, "start", {"seconds": 0.1, "cpu_seconds": 0.1})
    assert not is_cpu_spent(tmp_path, "budget", 2, 0.1)  # begun: finished whatever the budget
