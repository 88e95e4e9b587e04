"""--device reaches every stage that runs a net (issue #28): a device this machine lacks is refused
in one line, exit 1, before any work; the one asked for is the one the nets run on."""

from __future__ import annotations

import pytest
import torch
from typer.testing import CliRunner

from flows.cli import app

COMMANDS = [
    ["selfplay", "--model", "uniform", "--games", "1"],
    ["evaluate", "random", "random", "--games", "2"],
    ["evaluate", "random", "random", "--games", "2", "--workers", "2"],
    ["ladder", "--play"],
    ["loop", "--settings", "quick-5x5"],
    ["strong"],
    ["alphago", "--source", "gnugo-5x5:level=0,games=2"],
    ["analysis"],
    ["gtp", "--agent", "random"],
]


@pytest.mark.parametrize("device", ["tpu", "cuda:7"])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: "-".join(args[:1] + args[-1:]))
def test_a_device_this_machine_lacks_is_one_line_and_exit_1_before_any_work(args, device, tmp_path):
    if device == "cuda:7" and torch.cuda.device_count() > 7:
        pytest.skip("this machine has a cuda:7")
    result = CliRunner().invoke(app, [*args, "--device", device, "--data-dir", str(tmp_path)], terminal_width=300)
    assert result.exit_code == 1, result.output
    assert result.output.startswith("error: ") and result.output.count("\n") == 1, result.output
    assert device in result.output
    assert list(tmp_path.iterdir()) == []  # no game played, no server started, nothing written


def test_gtp_plays_a_model_on_the_device_asked_for(tmp_path):
    from flows.cli.gtp import _player
    from tests.tasks.app.test_players import tiny_model

    player = _player(None, tiny_model(tmp_path / "dual"), 5, 7.5, 8, None, 1, device="cpu")
    assert player.make(0).evaluator.device == torch.device("cpu")


def test_analysis_and_gtp_default_to_auto_and_pool_commands_to_cpu():
    import inspect

    from flows.cli.analysis import analysis
    from flows.cli.gtp import gtp
    from flows.cli.ladder import ladder
    from flows.cli.selfplay import selfplay

    def default(command) -> str:
        return inspect.signature(command).parameters["device"].default

    assert (default(gtp), default(analysis)) == ("auto", "auto")
    assert (default(selfplay), default(ladder)) == ("cpu", "cpu")


def test_a_pipeline_device_means_training_and_games_and_none_keeps_the_games_on_cpu():
    from flows.cli.common import pipeline_devices

    assert pipeline_devices(None) == ("auto", "cpu")
    assert pipeline_devices("cpu") == ("cpu", "cpu")
