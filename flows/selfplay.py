"""Self-play flow: one model plays a generation's games in parallel batches, then a summary.

    settings = SelfPlaySettings(model, sims, ...)            # the flow's parameter, mapped whole
    batches  = plan_batches(games, games_per_task, seed)     # (seed, games) per task
    results  = selfplay_games.map(unmapped(settings), batches)   # processes locally, or a Dask cluster
    summary  = summarize_generation(results)                 # GenerationSummary + a Markdown artifact

Each task plays its games in lockstep, so more games per task means bigger network batches;
the default splits the games evenly over the workers. Batch i has seed ``seed + i``: a rerun
with the same settings skips the batches already on disk (their sidecars). The flow takes
`SelfPlaySettings` whole (how games are played: the Prefect form shows each field's doc) beside
which games to play (games, generation, seed, split) and where. `run_selfplay` picks the task
runner (a process pool of `workers`, or `dask_address`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from pathlib import Path

from prefect import flow, unmapped
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    update_progress_artifact,
)

from flows.runtime import StoppingProcessPool, artifact_key, prefect_api, results_as_completed, task_runner
from gocore.nn.device import choose_device
from storage import layout
from storage import selfplay as selfplay_files
from tasks.app.models import local_model
from tasks.app.selfplay_settings import SelfPlaySettings
from tasks.selfplay import BatchResult, GameCounts, finished_batch, selfplay_games


@dataclass(frozen=True)
class GenerationSummary:
    """What a self-play run of one generation did: the flow's result and its report."""

    model: str  # the model that played
    generation: int  # the generation's number
    directory: str  # <data>/selfplay/gen=<k>
    counts: GameCounts  # how the games went, all batches together
    rows: int  # rows in all the shards
    shards: tuple[str, ...]  # the batches' Parquet shards, sorted
    model_versions: tuple[str, ...]  # version labels of the model across the batches, sorted
    tasks: int  # batches in the run
    tasks_skipped: int  # batches found finished on disk
    mean_length: float  # moves per game
    seconds_played: float  # play time of the batches played by this run, summed over tasks
    winner_lows: tuple[float, ...] = ()  # no-resign games: each winner's lowest value streak (calibration)


MAX_GAMES_PER_TASK = 50  # lockstep games per task by default: what keeps a tiny-net worker under 0.5 GB
MAX_GAMES_PER_TASK_ACCELERATOR = 256
"""With the nets on a GPU: one worker per device plays this many games in lockstep, so each forward
pass gets up to 256 x 8 leaves (a GPU is idle at a CPU task's 400); its trees cost up to ~34 KB a visit
at 19x19 (`benchmarks.tree_memory`, nothing recorded, every node expanded), ~0.9 GB for 256 trees
of ~100 visits."""


def default_games_per_task(games: int, workers: int | None, device: str = "cpu") -> int:
    """Games split evenly over the workers (default: cores), at most `MAX_GAMES_PER_TASK` a task on
    the CPU, `MAX_GAMES_PER_TASK_ACCELERATOR` with the nets on an accelerator (`device` cuda, mps).
    Bigger lockstep batches buy no speed on a CPU (100 games x 32 sims: 210 CPU s as one task,
    196 s as two of 50) but cost memory (a worker's peak RSS 0.53 GB against 0.49 GB)."""
    cap = MAX_GAMES_PER_TASK if device == "cpu" or choose_device(device).type == "cpu" else MAX_GAMES_PER_TASK_ACCELERATOR
    return max(1, min(cap, math.ceil(games / max(1, workers or os.cpu_count() or 1))))


@flow(name="selfplay", log_prints=True, task_runner=StoppingProcessPool())
def selfplay(settings: SelfPlaySettings, games: int, generation: int = 0, data_dir: str | None = None,
             games_per_task: int | None = None, seed: int = 0) -> GenerationSummary:
    """Play `games` self-play games of `settings.model` into ``<data>/selfplay/gen=<generation>/`` (a
    loop's, `settings.run`: ``<data>/loops/<run>/selfplay/gen=<generation>/``); the summary.

    Args:
        settings: How every game is played (model, search, board); a rerun must keep what the
            sidecars record of it (SelfPlaySettings.recorded).
        games: Games to play in this generation.
        generation: The generation's number: its directory gen=<generation>.
        data_dir: The data dir (default: $GOZERO_DATA, else ./gozero-data) of the games and registry.
        games_per_task: Lockstep games per task (default: the games split evenly over the cores,
            at most 50); a rerun keeps the split the first run pinned.
        seed: Seed of the first task (task i uses seed + i): with the split, it names the batches.
    """
    data = layout.data_dir(data_dir)
    selfplay_files.clean_partial(data, generation, settings.run)  # before any task writes there
    settings = replace(settings, local_model=local_model(settings.model, data))  # workers: no MLflow import
    run = settings.run
    asked = games_per_task or default_games_per_task(games, None, settings.device)
    per_task = selfplay_files.pin_split(data, generation, games, seed, asked, run)
    if per_task != asked:
        print(f"self-play gen={generation}: {per_task} games per task, as the first run split them (asked {asked})")
    batches = selfplay_files.plan_batches(games, per_task, seed)
    print(f"self-play gen={generation}: {settings.model}, {games} games in {len(batches)} tasks, {settings.sims} sims")
    progress = create_progress_artifact(0.0, key=artifact_key("selfplay-progress-gen", generation),
                                        description=f"self-play games of generation {generation}")
    # batches a killed or finished run left on disk are read here: a rerun with nothing left to play
    # sends no task to the workers (they would import torch only to find the batch done)
    parts = finished_parts(settings, generation, data, batches)
    todo = [(seed, n) for seed, n in batches if seed not in {part.seed for part in parts}]
    futures = selfplay_games.map(unmapped(settings), [n for _, n in todo], unmapped(generation),
                                 [s for s, _ in todo], unmapped(str(data))) if todo else []
    for part in results_as_completed(futures):
        parts.append(part)
        update_progress_artifact(progress, 100.0 * sum(p.counts.games for p in parts) / max(games, 1))
    summary = summarize_generation(parts, settings.model, generation, layout.selfplay_dir(data, generation, run))
    create_markdown_artifact(summary_markdown(summary), key=artifact_key("selfplay-gen", generation),
                             description=f"self-play generation {generation}")
    return summary


def finished_generation(settings: SelfPlaySettings, games: int, generation: int = 0, data_dir: str | None = None,
                        seed: int = 0) -> GenerationSummary | None:
    """The generation's summary if every batch of its pinned plan is on disk, played with these
    settings (SelfPlayError if one was played with others); None if anything is left to play. The
    CLI asks first: a rerun with nothing to play starts no server and no worker."""
    data = layout.data_dir(data_dir)
    per_task = selfplay_files.read_split(data, generation, games, seed, settings.run)
    if per_task is None:
        return None
    batches = selfplay_files.plan_batches(games, per_task, seed)
    if len(parts := finished_parts(settings, generation, data, batches)) < len(batches):
        return None
    return summarize_generation(parts, settings.model, generation, layout.selfplay_dir(data, generation, settings.run))


def finished_parts(settings: SelfPlaySettings, generation: int, data: Path,
                   batches: list[tuple[int, int]]) -> list[BatchResult]:
    """The batches (seed, games) already on disk, played with these settings (SelfPlayError if not)."""
    return [done for seed, n in batches
            if (done := finished_batch(data, generation, seed, settings.recorded(n), settings.run))]


def summarize_generation(parts: list[BatchResult], model: str, generation: int,
                         generation_dir: Path) -> GenerationSummary:
    """The tasks' counts added up, with the shards, the mean length and this run's play time."""
    counts = GameCounts.total([part.counts for part in parts])
    return GenerationSummary(model=model, generation=generation, directory=str(generation_dir), counts=counts,
                             rows=sum(part.rows for part in parts),
                             shards=tuple(sorted(part.shard for part in parts)),
                             model_versions=tuple(sorted({part.model_version for part in parts})),
                             tasks=len(parts), tasks_skipped=sum(part.skipped for part in parts),
                             mean_length=counts.positions / max(counts.games, 1),
                             seconds_played=round(sum(part.seconds for part in parts if not part.skipped), 1),
                             winner_lows=tuple(low for part in parts for low in part.winner_lows))


def summary_markdown(summary: GenerationSummary) -> str:
    """The generation summary as a Markdown report."""
    counts = summary.counts
    games = max(counts.games, 1)
    rows = [("games", counts.games), ("positions (rows)", counts.positions),
            ("mean length (moves)", f"{summary.mean_length:.1f}"),
            ("black wins", f"{counts.black_wins} ({100 * counts.black_wins / games:.0f} %)"),
            ("white wins", f"{counts.white_wins} ({100 * counts.white_wins / games:.0f} %)"),
            ("draws", counts.draws), ("ended by resignation", counts.resignations),
            ("ended by two passes", counts.two_passes), ("hit the move cap", counts.move_cap),
            ("no-resign games (would resign)", f"{counts.no_resign_games} ({counts.would_resign})"),
            ("false resignations", counts.false_resignations),
            ("tasks (skipped: already on disk)", f"{summary.tasks} ({summary.tasks_skipped})")]
    versions = ", ".join(summary.model_versions)
    lines = [f"# Self-play generation {summary.generation}", "",
             f"Model `{summary.model}` ({versions}), written to `{summary.directory}`.", "",
             "| measure | value |", "|---|---:|"]
    return "\n".join(lines + [f"| {name} | {value} |" for name, value in rows]) + "\n"


def selfplay_progress(data_dir: str | None, generation: int, games: int, games_per_task: int,
                      seed: int = 0, run: str = "") -> tuple[int, int]:
    """(games finished, games planned) of a self-play run, from its sidecars; for progress bars."""
    data = layout.data_dir(data_dir)
    per_task = selfplay_files.read_split(data, generation, games, seed, run) or games_per_task
    seeds = [batch_seed for batch_seed, _ in selfplay_files.plan_batches(games, per_task, seed)]
    return selfplay_files.games_done(data, generation, seeds, run), games


def run_selfplay(settings: SelfPlaySettings, games: int, generation: int = 0, data_dir: str | None = None,
                 workers: int | None = None, dask_address: str | None = None, games_per_task: int | None = None,
                 seed: int = 0) -> GenerationSummary:
    """Run the flow with a process pool of `workers` (default: cores) or on a Dask cluster."""
    runner = task_runner(workers, dask_address)
    per_task = games_per_task or default_games_per_task(games, workers, settings.device)
    with prefect_api():
        return selfplay.with_options(task_runner=runner)(settings, games, generation, data_dir, per_task, seed)
