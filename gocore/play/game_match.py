"""One game between two players, and the pairing of a match's games, for any game of the boundary.

Go's matches (`gocore.play.match`) and Baghchal's (`gocore.play.baghchal_match`) play through this
module over `gocore.rules.game.Game`, as both games' self-play goes through `gocore.search.lockstep`.
Start reading at `play_game`.

A game: the players alternate ``select_move``; a player that raises, answers something that is not
an action, plays an illegal one or resigns (answers `RESIGN`) forfeits (`Forfeit`: its side, the
reason, a detail cut at `DETAIL_CHARS`); otherwise the game ends when the game says it is over
(`Game.is_over`; a draw is a winner of 0) or at a move cap. Players may have two optional hooks,
called on each side's own object: ``start_game`` before the first move and ``observe`` after every
move of either side; their arguments, and how a failure or an illegal action reads, differ per game
(`Hooks`). Who won a game that was not forfeited is the game layer's to say (Go counts at the cap,
Baghchal's rules end the game themselves).

A match: player A takes the first side in even games and the second in odd ones (`seated`), games
2i and 2i + 1 begin with the same random opening i (`pair_opening`: each opening is played from both
sides), each game's players are seeded from (match seed, index) alone (`game_seeds`: a resumed match
replays nothing), A scores 1, 1/2 or 0 (`a_score`), and `side_counts` splits a match's scores by
the side A played. What only one game has (Go's GTP engines, passes, cleanup phase and the engine's
count, SGF; Baghchal's notation) and each game's results row stay in the game's module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from gocore.play.ratings import wilson_interval
from gocore.rules.game import RESIGN, Game

DETAIL_CHARS = 500  # a failure's detail (engine stderr, tracebacks' last line) is cut here
FIRST, SECOND = 1, -1  # the sides: to_play of the first player (Go's black, Baghchal's Goat) and the second
Player = TypeVar("Player")
Result = TypeVar("Result")


class Forfeit(Exception):
    """The player of `side` lost the game without it ending by the rules."""

    def __init__(self, side: int, reason: str, detail: str = ""):
        super().__init__(detail)
        self.side, self.reason, self.detail = side, reason, detail[:DETAIL_CHARS]
        self.position: Any = None  # the position when it happened


def _error(error: Exception) -> str:
    return "error"


@dataclass(frozen=True)
class Hooks:
    """What differs per game in playing one: the arguments of the players' optional hooks and how a
    player's failure reads."""

    start_args: Callable[[Game, int], tuple[Any, ...]]
    """(game, side) -> the arguments of that side's ``start_game``."""
    observe_args: Callable[[Any, int, int], tuple[Any, ...]]
    """(position before, side, action) -> the arguments of every player's ``observe``."""
    illegal_detail: Callable[[int, Any, Exception], str]
    """(side, what it answered, the error) -> the detail of an illegal-move forfeit."""
    failure_reason: Callable[[Exception], str] = _error
    """A player's exception -> the forfeit's reason (``error`` unless the game knows better)."""


@dataclass(frozen=True)
class Played:
    """A game as `play_game` saw it: (side, action) moves in order, the last position, any forfeit."""

    moves: list[tuple[int, int]]
    final: Any
    forfeit: Forfeit | None = None

    @property
    def winner(self) -> int | None:
        """The forfeiter's opponent; None if nobody forfeited (the game layer says who won)."""
        return None if self.forfeit is None else -self.forfeit.side


def play_game(game: Game, first: Any, second: Any, hooks: Hooks, cap: int | None = None,
              opening: Sequence[int] = (),
              on_move: Callable[[Any, int, Any], None] | None = None) -> Played:
    """One game from `game.initial()` (one player object per side): `opening` actions first (played
    for both sides), then the players alternate until the game is over or `cap` moves are played;
    `on_move(before, action, after)` after every move."""
    players = {FIRST: first, SECOND: second}
    position, moves = game.initial(), []
    try:
        for side, player in players.items():
            _hook(player, side, hooks, "start_game", *hooks.start_args(game, side))
        position = play_moves(game, position, players, hooks, moves, cap, opening, on_move=on_move)
    except Forfeit as forfeit:
        return Played(moves, position if forfeit.position is None else forfeit.position, forfeit)
    return Played(moves, position)


def play_moves(game: Game, position: Any, players: Mapping[int, Any], hooks: Hooks, moves: list[tuple[int, int]],
               cap: int | None = None, opening: Sequence[int] = (), is_over: Callable[[Any], bool] | None = None,
               on_move: Callable[[Any, int, Any], None] | None = None) -> Any:
    """Alternate `players` (side -> player) from `position` until `is_over` (default `game.is_over`)
    or `cap` moves in `moves`; appends each (side, action) to `moves` and returns the last position.
    A `Forfeit` carries the position it happened in."""
    is_over, scripted = is_over or game.is_over, list(opening)
    while not is_over(position) and (cap is None or len(moves) < cap):
        side = position.to_play
        try:
            chosen = scripted.pop(0) if scripted else _call(players[side], side, hooks, "select_move", position)
            before, (position, action) = position, _next_position(position, side, chosen, hooks)
            moves.append((side, action))
            for observer, player in players.items():
                _hook(player, observer, hooks, "observe", *hooks.observe_args(before, side, action))
        except Forfeit as forfeit:
            forfeit.position = position
            raise
        if on_move is not None:
            on_move(before, action, position)
    return position


def _call(player: Any, side: int, hooks: Hooks, method: str, *args: Any) -> Any:
    """`player.method(*args)`; any exception (a missing method too) loses the game for `side` (the
    match goes on)."""
    try:
        return getattr(player, method)(*args)
    except Exception as error:  # a player's failure loses its game, never the whole match
        raise Forfeit(side, hooks.failure_reason(error), f"{type(error).__name__}: {error}") from error


def _hook(player: Any, side: int, hooks: Hooks, method: str, *args: Any) -> None:
    """The player's optional hook `method(*args)`, guarded, if it has one."""
    if hasattr(player, method):
        _call(player, side, hooks, method, *args)


def _next_position(position: Any, side: int, chosen: Any, hooks: Hooks) -> tuple[Any, int]:
    """(position after the action `side` chose, the action as an int); a resignation, an answer that
    is not an action or an illegal action is a forfeit."""
    try:
        action = int(chosen)  # numpy integers are actions too
    except (TypeError, ValueError) as error:
        raise Forfeit(side, "illegal-move", hooks.illegal_detail(side, chosen, error)) from None
    if action == RESIGN:
        raise Forfeit(side, "resign")
    try:
        return position.play(action), action
    except ValueError as error:  # both games' refusals (IllegalMove, IllegalAction) are ValueErrors
        raise Forfeit(side, "illegal-move", hooks.illegal_detail(side, chosen, error)) from None


def player_a_side(index: int) -> int:
    """Player A's side in game `index`: the first (+1) in even games, the second (-1) in odd ones."""
    return FIRST if index % 2 == 0 else SECOND


def seated(index: int, a: Player, b: Player) -> tuple[Player, Player]:
    """(the first side's, the second side's) of A's and B's in game `index` (players or labels)."""
    return (a, b) if player_a_side(index) == FIRST else (b, a)


def a_score(winner: int, a_side: int) -> float:
    """Player A's points from a game: 1 a win, 0.5 a draw (winner 0), 0 a loss."""
    return 0.5 if winner == 0 else float(winner == a_side)


def game_seeds(seed: int, index: int) -> tuple[int, int]:
    """Seeds of players A and B in game `index`: fixed by the match seed and the index alone."""
    return (seed * 1_000_003 + 2 * index) % 2**32, (seed * 1_000_003 + 2 * index + 1) % 2**32


def random_actions(game: Game, count: int, rng: np.random.Generator) -> list[int]:
    """`count` actions drawn uniformly from `game.opening_mask` of each position from the start
    (fewer if the game ends first)."""
    position, actions = game.initial(), []
    while len(actions) < count and not game.is_over(position):
        action = int(rng.choice(np.flatnonzero(game.opening_mask(position))))
        position, actions = position.play(action), actions + [action]
    return actions


def pair_opening(game: Game, count: int, seed: int, index: int, salt: Sequence[int] = ()) -> list[int]:
    """The random opening of match game `index`: the same for games 2i and 2i + 1 (one per side of
    player A), fixed by the match seed, i and the game's `salt` alone; [] when `count` is 0."""
    return random_actions(game, count, np.random.default_rng([seed, index // 2, *salt]))


def play_match(make_a: Callable[[int], Any], make_b: Callable[[int], Any], indices: Iterable[int], seed: int,
               play_match_game: Callable[[int, Any, Any], Result]) -> Iterator[Result]:
    """Play the games `indices` (`play_match_game(index, player_a, player_b)`), yielding each as it
    ends; `make_x(seed)` gives a player per game, seeded by `game_seeds`."""
    for index in indices:
        seed_a, seed_b = game_seeds(seed, index)
        yield play_match_game(index, make_a(seed_a), make_b(seed_b))


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


def side_counts(rows: Iterable[Mapping[str, Any]], names: tuple[str, str],
                side_key: str = "a_side") -> dict[str, SideCounts]:
    """A match's results split by the side A played (`row[side_key]`, +1 the first side, named
    `names[0]`), from rows with an ``a_score``, with Wilson intervals."""
    counts: dict[int, list[int]] = {FIRST: [0, 0, 0], SECOND: [0, 0, 0]}
    for row in rows:
        score = float(row["a_score"])
        counts[int(row[side_key])][0 if score == 1 else 1 if score == 0.5 else 2] += 1
    out = {}
    for name, (wins, draws, losses) in zip(names, counts.values()):
        low, high = wilson_interval(wins + draws / 2, wins + draws + losses)
        out[name] = SideCounts(name, wins, draws, losses, low, high)
    return out
