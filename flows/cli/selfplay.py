"""`gozero selfplay --model URI --games N`: a generation of self-play games, with progress and a summary.

Runs the `selfplay` flow (flows/selfplay.py) on a process pool of ``--workers`` (default: cores)
or on a Dask cluster (``--dask-address``); a progress bar counts the games whose batch is on
disk. ``--model uniform`` plays without a net (uniform priors, value 0): a smoke test of the
pipeline. flows/cli/root.py mounts `selfplay` as a command.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from flows.cli.common import (
    DATA_DIR_HELP,
    SIZE_HELP,
    WORKERS_DEVICE_HELP,
    checked_device,
    console,
    quiet_prefect,
    shard_progress,
    shipped_ready,
    user_errors,
)

MODEL_HELP = "models:/NAME@ALIAS, models:/NAME/VERSION, a model directory, or 'uniform' (no net)"

if TYPE_CHECKING:  # the real import waits for the command: `gozero --help` stays fast
    from flows.selfplay import GenerationSummary
    from tasks.app.selfplay_settings import SelfPlaySettings


def selfplay(
    model: Annotated[str, typer.Option(help=f"the model that plays both sides: {MODEL_HELP}")],
    games: Annotated[int, typer.Option(min=1, help="games to play")],
    sims: Annotated[int, typer.Option(min=1, help="search simulations per move")] = 100,
    workers: Annotated[int | None, typer.Option(min=1, help="self-play processes (default: cores)")] = None,
    generation: Annotated[int, typer.Option(min=0, help="generation: <data>/selfplay/gen=K")] = 0,
    data_dir: Annotated[Path | None, typer.Option(help=DATA_DIR_HELP)] = None,
    games_per_task: Annotated[int | None, typer.Option(min=1, help="games per task (default: games / workers)")] = None,
    seed: Annotated[int, typer.Option(help="seed of the first task (task i uses seed + i)")] = 0,
    size: Annotated[int | None, typer.Option(min=5, max=19, help=SIZE_HELP)] = None,
    komi: Annotated[float, typer.Option(help="komi (Chinese rules, Tromp-Taylor count)")] = 7.5,
    encoder: Annotated[str, typer.Option(help="feature encoder for 'uniform' (a net uses its own)")] = "agz17",
    max_moves: Annotated[int | None, typer.Option(min=1, help="move cap per game (default 3*N*N)")] = None,
    resign_threshold: Annotated[float, typer.Option(max=0.0, help="resign below this root value; -1 never")] = -0.9,
    dask_address: Annotated[str | None, typer.Option(help="run the self-play tasks on this Dask scheduler")] = None,
    device: Annotated[str, typer.Option(help=WORKERS_DEVICE_HELP)] = "cpu",
    verbose: Annotated[bool, typer.Option(help="show Prefect's logs (they are always in the Prefect UI)")] = False,
) -> None:
    """Play self-play games with one model into <data>/selfplay/gen=K (Parquet rows + SGF)."""
    quiet_prefect(verbose, data_dir)
    from flows.selfplay import finished_generation
    from gocore.nn.features import get_encoder
    from storage import layout
    from tasks.app.selfplay_settings import SelfPlaySettings
    from tasks.app.sizes import resolve_size
    from tasks.selfplay import load_evaluator

    data = layout.data_dir(data_dir)
    checked_device(device)
    model = shipped_ready(data_dir, model)[0]
    with user_errors():
        size = resolve_size(size, None if model == "uniform" else model)
        get_encoder(encoder)
        settings = SelfPlaySettings(model, sims, size=size, komi=komi, encoder=encoder, max_moves=max_moves,
                                    resign_threshold=None if resign_threshold <= -1 else resign_threshold,
                                    device=device)
        done = finished_generation(settings, games, generation, str(data), seed)  # a rerun: nothing to start
        if done is None:
            load_evaluator(model, size, str(data), device=device)  # a bad model fails now, before any server starts
    console.print(f"self-play [bold]gen={generation}[/]: {model}, {games} games, {sims} sims, "
                  f"{size}x{size}, komi {komi:g} -> {layout.selfplay_dir(data, generation)}", soft_wrap=True)
    if done is not None:
        console.print(f"all {games} games are on disk, played with these settings: nothing to play")
    summary = done or _run(settings, games, generation, str(data), workers, games_per_task, dask_address, seed)
    console.print(summary_table(summary))


def _run(settings: SelfPlaySettings, games: int, generation: int, data: str, workers: int | None,
         games_per_task: int | None, dask_address: str | None, seed: int) -> GenerationSummary:
    """The flow under a progress bar fed from the sidecars on disk."""
    from flows.selfplay import default_games_per_task, run_selfplay, selfplay_progress

    per_task = games_per_task or default_games_per_task(games, workers, settings.device)

    def poll() -> tuple[int, int]:
        return selfplay_progress(data, generation, games, per_task, seed)

    with shard_progress(poll, "self-play games"), user_errors():
        return run_selfplay(settings, games, generation, data, workers=workers, dask_address=dask_address,
                            games_per_task=per_task, seed=seed)


def summary_table(summary: GenerationSummary) -> Table:
    """The generation's summary: games, positions, results, how games ended, false resignations."""
    table = Table(title=f"self-play gen={summary.generation}: {summary.directory}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    games = max(summary.counts.games, 1)
    for measure, key in (("games", "games"), ("positions", "positions"), ("black wins", "black_wins"),
                         ("white wins", "white_wins"), ("draws", "draws"), ("resignations", "resignations"),
                         ("two passes", "two_passes"), ("move cap", "move_cap"),
                         ("no-resign games", "no_resign_games"), ("false resignations", "false_resignations")):
        value = getattr(summary.counts, key)
        share = f" ({100 * value / games:.0f} %)" if key.endswith("wins") else ""
        table.add_row(measure, f"{value:,}{share}")
    table.add_row("mean length", f"{summary.mean_length:.1f}")
    table.add_row("tasks (already on disk)", f"{summary.tasks} ({summary.tasks_skipped})")
    table.add_row("play time (s, summed over tasks)", f"{summary.seconds_played:.1f}")
    return table
