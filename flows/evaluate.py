"""Evaluate flow: a match between two players, played in parallel chunks, summarised and gated.

    chunks  = plan_match(settings)                  # the games not yet on disk (a rerun resumes)
    for each wave of chunks (all at once without an SPRT):
        stop if the SPRT has decided (sprt_decided)
        rows = play_games.map(wave)                 # processes locally, or a Dask cluster
    summary = finalize_match()                      # results.parquet, then summary.json

`run_evaluate` picks the task runner (a process pool of `workers`, or `dask_address`).
"""

from __future__ import annotations

import os
from typing import Any

from prefect import flow, unmapped
from prefect.artifacts import create_markdown_artifact, create_progress_artifact, update_progress_artifact

from flows.runtime import StoppingProcessPool, artifact_key, prefect_api, results_as_completed, task_runner
from gocore.play.match import MatchConfig
from gocore.play.ratings import SprtConfig
from storage import layout, matches
from tasks.evaluate import MatchSettings, finalize_match, plan_match, play_games, sprt_decided


@flow(name="evaluate", log_prints=True, task_runner=StoppingProcessPool())
def evaluate(black: str, white: str, games: int = 40, sims: int = 100, match_id: str | None = None,
             data_dir: str | None = None, gate: float = 0.55, sprt: SprtConfig | None = None,
             size: int = 9, komi: float = 7.5, max_moves: int | None = None, seed: int = 0, opening: int = 2,
             gtp_timeout: float = 30.0, games_per_task: int = 2, parallel: int | None = None,
             device: str = "cpu") -> dict[str, Any]:
    """Play `games` games of A (`black` in even games) against B; returns the summary with the gate.

    With `sprt`, chunks run in waves of `parallel` (default: cores) and the match stops once the
    test decides. Nets run on `device` in every worker (cpu by default: each worker process would
    hold its own CUDA context).
    """
    match_id = match_id or matches.default_match_id(black, white)
    match = str(layout.match_dir(layout.data_dir(data_dir), match_id))
    settings = MatchSettings(black, white, games, sims, MatchConfig(size, komi, max_moves, seed, opening), gtp_timeout,
                             device)
    print(f"match {match_id}: {black} vs {white}, {games} games -> {match}")
    chunks = plan_match(match, settings, games_per_task)
    progress = create_progress_artifact(0.0, key=artifact_key("match-progress", match_id),
                                        description=f"games of match {match_id} played")
    done = games - sum(len(chunk) for chunk in chunks)  # games a previous run already played
    wave_size = max(1, parallel or os.cpu_count() or 1) if sprt is not None else max(1, len(chunks))
    for start in range(0, len(chunks), wave_size):
        if sprt is not None and sprt_decided(match, settings, sprt):
            print("the SPRT has decided: the remaining games are not played")
            break
        futures = play_games.map(chunks[start:start + wave_size], unmapped(match), unmapped(settings))
        for rows in results_as_completed(futures):
            done += len(rows)
            update_progress_artifact(progress, 100.0 * done / max(games, 1))
    summary = finalize_match(match, settings, gate, sprt)
    create_markdown_artifact(matches.summary_markdown(summary), key=artifact_key("match", match_id),
                             description=f"results of match {match_id}")
    return summary


def run_evaluate(black: str, white: str, games: int = 40, sims: int = 100, match_id: str | None = None,
                 data_dir: str | None = None, gate: float = 0.55, sprt: SprtConfig | None = None,
                 workers: int | None = None, dask_address: str | None = None, **options: Any) -> dict[str, Any]:
    """Run the flow with a process pool of `workers` (default: cores) or on a Dask cluster."""
    runner = task_runner(workers, dask_address)
    with prefect_api():
        return evaluate.with_options(task_runner=runner)(black, white, games, sims, match_id, data_dir, gate,
                                                          sprt, parallel=workers, **options)
