"""The generation driver both games' zero loops run through (flows/loop_driver.py), on a toy game
whose generations record two steps: resuming, budgets, more generations, claims and the lock."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flows.baghchal_loop import BAGHCHAL_LOOP
from flows.baghchal_loop import STEPS as BAGHCHAL_STEPS
from flows.loop_driver import LoopKind, drive, finished_generations, generation_target
from flows.zero_loop import GO_LOOP
from storage import loops
from storage.locks import BusyError
from tasks.app.loop_view import STEPS as GO_STEPS
from tasks.app.models import ModelRef
from tasks.app.steps import Steps


@dataclass(frozen=True)
class ToySettings:
    loop: str = "toy"
    generations: int = 3
    games: int = 10
    budget: float | None = None

    def resolved(self, recorded: Mapping[str, Any] | None) -> ToySettings:
        """A budget not given is the recorded one (as Baghchal's settings do)."""
        if recorded is None or self.budget is not None:
            return self
        return dataclasses.replace(self, budget=recorded.get("budget"))


class ToyGame:
    """A loop whose generation 0 and steps count what they do."""

    def __init__(self, data: Path):
        self.data, self.made, self.work = data, 0, []

    def initial(self, settings: ToySettings, data_dir: str) -> ModelRef:
        if loops.read_step(Path(data_dir), settings.loop, 0, "initial") is None:
            self.made += 1
            loops.record_step(Path(data_dir), settings.loop, 0, "initial", {"version": 1})
        return ModelRef("toy", 1)

    def kind(self, between: frozenset[str] = frozenset()) -> LoopKind:
        return LoopKind("toy", ("play", "learn"), frozenset({"generations", "budget"}), dataclasses.asdict,
                        self.initial, between_generations=between)

    def run(self, settings: ToySettings, generation: int) -> None:
        step = Steps(self.data, settings.loop, generation).step
        for name in ("play", "learn"):
            step(name, lambda name=name: self.work.append((generation, name)) or {"games": settings.games})


def test_a_loop_runs_every_generation_once_and_a_rerun_does_no_step_twice(tmp_path: Path, capsys):
    game = ToyGame(tmp_path)
    resolved = drive(game.kind(), ToySettings(), tmp_path, game.run)
    assert resolved == ToySettings() and game.made == 1
    assert game.work == [(g, s) for g in (1, 2, 3) for s in ("play", "learn")]
    assert loops.read_settings(tmp_path, "toy") == dataclasses.asdict(ToySettings())
    assert "loop toy: generation 0 is toy/1" in capsys.readouterr().out
    drive(game.kind(), dataclasses.replace(ToySettings(), generations=4), tmp_path, game.run)
    assert game.made == 1 and game.work[6:] == [(4, "play"), (4, "learn")]
    assert finished_generations(tmp_path, "toy", ("play", "learn")) == 4


def test_a_stop_reason_ends_the_loop_before_its_generation(tmp_path: Path, capsys):
    game = ToyGame(tmp_path)
    drive(game.kind(), ToySettings(), tmp_path, game.run, lambda settings, g: "budget spent" if g == 2 else None)
    assert {g for g, _ in game.work} == {1}
    assert "loop toy: budget spent, no generation 2" in capsys.readouterr().out


def test_more_generations_count_an_unfinished_one_as_the_first(tmp_path: Path):
    game = ToyGame(tmp_path)
    drive(game.kind(), dataclasses.replace(ToySettings(), generations=1), tmp_path, game.run)
    loops.record_step(tmp_path, "toy", 2, "play", {"games": 10})  # generation 2 was cut short
    assert generation_target(tmp_path, "toy", ("play", "learn"), 2) == 3
    with pytest.raises(loops.LoopError, match="at least 1"):
        generation_target(tmp_path, "toy", ("play", "learn"), 0)
    resolved = drive(game.kind(), ToySettings(generations=99), tmp_path, game.run, more_generations=2)
    assert resolved.generations == 3
    assert game.work[2:] == [(2, "learn"), (3, "play"), (3, "learn")]  # generation 2's play was recorded


def test_a_rerun_that_changes_the_loop_is_refused_and_a_budget_is_remembered(tmp_path: Path):
    game = ToyGame(tmp_path)
    drive(game.kind(), ToySettings(generations=1, budget=2.0), tmp_path, game.run)
    with pytest.raises(loops.LoopError):
        drive(game.kind(), ToySettings(generations=2, games=20), tmp_path, game.run)
    assert {g for g, _ in game.work} == {1}
    seen = []
    drive(game.kind(), ToySettings(generations=2), tmp_path, game.run,
          lambda settings, g: seen.append(settings.budget))
    assert seen == [2.0, 2.0]  # the stop rule sees the recorded budget


def test_a_setting_of_how_generations_are_played_changes_only_between_generations(tmp_path: Path):
    game, between = ToyGame(tmp_path), frozenset({"games"})
    drive(game.kind(between), ToySettings(generations=1), tmp_path, game.run)
    loops.record_step(tmp_path, "toy", 2, "play", {"games": 10})  # generation 2 was cut short
    with pytest.raises(loops.LoopError, match="may change games only between generations: generation 2 is under way"):
        drive(game.kind(between), ToySettings(generations=2, games=20), tmp_path, game.run)
    assert loops.read_settings(tmp_path, "toy")["games"] == 10 and game.work == [(1, "play"), (1, "learn")]
    drive(game.kind(between), ToySettings(generations=2), tmp_path, game.run)  # finished with its own games
    drive(game.kind(between), ToySettings(generations=3, games=20), tmp_path, game.run)
    assert loops.read_settings(tmp_path, "toy")["games"] == 20
    assert game.work[2:] == [(2, "learn"), (3, "play"), (3, "learn")]
    assert loops.read_steps(tmp_path, "toy")[-2]["games"] == 20  # generation 3 played with the new value


def test_a_second_driver_on_the_same_loop_is_refused(tmp_path: Path):
    game = ToyGame(tmp_path)

    def nested(settings: ToySettings, generation: int) -> None:
        drive(game.kind(), settings, tmp_path, game.run)

    with pytest.raises(BusyError):
        drive(game.kind(), ToySettings(generations=1), tmp_path, nested)
    assert game.work == []


def test_both_games_loops_declare_their_own_steps_to_the_driver():
    assert GO_LOOP.steps == GO_STEPS and BAGHCHAL_LOOP.steps == BAGHCHAL_STEPS
    assert "calibrate" in GO_LOOP.steps and "calibrate" not in BAGHCHAL_LOOP.steps
    assert {GO_LOOP.game, BAGHCHAL_LOOP.game} == {"go", "baghchal"}
    assert {"games", "sims", "reanalyse"} <= GO_LOOP.between_generations and not BAGHCHAL_LOOP.between_generations
