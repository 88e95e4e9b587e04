"""The selfplay flow end to end under a Prefect test server, and `gozero selfplay`'s one-line errors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from flows.cli.selfplay import selfplay as selfplay_command
from flows.selfplay import selfplay_progress
from storage.stream import BatchStream
from tasks.app.rows import ROW_DECODER
from tasks.app.selfplay_settings import SelfPlaySettings
from tests.helpers import read_artifact

TINY = SelfPlaySettings("uniform", sims=4, size=5, komi=2.5, max_moves=30)

app = typer.Typer()
app.command("selfplay")(selfplay_command)  # mounted the way flows/cli/root.py mounts it


@app.command()
def other() -> None:
    """A second command, so typer keeps `selfplay` as a subcommand (as in the real app)."""


def test_selfplay_flow_maps_batches_writes_shards_and_reports(prefect_harness, data_dir: Path):
    from flows.selfplay import selfplay

    summary = selfplay(TINY, 4, generation=1, data_dir=str(data_dir), games_per_task=2)
    generation = data_dir / "selfplay" / "gen=1"
    assert summary.counts.games == 4 and summary.tasks == 2 and summary.tasks_skipped == 0
    assert [Path(s).name for s in summary.shards] == ["shard-s0.parquet", "shard-s1.parquet"]
    assert len(list((generation / "games").glob("*.sgf"))) == 4
    stream = BatchStream([Path(s) for s in summary.shards], batch_size=8, decoder=ROW_DECODER, val_percent=0,
                         epochs=1)
    assert sum(len(batch) for batch in stream) == summary.counts.positions == summary.rows
    assert selfplay_progress(str(data_dir), 1, 4, 2) == (4, 4)
    assert selfplay_progress(str(data_dir), 1, 6, 2) == (4, 6)  # the third batch is not played
    again = selfplay(TINY, 4, generation=1, data_dir=str(data_dir), games_per_task=2)
    assert again.tasks_skipped == 2 and again.counts == summary.counts and again.seconds_played == 0
    # a rerun asking for another split (fewer workers) replays the first run's batches, no new ones
    regrouped = selfplay(TINY, 4, generation=1, data_dir=str(data_dir), games_per_task=4)
    assert regrouped.tasks_skipped == 2 and regrouped.counts == summary.counts
    assert sorted(p.name for p in generation.glob("shard-*.parquet")) == ["shard-s0.parquet", "shard-s1.parquet"]
    assert selfplay_progress(str(data_dir), 1, 4, 4) == (4, 4)
    report = read_artifact("selfplay-gen-1")
    assert report is not None and "# Self-play generation 1" in report.data and "false resignations" in report.data


def test_a_cli_rerun_with_nothing_to_play_starts_no_server_and_a_changed_one_is_refused_first(
        prefect_harness, data_dir: Path, monkeypatch: pytest.MonkeyPatch):
    """`gozero selfplay` rerun on a finished generation answers from the sidecars in a second or
    two: no Prefect server, no flow, no model load (issue #27: a no-op rerun took 14 s)."""
    import flows.runtime
    import flows.selfplay
    import tasks.selfplay
    from flows.selfplay import selfplay

    selfplay(TINY, 4, generation=2, data_dir=str(data_dir), games_per_task=2)

    def never(*args, **kwargs):
        raise AssertionError("a rerun with nothing to play started work")

    for module, name in ((flows.selfplay, "run_selfplay"), (flows.runtime, "prefect_api"),
                         (tasks.selfplay, "load_evaluator")):
        monkeypatch.setattr(module, name, never)
    command = ["selfplay", "--model", "uniform", "--games", "4", "--sims", "4", "--size", "5", "--komi", "2.5",
               "--max-moves", "30", "--generation", "2", "--data-dir", str(data_dir)]
    result = CliRunner().invoke(app, command, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "nothing to play" in result.output and "tasks (already on disk)" in result.output
    changed = CliRunner().invoke(app, [*command[:6], "8", *command[7:]], terminal_width=200)
    assert changed.exit_code == 1 and "played with other settings: sims 4 (now 8)" in changed.output


def test_cli_refuses_a_missing_model_in_one_line(data_dir: Path):
    result = CliRunner().invoke(app, ["selfplay", "--model", str(data_dir / "no-such-model"), "--games", "2",
                                      "--data-dir", str(data_dir)])
    assert result.exit_code == 1
    assert "error:" in result.output and "no such model directory" in result.output
    assert "Traceback" not in result.output


# Sidecars as the self-play code before the flow took SelfPlaySettings wrote them (`gozero selfplay
# --model uniform --games 2 --sims 4 --size 5 --komi 2.5 --max-moves 20`, and a loop's generation
# with the playout cap, forced playouts and passing when settled), the shard's path aside.
OLD_SETTINGS = {"encoder": "agz17", "games": 2, "komi": 2.5, "max_moves": 20, "model": "uniform",
                "resign_threshold": -0.9, "sims": 4, "size": 5}
OLD_LOOP_SETTINGS = {**OLD_SETTINGS, "fast_sims": 2, "forced_playouts": True, "full_search_prob": 0.5,
                     "pass_when_settled": True}


def write_old_batch(data: Path, generation: int, seed: int, settings: dict, run: str = "") -> None:
    """A finished batch of 2 games on disk: plan.json, a shard of the recorded size, the sidecar."""
    import json

    from storage import layout

    directory = layout.selfplay_dir(data, generation, run)
    directory.mkdir(parents=True)
    (directory / "plan.json").write_text(json.dumps({"games": 2, "seed": seed, "games_per_task": 2}))
    shard = directory / f"shard-s{seed}.parquet"
    shard.write_bytes(b"\0" * 4395)
    sidecar = {"black_wins": 0, "bytes": 4395, "draws": 0, "encoder": "agz17", "false_resignations": 0,
               "full_searches": 22, "game_ids": [f"gen{generation}-s{seed}-0000", f"gen{generation}-s{seed}-0001"],
               "games": 2, "generation": generation, "model_version": "uniform", "move_cap": 2, "no_resign_games": 0,
               "positions": 40, "resignations": 0, "rows": 22, "seconds": 0.013, "seed": seed, "settings": settings,
               "shard": str(shard), "two_passes": 0, "white_wins": 2, "winner_lows": [], "would_resign": 0}
    (directory / f"shard-s{seed}.json").write_text(json.dumps(sidecar, indent=2))


def test_generations_written_before_the_flow_took_its_settings_resume_without_playing(prefect_harness,
                                                                                       data_dir: Path):
    from flows.selfplay import selfplay
    from tasks.app.loop_settings import LoopSettings, selfplay_search
    from tasks.selfplay import SelfPlayError

    write_old_batch(data_dir, 0, 0, OLD_SETTINGS)
    plain = selfplay(SelfPlaySettings("uniform", sims=4, size=5, komi=2.5, max_moves=20), 2, 0, str(data_dir))
    assert (plain.tasks, plain.tasks_skipped, plain.counts.white_wins, plain.rows) == (1, 1, 2, 22)

    write_old_batch(data_dir, 3, 7, OLD_LOOP_SETTINGS, run="zero-5x5")
    loop = LoopSettings(loop="zero-5x5", size=5, komi=2.5, sims=4, playout_cap=True, full_search_prob=0.5,
                        fast_sims_fraction=0.5, forced_playouts=True, search="puct", pass_when_settled=True)
    settings = SelfPlaySettings("uniform", loop.sims, size=5, komi=2.5, max_moves=20, run=loop.loop,
                                **selfplay_search(loop.resolved(None)))
    resumed = selfplay(settings, 2, 3, str(data_dir), seed=7)
    assert (resumed.tasks, resumed.tasks_skipped, resumed.counts.games) == (1, 1, 2)
    with pytest.raises(SelfPlayError, match=r"fast_sims 2 \(now 1\)"):  # a changed knob is still refused
        selfplay(replace(settings, fast_sims=1), 2, 3, str(data_dir), seed=7)



def test_a_worker_on_an_accelerator_plays_more_games_in_lockstep(monkeypatch: pytest.MonkeyPatch):
    """A GPU wants big batches: one process per device, hundreds of games in lockstep; the CPU keeps
    the split that fits a worker's memory."""
    import torch

    import flows.selfplay
    from flows.selfplay import MAX_GAMES_PER_TASK, MAX_GAMES_PER_TASK_ACCELERATOR, default_games_per_task

    assert default_games_per_task(1000, 2) == default_games_per_task(1000, 2, "cpu") == MAX_GAMES_PER_TASK
    assert default_games_per_task(1000, 2, "auto") == MAX_GAMES_PER_TASK  # auto is the CPU on this machine
    monkeypatch.setattr(flows.selfplay, "choose_device", lambda name: torch.device("meta"))  # stands for a GPU
    assert default_games_per_task(1000, 1, "cuda") == MAX_GAMES_PER_TASK_ACCELERATOR == 256
    assert default_games_per_task(300, 2, "cuda") == 150 and default_games_per_task(3, 8, "cuda") == 1
