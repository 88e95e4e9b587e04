"""The evaluate-champion flow under a Prefect test server: a tiny 5x5 champion against random, an
anchor and GNU Go, then the ladder; a rerun plays nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage import ratings
from tests.helpers import read_artifact, register_tiny_nets


def test_the_champion_meets_every_yardstick_once_and_a_rerun_plays_nothing(
        prefect_harness, data_dir: Path, gnugo_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.task_runners import ThreadPoolTaskRunner

    from flows.champion import evaluate_champion
    from tasks.app.ladder_settings import ChampionSettings

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the registry of this data dir
    register_tiny_nets(data_dir, 1)
    run = evaluate_champion.with_options(task_runner=ThreadPoolTaskRunner(max_workers=2))
    options = {"settings": ChampionSettings(size=5, gnugo_levels=(1,), anchors=("uct-5",), games_per_opponent=2,
                                            sims=2),
               "data_dir": str(data_dir)}
    result = run(**options)
    assert result.matches == tuple(f"ladder-5x5-gozero-5x5-1-vs-{name}" for name in ("random", "uct-5", "gnugo-1"))
    rows = {row.player: row for row in result.rows}
    assert set(rows) == {"gozero-5x5/1", "random", "uct-5", "gnugo-1"} and rows["gozero-5x5/1"].games == 6
    artifact = read_artifact("champion-5x5")
    assert artifact is not None and "gozero-5x5/1" in str(artifact.data)
    games = ratings.read_games(data_dir, 5).num_rows
    assert run(**options).rows == result.rows and ratings.read_games(data_dir, 5).num_rows == games == 6


def test_without_a_champion_it_says_so(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.champion import NoChampionError, evaluate_champion
    from tasks.app.ladder_settings import ChampionSettings

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with pytest.raises(NoChampionError, match="gozero-7x7 has no champion"):
        evaluate_champion.fn(ChampionSettings(size=7), data_dir=str(data_dir))
