"""Baghchal games between two players, and the games of a match (sides alternate, openings paired).

`play_game(goat, tiger, ...)` alternates ``select_move``; a player that returns an illegal action
or raises loses the game (reason ``illegal-move`` or ``error``, with the detail). Optional hooks,
called on each player's own object: ``start_game(side)`` before the first move (+1 Goat, -1
Tiger) and ``observe(position, action)`` after every action of either side (`position` the one
it was played in): the library's engine mirrors the game into its own board with them.

Matches: player A is Goat in even games and Tiger in odd ones; games 2i and 2i + 1 begin with the
same `opening` random plies (`pair_opening`), so two deterministic players meet many positions and
each opening is played from both sides. A game scores 1, 1/2 (a draw) or 0 for A; `side_counts`
splits a match's results by the side A played.

    reason          how the game ended
    captures        Tiger's capture that wins (5 by default)
    tigers-trapped  no tiger could move: Goat wins
    goats-trapped   Goat had no legal move: Tiger wins
    repetition      the third occurrence of an arrangement (a draw)
    move-cap        the ply cap (a draw)
    illegal-move    a player chose an action the rules refuse (it loses)
    error           a player raised (it loses)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gocore.play.match import game_seeds
from gocore.play.ratings import wilson_interval
from gocore.rules.baghchal.notation import write_record
from gocore.rules.baghchal.position import DEFAULT_RULES, GOAT, TIGER, BaghchalRules, IllegalAction, Position

DETAIL_CHARS = 500
SIDES = {GOAT: "Goat", TIGER: "Tiger"}


@dataclass(frozen=True)
class BaghchalMatchConfig:
    """Rules and openings shared by every game of a match."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

    rules: BaghchalRules = field(default_factory=lambda: DEFAULT_RULES)
    """The rules' settings."""
    seed: int = 0
    """Base seed: game i's players and opening come from (seed, i), so a rerun replays the same games."""
    opening: int = 2
    """Random plies before the players take over, the same for games 2i and 2i + 1 (sides swapped)."""


@dataclass(frozen=True)
class GameResult:
    """How a game went: its actions, final position, winner and why it ended."""

    actions: tuple[int, ...]
    final: Position
    winner: int  # +1 Goat, -1 Tiger, 0 a draw
    reason: str  # see the module docstring
    detail: str = ""  # what went wrong, for a forfeit

    @property
    def record(self) -> str:
        """The game in the library's notation (a forfeited game ends without a result mark)."""
        return write_record(list(self.actions), self.final.rules)


def _call(agent: Any, method: str, *args: Any) -> Any:
    return getattr(agent, method)(*args) if hasattr(agent, method) else None


def play_game(goat: Any, tiger: Any, rules: BaghchalRules = DEFAULT_RULES, opening: Iterable[int] = (),
              on_move: Callable[[Position, int, Position], None] | None = None) -> GameResult:
    """One game: `opening` actions first (played for both sides), then the players alternate;
    `on_move(before, action, after)` after every action."""
    players = {GOAT: goat, TIGER: tiger}
    position, actions = Position.initial(rules), []
    scripted = list(opening)
    try:
        for side, agent in players.items():
            _guarded(side, _call, agent, "start_game", side)
        while not position.is_game_over():
            side = position.to_play
            action = scripted.pop(0) if scripted else _guarded(side, players[side].select_move, position)
            before, position = position, _played(position, side, action)
            actions.append(int(action))
            for observer, agent in players.items():
                _guarded(observer, _call, agent, "observe", before, int(action))
            if on_move is not None:
                on_move(before, int(action), position)
    except _Forfeit as forfeit:
        return GameResult(tuple(actions), position, -forfeit.side, forfeit.reason, forfeit.detail[:DETAIL_CHARS])
    return GameResult(tuple(actions), position, int(position.winner), position.reason)


class _Forfeit(Exception):
    def __init__(self, side: int, reason: str, detail: str):
        super().__init__(detail)
        self.side, self.reason, self.detail = side, reason, detail


def _guarded(side: int, call: Callable[..., Any], *args: Any) -> Any:
    """`call(*args)`; any exception loses the game for `side` (the match goes on)."""
    try:
        return call(*args)
    except _Forfeit:
        raise
    except Exception as error:  # a player's failure loses its game, never the whole match
        raise _Forfeit(side, "error", f"{type(error).__name__}: {error}") from error


def _played(position: Position, side: int, action: Any) -> Position:
    try:
        return position.play(int(action))
    except (IllegalAction, TypeError, ValueError) as error:
        raise _Forfeit(side, "illegal-move", f"{SIDES[side]} played {action!r}: {error}") from None


def pair_opening(config: BaghchalMatchConfig, index: int) -> list[int]:
    """The random opening of game `index`: `config.opening` uniform plies from a seed of the pair
    (games 2i and 2i + 1 share it); shorter if the game ends first."""
    rng = np.random.default_rng([config.seed, index // 2])
    position, actions = Position.initial(config.rules), []
    while len(actions) < config.opening and not position.is_game_over():
        action = int(rng.choice(np.flatnonzero(position.legal_moves())))
        position, actions = position.play(action), actions + [action]
    return actions


def player_a_side(index: int) -> int:
    """Player A's side in game `index`: Goat (+1) in even games, Tiger (-1) in odd ones."""
    return GOAT if index % 2 == 0 else TIGER


@dataclass(frozen=True)
class MatchGame:
    """Game `index` of a match: who played which side and how it went."""

    index: int
    goat: str  # label of the player who played Goat
    tiger: str
    a_side: int  # +1 if player A played Goat
    game: GameResult
    seconds: float
    opening: tuple[int, ...] = ()

    @property
    def a_score(self) -> float:
        """Player A's points: 1 a win, 0.5 a draw, 0 a loss."""
        return 0.5 if self.game.winner == 0 else float(self.game.winner == self.a_side)

    def row(self) -> dict[str, Any]:
        """The game as one row of a match's results (`storage.baghchal.MATCH_SCHEMA`)."""
        return {"game": self.index, "goat": self.goat, "tiger": self.tiger, "a_side": self.a_side,
                "winner": self.game.winner, "a_score": self.a_score, "reason": self.game.reason,
                "detail": self.game.detail, "plies": len(self.game.actions), "seconds": self.seconds,
                "opening": len(self.opening), "record": self.game.record}


def play_match_game(index: int, player_a: Any, player_b: Any, config: BaghchalMatchConfig,
                    names: tuple[str, str] | None = None) -> MatchGame:
    """Game `index` of a match: A is Goat when `index` is even; the pair's opening first."""
    label_a, label_b = names or (player_a.name, player_b.name)
    a_side = player_a_side(index)
    goat, tiger = (player_a, player_b) if a_side == GOAT else (player_b, player_a)
    opening = pair_opening(config, index)
    started = time.perf_counter()
    game = play_game(goat, tiger, config.rules, opening)
    labels = (label_a, label_b) if a_side == GOAT else (label_b, label_a)
    return MatchGame(index, labels[0], labels[1], a_side, game, time.perf_counter() - started, tuple(opening))


def play_match(make_a: Callable[[int], Any], make_b: Callable[[int], Any], indices: Iterable[int],
               config: BaghchalMatchConfig, names: tuple[str, str]) -> Iterator[MatchGame]:
    """Play the games `indices`, yielding each as it ends; `make_x(seed)` gives a player per game."""
    for index in indices:
        seed_a, seed_b = game_seeds(config.seed, index)
        yield play_match_game(index, make_a(seed_a), make_b(seed_b), config, names)


@dataclass(frozen=True)
class SideCounts:
    """Player A's wins, draws and losses with one side, and its score's 95 % interval."""

    side: str
    wins: int
    draws: int
    losses: int
    score_low: float
    score_high: float

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """Points per game: (wins + draws / 2) / games."""
        return (self.wins + self.draws / 2) / self.games if self.games else 0.0


def side_counts(rows: Iterable[dict[str, Any]]) -> dict[str, SideCounts]:
    """A match's results split by the side A played (`MatchGame.row` dicts), with Wilson intervals."""
    counts: dict[int, list[int]] = {GOAT: [0, 0, 0], TIGER: [0, 0, 0]}
    for row in rows:
        score = float(row["a_score"])
        counts[int(row["a_side"])][0 if score == 1 else 1 if score == 0.5 else 2] += 1
    out = {}
    for side, (wins, draws, losses) in counts.items():
        low, high = wilson_interval(wins + draws / 2, wins + draws + losses)
        out[SIDES[side]] = SideCounts(SIDES[side], wins, draws, losses, low, high)
    return out
