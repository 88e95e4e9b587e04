"""`gozero play`: one game between two players, printed; a forfeit says why."""

from __future__ import annotations

from typer.testing import CliRunner

from flows.cli import app


def test_a_game_between_our_agents_prints_the_board_and_the_result(tmp_path):
    result = CliRunner().invoke(app, ["play", "--black", "uct-8", "--white", "random", "--size", "5",
                                      "--data-dir", str(tmp_path)], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "uct-8 (black) vs random (white), 5x5" in result.output and "result " in result.output
    assert "GtpEngineDied" not in result.output


def test_an_engine_that_dies_loses_and_the_output_says_how_it_died(tmp_path):
    crashing = "gtp:sh -c 'echo out of cheese >&2; exit 3'"
    result = CliRunner().invoke(app, ["play", "--black", crashing, "--white", "random", "--size", "5",
                                      "--data-dir", str(tmp_path)], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "result W+F after 0 moves (crash)" in result.output
    assert "engine exited with code 3" in result.output and "out of cheese" in result.output


def test_an_evaluate_whose_engine_dies_every_game_says_why_and_fails(tmp_path):
    crashing = "gtp:sh -c 'echo out of cheese >&2; exit 3'"
    result = CliRunner().invoke(app, ["evaluate", crashing, "random", "--games", "2", "--size", "5",
                                      "--data-dir", str(tmp_path)], terminal_width=300)
    assert result.exit_code == 1, result.output
    assert "why A crash (first)" in result.output and "out of cheese" in result.output
    assert "lost every game without playing it" in result.output
    played = CliRunner().invoke(app, ["evaluate", "uct-4", "random", "--games", "2", "--size", "5",
                                      "--data-dir", str(tmp_path)], terminal_width=300)
    assert played.exit_code == 0 and "why" not in played.output, played.output
