"""Baghchal positions: an immutable `Position` over the numba kernels of `kernels`, and the rules'
settings (`BaghchalRules`).

The rules (issue #37): four tigers start on the corners and Goat moves first. Goat places one of
20 goats a turn on any empty point until all 20 are placed, then moves a goat one step along a
line. Tiger steps along a line, or jumps along a line over an adjacent goat onto the empty point
behind it, capturing it. Tiger wins with its `captures_to_win`-th capture; the side to move with no
legal action loses (so Goat wins when no tiger can move); once every goat is placed, the
`repetition`-th occurrence of the same arrangement of pieces is a draw (side to move not
compared); the ply cap `max_plies` is a draw too.

Colours follow Go's: ``to_play`` +1 is Goat (who moves first, as Black), -1 Tiger; a winner is
+1 Goat, -1 Tiger, 0 a draw. Start reading at `Position.play`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from gocore.errors import GozeroError
from gocore.rules.baghchal import kernels
from gocore.rules.baghchal.geometry import (
    ACTION_FROM,
    ACTION_OVER,
    ACTION_TO,
    FIRST_JUMP,
    FIRST_STEP,
    NUM_ACTIONS,
    POINTS,
    SIZE,
    point_text,
)
from gocore.rules.baghchal.kernels import GOATS

GOAT, TIGER = 1, -1
CORNERS = (0, SIZE - 1, POINTS - SIZE, POINTS - 1)


class IllegalAction(GozeroError, ValueError):
    """An action the rules refuse in this position; the message says why."""


@dataclass(frozen=True)
class BaghchalRules:
    """The rules' settings (issue #37's defaults)."""

    captures_to_win: int = 5
    """Tiger wins on this capture."""
    repetition: int | None = 3
    """Once every goat is placed, this occurrence of an arrangement of pieces is a draw; None = never."""
    max_plies: int | None = 200
    """A game still going after this many plies (both sides' actions) is a draw; None = no cap."""

    def __post_init__(self) -> None:
        if not 1 <= self.captures_to_win <= GOATS:
            raise ValueError(f"captures_to_win must be in 1..{GOATS}, not {self.captures_to_win}")
        if self.repetition is not None and self.repetition < 2:
            raise ValueError(f"repetition must be at least 2 (or None), not {self.repetition}")
        if self.max_plies is not None and self.max_plies < 1:
            raise ValueError(f"max_plies must be at least 1 (or None), not {self.max_plies}")

    def replace(self, **changes: object) -> BaghchalRules:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


DEFAULT_RULES = BaghchalRules()
LIBRARY_RULES = BaghchalRules(max_plies=None)  # the `baghchal` library's: no ply cap


class Position:
    """A Baghchal position: the pieces, goats placed and captured, the side to move, the ply, and
    the arrangements since the last goat was placed (repetitions). Immutable: `play` returns a
    new position."""

    __slots__ = ("goats", "tigers", "placed", "captured", "to_play", "ply", "seen", "rules", "last_action",
                 "_legal", "_status")
    size = SIZE  # what board-sized code (search presets, planes) asks of any position

    def __init__(self, goats: int, tigers: int, placed: int, captured: int, to_play: int, ply: int = 0,
                 seen: tuple[int, ...] = (), rules: BaghchalRules = DEFAULT_RULES, last_action: int | None = None):
        self.goats, self.tigers, self.placed, self.captured = goats, tigers, placed, captured
        self.to_play, self.ply, self.seen, self.rules, self.last_action = to_play, ply, seen, rules, last_action
        self._legal: np.ndarray | None = None
        self._status: int | None = None

    @classmethod
    def initial(cls, rules: BaghchalRules = DEFAULT_RULES) -> Position:
        """The start: tigers on the four corners, no goat placed, Goat to move."""
        return cls(0, sum(1 << point for point in CORNERS), 0, 0, GOAT, rules=rules)

    # ---------------------------------------------------------- facts
    @property
    def move_number(self) -> int:
        """Plies played (Go's name for it: search presets count moves)."""
        return self.ply

    @property
    def goats_in_hand(self) -> int:
        """Goats still to be placed."""
        return GOATS - self.placed

    @property
    def is_placement(self) -> bool:
        """True while Goat still has goats to place (the placement phase)."""
        return self.placed < GOATS

    @property
    def arrangement(self) -> int:
        """The key of this arrangement of pieces (what repetitions compare)."""
        return self.goats | (self.tigers << POINTS)

    def board(self) -> np.ndarray:
        """(5, 5) int8: +1 a goat, -1 a tiger, 0 empty."""
        bits = np.arange(POINTS)
        cells = ((self.goats >> bits) & 1).astype(np.int8) - ((self.tigers >> bits) & 1).astype(np.int8)
        return cells.reshape(SIZE, SIZE)

    def legal_moves(self) -> np.ndarray:
        """(A,) bool: the legal actions of the side to move (none once the game is over); read-only."""
        if self._legal is None:
            self._settle()
        return self._legal

    def is_legal(self, action: int) -> bool:
        """True if `action` is legal here."""
        return 0 <= action < NUM_ACTIONS and bool(self.legal_moves()[action])

    @property
    def status(self) -> int:
        """`kernels.ONGOING`, or the code of the reason the game ended (`kernels.REASONS`)."""
        if self._status is None:
            self._settle()
        return self._status

    def _settle(self) -> None:
        """The legal mask and the status, from one kernel call each (computed once a position)."""
        mask = np.zeros(NUM_ACTIONS, np.bool_)
        count = kernels.legal_mask(self.goats, self.tigers, self.placed, self.to_play == GOAT, mask)
        repeats = 0 if self.is_placement else self.seen.count(self.arrangement)
        rules = self.rules
        self._status = int(kernels.status(self.captured, count, self.to_play == GOAT, repeats, self.ply,
                                          rules.captures_to_win, rules.repetition or 0, rules.max_plies or 0))
        if self._status != kernels.ONGOING:
            mask[:] = False
        mask.flags.writeable = False
        self._legal = mask

    def is_game_over(self) -> bool:
        """True once the game has ended by any rule."""
        return self.status != kernels.ONGOING

    @property
    def winner(self) -> int | None:
        """+1 Goat, -1 Tiger, 0 a draw; None while the game goes on."""
        return None if self.status == kernels.ONGOING else kernels.WINNER_OF_STATUS[self.status]

    @property
    def reason(self) -> str:
        """How the game ended (`kernels.REASONS`: captures, tigers-trapped, goats-trapped,
        repetition, move-cap) or ``ongoing``."""
        return kernels.REASONS[self.status]

    # ---------------------------------------------------------- playing
    def play(self, action: int) -> Position:
        """The position after the side to move plays `action`; IllegalAction with the reason if it may not."""
        action = int(action)
        if not self.is_legal(action):
            raise IllegalAction(illegal_reason(self, action))
        return self.play_leaf(action)

    def play_leaf(self, action: int) -> Position:
        """`play` without the legality check, for search (its actions come from the legal mask)."""
        goats, tigers, placed, captured = kernels.apply(self.goats, self.tigers, self.placed, self.captured,
                                                        self.to_play == GOAT, action)
        seen = self.seen + (goats | (tigers << POINTS),) if placed >= GOATS else ()
        return Position(int(goats), int(tigers), int(placed), int(captured), -self.to_play, self.ply + 1, seen,
                        self.rules, action)

    def __eq__(self, other: object) -> bool:
        """Same pieces, goats placed and captured, side to move and ply (repetitions not compared)."""
        if not isinstance(other, Position):
            return NotImplemented
        return (self.goats, self.tigers, self.placed, self.captured, self.to_play, self.ply) == (
            other.goats, other.tigers, other.placed, other.captured, other.to_play, other.ply)

    def __hash__(self) -> int:
        return hash((self.goats, self.tigers, self.placed, self.captured, self.to_play, self.ply))

    def __repr__(self) -> str:
        side = "Goat" if self.to_play == GOAT else "Tiger"
        return (f"Position(ply {self.ply}, {side} to move, {self.placed} placed, {self.captured} captured, "
                f"{self.reason})")


def illegal_reason(position: Position, action: int) -> str:
    """Why `action` is not legal in `position` (a sentence for a person)."""
    if position.is_game_over():
        return f"the game is over ({position.reason})"
    if not 0 <= action < NUM_ACTIONS:
        return f"{action} is not an action (0..{NUM_ACTIONS - 1})"
    occupied = position.goats | position.tigers
    is_goat = position.to_play == GOAT
    if action < FIRST_STEP:
        if not is_goat:
            return "Tiger cannot place pieces"
        if not position.is_placement:
            return f"all {GOATS} goats are placed: Goat moves a goat now"
        return f"{point_text(action)} is occupied"
    start, end, over = int(ACTION_FROM[action]), int(ACTION_TO[action]), int(ACTION_OVER[action])
    own = position.goats if is_goat else position.tigers
    name = "goat" if is_goat else "tiger"
    if is_goat and position.is_placement:
        return f"Goat still places goats ({position.goats_in_hand} in hand): no goat moves until all {GOATS} are placed"
    if not (own >> start) & 1:
        return f"there is no {name} on {point_text(start)}"
    if (occupied >> end) & 1:
        return f"{point_text(end)} is not empty"
    if action >= FIRST_JUMP:
        if is_goat:
            return "goats cannot jump"
        return f"a tiger jumps only over a goat, and {point_text(over)} has none"
    return "the rules refuse it"  # not reached: every other action was legal


def random_playouts(position: Position, count: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(winners (count,) int8 +1 Goat / -1 Tiger / 0 draw, plies (count,), end reasons (count,) status
    codes) of `count` uniformly random games from `position`, in one kernel call."""
    winners = np.empty(count, np.int8)
    lengths = np.empty(count, np.int64)
    reasons = np.empty(count, np.int8)
    kernels.random_playouts(position.goats, position.tigers, position.placed, position.captured,
                            position.to_play == GOAT, position.ply, np.asarray(position.seen, np.int64),
                            position.rules.captures_to_win, position.rules.repetition or 0,
                            position.rules.max_plies or 0, count, seed, winners, lengths, reasons)
    return winners, lengths, reasons
