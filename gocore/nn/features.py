"""Feature planes: encoders by name, reference and batched numpy encoding, augmentation, bit packing.

An `Encoder` is a named list of `Plane`s; its plane count is the length of that list. Every
encoder produces 0/1 uint8 planes shaped (C, N, N). Perspective: "own" and "opponent" are
relative to the side to move at the encoded position, also for history planes (AlphaGo Zero).
Boards before the first move of a game (or before a setup position) are empty. Start reading at
`ENCODERS` and `encode_position`.

Three ways in, one meaning (tests pin them to each other):

- `encode_position(position, name)`: the plain reference, from ``Position.stones/history``
  (`encode_positions` is its batched form, for search);
- `encode_games(stones_list, movers_list, name)`: every position of many replayed games
  (`gocore.rules.board.replay_moves` output) at once, vectorized numpy, unpacked;
- `gocore.nn.packed.encode_rows_packed(..., positions, symmetries)`: the ingest hot path, a numba
  kernel that encodes, augments and bit-packs rows in the order asked, writing the on-disk
  ``planes`` format directly.

On disk a row of planes is ``numpy.packbits(planes_uint8_of_shape_(C, N, N))``: C order,
default (big) bit order, ``packed_nbytes(C, N)`` bytes.

Adding an encoder (e.g. AlphaGo's 48 planes) means adding plane kinds to `PLANE_KINDS`, to the
reference `_reference_plane` and to the two batch paths (`encode_games`, `gocore.nn.packed`),
then one `ENCODERS` entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gocore.rules import symmetry
from gocore.rules.board import HISTORY_LENGTH, Position

# own: stones of the side to move; opponent: the other side's; black_to_play: all ones if black
# is to move at the encoded position (the lag does not apply).
PLANE_KINDS = ("own", "opponent", "black_to_play")
_OWN, _OPPONENT, _BLACK_TO_PLAY = range(3)


@dataclass(frozen=True)
class Plane:
    """One input plane: `kind` (see PLANE_KINDS) on the board `lag` moves before the position."""

    kind: str
    lag: int = 0

    def __post_init__(self) -> None:
        if self.kind not in PLANE_KINDS:
            raise ValueError(f"unknown plane kind {self.kind!r}; known: {', '.join(PLANE_KINDS)}")
        if self.lag < 0 or (self.kind == "black_to_play" and self.lag):
            raise ValueError(f"plane {self.kind!r} cannot have lag {self.lag}")

    @property
    def name(self) -> str:
        """Readable name such as ``own[t-1]``."""
        return self.kind if self.kind == "black_to_play" else f"{self.kind}[t{-self.lag or ''}]"


@dataclass(frozen=True)
class Encoder:
    """A named, ordered list of feature planes."""

    name: str
    planes: tuple[Plane, ...]
    description: str  # one line, for CLI help and dataset manifests

    @property
    def num_planes(self) -> int:
        """C, the number of planes."""
        return len(self.planes)

    @property
    def history(self) -> int:
        """Boards read per position: 1 + the largest lag."""
        return 1 + max(plane.lag for plane in self.planes)

    @property
    def plane_names(self) -> tuple[str, ...]:
        """Plane names in order."""
        return tuple(plane.name for plane in self.planes)


def _stone_history(boards: int) -> tuple[Plane, ...]:
    """own[t], opponent[t], own[t-1], opponent[t-1], ... over `boards` boards."""
    return tuple(Plane(kind, lag) for lag in range(boards) for kind in ("own", "opponent"))


AGZ17 = Encoder("agz17", _stone_history(8) + (Plane("black_to_play"),),
                "AlphaGo Zero: own/opponent stones at t..t-7, then 1s if black is to move")
ONEPLANE = Encoder("oneplane", _stone_history(1),
                   "current stones: own, opponent (to_signed gives one +1/-1/0 plane)")
ENCODERS: dict[str, Encoder] = {encoder.name: encoder for encoder in (AGZ17, ONEPLANE)}


def get_encoder(name: str | Encoder) -> Encoder:
    """The registered encoder called `name` (an Encoder passes through); ValueError if unknown."""
    if isinstance(name, Encoder):
        return name
    if name not in ENCODERS:
        raise ValueError(f"unknown encoder {name!r}; known: {', '.join(sorted(ENCODERS))}")
    return ENCODERS[name]


def to_signed(planes: np.ndarray) -> np.ndarray:
    """oneplane (..., 2, N, N) 0/1 → (..., 1, N, N) int8: +1 own, -1 opponent, 0 empty."""
    if planes.shape[-3] != 2:
        raise ValueError(f"to_signed needs 2 planes (own, opponent), got shape {planes.shape}")
    signed = planes[..., 0:1, :, :].astype(np.int8)
    return signed - planes[..., 1:2, :, :].astype(np.int8)


# ---------------------------------------------------------------- reference: one position
def _reference_plane(plane: Plane, boards: Sequence[np.ndarray], to_play: int) -> np.ndarray:
    """One (N, N) bool plane; boards[k] is the board k moves ago (missing = empty)."""
    size = boards[0].shape[0]
    if plane.kind == "black_to_play":
        return np.full((size, size), to_play == 1)
    board = boards[plane.lag] if plane.lag < len(boards) else np.zeros((size, size), np.int8)
    return board == (to_play if plane.kind == "own" else -to_play)


def encode_position(position: Position, encoder: str | Encoder) -> np.ndarray:
    """(C, N, N) uint8 planes of one position, from its stones, history and side to move."""
    enc = get_encoder(encoder)
    if enc.history > 1 + HISTORY_LENGTH:
        raise ValueError(f"{enc.name} reads {enc.history} boards; Position keeps {1 + HISTORY_LENGTH}")
    boards = (position.stones,) + tuple(position.history)  # most recent first
    planes = np.stack([_reference_plane(p, boards, position.to_play) for p in enc.planes])
    return planes.astype(np.uint8)  # (C, N, N)


def encode_positions(positions: Sequence[Position], encoder: str | Encoder) -> np.ndarray:
    """(B, C, N, N) uint8 planes of many positions at once (search batches); = encode_position each."""
    enc = get_encoder(encoder)
    size = positions[0].size
    boards = np.zeros((len(positions), enc.history, size, size), np.int8)  # (B, H, N, N) most recent first
    for i, position in enumerate(positions):
        past = (position.stones,) + tuple(position.history[: enc.history - 1])
        boards[i, : len(past)] = past
    movers = np.array([position.to_play for position in positions], np.int8)  # (B,)
    kinds, lags = plane_table(enc)
    wanted = movers[:, None] * np.where(kinds == _OWN, 1, -1).astype(np.int8)  # (B, C) colour
    planes = boards[:, lags] == wanted[:, :, None, None]  # (B, C, N, N) bool
    planes[:, kinds == _BLACK_TO_PLAY] = (movers == 1)[:, None, None, None]
    return planes.view(np.uint8)


# ---------------------------------------------------------------- many games, vectorized
def plane_table(enc: Encoder) -> tuple[np.ndarray, np.ndarray]:
    """(kinds (C,) int64 codes, lags (C,) int64) for the batch paths."""
    kinds = np.array([PLANE_KINDS.index(p.kind) for p in enc.planes], dtype=np.int64)
    if kinds.max() > _BLACK_TO_PLAY:  # a kind added to the reference but not to the batch paths
        raise NotImplementedError(f"{enc.name}: plane kinds beyond {PLANE_KINDS[:3]} need batch support")
    return kinds, np.array([p.lag for p in enc.planes], dtype=np.int64)


def concat_games(stones_list: Sequence[np.ndarray], movers_list: Sequence[np.ndarray]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Concatenate games: (boards (R, N*N) int8 before each move, movers (R,) int8,
    starts (G+1,) int64 first row of each game, size)."""
    if len(stones_list) != len(movers_list):
        raise ValueError(f"{len(stones_list)} stone arrays but {len(movers_list)} mover arrays")
    if not len(stones_list):
        raise ValueError("no games to encode")
    size = np.shape(stones_list[0])[-1]
    counts = np.array([len(m) for m in movers_list], dtype=np.int64)
    for g, (stones, count) in enumerate(zip(stones_list, counts)):
        if np.shape(stones) != (count + 1, size, size):
            raise ValueError(f"game {g}: stones {np.shape(stones)} do not match "
                             f"{count} moves on {size}x{size}")
    boards = np.concatenate([np.asarray(s, np.int8)[:-1].reshape(-1, size * size) for s in stones_list])
    movers = np.concatenate([np.asarray(m, np.int8).reshape(-1) for m in movers_list])
    if np.any(np.abs(movers) != 1):
        raise ValueError("movers must be +1 (black) or -1 (white)")
    starts = np.concatenate([[0], np.cumsum(counts)])
    return boards, movers, starts, size


def encode_games(stones_list: Sequence[np.ndarray], movers_list: Sequence[np.ndarray],
                 encoder: str | Encoder) -> np.ndarray:
    """(R, C, N, N) uint8 planes of every position (before each move) of every game, in order.

    stones_list[g]: (T_g+1, N, N) int8 and movers_list[g]: (T_g,) +1/-1, as from
    `board.replay_moves`; R = sum of T_g. Movers need not alternate.
    """
    enc = get_encoder(encoder)
    boards, movers, starts, size = concat_games(stones_list, movers_list)
    kinds, lags = plane_table(enc)
    rows = np.arange(len(movers))
    moves_in = rows - np.repeat(starts[:-1], np.diff(starts))  # (R,) t: moves played in the game
    empty = len(boards)  # index of an all-zero board, for history before the first move
    boards = np.concatenate([boards, np.zeros((1, size * size), np.int8)])
    source = np.where(moves_in[:, None] >= lags, rows[:, None] - lags, empty)  # (R, C)
    wanted = movers[:, None] * np.where(kinds == _OWN, 1, -1).astype(np.int8)  # (R, C) colour
    planes = boards[source] == wanted[:, :, None]  # (R, C, N*N) bool
    is_colour = kinds == _BLACK_TO_PLAY
    planes[:, is_colour, :] = (movers == 1)[:, None, None]
    return planes.view(np.uint8).reshape(len(movers), enc.num_planes, size, size)


# ---------------------------------------------------------------- augmentation
def _row_length(planes: np.ndarray) -> int:
    """Values per row of (R, ...) planes (explicit, so that R = 0 reshapes too)."""
    return int(np.prod(planes.shape[1:]))


def symmetry_ids(symmetries: Sequence[int] | np.ndarray) -> np.ndarray:
    """Symmetry ids as an int64 array; ValueError unless each is in 0..7 (and there is one)."""
    ids = np.asarray(symmetries, dtype=np.int64).reshape(-1)
    if not len(ids) or ids.min() < 0 or ids.max() > 7:
        raise ValueError(f"symmetries must be ints in 0..7, got {list(symmetries)}")
    return ids


def augment_moves(moves: np.ndarray, symmetries: Sequence[int], size: int) -> np.ndarray:
    """(R*S,) int64: row r*S + j is moves[r] under symmetries[j] (pass stays pass)."""
    table = symmetry.move_table(size)[symmetry_ids(symmetries)]  # (S, N*N+1)
    return table[:, np.asarray(moves, dtype=np.int64)].T.reshape(-1)


def _as_grid(planes: np.ndarray, size: int) -> np.ndarray:
    """(R, C, N, N) view of (R, C, N, N) or flattened (R, C*N*N) planes."""
    return planes.reshape(planes.shape[0], _row_length(planes) // (size * size), size, size)


def augment(planes: np.ndarray, moves: np.ndarray, symmetries: Sequence[int], size: int
            ) -> tuple[np.ndarray, np.ndarray]:
    """Each row r becomes S rows r*S + j, transformed by symmetries[j]: (planes, moves).

    planes: (R, C, N, N) or flattened (R, C*N*N); the output keeps that layout.
    """
    grid = _as_grid(planes, size)  # (R, C, N, N)
    out = np.empty((grid.shape[0], len(symmetries)) + grid.shape[1:], dtype=planes.dtype)  # (R, S, C, N, N)
    for j, k in enumerate(symmetries):
        out[:, j] = symmetry.apply(grid, k)  # a strided copy: ~5x faster than a gather index here
    out_shape = (grid.shape[0] * len(symmetries),) + planes.shape[1:]
    return out.reshape(out_shape), augment_moves(moves, symmetries, size)


def transform_rows(planes: np.ndarray, moves: np.ndarray, row_symmetries: np.ndarray, size: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Row r transformed by its own symmetry row_symmetries[r] (e.g. random, for training)."""
    ks = symmetry_ids(row_symmetries) if len(row_symmetries) else np.zeros(0, np.int64)  # (R,)
    grid = _as_grid(planes, size)  # (R, C, N, N)
    out = np.empty_like(grid)
    for k in np.unique(ks):
        rows = np.flatnonzero(ks == k)
        out[rows] = symmetry.apply(grid[rows], int(k))
    new_moves = symmetry.move_table(size)[ks, np.asarray(moves, dtype=np.int64)]
    return out.reshape(planes.shape), new_moves


# ---------------------------------------------------------------- bit packing
def packed_nbytes(planes: int, size: int) -> int:
    """Bytes per packed row of `planes` (N, N) planes."""
    return (planes * size * size + 7) // 8


def pack_planes(planes: np.ndarray) -> np.ndarray:
    """(R, C, N, N) or (R, C*N*N) 0/1 uint8 → (R, nbytes) uint8, numpy.packbits per row."""
    return np.packbits(planes.reshape(planes.shape[0], _row_length(planes)), axis=1)


def unpack_planes(packed: np.ndarray, planes: int, size: int) -> np.ndarray:
    """(R, nbytes) uint8 → (R, C, N, N) 0/1 uint8; the inverse of `pack_planes`."""
    if packed.shape[-1] != packed_nbytes(planes, size):
        raise ValueError(f"rows of {packed.shape[-1]} bytes do not hold {planes} planes of {size}x{size}")
    bits = np.unpackbits(packed, axis=1, count=planes * size * size)
    return bits.reshape(packed.shape[0], planes, size, size)
