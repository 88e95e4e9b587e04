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
