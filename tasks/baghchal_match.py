"""Baghchal matches and the Baghchal ladder: a task plays a chunk of a match's games, the ladder is
fitted from every Baghchal game ever played (its own ladder, apart from Go's).

    plan = match_chunks(settings.games, games_per_chunk)       # [(first, count), ...]
    rows = play_chunk(settings, match_id, first, count, data)  # a finished chunk is read, not replayed
    summary = match_summary(rows)                               # score, per-side W/D/L, intervals

A match writes match.json before its first game and each chunk of games atomically when the chunk
ends (`storage.baghchal`): a match killed midway keeps its finished chunks. `fit_ladder` rates
every player from every game (Bradley-Terry, draws half a point, random = 0 Elo).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.play.baghchal_match import BaghchalMatchConfig, play_match, side_counts
from gocore.play.ladder import Outcome, fit_ladder
from gocore.play.ratings import wilson_interval
from gocore.rules.baghchal.notation import read_record
from storage import baghchal as files
from tasks.app.baghchal_players import make_player, player_label
from tasks.app.baghchal_settings import BaghchalMatchSettings

ANCHOR = "random"


def match_chunks(games: int, per_chunk: int) -> list[tuple[int, int]]:
    """(first game, games) of each chunk of a match."""
    per_chunk = max(1, per_chunk)
    return [(first, min(per_chunk, games - first)) for first in range(0, games, per_chunk)]


def start_match(settings: BaghchalMatchSettings, match_id: str, data: Path) -> tuple[str, str]:
    """Record the match (match.json) unless it is there; the players' labels. A match id already
    used by another match is refused."""
    names = (player_label(settings.player_a, data), player_label(settings.player_b, data))
    info = {"settings": dataclasses.asdict(settings), "names": list(names)}
    recorded = files.read_match_info(data, match_id)
    if recorded is None:
        files.write_match_info(data, match_id, info)
    elif recorded["settings"] != info["settings"]:
        raise ValueError(f"match {match_id} was played with other settings ({recorded['settings']}); "
                         "choose another match id")
    return tuple(recorded["names"]) if recorded else names


@task(cache_policy=NO_CACHE)
def play_match_chunk(settings: BaghchalMatchSettings, match_id: str, first: int, count: int,
                     data_dir: str) -> list[dict[str, Any]]:
    """Games first .. first + count - 1 of the match (read back if that chunk is on disk)."""
    from gocore.nn.device import set_threads

    set_threads(1)  # chunks run side by side in a pool, each searching one position at a time
    return play_chunk(settings, match_id, first, count, Path(data_dir))


def play_chunk(settings: BaghchalMatchSettings, match_id: str, first: int, count: int,
               data: Path) -> list[dict[str, Any]]:
    """The task's work without Prefect (see `play_match_chunk`)."""
    if files.chunk_path(data, match_id, first).exists():
        return [row for row in files.read_games(data, match_id) if first <= row["game"] < first + count]
    names = start_match(settings, match_id, data)
    config = BaghchalMatchConfig(settings.rules(), settings.seed, settings.opening)
    make = lambda spec: lambda seed: make_player(spec, settings.sims, seed, data, settings.device).agent
    rows = [game.row() for game in play_match(make(settings.player_a), make(settings.player_b),
                                              range(first, first + count), config, names)]
    files.write_games(data, match_id, first, rows)
    return rows


def run_match_here(settings: BaghchalMatchSettings, match_id: str, data: Path, per_chunk: int = 4,
                   on_chunk: Any = None) -> list[dict[str, Any]]:
    """Every game of the match in this process, chunk by chunk (`on_chunk(rows)` after each)."""
    start_match(settings, match_id, data)
    rows: list[dict[str, Any]] = []
    for first, count in match_chunks(settings.games, per_chunk):
        chunk = play_chunk(settings, match_id, first, count, data)
        rows.extend(chunk)
        if on_chunk is not None:
            on_chunk(chunk)
    return rows


def match_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Player A's score, its 95 % interval, and wins/draws/losses with each side."""
    scores = [float(row["a_score"]) for row in rows]
    low, high = wilson_interval(sum(scores), len(scores))
    sides = {side: dataclasses.asdict(counts) | {"score": round(counts.score, 4)}
             for side, counts in side_counts(rows).items()}
    return {"games": len(rows), "a_score": round(sum(scores) / len(rows), 4) if rows else None,
            "a_score_low": round(low, 4), "a_score_high": round(high, 4), "sides": sides,
            "reasons": {reason: sum(row["reason"] == reason for row in rows) for reason in
                        sorted({row["reason"] for row in rows})}}


def summary_lines(names: tuple[str, str], summary: dict[str, Any]) -> list[str]:
    """A match's summary for people: A's score, then each side."""
    lines = [f"{names[0]} vs {names[1]}: {names[0]} scored {summary['a_score']:.1%} of {summary['games']} games "
             f"(95 % {summary['a_score_low']:.1%}-{summary['a_score_high']:.1%}); ended by {summary['reasons']}"]
    for side, counts in summary["sides"].items():
        lines.append(f"  as {side}: {counts['wins']} won, {counts['draws']} drawn, {counts['losses']} lost "
                     f"(score {counts['score']:.1%}, 95 % {counts['score_low']:.1%}-{counts['score_high']:.1%})")
    return lines


def fit_ladder_here(data: Path) -> list[dict[str, Any]]:
    """Every Baghchal player's Elo from every Baghchal game (random = 0), written to ladder.json."""
    outcomes = []
    for match_id in files.match_ids(data):
        for row in files.read_games(data, match_id):
            a, b = (row["goat"], row["tiger"]) if row["a_side"] == 1 else (row["tiger"], row["goat"])
            outcomes.append(Outcome(a, b, float(row["a_score"])))
    players = [{"player": r.player, "elo": round(r.elo, 1), "stderr": None if r.stderr is None else round(r.stderr, 1),
                "games": r.games, "score": r.score} for r in fit_ladder(outcomes, anchor=ANCHOR)]
    files.write_ladder(data, players)
    return players


def picture_of_record(record: str, rules: Any, data: Path, name: str, title: str = "") -> Path:
    """A PNG of the final position of a game record (`storage.baghchal.plot_position`)."""
    _, final = read_record(record, rules)
    return files.plot_position(final.board(), files.picture_path(data, name), title)
