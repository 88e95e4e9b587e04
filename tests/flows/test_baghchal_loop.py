"""The Baghchal zero loop end to end at toy size: a generation played, trained, gated and promoted in a
real SQLite MLflow under its own model name, its rows 8x augmented, its ladder fitted; a rerun changes
nothing (the loop SIGKILLed and resumed is tests/system/test_baghchal_loop_kill.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from prefect import flow

from flows.baghchal_loop import GATE_SPRT, learning_cpu_hours, play_match, run_baghchal_loop, stop_reason
from flows.runtime import task_runner
from gocore.play.ratings import sprt_of_scores
from storage import atomic as storage_json
from storage import baghchal as files
from storage import loops, registry
from storage.loops import LoopError
from tasks.app.baghchal_settings import ADDED_LATER, BAGHCHAL_RESUMABLE, BaghchalLoopSettings, BaghchalMatchSettings
from tests.flows.test_zero_loop import own_store

SETTINGS = dict(loop="baghchal-toy", generations=1, games=4, games_per_task=2, sims=4, preset="tiny",
                batch_size=16, gate="off", gate_games=2, ladder_games=2, ladder_depth=1, max_plies=60)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory, prefect_harness) -> Path:
    data = tmp_path_factory.mktemp("baghchal") / "data"
    with pytest.MonkeyPatch.context() as monkeypatch:
        own_store(data, monkeypatch)
        run_baghchal_loop(BaghchalLoopSettings(**SETTINGS), str(data), workers=2, device="cpu")
    return data


def is_spent(settings: BaghchalLoopSettings, data: Path, generation: int) -> bool:
    """Whether the loop's budget rule stops before `generation`."""
    return stop_reason(settings, data, generation) is not None

def test_a_generation_is_promoted_under_the_baghchal_model(finished: Path, monkeypatch: pytest.MonkeyPatch):
    own_store(finished, monkeypatch)
    versions = {v.version: v for v in registry.list_versions("baghchal", finished)}
    assert sorted(versions) == [1, 2]
    assert versions[1].tags["promotion_reason"] == "initial" and versions[1].tags["generation"] == "0"
    assert list(versions[2].aliases) == ["champion"] and versions[2].tags["generation"] == "1"
    assert versions[2].tags["loop"] == "baghchal-toy" and "elo" in versions[2].tags
    assert registry.list_models(5, finished) == []  # not a Go model: Go's 5x5 names stay free


def test_its_rows_are_stored_in_all_eight_symmetries_with_records(finished: Path):
    rows = files.read_rows(finished, "baghchal-toy", [1])
    assert len(rows["z"]) > 0 and len(rows["z"]) % 8 == 0
    assert sorted(set(rows["symmetry"].tolist())) == list(range(8))
    assert len(files.read_records(finished, "baghchal-toy", 1)) == 4


def test_steps_are_recorded_and_the_ladder_rates_the_champion(finished: Path):
    steps = {record["step"] for record in loops.read_steps(finished, "baghchal-toy")}
    assert steps == {"start", "selfplay", "train", "gate", "promote", "ladder"}
    ladder = {row["player"] for row in files.read_ladder(finished)}
    assert {"random", "library-d1", "baghchal/2"} <= ladder


def test_a_rerun_plays_nothing_and_other_settings_are_refused(finished: Path, monkeypatch: pytest.MonkeyPatch):
    own_store(finished, monkeypatch)
    before = loops.read_steps(finished, "baghchal-toy")
    summary = run_baghchal_loop(BaghchalLoopSettings(**SETTINGS), str(finished), workers=1, device="cpu")
    assert loops.read_steps(finished, "baghchal-toy") == before and summary["champion"] == "baghchal/2"
    with pytest.raises(LoopError):
        run_baghchal_loop(BaghchalLoopSettings(**{**SETTINGS, "sims": 8}), str(finished), workers=1, device="cpu")


def test_a_spent_budget_starts_no_new_generation(finished: Path, monkeypatch: pytest.MonkeyPatch):
    own_store(finished, monkeypatch)
    before = loops.read_steps(finished, "baghchal-toy")
    spent = learning_cpu_hours(finished, "baghchal-toy")
    ladder = sum(r["cpu_seconds"] for r in before if r["step"] == "ladder") / 3600
    assert spent > 0 and ladder > 0
    assert spent == pytest.approx(sum(r["cpu_seconds"] for r in before) / 3600 - ladder, abs=1e-4)
    more = BaghchalLoopSettings(**{**SETTINGS, "generations": 3, "budget_cpu_hours": spent * 0.99})
    assert is_spent(more, finished, 2) and not is_spent(more, finished, 1)
    summary = run_baghchal_loop(more, str(finished), workers=1, device="cpu")
    assert loops.read_steps(finished, "baghchal-toy") == before and len(summary["generations"]) == 1
    assert not is_spent(dataclasses.replace(more, budget_cpu_hours=spent * 2), finished, 2)


def test_a_begun_generation_finishes_whatever_the_budget(tmp_path: Path):
    settings = BaghchalLoopSettings(**{**SETTINGS, "loop": "spent", "budget_cpu_hours": 1.0})
    for step in ("start", "selfplay", "train"):
        loops.record_step(tmp_path, "spent", 1, step, {"cpu_seconds": 1000.0, "seconds": 1000.0})
    loops.record_step(tmp_path, "spent", 1, "ladder", {"cpu_seconds": 9000.0, "seconds": 9000.0})
    assert not is_spent(settings, tmp_path, 2)  # 3,000 CPU seconds of learning: the ladder's are not counted
    loops.record_step(tmp_path, "spent", 1, "gate", {"cpu_seconds": 600.0, "seconds": 600.0})
    assert is_spent(settings, tmp_path, 2) and not is_spent(dataclasses.replace(settings, budget_cpu_hours=None),
                                                            tmp_path, 2)
    loops.record_step(tmp_path, "spent", 2, "start", {"cpu_seconds": 1.0, "seconds": 1.0})
    assert not is_spent(settings, tmp_path, 2) and is_spent(settings, tmp_path, 3)


def test_a_loop_begun_before_the_new_settings_resumes_and_keeps_its_budget(tmp_path: Path):
    old = {key: value for key, value in dataclasses.asdict(BaghchalLoopSettings(**SETTINGS)).items()
           if key not in ADDED_LATER}
    storage_json.write_json(loops.loop_dir(tmp_path, "baghchal-toy") / "loop.json", old)
    loops.claim(tmp_path, "baghchal-toy", dataclasses.asdict(BaghchalLoopSettings(**SETTINGS)), BAGHCHAL_RESUMABLE,
                ADDED_LATER)
    with pytest.raises(LoopError, match="temperature_plies"):
        loops.claim(tmp_path, "baghchal-toy", dataclasses.asdict(BaghchalLoopSettings(**SETTINGS, temperature_plies=6)),
                    BAGHCHAL_RESUMABLE, ADDED_LATER)
    budgeted = BaghchalLoopSettings(**SETTINGS, budget_cpu_hours=2.0)
    assert BaghchalLoopSettings(**SETTINGS).resolved(dataclasses.asdict(budgeted)).budget_cpu_hours == 2.0
    assert budgeted.resolved(None) == budgeted
    assert dataclasses.replace(budgeted, budget_cpu_hours=3.0).resolved(dataclasses.asdict(budgeted)).budget_cpu_hours == 3.0


@flow
def _waves(match: BaghchalMatchSettings, data: str) -> list[dict]:
    decided = lambda rows: sprt_of_scores([row["a_score"] for row in rows], GATE_SPRT) != "continue"
    return play_match(match, "waves", Path(data), per_chunk=2, wave=1, is_decided=decided)


def test_a_sprt_gate_stops_its_match_once_decided_and_a_rerun_replays_the_same_waves(tmp_path: Path,
                                                                                      prefect_harness):
    match = BaghchalMatchSettings("random", "library:2", games=64, max_plies=80)  # random loses nearly every game
    rows = _waves.with_options(task_runner=task_runner(1))(match, str(tmp_path))
    played = [row["game"] for row in rows]
    assert played == list(range(len(played))) and 4 <= len(played) < 64 and len(played) % 2 == 0
    assert sprt_of_scores([row["a_score"] for row in rows], GATE_SPRT) == "reject"
    assert sprt_of_scores([row["a_score"] for row in rows[:-2]], GATE_SPRT) == "continue"  # no wave too many
    chunks = sorted(path.name for path in (files.match_dir(tmp_path, "waves")).glob("games-*.parquet"))
    again = _waves.with_options(task_runner=task_runner(1))(match, str(tmp_path))
    without_time = lambda found: [{k: v for k, v in row.items() if k != "seconds"} for row in found]
    assert without_time(again) == without_time(rows)  # read back: Parquet keeps seconds as float32
    assert sorted(path.name for path in files.match_dir(tmp_path, "waves").glob("games-*.parquet")) == chunks


def test_the_sprt_gate_is_a_setting_and_others_are_refused():
    assert BaghchalLoopSettings(**{**SETTINGS, "gate": "sprt"}).gate == "sprt"
    with pytest.raises(ValueError, match="gate must be one of fixed, sprt, off"):
        BaghchalLoopSettings(**{**SETTINGS, "gate": "maybe"})


def test_a_loop_with_the_sprt_gate_records_the_test_and_its_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     prefect_harness):
    own_store(tmp_path, monkeypatch)
    settings = BaghchalLoopSettings(**{**SETTINGS, "loop": "sprt-toy", "gate": "sprt", "gate_games": 4,
                                       "ladder_games": 0})
    run_baghchal_loop(settings, str(tmp_path), workers=1, device="cpu")
    gate = next(r for r in loops.read_steps(tmp_path, "sprt-toy") if r["step"] == "gate")
    assert gate["games"] == 4 and gate["rule"] == "sprt [0, 35] undecided: score >= 0.55"  # 4 games decide nothing
    assert gate["passed"] == (gate["score"] >= 0.55)
    promoted = next(r for r in loops.read_steps(tmp_path, "sprt-toy") if r["step"] == "promote")
    assert promoted["promoted"] == gate["passed"]
