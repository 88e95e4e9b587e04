"""The selfplay flow end to end under a Prefect test server, and `gozero selfplay`'s one-line errors."""

from __future__ import annotations

from pathlib import Path

import typer
from typer.testing import CliRunner

from flows.cli.selfplay import selfplay as selfplay_command
from flows.selfplay import selfplay_progress
from storage.stream import BatchStream
from tasks.app.rows import ROW_DECODER
from tests.helpers import read_artifact

app = typer.Typer()
app.command("selfplay")(selfplay_command)  # mounted the way flows/cli/root.py mounts it


@app.command()
def other() -> None:
    """A second command, so typer keeps `selfplay` as a subcommand (as in the real app)."""


def test_selfplay_flow_maps_batches_writes_shards_and_reports(prefect_harness, data_dir: Path):
    from flows.selfplay import selfplay

    summary = selfplay("uniform", 4, sims=4, generation=1, data_dir=str(data_dir), games_per_task=2,
                       size=5, komi=2.5, max_moves=30)
    generation = data_dir / "selfplay" / "gen=1"
    assert summary.counts.games == 4 and summary.tasks == 2 and summary.tasks_skipped == 0
    assert [Path(s).name for s in summary.shards] == ["shard-s0.parquet", "shard-s1.parquet"]
    assert len(list((generation / "games").glob("*.sgf"))) == 4
    stream = BatchStream([Path(s) for s in summary.shards], batch_size=8, decoder=ROW_DECODER, val_percent=0,
                         epochs=1)
    assert sum(len(batch) for batch in stream) == summary.counts.positions == summary.rows
    assert selfplay_progress(str(data_dir), 1, 4, 2) == (4, 4)
    assert selfplay_progress(str(data_dir), 1, 6, 2) == (4, 6)  # the third batch is not played
    again = selfplay("uniform", 4, sims=4, generation=1, data_dir=str(data_dir), games_per_task=2,
                     size=5, komi=2.5, max_moves=30)
    assert again.tasks_skipped == 2 and again.counts == summary.counts and again.seconds_played == 0
    # a rerun asking for another split (fewer workers) replays the first run's batches, no new ones
    regrouped = selfplay("uniform", 4, sims=4, generation=1, data_dir=str(data_dir), games_per_task=4,
                         size=5, komi=2.5, max_moves=30)
    assert regrouped.tasks_skipped == 2 and regrouped.counts == summary.counts
    assert sorted(p.name for p in generation.glob("shard-*.parquet")) == ["shard-s0.parquet", "shard-s1.parquet"]
    assert selfplay_progress(str(data_dir), 1, 4, 4) == (4, 4)
    report = read_artifact("selfplay-gen-1")
    assert report is not None and "# Self-play generation 1" in report.data and "false resignations" in report.data


def test_cli_refuses_a_missing_model_in_one_line(data_dir: Path):
    result = CliRunner().invoke(app, ["selfplay", "--model", str(data_dir / "no-such-model"), "--games", "2",
                                      "--data-dir", str(data_dir)])
    assert result.exit_code == 1
    assert "error:" in result.output and "no such model directory" in result.output
    assert "Traceback" not in result.output
