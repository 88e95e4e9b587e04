"""Prefect tasks of an evaluation match over `tasks.app.evaluate`: plan, play chunks, summarise.

The evaluate flow plays a match through `tasks.app.evaluate.run_match`, mapping `play_games` over
each wave of chunks; the ladder flow maps `plan_match`, `play_games` and `finalize_match` over many
matches at once. The match itself (`MatchSettings`, its games on disk, its summary) is there.
"""

from __future__ import annotations

from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.play.ratings import SprtConfig
from tasks.app.evaluate import MatchSettings, finish_match, play_chunk, start_match
from tasks.app.players import has_net


@task(cache_policy=NO_CACHE)
def plan_match(match_dir: str, settings: MatchSettings, games_per_chunk: int = 2) -> list[list[int]]:
    """Record the match settings; chunks of the games still to play."""
    return start_match(match_dir, settings, games_per_chunk)


@task(cache_policy=NO_CACHE)
def play_games(indices: list[int], match_dir: str, settings: MatchSettings) -> list[dict[str, Any]]:
    """Play one chunk of games (skipping those on disk); returns their results rows. A net plays on
    one torch thread: the pool's workers share the cores."""
    if has_net((settings.black, settings.white)):
        from gocore.nn.device import set_threads

        set_threads(1)
    return play_chunk(match_dir, settings, indices)


@task(cache_policy=NO_CACHE)
def finalize_match(match_dir: str, settings: MatchSettings, gate: float = 0.55,
                   sprt_config: SprtConfig | None = None) -> dict[str, Any]:
    """Write the results table and the summary (last); returns the summary."""
    return finish_match(match_dir, settings, gate, sprt_config)
