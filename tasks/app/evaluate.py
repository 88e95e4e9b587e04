"""A match between two players without Prefect: `MatchSettings`, its games on disk, its summary.

    play_match_here(match_dir, settings)          # every game in this process (the CLI, AlphaGo's stages)
    run_match(match_dir, settings, play_wave=...) # the evaluate flow: each wave of chunks on its workers

`run_match` is the one body of a match: `start_match` records the settings (storage.matches.begin)
and splits the games not yet on disk into chunks; waves of chunks are played (`play_chunk` writes
every game as it ends) until all are played or an SPRT has decided (`is_decided`); `finish_match`
writes results.parquet and then summary.json, and puts the games into the ratings table of the
data dir (storage.ratings). The Prefect tasks over these functions are in `tasks.evaluate`.

Each player's ladder name (`tasks.app.players.ladder_name`) is resolved when the match begins and
kept in match.json: ``models:/gozero-9x9@champion`` is recorded as the version it was then, and a
match whose alias has moved since refuses to go on (it would play another net under the old name).

Players are specs (`tasks.app.players`): random, uct-N, gnugo-L, gtp:COMMAND, models:/... or a model dir.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gocore.play.match import RULES, MatchConfig, play_match
from gocore.play.ratings import SprtConfig, sprt, summarize
from gocore.rules import sgf
from storage import layout, matches, ratings
from tasks.app.players import PlayerSettings, build_player, ladder_name

Rows = list[dict[str, Any]]
"""The result rows of a chunk's games (storage.matches)."""


def run_match(match_dir: str, settings: MatchSettings, gate: float = 0.55, sprt_config: SprtConfig | None = None,
              *, play_wave: Callable[[list[list[int]]], Iterable[Rows]], games_per_chunk: int = 2,
              wave: int = 1, on_rows: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Play the match's games not yet on disk and return its summary (a rerun resumes).

    The games are split into chunks of `games_per_chunk`; `play_wave(chunks)` plays a wave of
    chunks and yields each chunk's rows (the flow maps the wave over its workers; `play_match_here`
    plays it in this process). Without an SPRT every chunk is one wave; with one, waves of `wave`
    chunks, and no wave starts once the test has decided. `on_rows(games)`: the games on disk so
    far, after each chunk (progress)."""
    chunks = start_match(match_dir, settings, games_per_chunk)
    done = settings.games - sum(len(chunk) for chunk in chunks)  # games a previous run already played
    size = max(1, wave) if sprt_config is not None else max(1, len(chunks))
    for start in range(0, len(chunks), size):
        if is_decided(match_dir, settings, sprt_config):
            break
        for rows in play_wave(chunks[start:start + size]):
            done += len(rows)
            if on_rows is not None:
                on_rows(done)
    return finish_match(match_dir, settings, gate, sprt_config)


def play_match_here(match_dir: str, settings: MatchSettings, gate: float = 0.55,
                    sprt_config: SprtConfig | None = None,
                    on_game: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """`run_match` with every game in this process, the players loaded once; `on_game(row)` after
    each game. With an SPRT the match stops after the game that decides it."""
    def decided() -> bool:
        return is_decided(match_dir, settings, sprt_config)

    def play_wave(chunks: list[list[int]]) -> Iterable[Rows]:
        return (play_chunk(match_dir, settings, chunk, on_game=on_game, stop=decided) for chunk in chunks)

    return run_match(match_dir, settings, gate, sprt_config, play_wave=play_wave,
                     games_per_chunk=max(1, settings.games))


FAILURES = frozenset({"illegal-move", "timeout", "crash", "error"})  # lost by failing, not by play


@dataclass(frozen=True)
class MatchSettings:
    """Everything that defines a match; stored as match.json, checked on every resume."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

    black: str
    """Player A's spec: black in even games, the challenger whose win rate is reported."""
    white: str
    """Player B's spec: white in even games (the champion, in a gate)."""
    games: int = 40
    """Games in the match (colours alternate, so make it even)."""
    sims: int = 100
    """Search simulations per move for network players and a bare ``uct``."""
    config: MatchConfig = field(default_factory=MatchConfig)
    """Board size, komi, move cap, seed, random opening moves."""
    gtp_timeout: float = 30.0
    """Seconds an external engine gets per command before it loses the game."""
    device: str = "cpu"
    """Where nets run (`choose_device`): cpu, as every pool worker would hold its own CUDA context;
    not in match.json (a match may resume on another device)."""

    def player_settings(self) -> PlayerSettings:
        """How the match's players play: its board, komi, budget and engine timeout."""
        return PlayerSettings(self.config.size, self.config.komi, self.sims, self.gtp_timeout, device=self.device)

    def to_dict(self) -> dict[str, Any]:
        """The flat JSON form written to match.json."""
        flat = asdict(self)
        return {**{k: v for k, v in flat.items() if k not in ("config", "device")}, **flat["config"], "rules": RULES}


def _data_of(match: Path) -> Path:
    """The data dir of a match directory (``<data>/matches/<id>``, storage.layout)."""
    return match.parent.parent


def start_match(match_dir: str, settings: MatchSettings, games_per_chunk: int = 2) -> list[list[int]]:
    """Record the settings and split the games not yet on disk into chunks."""
    match = Path(match_dir)
    for spec in (settings.black, settings.white):
        build_player(spec, settings.player_settings(), _data_of(match)).close()  # a bad spec fails once, not per chunk
    matches.begin(match, settings.to_dict() | ladder_names(match, settings))
    todo = matches.missing_games(match, settings.games)
    size = max(1, games_per_chunk)
    return [todo[i:i + size] for i in range(0, len(todo), size)]


def play_chunk(match_dir: str, settings: MatchSettings, indices: list[int],
               on_game: Callable[[dict[str, Any]], None] | None = None,
               stop: Callable[[], bool] | None = None) -> list[dict[str, Any]]:
    """Play the games of `indices` not yet on disk, storing each as it ends; the rows on disk.

    `on_game(row)` is called after each game; then `stop()`, if true, ends the chunk early.
    """
    match = Path(match_dir)
    todo = sorted(set(indices) - matches.finished_games(match))
    if not todo:  # a resumed chunk: nothing to load or start
        return matches.read_rows(match, indices)
    _check_ladder_names(match, settings)
    player_a = build_player(settings.black, settings.player_settings(), _data_of(match))
    try:
        player_b = build_player(settings.white, settings.player_settings(), _data_of(match))
    except Exception:
        player_a.close()
        raise
    try:
        for game in play_match(player_a.make, player_b.make, todo, settings.config,
                               (player_a.display, player_b.display)):
            matches.write_game(match, game.index, sgf.write(game.record()), game.row())
            if on_game is not None:
                on_game(game.row())
            if stop is not None and stop():
                break
    finally:
        player_a.close()
        player_b.close()
    return matches.read_rows(match, set(indices) & matches.finished_games(match))


def is_decided(match_dir: str, settings: MatchSettings, sprt_config: SprtConfig | None) -> bool:
    """True if the SPRT has decided on the games on disk (the match may stop early)."""
    if sprt_config is None:
        return False
    scores = [row["a_score"] for row in matches.read_rows(Path(match_dir)) if row["game"] < settings.games]
    points = sum(scores)
    return sprt(points, len(scores) - points, sprt_config.elo0, sprt_config.elo1,
                sprt_config.alpha, sprt_config.beta) != "continue"


def finish_match(match_dir: str, settings: MatchSettings, gate: float = 0.55,
                 sprt_config: SprtConfig | None = None) -> dict[str, Any]:
    """Write results.parquet, then summary.json (last); returns the summary."""
    match = Path(match_dir)
    rows = [row for row in matches.read_rows(match) if row["game"] < settings.games]
    matches.write_results(match, rows)
    _record_ratings(match, settings, rows)
    summary = match_summary(match.name, settings, rows, gate, sprt_config)
    matches.write_summary(match, summary)
    return summary


def ladder_names(match: Path, settings: MatchSettings) -> dict[str, str]:
    """``{"ladder_a": ..., "ladder_b": ...}``: the players' ladder names now (aliases resolved)."""
    data = _data_of(Path(match))
    size = settings.config.size
    return {"ladder_a": ladder_name(settings.black, settings.sims, data, size),
            "ladder_b": ladder_name(settings.white, settings.sims, data, size)}


def _check_ladder_names(match: Path, settings: MatchSettings) -> None:
    """MatchError if a player is no longer who it was when the match began (a moved alias)."""
    began, now = matches.read_settings(match), ladder_names(match, settings)
    for key, spec in (("ladder_a", settings.black), ("ladder_b", settings.white)):
        if began.get(key) != now[key]:
            raise matches.MatchError(f"{spec} is {now[key]} now but was {began.get(key)} when match {match.name} "
                                     "began (its alias moved): start another match id")


def _record_ratings(match: Path, settings: MatchSettings, rows: list[Mapping[str, Any]]) -> None:
    """Put the match's games into the ratings table of its data dir (a match elsewhere has none)."""
    data = layout.data_of_match(match)
    if data is not None:
        began = matches.read_settings(match)
        ratings.write_match(data, ratings.RatedMatch(match.name, began["ladder_a"], began["ladder_b"],
                                                     settings.config.size, settings.config.komi, settings.sims), rows)


def match_summary(match_id: str, settings: MatchSettings, rows: list[Mapping[str, Any]], gate: float,
                  sprt_config: SprtConfig | None) -> dict[str, Any]:
    """The statistics of A's results plus what the games say about the players and engines."""
    compared = [row for row in rows if row["disagreement"] is not None]
    facts = summarize([row["a_score"] for row in rows], gate, sprt_config, [game_cluster(row) for row in rows])
    return {
        "match_id": match_id, "player_a": _played_as(rows, settings.black, "a"),
        "player_b": _played_as(rows, settings.white, "b"),
        "games_planned": settings.games, "stopped_early": len(rows) < settings.games,
        **facts,
        "reasons": dict(Counter(row["reason"] for row in rows)),
        "a_failures": sum(1 for row in rows if row["a_score"] == 0 and row["reason"] in FAILURES),
        "b_failures": sum(1 for row in rows if row["a_score"] == 1 and row["reason"] in FAILURES),
        "failure_details": failure_details(rows),
        "external_counts": len(compared),
        "disagreements": sum(1 for row in compared if row["disagreement"]),
        "seconds": sum(row["seconds"] for row in rows),
        "distinct_games": len({row.get("digest") or row["game"] for row in rows}),
        "settings": settings.to_dict(),
    }


def failure_details(rows: list[Mapping[str, Any]]) -> dict[str, str]:
    """What each player's first failure of each kind said (an engine's exit code and stderr, a
    timeout, an illegal move), keyed "A crash", "B timeout", ...: why a player lost without playing."""
    details: dict[str, str] = {}
    for row in rows:
        if row["reason"] in FAILURES:
            side = "A" if row["a_score"] == 0 else "B"
            details.setdefault(f"{side} {row['reason']}", str(row.get("detail") or "no detail recorded"))
    return details


def game_cluster(row: Mapping[str, Any]) -> str:
    """The cluster a game's result is correlated within: its random opening (shared by the pair of
    games that play it with each colour), else the game's moves (a game played again is one
    cluster), else the game alone (rows written before either was recorded)."""
    return (f"opening {row['opening']}" if row.get("opening") else f"moves {row['digest']}" if row.get("digest")
            else f"game {row['game']}")


def _played_as(rows: list[Mapping[str, Any]], spec: str, side: str) -> str:
    """How a side's games name it (the spec and the kind of player, e.g. ``models:/m/3 (policy)``),
    else its spec."""
    for row in rows:
        return row["black"] if (row["a_color"] == 1) == (side == "a") else row["white"]
    return spec
