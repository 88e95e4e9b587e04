"""Baghchal games between two players, and the games of a match (sides alternate, openings paired).

The loop, forfeits and a match's pairing are the shared match core's (`gocore.play.game_match`,
which Go's matches use too); this module gives it Baghchal's hooks, its records in the library's
notation and its results row.

`play_game(goat, tiger, ...)` alternates ``select_move``; a player that returns an illegal action,
resigns (returns `RESIGN`) or raises loses the game (reason ``illegal-move``, ``resign`` or
``error``, with the detail). Optional hooks,
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
    resign          a player resigned (it loses)
    error           a player raised (it loses)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gocore.play import game_match
from gocore.play.game_match import DETAIL_CHARS, Hooks, SideCounts, a_score, player_a_side, seated
from gocore.rules.baghchal.game import BaghchalGame
from gocore.rules.baghchal.notation import write_record
from gocore.rules.baghchal.position import DEFAULT_RULES, GOAT, TIGER, BaghchalRules, Position
from gocore.rules.game import RESIGN

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


def _start_args(game: BaghchalGame, side: int) -> tuple[int]:
    return (side,)  # start_game(side)


def _observe_args(before: Position, side: int, action: int) -> tuple[Position, int]:
    return before, action  # observe(position it was played in, action)


def _illegal_detail(side: int, action: Any, error: Exception) -> str:
    return f"{SIDES[side]} played {action!r}: {error}"


HOOKS = Hooks(_start_args, _observe_args, _illegal_detail)


def play_game(goat: Any, tiger: Any, rules: BaghchalRules = DEFAULT_RULES, opening: Iterable[int] = (),
              on_move: Callable[[Position, int, Position], None] | None = None) -> GameResult:
    """One game (`game_match.play_game`): `opening` actions first (played for both sides), then the
    players alternate; `on_move(before, action, after)` after every action."""
    played = game_match.play_game(BaghchalGame(rules), goat, tiger, HOOKS, opening=list(opening), on_move=on_move)
    actions = tuple(action for _, action in played.moves)
    if played.forfeit is not None:
        return GameResult(actions, played.final, -played.forfeit.side, played.forfeit.reason, played.forfeit.detail)
    return GameResult(actions, played.final, int(played.final.winner), played.final.reason)


def pair_opening(config: BaghchalMatchConfig, index: int) -> list[int]:
    """The random opening of game `index`: `config.opening` uniform plies from a seed of the pair
    (games 2i and 2i + 1 share it, `game_match.pair_opening`); shorter if the game ends first."""
    return game_match.pair_opening(BaghchalGame(config.rules), config.opening, config.seed, index)


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
        return a_score(self.game.winner, self.a_side)

    def row(self) -> dict[str, Any]:
        """The game as one row of a match's results (`storage.baghchal.MATCH_SCHEMA`)."""
        return {"game": self.index, "goat": self.goat, "tiger": self.tiger, "a_side": self.a_side,
                "winner": self.game.winner, "a_score": self.a_score, "reason": self.game.reason,
                "detail": self.game.detail, "plies": len(self.game.actions), "seconds": self.seconds,
                "opening": len(self.opening), "record": self.game.record}


def play_match_game(index: int, player_a: Any, player_b: Any, config: BaghchalMatchConfig,
                    names: tuple[str, str] | None = None) -> MatchGame:
    """Game `index` of a match: A is Goat when `index` is even; the pair's opening first."""
    goat, tiger = seated(index, player_a, player_b)
    goat_name, tiger_name = seated(index, *(names or (player_a.name, player_b.name)))
    opening = pair_opening(config, index)
    started = time.perf_counter()
    game = play_game(goat, tiger, config.rules, opening)
    return MatchGame(index, goat_name, tiger_name, player_a_side(index), game, time.perf_counter() - started,
                     tuple(opening))


def play_match(make_a: Callable[[int], Any], make_b: Callable[[int], Any], indices: Iterable[int],
               config: BaghchalMatchConfig, names: tuple[str, str]) -> Iterator[MatchGame]:
    """Play the games `indices`, yielding each as it ends; `make_x(seed)` gives a player per game
    (`game_match.play_match`: seeded by `game_seeds`)."""
    return game_match.play_match(make_a, make_b, indices, config.seed,
                                 partial(play_match_game, config=config, names=names))


def side_counts(rows: Iterable[dict[str, Any]]) -> dict[str, SideCounts]:
    """A match's results split by the side A played (`MatchGame.row` dicts), with Wilson intervals."""
    return game_match.side_counts(rows, (SIDES[GOAT], SIDES[TIGER]))


__all__ = ["DETAIL_CHARS", "RESIGN", "SIDES", "BaghchalMatchConfig", "GameResult", "MatchGame", "SideCounts",
           "pair_opening", "play_game", "play_match", "play_match_game", "player_a_side", "side_counts"]
