"""The evaluate flow end to end under a Prefect test server, and `gozero evaluate` (in-process mode)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from flows.cli.evaluate import evaluate as evaluate_command
from gocore.play.match import MatchConfig
from gocore.play.ratings import SprtConfig
from storage import matches
from tasks.app.evaluate import MatchSettings
from tests.helpers import read_artifact

app = typer.Typer()
app.command("evaluate")(evaluate_command)  # mounted the way flows/cli/root.py mounts it


@app.command()
def other() -> None:
    """A second command, so typer keeps `evaluate` as a subcommand (as in the real app)."""


def test_evaluate_flow_plays_stores_and_reports(prefect_harness, data_dir: Path):
    from flows.evaluate import evaluate

    settings = MatchSettings("uct-20", "random", games=8, config=MatchConfig(size=5))
    summary = evaluate(settings, match_id="flow-test", data_dir=str(data_dir),
                       sprt=SprtConfig(elo0=0, elo1=400, alpha=0.2, beta=0.2), parallel=2)
    match = data_dir / "matches" / "flow-test"
    assert matches.read_summary(match) == summary
    table = pq.read_table(match / matches.RESULTS).to_pylist()
    assert len(table) == summary["games"]
    assert summary["a_winrate"] == pytest.approx(sum(r["a_score"] for r in table) / len(table))
    assert sorted(p.name for p in (match / "games").iterdir()) == [f"game-{r['game']:05d}.sgf" for r in table]
    # UCT sweeps random on 5x5: after two waves of two games the SPRT accepts and the rest is skipped
    assert (summary["games"], summary["sprt"], summary["stopped_early"]) == (4, "accept", True)
    assert summary["gate_passed"] and summary["gate_rule"] == "sprt"
    report = read_artifact("match-flow-test")
    assert report is not None and "# Match `flow-test`" in report.data
    assert read_artifact("match-progress-flow-test") is not None


def test_cli_shows_the_score_and_a_rerun_resumes_without_replaying(data_dir: Path):
    runner = CliRunner()
    arguments = ["evaluate", "random", "uct-5", "--games", "4", "--size", "5", "--match-id", "cli-test",
                 "--data-dir", str(data_dir)]
    first = runner.invoke(app, arguments)
    assert first.exit_code == 0, first.output
    assert "A win rate (95 % CI" in first.output and "gate" not in first.output  # a plain match has no gate
    match = data_dir / "matches" / "cli-test"
    games = {p.name: p.stat().st_mtime_ns for p in (match / "games").iterdir()}
    assert len(games) == 4
    again = runner.invoke(app, [*arguments, "--gate", "0.55"])
    assert again.exit_code == 0, again.output
    assert "gate ≥ 55%" in again.output
    assert {p.name: p.stat().st_mtime_ns for p in (match / "games").iterdir()} == games
    assert matches.read_summary(match)["games"] == 4


@pytest.mark.parametrize("arguments, message", [
    (["alphabeta", "random"], "unknown player 'alphabeta'"),
    (["random", "random", "--match-id", "../x"], "match id"),
    (["random", "random", "--sprt", "--elo1", "-5"], "elo1 > elo0"),
])
def test_cli_refuses_bad_input_in_one_line(arguments: list[str], message: str, data_dir: Path):
    result = CliRunner().invoke(app, ["evaluate", *arguments, "--data-dir", str(data_dir)])
    assert result.exit_code == 1 and message in result.output
    assert result.output.count("error:") == 1 and "Traceback" not in result.output


def test_a_match_of_a_registered_model_puts_its_ladder_rating_on_the_version(data_dir: Path):
    from storage import registry
    from tests.helpers import register_tiny_nets

    register_tiny_nets(data_dir, 1)
    assert "strength" not in registry.describe("gozero-5x5", "1", data=data_dir).tags
    result = CliRunner().invoke(app, ["evaluate", "models:/gozero-5x5/1", "random", "--games", "2", "--sims", "2",
                                      "--size", "5", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    tags = registry.describe("gozero-5x5", "1", data=data_dir).tags
    assert tags["elo_games"] == "2" and tags["strength"].startswith("unrated vs GNU Go (Elo ")


def test_the_flow_tags_too_so_a_gate_or_the_recipes_anchors_rate_their_versions(prefect_harness, data_dir: Path):
    from flows.evaluate import evaluate
    from storage import registry
    from tests.helpers import register_tiny_nets

    register_tiny_nets(data_dir, 1)
    settings = MatchSettings("models:/gozero-5x5/1", "random", 2, 2, MatchConfig(5, 7.5, max_moves=30))
    evaluate(settings, "tagged-by-the-flow", str(data_dir), games_per_task=1)
    tags = registry.describe("gozero-5x5", "1", data=data_dir).tags
    assert tags["elo_games"] == "2" and tags["strength"].startswith("unrated vs GNU Go (Elo ")


def test_a_model_no_loop_made_has_no_generation_on_the_ladder_but_is_tagged(data_dir: Path):
    from gocore.nn.nets import NetConfig, build_net
    from storage import registry, runs
    from storage.checkpoints import save_model
    from tasks.ladder import ladder_rows

    config = NetConfig(board_size=5, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16)
    model_dir = save_model(data_dir / "nets" / "trained", build_net(config).eval(), config.to_dict())
    with runs.training_run(5, {"net": config}, data=data_dir) as run_id:
        runs.log_model(run_id, model_dir, data=data_dir)
    version = registry.register(run_id, data=data_dir)  # as gozero train registers: no generation tag
    result = CliRunner().invoke(app, ["evaluate", f"models:/gozero-5x5/{version}", "random", "--games", "2",
                                      "--sims", "2", "--size", "5", "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    (row,) = [row for row in ladder_rows(data_dir, 5) if row.player == f"gozero-5x5/{version}"]
    assert row.generation is None  # it was shown as generation 1 (its version number)
    assert registry.describe("gozero-5x5", str(version), data=data_dir).tags["elo_games"] == "2"
