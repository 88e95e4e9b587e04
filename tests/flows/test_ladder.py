"""The ladder flow end to end under a Prefect test server (5x5, a tiny registered champion), and
`gozero ladder` printing the ladder from the ratings table."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from flows.cli.ladder import ladder as ladder_command
from storage import ratings
from tests.helpers import read_artifact, register_tiny_nets

app = typer.Typer()
app.command("ladder")(ladder_command)  # mounted the way flows/cli/root.py mounts it


@app.command()
def other() -> None:
    """A second command, so typer keeps `ladder` as a subcommand (as in the real app)."""


def sgf_times(data: Path) -> dict[str, int]:
    return {str(p.relative_to(data)): p.stat().st_mtime_ns for p in (data / "matches").rglob("*.sgf")}


def test_the_champion_meets_random_then_an_anchor_and_a_rerun_plays_nothing(prefect_harness, data_dir: Path,
                                                                           monkeypatch: pytest.MonkeyPatch):
    import torch
    from prefect.task_runners import ThreadPoolTaskRunner

    from flows.ladder import ladder
    from storage.mlflow_store import client
    from tasks.app.ladder_settings import LadderSettings

    torch.set_num_threads(1)  # tiny nets in two task threads on two shared cores
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the registry of this data dir
    register_tiny_nets(data_dir, 1)
    run = ladder.with_options(task_runner=ThreadPoolTaskRunner(max_workers=2))
    options = {"settings": LadderSettings(size=5, games_per_opponent=2, opponents=2, sims=2, anchors=("uct-5",)),
               "data_dir": str(data_dir)}
    result = run(**options)
    assert result.matches == ("ladder-5x5-gozero-5x5-1-vs-random", "ladder-5x5-gozero-5x5-1-vs-uct-5")
    rows = {row.player: row for row in result.rows}
    assert set(rows) == {"random", "uct-5", "gozero-5x5/1"}
    assert (rows["gozero-5x5/1"].games, rows["gozero-5x5/1"].generation, rows["uct-5"].generation) == (4, 1, None)
    assert ratings.read_games(data_dir, 5).num_rows == 4
    assert ratings.read_ladder(data_dir, 5) == [asdict(row) for row in result.rows]
    artifact = read_artifact("ladder-5x5")
    assert artifact is not None and "gozero-5x5/1" in str(artifact.data)
    history = client(data_dir).get_metric_history(result.mlflow_run, "elo")
    assert [(m.step, m.value) for m in history] == [(1, pytest.approx(rows["gozero-5x5/1"].elo))]
    games = sgf_times(data_dir)
    again = run(**options)
    assert again.matches == result.matches and again.rows == result.rows
    assert sgf_times(data_dir) == games and ratings.read_games(data_dir, 5).num_rows == 4


def test_cli_prints_the_ladder_best_first_without_playing(data_dir: Path):
    scores = {"uct-100": [1.0] * 9 + [0.0], "uct-10": [1.0] * 6 + [0.0] * 4}
    for player, points in scores.items():
        rows = [{"game": i, "a_color": 1, "a_score": s, "result": "B+1", "reason": "two-passes"}
                for i, s in enumerate(points)]
        ratings.write_match(data_dir, ratings.RatedMatch(f"{player}-vs-random", player, "random", 9, 7.5, 100), rows)
    result = CliRunner().invoke(app, ["ladder", "--data-dir", str(data_dir)], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("│")]
    assert [line.split()[1] for line in lines] == ["uct-100", "uct-10", "random"]
    assert "anchor" in lines[-1] and "90%" in lines[0] and "± (95 %)" in result.output
    assert not (data_dir / "matches").exists()  # nothing was played
    empty = CliRunner().invoke(app, ["ladder", "--size", "13", "--data-dir", str(data_dir)])
    assert empty.exit_code == 0 and "no rated games on 13x13" in empty.output
