"""Self-play flow: one model plays a generation's games in parallel batches, then a summary.

    batches = plan_batches(games, games_per_task, seed)      # (seed, games) per task
    stats   = selfplay_games.map(batches)                    # processes locally, or a Dask cluster
    summary = merge_stats(stats)                             # + a Markdown artifact

Each task plays its games in lockstep, so more games per task means bigger network batches;
the default splits the games evenly over the workers. Batch i has seed ``seed + i``: a rerun
with the same settings skips the batches already on disk (their sidecars). `run_selfplay`
picks the task runner (a process pool of `workers`, or `dask_address`).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from prefect import flow, unmapped
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    update_progress_artifact,
)
from prefect.futures import as_completed
from prefect.task_runners import ProcessPoolTaskRunner

from flows.runtime import artifact_key, prefect_api, task_runner
from gocore.search.selfplay import merge_stats
from storage import layout
from storage.atomic import remove_stale_temps
from tasks.selfplay import GAMES_DIR, selfplay_games, sidecar_path


def plan_batches(games: int, games_per_task: int, seed: int) -> list[tuple[int, int]]:
    """(seed, games) of each task: `games` split into tasks of at most `games_per_task`."""
    per_task = max(1, games_per_task)
    return [(seed + index, min(per_task, games - start))
            for index, start in enumerate(range(0, games, per_task))]


def default_games_per_task(games: int, workers: int | None) -> int:
    """Games split evenly over the workers (default: cores): one task per worker, biggest batches."""
    return max(1, math.ceil(games / max(1, workers or os.cpu_count() or 1)))


@flow(name="selfplay", log_prints=True, task_runner=ProcessPoolTaskRunner())
def selfplay(model: str, games: int, sims: int = 100, generation: int = 0, data_dir: str | None = None,
             games_per_task: int | None = None, seed: int = 0, size: int = 9, komi: float = 7.5,
             encoder: str = "agz17", max_moves: int | None = None,
             resign_threshold: float | None = -0.9) -> dict[str, Any]:
    """Play `games` self-play games of `model` into ``<data>/selfplay/gen=<generation>/``; the summary."""
    data = layout.data_dir(data_dir)
    generation_dir = layout.selfplay_dir(data, generation)
    for directory in (generation_dir, generation_dir / GAMES_DIR):  # before any task writes there
        remove_stale_temps(directory)
    batches = plan_batches(games, games_per_task or default_games_per_task(games, None), seed)
    print(f"self-play gen={generation}: {model}, {games} games in {len(batches)} tasks, {sims} sims")
    progress = create_progress_artifact(0.0, key=artifact_key("selfplay-progress-gen", generation),
                                        description=f"self-play games of generation {generation}")
    futures = selfplay_games.map(unmapped(model), [n for _, n in batches], unmapped(sims),
                                 unmapped(generation), [s for s, _ in batches], unmapped(str(data)),
                                 size=unmapped(size), komi=unmapped(komi), encoder=unmapped(encoder),
                                 max_moves=unmapped(max_moves), resign_threshold=unmapped(resign_threshold))
    parts, done = [], 0
    for future in as_completed(futures):
        parts.append(future.result())
        done += parts[-1]["games"]
        update_progress_artifact(progress, 100.0 * done / max(games, 1))
    summary = summarize_generation(parts, model, generation, generation_dir)
    create_markdown_artifact(summary_markdown(summary), key=artifact_key("selfplay-gen", generation),
                             description=f"self-play generation {generation}")
    return summary


def summarize_generation(parts: list[dict[str, Any]], model: str, generation: int,
                         generation_dir: Path) -> dict[str, Any]:
    """The tasks' counts added up, with the shards, the mean length and this run's play time."""
    total = merge_stats(parts)
    for key in ("generation", "seed"):  # per-task labels, not counts
        total.pop(key, None)
    return {**total, "model": model, "generation": generation, "directory": str(generation_dir),
            "shards": sorted(part["shard"] for part in parts),
            "model_versions": sorted({part["model_version"] for part in parts}),
            "tasks": len(parts), "tasks_skipped": sum(part["skipped"] for part in parts),
            "mean_length": total.get("positions", 0) / max(total.get("games", 0), 1),
            "seconds_played": round(sum(part["seconds"] for part in parts if not part["skipped"]), 1)}


def summary_markdown(summary: dict[str, Any]) -> str:
    """The generation summary as a Markdown report."""
    games = max(summary.get("games", 0), 1)
    rows = [("games", summary.get("games", 0)), ("positions (rows)", summary.get("positions", 0)),
            ("mean length (moves)", f"{summary['mean_length']:.1f}"),
            ("black wins", f"{summary.get('black_wins', 0)} ({100 * summary.get('black_wins', 0) / games:.0f} %)"),
            ("white wins", f"{summary.get('white_wins', 0)} ({100 * summary.get('white_wins', 0) / games:.0f} %)"),
            ("draws", summary.get("draws", 0)), ("ended by resignation", summary.get("resignations", 0)),
            ("ended by two passes", summary.get("two_passes", 0)), ("hit the move cap", summary.get("move_cap", 0)),
            ("no-resign games (would resign)",
             f"{summary.get('no_resign_games', 0)} ({summary.get('would_resign', 0)})"),
            ("false resignations", summary.get("false_resignations", 0)),
            ("tasks (skipped: already on disk)", f"{summary['tasks']} ({summary['tasks_skipped']})")]
    versions = ", ".join(summary["model_versions"])
    lines = [f"# Self-play generation {summary['generation']}", "",
             f"Model `{summary['model']}` ({versions}), written to `{summary['directory']}`.", "",
             "| measure | value |", "|---|---:|"]
    return "\n".join(lines + [f"| {name} | {value} |" for name, value in rows]) + "\n"


def selfplay_progress(data_dir: str | None, generation: int, games: int, games_per_task: int,
                      seed: int = 0) -> tuple[int, int]:
    """(games finished, games planned) of a self-play run, from its sidecars; for progress bars."""
    data = layout.data_dir(data_dir)
    done = 0
    for batch_seed, _count in plan_batches(games, games_per_task, seed):
        sidecar = sidecar_path(data, generation, batch_seed)
        if sidecar.exists():
            try:
                done += json.loads(sidecar.read_text())["games"]
            except (OSError, ValueError, KeyError):  # being replaced right now: count it next poll
                pass
    return done, games


def run_selfplay(model: str, games: int, sims: int = 100, generation: int = 0, data_dir: str | None = None,
                 workers: int | None = None, dask_address: str | None = None,
                 games_per_task: int | None = None, **options: Any) -> dict[str, Any]:
    """Run the flow with a process pool of `workers` (default: cores) or on a Dask cluster."""
    runner = task_runner(workers, dask_address)
    per_task = games_per_task or default_games_per_task(games, workers)
    with prefect_api():
        return selfplay.with_options(task_runner=runner)(model, games, sims, generation, data_dir,
                                                         per_task, **options)
