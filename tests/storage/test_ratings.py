"""storage.ratings: one file per match in <data>/ratings/ (a rewrite never duplicates rows), the
size filter, ladder.json per size, the Elo-vs-generation plot and the MLflow ladder run."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage import ratings
from storage.schemas import RATINGS_SCHEMA


def rows(scores: list[float]) -> list[dict]:
    """Results rows (storage.schemas.RESULTS_SCHEMA's keys that matter) of games with these A scores."""
    return [{"game": index, "a_color": 1 if index % 2 == 0 else -1, "a_score": score,
             "result": "B+1.5" if (score == 1) == (index % 2 == 0) else "W+1.5", "reason": "two-passes",
             "black": "x", "white": "y", "seconds": 0.1} for index, score in enumerate(scores)]


def match(match_id: str = "m1", size: int = 9) -> ratings.RatedMatch:
    return ratings.RatedMatch(match_id, "gozero-9x9/3", "random", size, 7.5, 100)


def test_a_match_written_again_replaces_its_rows_instead_of_adding_them(tmp_path: Path):
    ratings.write_match(tmp_path, match(), rows([1.0, 0.0]))
    ratings.write_match(tmp_path, match(), rows([1.0, 0.0]))
    assert ratings.read_games(tmp_path).num_rows == 2
    ratings.write_match(tmp_path, match(), rows([1.0, 0.0, 0.5]))  # the match resumed with more games
    ratings.write_match(tmp_path, match("m2"), rows([0.0]))
    games = ratings.read_games(tmp_path)
    assert games.schema == RATINGS_SCHEMA
    assert sorted(zip(games["match_id"].to_pylist(), games["game"].to_pylist(), strict=True)) == [
        ("m1", 0), ("m1", 1), ("m1", 2), ("m2", 0)]
    first = games.to_pylist()[0]
    assert (first["player_a"], first["player_b"], first["komi"], first["sims"]) == ("gozero-9x9/3", "random", 7.5, 100)
    assert first["sgf"] == "matches/m1/games/game-00000.sgf"  # relative to the data dir


def test_games_are_read_per_board_size_and_an_empty_table_keeps_the_schema(tmp_path: Path):
    assert ratings.read_games(tmp_path).schema == RATINGS_SCHEMA and ratings.read_games(tmp_path).num_rows == 0
    ratings.write_match(tmp_path, match("nine", 9), rows([1.0]))
    ratings.write_match(tmp_path, match("five", 5), rows([1.0, 1.0]))
    assert ratings.read_games(tmp_path, 5)["match_id"].to_pylist() == ["five", "five"]
    assert ratings.read_games(tmp_path, 13).num_rows == 0
    assert ratings.read_games(tmp_path).num_rows == 3


def test_ladder_json_keeps_each_sizes_latest_ladder(tmp_path: Path):
    assert ratings.read_ladder(tmp_path, 9) is None
    ratings.write_ladder(tmp_path, 9, [{"player": "a", "elo": 10.0}])
    ratings.write_ladder(tmp_path, 5, [{"player": "b", "elo": 20.0}])
    ratings.write_ladder(tmp_path, 9, [{"player": "c", "elo": 30.0}])
    assert ratings.read_ladder(tmp_path, 9) == [{"player": "c", "elo": 30.0}]
    assert ratings.read_ladder(tmp_path, 5) == [{"player": "b", "elo": 20.0}]


def test_the_plot_is_a_png(tmp_path: Path):
    points = [ratings.GenerationElo(2, 150.0, 40.0), ratings.GenerationElo(1, 80.0, None)]
    png = ratings.plot_ladder(points, tmp_path / "ladder.png", "9x9")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_plot_adds_elo_vs_selfplay_games_when_the_points_know_them(tmp_path: Path):
    def width(png: Path) -> int:  # the PNG header's IHDR width
        return int.from_bytes(png.read_bytes()[16:20], "big")

    by_generation = [ratings.GenerationElo(1, 80.0, 30.0), ratings.GenerationElo(2, 150.0, 40.0)]
    with_games = [ratings.GenerationElo(1, 80.0, 30.0, 200), ratings.GenerationElo(2, 150.0, 40.0, 400)]
    one = width(ratings.plot_ladder(by_generation, tmp_path / "one.png"))
    two = width(ratings.plot_ladder(with_games, tmp_path / "two.png"))
    assert one == 600 and two == 1100  # a second panel: Elo against self-play games


def test_the_ladder_run_has_elo_per_generation_and_the_plot(data_dir: Path, monkeypatch: pytest.MonkeyPatch):
    from storage.mlflow_store import client

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    points = [ratings.GenerationElo(1, 80.0, 30.0), ratings.GenerationElo(3, 150.0, 40.0)]
    run_id = ratings.log_ladder(5, points, {"players": 3}, data_dir)
    store = client(data_dir)
    history = store.get_metric_history(run_id, "elo")
    assert sorted((m.step, m.value) for m in history) == [(1, 80.0), (3, 150.0)]
    run = store.get_run(run_id)
    assert run.info.run_name == "ladder" and run.info.status == "FINISHED" and run.data.params["players"] == "3"
    assert [a.path for a in store.list_artifacts(run_id, "plots")] == [ratings.PLOT_ARTIFACT]
