"""The zero loop with reanalysis on, end to end on 5x5: a `reanalyse` step after each generation's
self-play, its rows in the training window, and the loop's generations still finished."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from flows.zero_loop import generation_target, run_zero_loop
from storage import layout, loops
from storage import selfplay as selfplay_files
from tasks.app.loop_settings import LoopSettings
from tasks.app.loop_view import STEPS, generation_rows, step_news
from tasks.train import selfplay_facts
from tests.helpers import build_uct_dataset

LOOP = "re-5x5"
SETTINGS = LoopSettings(loop=LOOP, size=5, generations=2, games=4, sims=4, gate="off", ladder_opponents=0,
                        batch_size=16, expert="uct5", reanalyse=10, reanalyse_expert=0.5)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory, prefect_harness) -> Path:
    """A 2-generation loop with an expert dataset and reanalysis of 10 positions a generation."""
    data = tmp_path_factory.mktemp("reanalysis") / "data"
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the data dir's own store
        build_uct_dataset(layout.raw_dir(data, "uct-vs-random"), layout.dataset_dir(data, "uct5"), 6, 5)
        run_zero_loop(SETTINGS, str(data), workers=2, device="cpu")
    return data


def test_each_generation_records_its_reanalysis(finished: Path):
    records = {(int(r["generation"]), r["step"]): r for r in loops.read_steps(finished, LOOP)}
    first, second = records[1, "reanalyse"], records[2, "reanalyse"]
    assert (first["expert"], first["selfplay"], first["generations"]) == (10, 0, [])  # no earlier self-play
    assert (second["expert"], second["selfplay"], second["generations"]) == (5, 5, [1])
    assert 0 < first["rows"] <= 10 and 0 < second["rows"] <= 10 and first["cpu_seconds"] > 0
    assert [row.step for row in generation_rows(loops.read_steps(finished, LOOP))] == ["ladder", "ladder"]
    assert generation_target(finished, LOOP, 1) == 3  # both generations finished, with the extra step
    assert loops.read_settings(finished, LOOP)["reanalyse"] == 10
    assert f"{second['rows']} rows searched again (5 expert and 5 self-play" in step_news(second, {})


def test_the_training_window_holds_the_reanalysed_rows(finished: Path):
    records = {(int(r["generation"]), r["step"]): r for r in loops.read_steps(finished, LOOP)}
    for generation in (1, 2):
        sidecars = selfplay_files.finished_sidecars(finished, generation, LOOP)
        reanalysed = [s for s in sidecars if selfplay_files.REANALYSIS in s]
        assert sum(s["rows"] for s in reanalysed) == records[generation, "reanalyse"]["rows"]
        assert selfplay_facts(finished, [generation], LOOP).rows == (
            records[generation, "selfplay"]["rows"] + records[generation, "reanalyse"]["rows"])
    assert records[2, "train"]["window_rows"] == selfplay_facts(finished, [1, 2], LOOP).rows


def test_a_crash_inside_the_step_resumes_without_searching_again(finished: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    before = loops.read_step(finished, LOOP, 2, "reanalyse")
    for step in ("reanalyse", *STEPS[STEPS.index("train"):]):  # its batches written, no record, nothing after it
        (finished / "loops" / LOOP / "steps" / f"gen-0002-{step}.json").unlink()
    shards = {p: p.stat().st_mtime_ns for p in (finished / "loops").rglob("*.parquet")}
    run_zero_loop(SETTINGS, str(finished), workers=2, device="cpu")
    after = loops.read_step(finished, LOOP, 2, "reanalyse")
    assert (after["tasks_skipped"], after["rows"]) == (before["tasks"], before["rows"])
    assert {p: p.stat().st_mtime_ns for p in (finished / "loops").rglob("*.parquet")} == shards
    assert loops.read_step(finished, LOOP, 2, "ladder") is not None  # the generation finished again


def test_reanalysis_turned_on_by_a_rerun_searches_only_the_generations_still_to_train(
        tmp_path: Path, prefect_harness, monkeypatch: pytest.MonkeyPatch):
    """A copy of a run goes on with reanalysis from its next generation (an A/B from one champion); the
    generations it had trained are not searched again (a rerun once re-searched all eleven of them)."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    data = tmp_path / "data"
    build_uct_dataset(layout.raw_dir(data, "uct-vs-random"), layout.dataset_dir(data, "uct5"), 6, 5)
    plain = dataclasses.replace(SETTINGS, loop="late", generations=1, reanalyse=0)
    run_zero_loop(plain, str(data), workers=2, device="cpu")
    run_zero_loop(dataclasses.replace(plain, generations=2, reanalyse=10), str(data), workers=2, device="cpu")
    steps = {(int(r["generation"]), r["step"]) for r in loops.read_steps(data, "late")}
    assert (2, "reanalyse") in steps and (1, "reanalyse") not in steps and (2, "ladder") in steps
    assert not [s for s in selfplay_files.finished_sidecars(data, 1, "late") if selfplay_files.REANALYSIS in s]
