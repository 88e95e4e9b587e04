"""Prefect adapter for GNU Go self-play games (a ``gnugo-NxN:...`` source): plan, play, list.

`plan_gnugo_games` lists the games not yet on disk in chunks; `play_gnugo_games` (mapped in
parallel by flows.ingest) plays one chunk through `gocore.play.gnugo_games.play_gnugo_game` and
writes each game as SGF the moment it ends (storage.gnugo_source owns the file names). A game
whose file exists is never played again, so a killed run resumes and a rerun plays nothing.
"""

from __future__ import annotations

import math
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.play.gnugo_games import GnugoGameConfig, play_gnugo_game
from gocore.rules import sgf
from storage import gnugo_source
from storage.gnugo_source import GnugoSource

MAX_GAMES_PER_TASK = 25  # a task costs ~0.25 s of orchestration; a level-1 9x9 game ~0.6 CPU s
MIN_TASKS = 16  # small runs still spread over 2, 4, 8 or 16 workers


def game_config(source: GnugoSource) -> GnugoGameConfig:
    """How GNU Go plays the games of `source`."""
    return GnugoGameConfig(size=source.size, level=source.level, opening=source.opening, seed=source.seed)


@task(cache_policy=NO_CACHE)
def plan_gnugo_games(source: GnugoSource, data_dir: str) -> list[list[int]]:
    """The missing game indices of `source`, in chunks of at most MAX_GAMES_PER_TASK."""
    missing = gnugo_source.missing_games(Path(data_dir), source)
    if not missing:
        return []
    chunks = max(math.ceil(len(missing) / MAX_GAMES_PER_TASK), min(MIN_TASKS, len(missing)))
    return [chunk for chunk in (missing[i::chunks] for i in range(chunks)) if chunk]


@task(cache_policy=NO_CACHE)
def play_gnugo_games(indices: list[int], source: GnugoSource, data_dir: str) -> int:
    """Play and write the games `indices` of `source` that are not on disk yet; returns how many."""
    data, config, written = Path(data_dir), game_config(source), 0
    for index in indices:
        if gnugo_source.game_path(data, source, index).exists():
            continue  # written by an earlier run (or a concurrent one)
        gnugo_source.write_game(data, source, index, sgf.write(play_gnugo_game(config, index)))
        written += 1
    return written


def gnugo_game_files(source: GnugoSource, data_dir: str) -> list[str]:
    """The SGF files of the source's games 0..games-1, for the encoder."""
    return gnugo_source.game_files(Path(data_dir), source)


def gnugo_source_of(text: str) -> GnugoSource | None:
    """The GNU Go source `text` names (GnugoSourceError if malformed); None for any other source."""
    return gnugo_source.parse_gnugo_source(text) if gnugo_source.is_gnugo_source(text) else None
