"""The AlphaGo Zero loop end to end on 5x5: promotions and tags in a real SQLite MLflow, the step
records, the live table (the loop SIGKILLed at every step is in tests/system/test_zero_loop_kill.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.zero_loop import run_zero_loop
from storage import loops, registry
from storage.locks import BusyError
from storage.loops import LoopError
from tasks.app.loop_settings import LoopSettings
from tasks.app.loop_view import generation_rows

SETTINGS = dict(loop="zero-5x5", size=5, generations=2, games=6, sims=8, gate_games=6, min_window=100,
                batch_size=16, ladder_opponents=1, ladder_games=2)


def own_store(data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The data dir's own MLflow store (<data>/mlflow.db), as a user's run has."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    data.mkdir(parents=True, exist_ok=True)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory, prefect_harness) -> Path:
    """An uninterrupted 2-generation loop with the gate off (every candidate promoted)."""
    data = tmp_path_factory.mktemp("zero") / "data"
    with pytest.MonkeyPatch.context() as monkeypatch:
        own_store(data, monkeypatch)
        run_zero_loop(LoopSettings(**{**SETTINGS, "gate": "off"}), str(data), workers=2, device="cpu")
    return data


def test_every_generation_is_promoted_with_its_evidence(finished: Path, monkeypatch: pytest.MonkeyPatch):
    own_store(finished, monkeypatch)
    versions = {v.version: v for v in registry.list_versions("gozero-5x5", finished)}
    assert sorted(versions) == [1, 2, 3]
    assert versions[1].tags["promotion_reason"] == "initial" and versions[1].tags["generation"] == "0"
    assert list(versions[3].aliases) == ["champion"] and versions[3].tags["generation"] == "2"
    assert versions[3].tags["gate_rule"] == "off" and versions[3].tags["previous_champion"] == "2"
    assert int(versions[3].tags["selfplay_games"]) == 6 and int(versions[3].tags["window_rows"]) > 0
    assert float(versions[3].tags["elo"]) == float(versions[3].tags["elo"]) and int(versions[3].tags["elo_games"]) > 0
    # what the loop had spent when each was promoted: the x axes of the learning curves
    assert [int(versions[v].tags["selfplay_games_total"]) for v in (2, 3)] == [6, 12]
    assert 0 < float(versions[2].tags["loop_minutes"]) <= float(versions[3].tags["loop_minutes"])


def test_each_generation_publishes_a_version_of_the_loop_table(finished: Path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from flows.runtime import artifact_key

    wanted = ArtifactFilter(key=ArtifactFilterKey(any_=[artifact_key("loop", "zero-5x5")]))
    with get_client(sync_client=True) as client:
        versions = client.read_artifacts(artifact_filter=wanted)
    assert len(versions) == 2  # one after each generation
    rows = [json.loads(v.data) if isinstance(v.data, str) else v.data for v in versions]
    assert sorted(len(table) for table in rows) == [1, 2]  # generation 1, then 1 and 2


def test_steps_are_recorded_and_the_table_shows_each_generation(finished: Path):
    rows = generation_rows(loops.read_steps(finished, "zero-5x5"))
    assert [row.generation for row in rows] == [1, 2]
    assert [row.champion for row in rows] == ["gozero-5x5/1", "gozero-5x5/2"]
    assert all(row.games == 6 and row.rows > 0 and row.promoted and row.step == "ladder" for row in rows)
    assert all(row.elo for row in rows)  # each new champion met random on the ladder
    assert all(row.loss is not None and row.gate == "off" for row in rows)


def test_a_finished_loop_reruns_without_playing_or_registering_anything(finished: Path,
                                                                         monkeypatch: pytest.MonkeyPatch):
    own_store(finished, monkeypatch)
    shards = sorted(p.stat().st_mtime_ns for p in (finished / "loops").rglob("*.parquet"))
    summary = run_zero_loop(LoopSettings(**{**SETTINGS, "gate": "off"}), str(finished), workers=2, device="cpu")
    assert summary.champion == "gozero-5x5/3"
    assert len(registry.list_versions("gozero-5x5", finished)) == 3
    assert sorted(p.stat().st_mtime_ns for p in (finished / "loops").rglob("*.parquet")) == shards


def test_a_rerun_with_other_settings_or_beside_a_running_loop_is_refused(finished: Path,
                                                                         monkeypatch: pytest.MonkeyPatch):
    own_store(finished, monkeypatch)
    with pytest.raises(LoopError, match="runs with other batch_size"):
        run_zero_loop(LoopSettings(**{**SETTINGS, "gate": "off", "batch_size": 7}), str(finished), device="cpu")
    with loops.lock(finished, "zero-5x5"), pytest.raises(BusyError, match="loop zero-5x5 is in use"):
        run_zero_loop(LoopSettings(**{**SETTINGS, "gate": "off"}), str(finished), device="cpu")


def test_the_ladder_table_rates_the_loops_champions(finished: Path):
    from storage import ratings

    players = {row["player"]: row for row in ratings.read_ladder(finished, 5) or []}
    assert {"random", "gozero-5x5/2", "gozero-5x5/3"} <= set(players)
    assert [players[f"gozero-5x5/{v}"]["selfplay_games"] for v in (2, 3)] == [6, 12]


def test_the_cli_refuses_a_loop_rerun_with_other_settings_in_one_line(finished: Path):
    from typer.testing import CliRunner

    from flows.cli import app

    result = CliRunner().invoke(app, ["loop", "--loop", "zero-5x5", "--size", "5", "--generations", "2",
                                      "--data-dir", str(finished)], env={"MLFLOW_TRACKING_URI": ""})
    assert result.exit_code == 1 and "runs with other" in result.output and "Traceback" not in result.output


def test_the_cli_lets_a_rerun_change_the_search_between_generations_not_during_one(finished: Path, tmp_path: Path):
    import shutil

    from flows.cli.loop import refuse_changed_rerun

    more_search = LoopSettings(**{**SETTINGS, "gate": "off", "sims": 16, "games": 12})
    refuse_changed_rerun(more_search, finished)  # both generations finished: the next ones may search more
    copy = tmp_path / "copy"
    shutil.copytree(finished, copy)
    loops.record_step(copy, "zero-5x5", 3, "start", {})  # generation 3 begun with the recorded settings
    with pytest.raises(LoopError, match="may change games, sims only between generations: generation 3 is under way"):
        refuse_changed_rerun(more_search, copy)
    refuse_changed_rerun(LoopSettings(**{**SETTINGS, "gate": "off", "generations": 3}), copy)  # finishing it


def test_a_spent_budget_starts_no_new_generation(finished: Path, monkeypatch: pytest.MonkeyPatch):
    own_store(finished, monkeypatch)
    summary = run_zero_loop(LoopSettings(**{**SETTINGS, "gate": "off", "generations": 4}), str(finished),
                            workers=2, device="cpu", minutes=0.001)
    assert summary.champion == "gozero-5x5/3"
    assert len(registry.list_versions("gozero-5x5", finished)) == 3
    assert {int(r["generation"]) for r in loops.read_steps(finished, "zero-5x5")} == {1, 2}


def test_the_cli_passes_its_minute_budget_to_the_loop(tmp_path: Path, prefect_harness,
                                                       monkeypatch: pytest.MonkeyPatch):
    from typer.testing import CliRunner

    import flows.main_job
    import flows.zero_loop
    from flows.cli import app

    budgets = {}

    def stop_at_once(settings: LoopSettings, *args, minutes: float | None = None, **options) -> None:
        budgets[settings.loop] = minutes
        raise LoopError("stopped by the test")

    monkeypatch.setattr(flows.zero_loop, "run_zero_loop", stop_at_once)  # gozero loop
    monkeypatch.setattr(flows.main_job, "zero_loop", stop_at_once)  # gozero run: its flow's loop subflow
    seen = []
    for command in (["loop", "--minutes", "2.5"], ["loop", "--loop", "other"], ["run", "--minutes", "7"],
                    ["run"], ["run", "--minutes", "0"]):
        result = CliRunner().invoke(app, [*command, "--data-dir", str(tmp_path)])
        assert result.exit_code == 1 and "stopped by the test" in result.output
        seen.append(budgets.pop(next(iter(budgets))))
    loop_budget, other, run_7, run_default, run_none = seen
    assert (loop_budget, other, run_none) == (2.5, None, None)
    # gozero run: the job's minutes less the start-up so far, 80 % of them for the loop's learning
    assert 0.8 * 7 - 0.5 < run_7 <= 0.8 * 7 and 0.8 * 10 - 0.5 < run_default <= 0.8 * 10
