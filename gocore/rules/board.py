"""Go positions: an immutable `Position` value over the numba kernels of `gocore.rules.kernels`.

Rules: stones are captured when their chain has no liberty (several chains at once), suicide is
illegal, positional superko is enforced with Zobrist hashes of the whole game, and the game is
over after two consecutive passes. Scoring is Tromp-Taylor area: stones plus empty regions that
reach only one colour, black minus white minus komi.

Colours are +1 (black) and -1 (white). Moves are ints (see `gocore.rules.coords`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from gocore.errors import GozeroError
from gocore.rules import batch, kernels
from gocore.rules.coords import to_gtp

MIN_SIZE, MAX_SIZE = 5, 19
HISTORY_LENGTH = 7  # earlier boards kept for feature planes (AlphaGo Zero uses t-1 .. t-7)


class IllegalMove(GozeroError, ValueError):
    """A move the rules refuse; `reason` is occupied, suicide, ko, superko or off-board."""

    def __init__(self, move: int, size: int, reason: str, detail: str = ""):
        self.move, self.size, self.reason = move, size, reason
        where = to_gtp(move, size) if 0 <= move <= size * size else str(move)
        super().__init__(f"illegal move {where}: {reason}{detail}")


@lru_cache(maxsize=None)
def zobrist_table(size: int) -> np.ndarray:
    """Fixed random 64-bit keys, (3, padded points) int64: row 1 black, row 2 white."""
    rng = np.random.default_rng(0x5EED + size)
    table = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=(3, (size + 2) ** 2), dtype=np.int64)
    table[0] = 0
    table.flags.writeable = False
    return table


def _code(color: int) -> int:
    if color not in (1, -1):
        raise ValueError(f"colour must be +1 (black) or -1 (white), not {color!r}")
    return kernels.BLACK if color == 1 else kernels.WHITE


def _check_size(size: int) -> None:
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"board size {size} is not supported (sizes {MIN_SIZE}..{MAX_SIZE})")


class Position:
    """A board, the side to move, komi, ko point and the game's history. Never mutated."""

    __slots__ = ("size", "komi", "_flat", "_hashes", "_head", "_parent", "history", "last_move", "_stones",
                 "_masks", "_boards")

    def __init__(self, size: int, komi: float, state: np.ndarray | None, seen: np.ndarray | None,
                 history: tuple[np.ndarray, ...], last_move: int | None):
        self.size, self.komi = size, float(komi)
        self._flat, self._hashes = state, seen  # `_state`, `_seen`; None on a leaf until asked
        self._head: np.ndarray | None = None  # (HEADER,) a leaf's header, from `play_leaf`
        self._parent: Position | None = None  # what a leaf's state is played from, on first ask
        self.history = history  # earlier boards, most recent first, at most HISTORY_LENGTH
        self.last_move = last_move
        self._stones: np.ndarray | None = None
        self._masks: np.ndarray | None = None  # (2, N*N+1) legal moves, own eyes: set by `legal_masks`
        self._boards: np.ndarray | None = None  # (1 + HISTORY_LENGTH, N, N): `recent_boards`
        if state is not None:
            state.setflags(write=False)  # ~0.3 us less than flags.writeable = False, on every node of a search

    @property
    def _state(self) -> np.ndarray:
        """The flat state of `kernels` (rules-internal). A search's leaf makes it on first ask
        (`play_leaf`): most leaves never get children, and 17.7 KB a leaf at 19x19 was most of the
        memory a search touched."""
        if self._flat is None:
            self._make_state()
        return self._flat  # type: ignore[return-value]

    @property
    def _seen(self) -> np.ndarray:
        """The game's board hashes so far, this position's included, sorted (rules-internal)."""
        if self._hashes is None:
            self._make_state()
        return self._hashes  # type: ignore[return-value]

    def _make_state(self) -> None:
        """A leaf's state and hashes: its move played again from its parent's (the same arrays
        `play` makes); the parent is let go."""
        parent, move = self._parent, self.last_move
        if parent is None or move is None:  # another thread made it meanwhile (the parent goes last)
            return
        _, state, seen = kernels.play_copy(parent._state, self.size, move, _code(parent.to_play),
                                           zobrist_table(self.size), parent._seen)
        state.setflags(write=False)
        self._hashes, self._flat, self._parent = seen, state, None

    @classmethod
    def initial(cls, size: int = 9, komi: float = 7.5) -> Position:
        """The empty board, black to play."""
        _check_size(size)
        state = kernels.new_state(size)
        return cls(size, komi, state, np.zeros(1, dtype=np.int64), (), None)

    @classmethod
    def from_setup(cls, size: int, black: list[int], white: list[int], to_play: int = 1,
                   komi: float = 7.5) -> Position:
        """A position with setup stones (handicap, AB/AW); raises ValueError on a conflict."""
        _check_size(size)
        state = kernels.new_state(size)
        table = zobrist_table(size)
        for moves, color in ((black, kernels.BLACK), (white, kernels.WHITE)):
            for move in moves:
                if not 0 <= move < size * size:
                    raise ValueError(f"setup stone {move} is off a {size}x{size} board")
                if state[kernels.to_padded(move, size)] != kernels.EMPTY:
                    raise ValueError(f"setup stones overlap at {to_gtp(move, size)}")
                kernels.add_setup_stone(state, size, move, color, table)
        if kernels.has_dead_chain(state, size):
            raise ValueError("setup leaves a chain with no liberty")
        state[5 * (size + 2) ** 2 + kernels.TO_PLAY_H] = _code(to_play)
        seen = np.array([state[5 * (size + 2) ** 2 + kernels.HASH_H]], dtype=np.int64)
        return cls(size, komi, state, seen, (), None)

    def _header(self, field: int) -> int:
        if self._flat is None:  # a leaf's, kept apart until its state is made
            return self._head.item(field)  # type: ignore[union-attr]
        return self._flat.item(field - kernels.HEADER)  # the header ends the state

    @property
    def stones(self) -> np.ndarray:
        """(N, N) int8: +1 black, -1 white, 0 empty; read-only."""
        if self._stones is None:
            stones = np.empty((self.size, self.size), dtype=np.int8)
            kernels.stones_of(self._state, self.size, stones)
            stones.flags.writeable = False
            self._stones = stones
        return self._stones

    @property
    def recent_boards(self) -> np.ndarray:
        """(1 + HISTORY_LENGTH, N, N) int8, read-only: `stones`, then `history`, then empty boards
        (before the game's first move or setup): what the encoders read, in one array. A search's
        leaves get it from `play_leaf`; other positions build it on first ask."""
        if self._boards is None:
            padding = (np.zeros((self.size, self.size), np.int8),) * (HISTORY_LENGTH - len(self.history))
            boards = np.stack((self.stones,) + self.history + padding)
            boards.setflags(write=False)
            self._boards = boards
        return self._boards

    @property
    def to_play(self) -> int:
        """+1 if black is to move, -1 if white."""
        return 1 if self._header(kernels.TO_PLAY_H) == kernels.BLACK else -1

    @property
    def ko(self) -> int | None:
        """The point the side to move may not retake this turn (simple ko), or None."""
        ko = self._header(kernels.KO_H)
        return None if ko < 0 else int(kernels.from_padded(ko, self.size))

    @property
    def passes(self) -> int:
        """Consecutive passes that ended the move sequence so far."""
        return self._header(kernels.PASSES_H)

    @property
    def move_number(self) -> int:
        """Moves played since the initial or setup position (passes count)."""
        return self._header(kernels.MOVES_H)

    @property
    def zobrist_hash(self) -> int:
        """64-bit hash of the stones (not of the side to move)."""
        return self._header(kernels.HASH_H)

    def play(self, move: int, color: int | None = None) -> Position:
        """The position after `move` by `color` (default: the side to move); raises IllegalMove."""
        size = self.size
        if not 0 <= move <= size * size:
            raise IllegalMove(move, size, "off-board")
        mover = self.to_play if color is None else color
        code, state, seen = kernels.play_copy(self._state, size, move, _code(mover), zobrist_table(size), self._seen)
        return self._child(code, move, state, seen)

    def play_leaf(self, move: int) -> Position:
        """`play(move)` by the side to move for a search's new leaf, which its evaluator encodes and
        masks next: its `stones`, `recent_boards`, legal masks (`legal_masks`, `candidate_masks`)
        and header come from one kernel call (`batch.play_leaf`), its state only when asked."""
        size = self.size
        if not 0 <= move <= size * size:
            raise IllegalMove(move, size, "off-board")
        boards = np.empty((1 + HISTORY_LENGTH, size, size), np.int8)
        masks, head = np.empty((2, size * size + 1), np.bool_), np.empty(kernels.HEADER, np.int64)
        code = batch.play_leaf(self._state, size, move, zobrist_table(size), self._seen, self.recent_boards,
                               boards, masks, head)
        if code != kernels.LEGAL:
            raise IllegalMove(move, size, kernels.REASONS[code])
        boards.setflags(write=False)
        masks.setflags(write=False)
        child = Position(size, self.komi, None, None, (self.stones,) + self.history[: HISTORY_LENGTH - 1], move)
        child._head, child._parent = head, self
        child._stones, child._boards, child._masks = boards[0], boards, masks
        return child

    def _child(self, code: int, move: int, state: np.ndarray, seen: np.ndarray) -> Position:
        """The position `play_copy` made, or IllegalMove with its reason."""
        if code != kernels.LEGAL:
            raise IllegalMove(move, self.size, kernels.REASONS[code])
        history = (self.stones,) + self.history[: HISTORY_LENGTH - 1]
        return Position(self.size, self.komi, state, seen, history, move)

    def is_legal(self, move: int, color: int | None = None) -> bool:
        """True if `move` may be played now by `color` (default: the side to move)."""
        if not 0 <= move <= self.size * self.size:
            return False
        mover = self.to_play if color is None else color
        code = kernels.full_code(self._state, self.size, move, _code(mover), zobrist_table(self.size), self._seen)
        return code == kernels.LEGAL

    def legal_moves(self, color: int | None = None) -> np.ndarray:
        """bool[N*N+1], True where a move is legal for `color` (default: side to move); pass is."""
        mover = self.to_play if color is None else color
        return kernels.legal_mask(self._state, self.size, _code(mover), zobrist_table(self.size), self._seen)

    def score(self) -> float:
        """Tromp-Taylor area score: black minus white minus komi (positive: black ahead)."""
        return float(kernels.area_score(self._state, self.size)) - self.komi

    def ownership(self) -> np.ndarray:
        """(N, N) int8 Tromp-Taylor area ownership: +1 black, -1 white, 0 neither (dame, or an
        empty board); its sum is the area score before komi."""
        owner = np.empty((self.size, self.size), dtype=np.int8)
        kernels.area_ownership(self._state, self.size, owner)
        return owner

    def result(self) -> str:
        """The score as an SGF result: ``"B+3.5"``, ``"W+0.5"`` or ``"0"`` (jigo)."""
        return result_text(self.score())

    def is_game_over(self) -> bool:
        """True after two consecutive passes."""
        return self.passes >= 2

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Position) and self.size == other.size
                and self.to_play == other.to_play and self.ko == other.ko
                and np.array_equal(self.stones, other.stones))

    def __hash__(self) -> int:
        return hash((self.size, self.zobrist_hash, self.to_play, self.ko))

    def to_ascii(self) -> str:
        """The board as rows of X, O and ``.``: what tests draw with `tests.helpers.position_from_ascii`."""
        chars = {1: "X", -1: "O", 0: "."}
        return "\n".join(" ".join(chars[int(v)] for v in row) for row in self.stones)

    def __repr__(self) -> str:
        side = "black" if self.to_play == 1 else "white"
        return f"Position({self.size}x{self.size}, {side} to play, komi {self.komi:g})\n{self.to_ascii()}"


def result_text(score: float) -> str:
    """SGF result text for a score from black's side: ``"B+3.5"``, ``"W+2"``, ``"0"``."""
    if score == 0:
        return "0"
    return f"{'B' if score > 0 else 'W'}+{abs(score):g}"


def replay_moves(start: Position, moves: np.ndarray | list[int],
                 colors: np.ndarray | list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Replay a whole move list in one kernel call.

    Returns (stones (T+1, N, N) int8: the board before each move and after the last,
    movers (T,) int8: +1 black / -1 white). `colors` gives each move's colour (+1/-1, 0 = side to
    move). Positional superko is checked against this replay only. Raises IllegalMove with the
    index of the first illegal move in its message and as `.index`.
    """
    size = start.size
    moves_arr = np.asarray(moves, dtype=np.int64)
    if moves_arr.size and (moves_arr.min() < 0 or moves_arr.max() > size * size):
        bad = int(np.flatnonzero((moves_arr < 0) | (moves_arr > size * size))[0])
        error = IllegalMove(int(moves_arr[bad]), size, "off-board", f" (move {bad + 1})")
        error.index = bad
        raise error
    signs = np.zeros(len(moves_arr), np.int64) if colors is None else np.asarray(colors, dtype=np.int64)
    stones = np.empty((len(moves_arr) + 1, size, size), dtype=np.int8)
    movers = np.empty(len(moves_arr), dtype=np.int8)
    index, code = batch.replay(start._state, size, moves_arr, signs, zobrist_table(size), stones, movers)
    if index >= 0:
        error = IllegalMove(int(moves_arr[index]), size, kernels.REASONS[code], f" (move {index + 1})")
        error.index = int(index)
        raise error
    return stones, movers


def own_eye_mask(position: Position, color: int | None = None) -> np.ndarray:
    """bool[N*N+1]: one-point eyes of `color` (default: side to move) that it should not fill."""
    mover = position.to_play if color is None else color
    return batch.eye_mask(position._state, position.size, _code(mover))


def candidate_moves(position: Position, sensible: bool = True, pass_when_settled: bool = False) -> np.ndarray:
    """bool[N*N+1]: the moves a search considers. Every legal move; with `sensible`, while the
    opponent has not just passed, only those that fill no one-point eye of the mover and no pass
    (unless nothing else is left): the random player's rule, which an untrained net lacks. With
    `pass_when_settled`, a pass too once the board is settled (`is_settled`): the game may end
    there, as GNU Go ends it, instead of running on to fill every point but the eyes."""
    legal = position.legal_moves()
    if not sensible or position.passes > 0:
        return legal
    candidates = legal & ~own_eye_mask(position)
    candidates[-1] = pass_when_settled and is_settled(position)
    return candidates if candidates.any() else legal


def _move_masks(positions: Sequence[Position]) -> np.ndarray:
    """(B, 2, N*N+1) bool: each position's legal moves and own one-point eyes for its side to move,
    from one kernel call for the positions not yet asked (kept on them: a position never changes)."""
    size = positions[0].size
    missing = [p for p in positions if p._masks is None]
    if missing:
        if any(p.size != size for p in positions):
            raise ValueError("legal_masks needs positions of one board size")
        seens = [p._seen for p in missing]
        starts = np.zeros(len(missing) + 1, np.int64)
        np.cumsum([len(seen) for seen in seens], out=starts[1:])
        out = np.empty((len(missing), 2, size * size + 1), np.bool_)
        states = np.concatenate([p._state for p in missing]).reshape(len(missing), -1)  # (B, 5P+8)
        batch.move_masks(states, size, zobrist_table(size), np.concatenate(seens), starts, out)
        out.flags.writeable = False
        for position, masks in zip(missing, out):
            position._masks = masks
        if len(missing) == len(positions):  # a search's new leaves: all of them
            return out
    return np.concatenate([p._masks for p in positions]).reshape(len(positions), 2, -1)


def legal_masks(positions: Sequence[Position]) -> np.ndarray:
    """(B, N*N+1) bool: `legal_moves()` of every position (for its side to move), computed for the
    whole batch in one kernel call: what a search's leaf evaluation asks."""
    return _move_masks(positions)[:, 0]


def candidate_masks(positions: Sequence[Position], sensible: bool = True,
                    pass_when_settled: bool = False) -> np.ndarray:
    """(B, N*N+1) bool: `candidate_moves` of every position, from the batch's `legal_masks`."""
    masks = _move_masks(positions)  # (B, 2, N*N+1)
    legal = masks[:, 0]
    if not sensible:
        return legal.copy()
    candidates = legal & ~masks[:, 1]
    has_passed = np.array([p.passes > 0 for p in positions])  # (B,)
    candidates[:, -1] = False
    if pass_when_settled:
        candidates[:, -1] = [not passed and is_settled(p) for p, passed in zip(positions, has_passed)]
    keep_legal = has_passed | ~candidates.any(axis=1)
    candidates[keep_legal] = legal[keep_legal]
    return candidates


def is_settled(position: Position) -> bool:
    """True if every empty point reaches stones of one colour only (Tromp-Taylor owns it): no dame,
    no shared liberty, no stone left inside the other side's area with a liberty there; two passes
    now would score the board as both sides see it."""
    return bool((position.ownership() != 0).all())


def random_playouts(start: Position, count: int, seed: int = 0, max_moves: int | None = None) -> np.ndarray:
    """Tromp-Taylor scores (black - white - komi), float64 (count,), of uniform random playouts.

    Movers never fill their own one-point eyes; simple ko only. `max_moves` defaults to 3*N*N.
    """
    cap = 3 * start.size * start.size if max_moves is None else max_moves
    scores = batch.playouts(start._state, start.size, count, cap, seed, zobrist_table(start.size))
    return scores.astype(np.float64) - start.komi
