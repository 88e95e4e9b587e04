"""`gozero run`, the main job `make run` starts, end to end at a toy size: the loop (auxiliary heads
on, as new loops now have them), the champion against generation 0 and random, the ladder."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from storage import loops, registry
from tasks.ladder import ladder_rows


def test_gozero_run_promotes_a_champion_and_prints_the_evidence_it_learned(
        tmp_path: Path, prefect_harness, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the data dir's own store, as a user's run has
    data = tmp_path / "data"
    command = ["run", "--generations", "2", "--games", "4", "--sims", "4", "--eval-games", "2", "--random-games", "2",
               "--workers", "1", "--data-dir", str(data)]
    # a budget far too small: generation 1 always runs, generation 2 would not fit, and the run says so
    result = CliRunner().invoke(app, [*command, "--minutes", "0.01"])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert "budget: 0.01 minutes in all" in output and "stopped after generation 1 of 2" in output
    assert "gozero-9x9/2 won" in output and "of 2 (" in output and "against generation 0" in output
    versions = registry.list_versions("gozero-9x9", data)
    assert [v.version for v in versions if "champion" in v.aliases] == [2] and len(versions) == 2
    assert loops.read_settings(data, "run-9x9")["aux_heads"] is True  # decided once, recorded
    players = {row.player for row in ladder_rows(data, 9)}  # every game is in the ratings table
    assert {"random", "gozero-9x9/1", "gozero-9x9/2"} <= players and "random" in output
    assert f"gtp --model models:/gozero-9x9@champion --sims 200 --data-dir {data}" in output

    unbounded = CliRunner().invoke(app, [*command, "--minutes", "0"])  # no budget: the loop goes on to 2
    assert unbounded.exit_code == 0, unbounded.output
    assert "gozero-9x9/3 won" in " ".join(unbounded.output.split()) and "budget" not in unbounded.output
    again = CliRunner().invoke(app, [*command, "--minutes", "0"])  # a rerun replays nothing, registers nothing
    assert again.exit_code == 0, again.output
    assert len(registry.list_versions("gozero-9x9", data)) == 3
