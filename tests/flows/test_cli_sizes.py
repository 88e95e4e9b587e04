"""Every command takes its board size from its sources or models, and refuses a --size they
contradict in one line, exit 1, before any work (issue #28)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from flows.cli import app

REFUSALS = [
    (["ingest", "gnugo-19x19:level=0,games=3", "--dataset", "d", "--size", "9"],
     "--size 9 contradicts gnugo-19x19:level=0,games=3 (19x19)"),
    (["play", "--black", "models:/gozero-13x13@champion", "--white", "random", "--size", "5"],
     "--size 5 contradicts models:/gozero-13x13@champion (13x13)"),
    (["evaluate", "random", "models:/gozero-7x7/1", "--size", "9"], "--size 9 contradicts models:/gozero-7x7/1 (7x7)"),
    (["selfplay", "--model", "models:/gozero-7x7@champion", "--games", "1", "--size", "5"],
     "--size 5 contradicts models:/gozero-7x7@champion (7x7)"),
    (["ladder", "--player", "models:/gozero-7x7/2", "--size", "9"], "--size 9 contradicts models:/gozero-7x7/2 (7x7)"),
    (["loop", "--warm-start", "models:/gozero-7x7@champion", "--size", "9"],
     "--size 9 contradicts models:/gozero-7x7@champion (7x7)"),
    (["loop", "--settings", "quick-5x5", "--warm-start", "models:/gozero-7x7@champion"],
     "--size 5 contradicts models:/gozero-7x7@champion (7x7)"),
    (["alphago", "--source", "gnugo-7x7:level=0,games=2", "--size", "9"],
     "--size 9 contradicts gnugo-7x7:level=0,games=2 (7x7)"),
    (["strong", "--set", "expert=gnugo-7x7:level=1,games=2", "--size", "9"],
     "--size 9 contradicts gnugo-7x7:level=1,games=2 (7x7)"),
    (["analysis", "--model", "models:/gozero-7x7@champion", "--size", "9"],
     "--size 9 contradicts models:/gozero-7x7@champion (7x7)"),
]


@pytest.mark.parametrize(("args", "line"), REFUSALS, ids=[args[0] for args, _ in REFUSALS])
def test_a_size_the_inputs_contradict_is_one_line_and_exit_1_before_any_work(args, line, tmp_path):
    result = CliRunner().invoke(app, [*args, "--data-dir", str(tmp_path)], terminal_width=300)
    assert result.exit_code == 1, result.output
    assert result.output == f"error: {line}\n"
    assert list(tmp_path.iterdir()) == []  # no game played, no server started, nothing written


def test_inputs_of_two_sizes_are_refused_in_one_line(tmp_path):
    result = CliRunner().invoke(app, ["ingest", "gnugo-7x7:level=0,games=1", "cgos-9x9:2023-01", "--dataset", "d",
                                      "--data-dir", str(tmp_path)], terminal_width=300)
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "gnugo-7x7:level=0,games=1 (7x7) and cgos-9x9:2023-01 (9x9)" in result.output


def test_play_takes_its_size_from_a_model_directory(tmp_path):
    import dataclasses

    from gocore.nn.nets import NetConfig, build_net
    from storage.checkpoints import save_model

    config = NetConfig(board_size=5, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16)
    model_dir = save_model(tmp_path / "tiny", build_net(config), dataclasses.asdict(config))
    result = CliRunner().invoke(app, ["play", "--black", str(model_dir), "--white", "random", "--sims", "4",
                                      "--data-dir", str(tmp_path)], terminal_width=300)
    assert result.exit_code == 0, result.output
    assert "(white), 5x5" in result.output  # no --size: the model's, not 9
