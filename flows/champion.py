"""Evaluate-champion flow: the champion against fixed yardsticks, then the ladder refitted.

    entrant   = the champion of gozero-<N>x<N> (or `model`), under its ladder name
    opponents = random, the ladder's anchors, GNU Go at each of `gnugo_levels`
    play_matches(entrant, opponents)                 # ladder matches (flows/ladder.py): a rerun resumes
    ladder    = publish_ladder()                     # ladder.json, version tags, MLflow ladder run

Unlike `ladder`, which picks the most informative opponents, this always measures the champion
against the same fixed players, so its rank against GNU Go is comparable from week to week. The
matches are the ladder's (``ladder-<N>x<N>-<champion>-vs-<opponent>``): a champion already
evaluated plays nothing again, and the ladder counts these games as its own. The flow takes
`ChampionSettings` whole (tasks.app.ladder_settings: the Prefect form shows each field's doc).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prefect import flow
from prefect.artifacts import create_table_artifact

from flows.ladder import ladder_cells, play_matches
from flows.runtime import StoppingProcessPool, artifact_key
from gocore.errors import GozeroError
from storage import layout
from tasks.app.ladder_settings import ChampionSettings
from tasks.app.players import has_gnugo, parse_player
from tasks.ladder import (
    ANCHOR,
    Ladder,
    champion,
    enter_ladder,
    fit_ratings,
    publish_ladder,
    strength,
)


class NoChampionError(GozeroError):
    """There is no champion to evaluate yet."""


@flow(name="evaluate-champion", log_prints=True, task_runner=StoppingProcessPool())
def evaluate_champion(settings: ChampionSettings = ChampionSettings(), model: str | None = None,
                      data_dir: str | None = None, games_per_task: int = 2) -> Ladder:
    """Play the champion against random, the anchors and GNU Go levels; refit and publish the ladder.

    Args:
        settings: Whom the champion meets and how (board, GNU Go levels, anchors, games, budget).
        model: Evaluate this model spec instead of the champion (e.g. models:/gozero-9x9/3).
        data_dir: The data dir (default: $GOZERO_DATA, else ./gozero-data) with the registry and ratings.
        games_per_task: Games per mapped task.
    """
    data = str(layout.data_dir(data_dir))
    size = settings.size
    player = model or champion(size, Path(data))
    if player is None:
        raise NoChampionError(f"gozero-{size}x{size} has no champion in {data} yet: run the zero loop first")
    ladder_settings = settings.ladder()
    entrant = enter_ladder(player, ladder_settings, Path(data))
    opponents = [enter_ladder(spec, ladder_settings, Path(data))
                 for spec in yardsticks(settings.gnugo_levels, settings.anchors)]
    print(f"evaluating {entrant.name} against {', '.join(o.name for o in opponents)}")
    played = play_matches(entrant, opponents, ladder_settings, data, games_per_task)
    result = publish_ladder(data, ladder_settings, fit_ratings(data, size), tuple(played))
    label = strength(entrant.name, result.rows, size)
    print(f"{entrant.name}: {label.text if label else 'not on the ladder'}")
    create_table_artifact([ladder_cells(row) for row in result.rows], key=artifact_key("champion", f"{size}x{size}"),
                          description=f"{entrant.name} against GNU Go and the anchors: the {size}x{size} ladder "
                                      f"(random = 0); {label.text if label else 'not rated'}")
    return result


def yardsticks(gnugo_levels: Sequence[int], anchors: Sequence[str]) -> list[str]:
    """random, the anchors and ``gnugo-L`` for each level, without repeats; GNU Go players only
    when GNU Go is installed (said once when they are left out)."""
    specs = list(dict.fromkeys([ANCHOR, *anchors, *(f"gnugo-{level}" for level in gnugo_levels)]))
    if has_gnugo():
        return specs
    kept = [spec for spec in specs if parse_player(spec).kind != "gnugo"]
    print(f"GNU Go is not installed: {', '.join(s for s in specs if s not in kept)} left out")
    return kept
