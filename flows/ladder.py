"""Ladder flow: a player meets its most informative opponents, then the Elo ladder is refitted.

    ratings = fit_ratings()                          # every game of the size in <data>/ratings/
    if a player (default: the champion of gozero-<N>x<N>):
        entrant, opponents = plan_opponents()        # a newcomer meets random first, then
        play_matches(opponents); refit               # the most informative rated players
    ladder = publish_ladder()                        # ladder.json, MLflow run (Elo per generation + plot)
    table artifact                                   # the ladder, best first

Matches are played with the evaluate flow's tasks (plan_match, play_games, finalize_match); the
chunks of every match of a step are mapped at once. The flow takes `LadderSettings` whole (how the
games are played: the Prefect form shows each field's doc) beside whom to rate and where. The
AlphaGo Zero loop calls `ladder` after each promotion; `run_ladder` runs it from a shell with its
own Prefect API and task runner.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prefect import flow
from prefect.artifacts import create_table_artifact

from flows.runtime import StoppingProcessPool, artifact_key, prefect_api, results_as_completed, task_runner
from storage import layout
from tasks.app.ladder_settings import LadderSettings
from tasks.evaluate import finalize_match, plan_match, play_games
from tasks.ladder import (
    Ladder,
    LadderPlayer,
    LadderRow,
    champion,
    fit_ratings,
    ladder_match,
    plan_opponents,
    publish_ladder,
)


@flow(name="ladder", log_prints=True, task_runner=StoppingProcessPool())
def ladder(settings: LadderSettings = LadderSettings(), player: str | None = None, data_dir: str | None = None,
           games_per_task: int = 2, play: bool = True) -> Ladder:
    """Rate `player` (default: the champion) with `settings.games_per_opponent` games against each of
    its `settings.opponents` most informative opponents (none if not `play`), refit and publish the ladder.

    Args:
        settings: How ladder games are played and whom the player meets (board, games, budget,
            anchors); its board size, if not given, is the one the player's name says, else 9.
        player: The player spec to rate (models:/NAME/VERSION, uct-N, gnugo-L, ...); default: the
            champion of gozero-<N>x<N>.
        data_dir: The data dir (default: $GOZERO_DATA, else ./gozero-data) with the ratings table and registry.
        games_per_task: Games per mapped task.
        play: Play the player's matches; off: only refit and publish the ladder.
    """
    data = str(layout.data_dir(data_dir))
    settings = settings.sized_for(player)
    size = settings.size
    rated = fit_ratings(data, size)
    player = (player or champion(size, Path(data))) if play else None
    played: list[str] = []
    if player:
        entrant, chosen = plan_opponents(player, rated, settings, data)
        was_rated = any(rating.player == entrant.name for rating in rated)
        played += play_matches(entrant, chosen, settings, data, games_per_task)
        rated = fit_ratings(data, size)
        if not was_rated:  # it met random to get a rating: now the informative opponents
            _, chosen = plan_opponents(entrant.spec, rated, settings, data)
            played += play_matches(entrant, chosen, settings, data, games_per_task)
            rated = fit_ratings(data, size)
    result = publish_ladder(data, settings, rated, tuple(dict.fromkeys(played)))
    create_table_artifact([ladder_cells(row) for row in result.rows], key=artifact_key("ladder", f"{size}x{size}"),
                          description=f"Elo ladder of {size}x{size} (random = 0), best first")
    return result


def play_matches(entrant: LadderPlayer, opponents: Sequence[LadderPlayer], settings: LadderSettings, data: str,
                 games_per_task: int = 2) -> list[str]:
    """Play (or resume) the ladder matches of `entrant` against `opponents`, every chunk mapped at
    once; the match ids."""
    planned = [ladder_match(entrant, opponent, settings, Path(data)) for opponent in opponents]
    work = [(chunk, match, match_settings) for match, match_settings in planned
            for chunk in plan_match(match, match_settings, games_per_task)]
    print(f"{entrant.name} meets {', '.join(o.name for o in opponents)}: {sum(len(w[0]) for w in work)} games to play")
    if work:
        chunks, match_dirs, match_settings = (list(column) for column in zip(*work, strict=True))
        for _ in results_as_completed(play_games.map(chunks, match_dirs, match_settings)):
            pass
    for match, match_settings in planned:
        finalize_match(match, match_settings)
    return [Path(match).name for match, _ in planned]


def ladder_cells(row: LadderRow) -> dict[str, str]:
    """One ladder row as text cells (player, generation, games, Elo, ± 95 %, score): the artifact's
    and the CLI's."""
    return {"player": row.player, "generation": "" if row.generation is None else str(row.generation),
            "games": str(row.games), "Elo": f"{row.elo:+.0f}",
            "± (95 %)": "anchor" if row.stderr is None else f"{1.96 * row.stderr:.0f}",
            "score": f"{row.score / row.games:.0%}" if row.games else "-"}


def run_ladder(settings: LadderSettings, player: str | None = None, data_dir: str | None = None,
               workers: int | None = None, dask_address: str | None = None) -> Ladder:
    """Run the flow with a process pool of `workers` (default: cores) or on a Dask cluster."""
    runner = task_runner(workers, dask_address)
    with prefect_api():
        return ladder.with_options(task_runner=runner)(settings, player, data_dir)
