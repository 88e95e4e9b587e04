"""`gozero baghchal evaluate`: its searches run on one torch thread unless asked (torch's default,
every core, made three matches side by side about ten times slower)."""

from __future__ import annotations

import pytest
import torch
from typer.testing import CliRunner

from flows.cli import app


@pytest.fixture
def torch_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize(("asked", "threads"), [([], 1), (["--threads", "2"], 2)])
def test_a_match_runs_on_the_threads_asked_one_by_default(tmp_path, torch_threads, asked, threads):
    result = CliRunner().invoke(app, ["baghchal", "evaluate", "uniform", "random", "--games", "2", "--sims", "4",
                                      *asked, "--data-dir", str(tmp_path)], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "last game:" in result.output
    assert torch.get_num_threads() == threads


def test_zero_threads_are_refused(tmp_path):
    result = CliRunner().invoke(app, ["baghchal", "evaluate", "uniform", "random", "--threads", "0",
                                      "--data-dir", str(tmp_path)])
    assert result.exit_code == 2 and "--threads" in result.output
