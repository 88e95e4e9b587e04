"""Reanalysis: fresh search targets for positions of games already played (MuZero Reanalyze; the
expert games AlphaGo imitated, re-searched), from the net that plays now.

    games = [recorded_game(record, game_id) for record in records]   # None: a game it cannot replay
    picks = pick_moves([len(game.moves) for game in games], counts, rng)
    columns = reanalyse(evaluator, config, games, picks, generation=k, model_version="gozero-9x9/7")

Each picked position (the one before move `move` of game `game`) is searched once, all of them in
lockstep by one `BatchedSearch` (the self-play search of `config`, PUCT or Gumbel, without root
noise: a target should be the search's best, not its exploration), and becomes one row of the
self-play schema through `selfplay.training_columns`: pi the search's target (visits, or Gumbel's
improved policy), q its root value, z the game's result from the mover's view, ownership and score
from the game's final board when its result is that board's count (none for a resigned or otherwise
scored game). Moves not picked make no row.

Why the net that plays now: a self-play row's pi and q are what an older, weaker net searched; an
expert row's target is one move. A search by the current champion is a better target for both,
and the positions cost no game to make.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gocore.rules import sgf
from gocore.rules.board import IllegalMove, Position, replay_moves
from gocore.search.gumbel import search_factory
from gocore.search.mcts import terminal_value
from gocore.search.selfplay import SearchedGame, SelfPlayConfig, training_columns

if TYPE_CHECKING:
    from gocore.nn.inference import Evaluator


@dataclass(frozen=True)
class RecordedGame:
    """A finished game whose positions can be searched again."""

    game_id: str  # the rows' game_id: the game's own, so validation holds out the same games
    start: Position  # before the first move (setup stones, the first player, komi)
    moves: tuple[int, ...]  # played by turns from `start`
    winner: int  # +1 black, -1 white, 0 jigo or unknown
    final: Position | None  # the final board when the result is its Tromp-Taylor count, else None


def recorded_game(record: sgf.GameRecord, game_id: str) -> RecordedGame | None:
    """The game of an SGF record, or None when its rows could not be replayed: colours that do not
    alternate (rows replay the moves by turns), conflicting setup stones or an illegal move."""
    first = record.first_to_play
    if any(color != (first if index % 2 == 0 else -first) for index, (color, _) in enumerate(record.moves)):
        return None
    try:
        start = Position.from_setup(record.size, record.setup_black, record.setup_white, first, record.komi)
        moves = tuple(move for _, move in record.moves)
        stones, _ = replay_moves(start, moves)  # (T+1, N, N) int8
    except (ValueError, IllegalMove):
        return None
    return RecordedGame(game_id, start, moves, record.winner or 0, counted_final(record, stones[-1]))


def counted_final(record: sgf.GameRecord, final_stones: np.ndarray) -> Position | None:
    """The final board (`final_stones` (N, N) int8) if the record's result is its Tromp-Taylor count
    (self-play's two-pass and move-cap games, GNU Go's games played out), else None (a resignation,
    or dead stones the players agreed on): only a counted board teaches ownership and score."""
    margin = sgf.result_margin(record.result)
    if margin is None:
        return None
    flat = final_stones.reshape(-1)
    final = Position.from_setup(record.size, list(np.flatnonzero(flat == 1)), list(np.flatnonzero(flat == -1)),
                                komi=record.komi)
    return final if abs(final.score() - margin) < 1e-6 else None


def pick_games(games: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """(games,) int: how many positions to take from each game, `count` in all, each drawn from a
    game chosen uniformly (with replacement: a game may give several)."""
    if games < 1:
        return np.zeros(0, np.int64)
    return np.bincount(rng.integers(games, size=count), minlength=games)


def pick_moves(lengths: Sequence[int], counts: Sequence[int], rng: np.random.Generator) -> list[tuple[int, int]]:
    """(game, move) of `counts[g]` distinct moves of each game g, drawn uniformly (every move of a
    game shorter than its count), sorted."""
    picks = []
    for game, (length, count) in enumerate(zip(lengths, counts)):
        chosen = rng.choice(length, size=min(count, length), replace=False) if length else []
        picks += [(game, int(move)) for move in chosen]
    return sorted(picks)


def reanalyse(evaluator: Evaluator, config: SelfPlayConfig, games: Sequence[RecordedGame],
              picks: Sequence[tuple[int, int]], *, generation: int, model_version: str,
              seed: int | None = None) -> dict[str, np.ndarray]:
    """SELFPLAY_SCHEMA columns of the picked positions (R rows, R <= picks: a position whose game is
    already over for the search, past its move cap or after two passes, is left out), searched in
    lockstep by `evaluator` with `config`'s search without noise."""
    if not games:
        raise ValueError("no games to reanalyse")
    cap = config.search.max_moves_for(config.size)
    positions = positions_at(games, picks)
    kept = [(pick, position) for pick, position in zip(picks, positions) if terminal_value(position, cap) is None]
    results = []
    if kept:
        search_config = config.search.replace(noise=False, full_search_prob=1.0)
        search = search_factory(config.gumbel)(evaluator, search_config, [p for _, p in kept], seed=seed)
        results = search.search()
    last: dict[int, int] = {}  # each game's last kept pick
    for (game, move), _ in kept:
        last[game] = max(last.get(game, -1), move)
    searched = []
    for index, game in enumerate(games):
        moves = list(game.moves[:last.get(index, -1) + 1])  # no row past the last pick
        searched.append(SearchedGame(game.start, moves, pis=[np.zeros(config.size ** 2 + 1, np.float32)] * len(moves),
                                     root_values=[0.0] * len(moves), full=[False] * len(moves),
                                     final=game.final, winner=game.winner))
    for ((game, move), _), result in zip(kept, results):
        searched[game].pis[move], searched[game].root_values[move] = result.pi, result.root_value
        searched[game].full[move] = True
    return training_columns(searched, [game.game_id for game in games], encoder=config.encoder,
                            generation=generation, model_version=model_version)


def positions_at(games: Sequence[RecordedGame], picks: Sequence[tuple[int, int]]) -> list[Position]:
    """The position before move `move` of game `game` for each (game, move) pick, replayed with the
    game's history (superko); each game is replayed once, up to its last pick."""
    wanted: dict[int, set[int]] = {}
    for game, move in picks:
        wanted.setdefault(game, set()).add(move)
    found: dict[tuple[int, int], Position] = {}
    for game, moves in wanted.items():
        position = games[game].start
        for index in range(max(moves) + 1):
            if index in moves:
                found[game, index] = position
            if index < max(moves):
                position = position.play(games[game].moves[index])
    return [found[pick] for pick in picks]
