"""Evaluate flow: a match between two players, played in parallel chunks, summarised and gated.

    settings = MatchSettings(black, white, games, sims, MatchConfig(size, komi, ...))   # the flow's parameter
    run_match(match, settings, play_wave=...)      # tasks.app.evaluate: the games not yet on disk,
        for each wave of chunks (all at once without an SPRT):
            stop if the SPRT has decided
            play_games.map(wave)                   # processes locally, or a Dask cluster
        results.parquet, then summary.json

`gozero evaluate` plays in-process through the same `run_match` (`play_match_here`); this flow only
says where a wave's chunks play. `run_evaluate` picks the task runner (a process pool of
`workers`, or `dask_address`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from prefect import flow, unmapped
from prefect.artifacts import create_markdown_artifact, create_progress_artifact, update_progress_artifact

from flows.runtime import StoppingProcessPool, artifact_key, prefect_api, results_as_completed, task_runner
from gocore.play.ratings import SprtConfig
from storage import layout, matches
from tasks.app.evaluate import MatchSettings, Rows, run_match
from tasks.evaluate import play_games
from tasks.ladder import tag_registered_players


@flow(name="evaluate", log_prints=True, task_runner=StoppingProcessPool())
def evaluate(settings: MatchSettings, match_id: str | None = None, data_dir: str | None = None,
             gate: float = 0.55, sprt: SprtConfig | None = None, games_per_task: int = 2,
             parallel: int | None = None) -> dict[str, Any]:
    """Play the match `settings` (A is `settings.black` in even games, against B); returns the
    summary with the gate.

    Args:
        settings: What the match is (players, games, budget, board); kept in match.json, and a
            rerun with the same match id must keep it.
        match_id: The match's name: <data>/matches/<match_id>/ (default: new, from the players).
        data_dir: The data dir (default: $GOZERO_DATA, else ./gozero-data) of the match and registry.
        gate: The win rate A needs to pass the gate (without an SPRT, or when it is undecided).
        sprt: Stop early once this sequential test decides (chunks then run in waves of `parallel`).
        games_per_task: Games per task (each task loads both players once).
        parallel: Chunks per wave with an SPRT (default: cores).
    """
    match_id = match_id or matches.default_match_id(settings.black, settings.white)
    match = str(layout.match_dir(layout.data_dir(data_dir), match_id))
    print(f"match {match_id}: {settings.black} vs {settings.white}, {settings.games} games -> {match}")
    progress = create_progress_artifact(0.0, key=artifact_key("match-progress", match_id),
                                        description=f"games of match {match_id} played")

    def play_wave(chunks: list[list[int]]) -> Iterator[Rows]:
        return results_as_completed(play_games.map(chunks, unmapped(match), unmapped(settings)))

    summary = run_match(match, settings, gate, sprt, play_wave=play_wave, games_per_chunk=games_per_task,
                        wave=parallel or os.cpu_count() or 1,
                        on_rows=lambda done: update_progress_artifact(progress, 100.0 * done / max(settings.games, 1)))
    if summary["stopped_early"]:
        print(f"the SPRT decided after {summary['games']} games: the remaining games were not played")
    create_markdown_artifact(matches.summary_markdown(summary), key=artifact_key("match", match_id),
                             description=f"results of match {match_id}")
    tag_registered_players(settings, layout.data_dir(data_dir))
    return summary


def run_evaluate(settings: MatchSettings, match_id: str | None = None, data_dir: str | None = None,
                 gate: float = 0.55, sprt: SprtConfig | None = None, workers: int | None = None,
                 dask_address: str | None = None) -> dict[str, Any]:
    """Run the flow with a process pool of `workers` (default: cores) or on a Dask cluster."""
    runner = task_runner(workers, dask_address)
    with prefect_api():
        return evaluate.with_options(task_runner=runner)(settings, match_id, data_dir, gate, sprt, parallel=workers)
