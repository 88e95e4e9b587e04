"""Prefect tasks of an evaluation match: plan the missing games, play chunks of them, summarise.

`plan_match` records the settings (storage.matches.begin) and splits the games not yet on disk
into chunks; `play_games` (mapped over workers) plays one chunk, writing every game as it ends;
`sprt_decided` says, between waves of chunks, whether an SPRT lets the match stop early;
`finalize_match` writes results.parquet and then summary.json. The CLI's in-process mode calls
the same functions (`start_match`, `play_chunk`, `is_decided`, `finish_match`) without Prefect.

Player specs (`build_player`), for our agents and for external engines:

    random                   uniform random legal moves (no eye filling)
    uct | uct-N              UCT with random playouts, N simulations per move (default: --sims)
    gnugo | gnugo-L          GNU Go at level L (default 5) over GTP: Chinese rules, positional
                             superko, --capture-all-dead, board size and komi of the match
    gtp:COMMAND              any GTP engine, e.g. ``gtp:gnugo --mode gtp --level 1`` (split like
                             a shell; ``gnugo`` is also found at /usr/games/gnugo)
    models:/NAME@ALIAS, an artifact URI (``scheme://...``) or a model directory
                             a registered AlphaGo Zero net searching --sims simulations per move
"""

from __future__ import annotations

import dataclasses
import functools
import shlex
import shutil
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.errors import GozeroError
from gocore.play.gtp_client import GNUGO_FALLBACK, gnugo_command
from gocore.play.match import RULES, GtpAgent, MatchConfig, play_match
from gocore.play.ratings import SprtConfig, sprt, summarize
from gocore.rules import sgf
from gocore.search.agents import Agent, RandomAgent, UCTAgent
from storage import matches

DEFAULT_GNUGO_LEVEL = 5
# GNU Go passes with dead stones still on the board; Tromp-Taylor would count them as alive
# (a random player then "beats" GNU Go). Capturing them first makes both counts agree.
GNUGO_TROMP_TAYLOR = ["--capture-all-dead"]
FAILURES = frozenset({"illegal-move", "timeout", "crash", "error"})  # lost by failing, not by play


class PlayerError(GozeroError, ValueError):
    """A player spec that names no player we can build."""


@dataclass(frozen=True)
class MatchSettings:
    """Everything that defines a match; stored as match.json, checked on every resume."""

    black: str
    """Player A's spec: black in even games, the challenger whose win rate is reported."""
    white: str
    """Player B's spec: white in even games (the champion, in a gate)."""
    games: int = 40
    """Games in the match (colours alternate, so make it even)."""
    sims: int = 100
    """Search simulations per move for network players and a bare ``uct``."""
    config: MatchConfig = field(default_factory=MatchConfig)
    """Board size, komi, move cap, seed."""
    gtp_timeout: float = 30.0
    """Seconds an external engine gets per command before it loses the game."""

    def to_dict(self) -> dict[str, Any]:
        """The flat JSON form written to match.json."""
        flat = asdict(self)
        return {**{k: v for k, v in flat.items() if k != "config"}, **flat["config"], "rules": RULES}


@dataclass
class Player:
    """One side of a match: its label and a maker of a fresh agent per game (seeded)."""

    label: str
    make: Callable[[int], Agent]
    engine: GtpAgent | None = None  # an external engine, shared by the side's games

    def close(self) -> None:
        """Stop the external engine, if any."""
        if self.engine is not None:
            self.engine.close()


def build_player(spec: str, settings: MatchSettings, data: Path | None = None) -> Player:
    """The player a spec names (see the module docstring); PlayerError if it names none.

    `data` is the data dir whose model registry a ``models:/`` URI is looked up in.
    """
    name, _, arg = spec.partition("-")
    if spec == "random":
        return Player(spec, lambda seed: RandomAgent(seed=seed))
    if name == "uct" and (not arg or arg.isdigit()):
        simulations = int(arg or settings.sims)
        return Player(spec, lambda seed: UCTAgent(simulations=simulations, seed=seed))
    if name == "gnugo" and (not arg or arg.isdigit()):
        command = gnugo_command(int(arg or DEFAULT_GNUGO_LEVEL), settings.config.size, settings.config.komi)
        return _engine_player(spec, command + GNUGO_TROMP_TAYLOR, settings)
    if spec.startswith("gtp:"):
        return _engine_player(spec, _engine_command(spec.removeprefix("gtp:")), settings)
    if spec.startswith("models:/") or "://" in spec or Path(spec).is_dir():
        return _model_player(spec, settings, data)
    raise PlayerError(f"unknown player {spec!r}: use random, uct[-N], gnugo[-LEVEL], gtp:COMMAND, "
                      "models:/NAME@ALIAS or a model directory")


def _engine_command(text: str) -> list[str]:
    """A GTP engine's argv; its program must exist (``gnugo`` also at /usr/games/gnugo)."""
    argv = shlex.split(text)
    if not argv:
        raise PlayerError("gtp: needs an engine command, e.g. 'gtp:gnugo --mode gtp --level 1'")
    program = shutil.which(argv[0])
    if program is None and argv[0] == "gnugo" and Path(GNUGO_FALLBACK).exists():
        program = GNUGO_FALLBACK
    if program is None:
        raise PlayerError(f"GTP engine {argv[0]!r} not found (give a path or put it on PATH)")
    return [program, *argv[1:]]


def _engine_player(spec: str, command: list[str], settings: MatchSettings) -> Player:
    engine = GtpAgent(command, name=spec, timeout=settings.gtp_timeout)
    return Player(spec, lambda seed: engine, engine)


def _model_player(spec: str, settings: MatchSettings, data: Path | None) -> Player:
    """AlphaGo Zero's search over a saved or registered net (loaded once per process).

    The MATCH preset (no noise, resigns below -0.9) with `sims` simulations, but the opening
    moves sampled by visit count: deterministic players would replay the same two games.
    """
    from gocore.nn.inference import NetEvaluator
    from gocore.search import mcts
    from gocore.search.agents import AlphaZeroAgent

    net = _load_net(spec, None if data is None else str(data))
    if net.config.board_size != settings.config.size:
        raise PlayerError(f"{spec} plays {net.config.board_size}x{net.config.board_size}, "
                          f"not {settings.config.size}x{settings.config.size}")
    evaluator = NetEvaluator(net)
    config = dataclasses.replace(mcts.MATCH, simulations=settings.sims, temperature_moves=None)
    return Player(spec, lambda seed: AlphaZeroAgent(evaluator, config, seed=seed))


@functools.lru_cache(maxsize=4)
def _load_net(spec: str, data: str | None) -> Any:
    """The net of a model directory (no MLflow needed) or a registry URI; cached per process."""
    from gocore.nn.nets import build_net

    if Path(spec).is_dir():
        from storage.checkpoints import CheckpointError, load_model

        try:
            return load_model(Path(spec), build_net)[0]
        except (CheckpointError, ValueError, KeyError, TypeError) as error:
            raise PlayerError(f"cannot load {spec}: {error}") from error
    from storage import registry

    try:
        return registry.load(spec, build_net, None if data is None else Path(data))[0]
    except registry.RegistryError as error:
        raise PlayerError(f"{spec}: {error}") from error


def _data_of(match: Path) -> Path:
    """The data dir of a match directory (``<data>/matches/<id>``, storage.layout)."""
    return match.parent.parent


def start_match(match_dir: str, settings: MatchSettings, games_per_chunk: int = 2) -> list[list[int]]:
    """Record the settings and split the games not yet on disk into chunks."""
    match = Path(match_dir)
    for spec in (settings.black, settings.white):
        build_player(spec, settings, _data_of(match)).close()  # a bad spec fails once, not per chunk
    matches.begin(match, settings.to_dict())
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
    player_a = build_player(settings.black, settings, _data_of(match))
    try:
        player_b = build_player(settings.white, settings, _data_of(match))
    except Exception:
        player_a.close()
        raise
    try:
        for game in play_match(player_a.make, player_b.make, todo, settings.config,
                               (player_a.label, player_b.label)):
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
    summary = match_summary(match.name, settings, rows, gate, sprt_config)
    matches.write_summary(match, summary)
    return summary


def match_summary(match_id: str, settings: MatchSettings, rows: list[Mapping[str, Any]], gate: float,
                  sprt_config: SprtConfig | None) -> dict[str, Any]:
    """The statistics of A's results plus what the games say about the players and engines."""
    compared = [row for row in rows if row["disagreement"] is not None]
    facts = summarize([row["a_score"] for row in rows], gate, sprt_config)
    return {
        "match_id": match_id, "player_a": settings.black, "player_b": settings.white,
        "games_planned": settings.games, "stopped_early": len(rows) < settings.games,
        **facts,
        "reasons": dict(Counter(row["reason"] for row in rows)),
        "a_failures": sum(1 for row in rows if row["a_score"] == 0 and row["reason"] in FAILURES),
        "b_failures": sum(1 for row in rows if row["a_score"] == 1 and row["reason"] in FAILURES),
        "external_counts": len(compared),
        "disagreements": sum(1 for row in compared if row["disagreement"]),
        "seconds": sum(row["seconds"] for row in rows),
        "settings": settings.to_dict(),
    }


@task(cache_policy=NO_CACHE)
def plan_match(match_dir: str, settings: MatchSettings, games_per_chunk: int = 2) -> list[list[int]]:
    """Record the match settings; chunks of the games still to play."""
    return start_match(match_dir, settings, games_per_chunk)


@task(cache_policy=NO_CACHE)
def play_games(indices: list[int], match_dir: str, settings: MatchSettings) -> list[dict[str, Any]]:
    """Play one chunk of games (skipping those on disk); returns their results rows."""
    return play_chunk(match_dir, settings, indices)


@task(cache_policy=NO_CACHE)
def sprt_decided(match_dir: str, settings: MatchSettings, sprt_config: SprtConfig) -> bool:
    """True once the SPRT has decided on the games on disk: the match may stop."""
    return is_decided(match_dir, settings, sprt_config)


@task(cache_policy=NO_CACHE)
def finalize_match(match_dir: str, settings: MatchSettings, gate: float = 0.55,
                   sprt_config: SprtConfig | None = None) -> dict[str, Any]:
    """Write the results table and the summary (last); returns the summary."""
    return finish_match(match_dir, settings, gate, sprt_config)
