"""Feature planes: encoders by name, batched game encoding, symmetry augmentation, bit packing.

An `Encoder` is a named list of `Plane`s; its plane count is the length of that list. Every
encoder produces 0/1 uint8 planes shaped (C, N, N). Perspective: "own" and "opponent" are
relative to the side to move at the encoded position, also for history planes (AlphaGo Zero).
Boards before the first move of a game (or before a setup position) are empty.

Three ways in, one meaning (tests pin them to each other):

- `encode_position(position, name)`: the plain reference, from ``Position.stones/history``;
- `encode_games(stones_list, movers_list, name)`: every position of many replayed games
  (`gocore.rules.board.replay_moves` output) at once, vectorized numpy, unpacked;
- `encode_rows_packed(..., positions, symmetries)`: the ingest hot path, a numba kernel that
  encodes, augments and bit-packs any list of (position, symmetry) rows, in the order asked (the
  ingest asks for its shuffled order), writing the on-disk ``planes`` format directly;
  `encode_games_packed(..., symmetries)` / `encode_games_packed_per_row(..., row_symmetries)`
  are its position-by-position forms.

On disk a row of planes is ``numpy.packbits(planes_uint8_of_shape_(C, N, N))``: C order,
default (big) bit order, ``packed_nbytes(C, N)`` bytes.

Adding an encoder (e.g. AlphaGo's 48 planes) means adding plane kinds to `PLANE_KINDS`, to the
reference `_reference_plane` and to the two batch paths, then one `ENCODERS` entry.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

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
    kinds, lags = _plane_table(enc)
    wanted = movers[:, None] * np.where(kinds == _OWN, 1, -1).astype(np.int8)  # (B, C) colour
    planes = boards[:, lags] == wanted[:, :, None, None]  # (B, C, N, N) bool
    planes[:, kinds == _BLACK_TO_PLAY] = (movers == 1)[:, None, None, None]
    return planes.view(np.uint8)


# ---------------------------------------------------------------- many games, vectorized
def _plane_table(enc: Encoder) -> tuple[np.ndarray, np.ndarray]:
    """(kinds (C,) int64 codes, lags (C,) int64) for the batch paths."""
    kinds = np.array([PLANE_KINDS.index(p.kind) for p in enc.planes], dtype=np.int64)
    if kinds.max() > _BLACK_TO_PLAY:  # a kind added to the reference but not to the batch paths
        raise NotImplementedError(f"{enc.name}: plane kinds beyond {PLANE_KINDS[:3]} need batch support")
    return kinds, np.array([p.lag for p in enc.planes], dtype=np.int64)


def _concat_games(stones_list: Sequence[np.ndarray], movers_list: Sequence[np.ndarray]
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
    boards, movers, starts, size = _concat_games(stones_list, movers_list)
    kinds, lags = _plane_table(enc)
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


def _symmetry_ids(symmetries: Sequence[int] | np.ndarray) -> np.ndarray:
    """Symmetry ids as an int64 array; ValueError unless each is in 0..7 (and there is one)."""
    ids = np.asarray(symmetries, dtype=np.int64).reshape(-1)
    if not len(ids) or ids.min() < 0 or ids.max() > 7:
        raise ValueError(f"symmetries must be ints in 0..7, got {list(symmetries)}")
    return ids


def augment_moves(moves: np.ndarray, symmetries: Sequence[int], size: int) -> np.ndarray:
    """(R*S,) int64: row r*S + j is moves[r] under symmetries[j] (pass stays pass)."""
    table = symmetry.move_table(size)[_symmetry_ids(symmetries)]  # (S, N*N+1)
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
    ks = _symmetry_ids(row_symmetries) if len(row_symmetries) else np.zeros(0, np.int64)  # (R,)
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


# ---------------------------------------------------------------- the hot path: numba, packed
# The kernel builds the packed rows as bits in uint64 words, most significant bit first, and
# stores each word with its bytes swapped on little-endian hosts, so that the words read as
# numpy.packbits bytes. Rows are whole bytes and contiguous, so all output rows form one bit
# stream: row i starts at bit 8 * nbytes * i.
_ZERO, _ONE = np.uint64(0), np.uint64(1)


@njit(cache=True)
def _symmetric_bits(boards, perms, bits):
    """bits (S, T, 2, W) uint64 ← black (0) / white (1) points of boards (T, N*N) under each
    symmetry, point p at bit 63 - p % 64 of word p // 64. Successive boards of a game differ
    in a few points, so only those are re-scattered."""
    n_sym, n_boards, _, words = bits.shape
    for t in range(n_boards):
        for s in range(n_sym):
            for w in range(words):
                bits[s, t, 0, w] = bits[s, t - 1, 0, w] if t else _ZERO
                bits[s, t, 1, w] = bits[s, t - 1, 1, w] if t else _ZERO
        for i in range(boards.shape[1]):
            v = boards[t, i]
            if v == (boards[t - 1, i] if t else 0):
                continue
            for s in range(n_sym):
                p = perms[s, i]
                mask = _ONE << np.uint64(63 - (p & 63))
                bits[s, t, 0, p >> 6] &= ~mask
                bits[s, t, 1, p >> 6] &= ~mask
                if v != 0:
                    bits[s, t, 0 if v == 1 else 1, p >> 6] |= mask


_BYTES_1, _BYTES_2 = np.uint64(0x00FF00FF00FF00FF), np.uint64(0x0000FFFF0000FFFF)
_8, _16, _32 = np.uint64(8), np.uint64(16), np.uint64(32)


@njit(cache=True)
def _big_endian(word, swap):
    """`word` with its bytes reversed if `swap` (little-endian hosts): MSB-first bits → packbits bytes."""
    if not swap:
        return word
    word = ((word & _BYTES_1) << _8) | ((word >> _8) & _BYTES_1)
    word = ((word & _BYTES_2) << _16) | ((word >> _16) & _BYTES_2)
    return (word << _32) | (word >> _32)


@njit(cache=True)
def _encode_packed(boards, movers, starts, kinds, lags, perms, row_position, row_symmetry, stream, swap):
    """Write every output row into `stream` as one MSB-first bit stream, in output order: row i
    is position row_position[i] under perms[row_symmetry[i]]. The symmetric bit boards of all
    positions are built first; rows are then appended plane by plane through one 64-bit
    accumulator, so each output word is stored once, sequentially, whatever the row order."""
    n_sym, nn = perms.shape
    words = (nn + 63) // 64
    last_bits = nn - 64 * (words - 1)  # valid (top) bits of a plane's last word
    pad = -(kinds.shape[0] * nn) % 8
    ones = np.zeros(words, dtype=np.uint64)
    for i in range(nn):
        ones[i >> 6] |= _ONE << np.uint64(63 - (i & 63))
    bits = np.empty((n_sym, boards.shape[0] + 1, 2, words), dtype=np.uint64)
    bits[:, 0] = _ZERO  # board 0 is the empty board before any game: history before a first move
    moves_in = np.empty(boards.shape[0], dtype=np.int64)  # t: moves played in its game
    for g in range(starts.shape[0] - 1):
        first, last = starts[g], starts[g + 1]
        _symmetric_bits(boards[first:last], perms, bits[:, first + 1:last + 1])
        for t in range(last - first):
            moves_in[first + t] = t
    acc, filled, out = _ZERO, 0, 0  # bits waiting in acc (at its top), next word of stream
    for i in range(row_position.shape[0]):
        p, j = row_position[i], row_symmetry[i]
        t, own = moves_in[p], 0 if movers[p] == 1 else 1
        for c in range(kinds.shape[0]):
            kind, board, colour = kinds[c], 0, 0  # board 0 is empty: planes before the first move
            if kind == _BLACK_TO_PLAY:
                if own != 0:
                    colour = -1  # an all-zero plane
            elif t >= lags[c]:
                board, colour = p + 1 - lags[c], own if kind == _OWN else 1 - own
            for w in range(words):
                n = 64 if w < words - 1 else last_bits
                if colour < 0:
                    v = _ZERO
                elif kind == _BLACK_TO_PLAY:
                    v = ones[w]
                else:
                    v = bits[j, board, colour, w]
                acc |= v >> np.uint64(filled)
                if filled + n >= 64:  # a full word: store it, keep the bits of v that did not fit
                    stream[out] = _big_endian(acc, swap)
                    out += 1
                    acc = v << np.uint64(64 - filled) if filled else _ZERO
                    filled += n - 64
                else:
                    filled += n
        filled += pad  # zero bits up to the row's last byte
        if filled >= 64:
            stream[out] = _big_endian(acc, swap)
            out, acc, filled = out + 1, _ZERO, filled - 64
    if filled:
        stream[out] = _big_endian(acc, swap)


def encode_rows_packed(stones_list: Sequence[np.ndarray], movers_list: Sequence[np.ndarray],
                       encoder: str | Encoder, positions: np.ndarray, symmetries: np.ndarray) -> np.ndarray:
    """(K, nbytes) uint8: row i is pack_planes of position positions[i] (an index into every
    position of every game, in order) under symmetry symmetries[i], rows in the order asked.

    The ingest asks for its shuffled order directly: rows are written sequentially, never gathered.
    """
    enc = get_encoder(encoder)
    boards, movers, starts, size = _concat_games(stones_list, movers_list)
    positions = np.ascontiguousarray(positions, dtype=np.int64).reshape(-1)
    ids = _symmetry_ids(symmetries) if len(positions) else np.zeros(0, np.int64)
    if len(ids) != len(positions):
        raise ValueError(f"{len(ids)} row symmetries for {len(positions)} rows")
    if len(positions) and (positions.min() < 0 or positions.max() >= len(movers)):
        raise ValueError(f"row positions must be in 0..{len(movers) - 1}")
    counts = np.bincount(ids, minlength=8)
    used = np.flatnonzero(counts)  # bit boards are built only for the symmetries used
    row_symmetry = (np.cumsum(counts > 0) - 1)[ids]  # (K,) index into used
    perms = np.ascontiguousarray(symmetry.move_table(size)[used, :-1])  # (S, N*N)
    kinds, lags = _plane_table(enc)
    rows, nbytes = len(positions), packed_nbytes(enc.num_planes, size)
    stream = np.empty((rows * nbytes + 7) // 8 + 1, dtype=np.uint64)  # all written; 1 spare word
    _encode_packed(boards, movers, starts, kinds, lags, perms, positions,
                   row_symmetry.astype(np.int64), stream, sys.byteorder == "little")
    return stream.view(np.uint8)[: rows * nbytes].reshape(rows, nbytes)


def encode_games_packed(stones_list: Sequence[np.ndarray], movers_list: Sequence[np.ndarray],
                        encoder: str | Encoder, symmetries: Sequence[int] = (0,)) -> np.ndarray:
    """(R*S, nbytes) uint8, equal to pack_planes(augment(encode_games(...), symmetries)).

    Row r*S + j is position r under symmetries[j]; pair with `augment_moves(moves, symmetries, N)`.
    """
    ids = _symmetry_ids(symmetries)
    positions = sum(len(m) for m in movers_list)
    return encode_rows_packed(stones_list, movers_list, encoder,
                              np.repeat(np.arange(positions), len(ids)), np.tile(ids, positions))


def encode_games_packed_per_row(stones_list: Sequence[np.ndarray], movers_list: Sequence[np.ndarray],
                                encoder: str | Encoder, row_symmetries: np.ndarray) -> np.ndarray:
    """(R, nbytes) uint8, equal to pack_planes(transform_rows(encode_games(...), row_symmetries)).

    Row r is position r under its own symmetry row_symmetries[r] (e.g. one random symmetry each).
    """
    positions = sum(len(m) for m in movers_list)
    if len(row_symmetries) != positions:
        raise ValueError(f"{len(row_symmetries)} row symmetries for {positions} positions")
    return encode_rows_packed(stones_list, movers_list, encoder, np.arange(positions), row_symmetries)
