"""The ingest hot path: encode, augment and bit-pack rows of planes in one numba pass.

`encode_rows_packed` writes any list of (position, symmetry) rows, in the order asked (the ingest
asks for its shuffled order), straight into the on-disk ``planes`` format of
`gocore.nn.features` (``packbits`` of (C, N, N) uint8 planes per row); `encode_games_packed` is
its every-position-times-symmetries form. Both equal the numpy path of `gocore.nn.features`
(`encode_games` → `augment` → `pack_planes`), which tests/gocore/nn/test_features.py pins them
to. Start reading at `encode_rows_packed`, then the kernel `_encode_packed`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np
from numba import njit

from gocore.nn.features import (
    FIRST_VALUE_KIND,
    PLANE_KINDS,
    Encoder,
    PlaneTable,
    concat_games,
    games_passed,
    get_encoder,
    packed_nbytes,
    plane_table,
    symmetry_ids,
)
from gocore.nn.tactical import VALUE_CAP, VALUE_KINDS, game_values
from gocore.rules import symmetry

# Plane kind codes of `plane_table`, compile-time constants of the kernel.
_OWN, _OPPONENT, _EMPTY, _BLACK_TO_PLAY, _ONES, _PASSED = (
    PLANE_KINDS.index(kind) for kind in ("own", "opponent", "empty", "black_to_play", "ones", "passed"))
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
def _value_bits(values, lut, rows_used, perm, vbits):
    """vbits (C, W) uint64 ← the value planes of one position (values (K, N*N)) under one
    symmetry: point x sets bit perm[x] of plane lut[k, values[k, x]] (if >= 0)."""
    for kk in range(rows_used.shape[0]):
        k = rows_used[kk]
        for x in range(values.shape[1]):
            c = lut[k, values[k, x]]
            if c >= 0:
                q = perm[x]
                vbits[c, q >> 6] |= _ONE << np.uint64(63 - (q & 63))


@njit(cache=True)
def _encode_packed(boards, movers, starts, kinds, lags, values, lut, passed, perms, row_position, row_symmetry,
                   stream, swap):
    """Write every output row into `stream` as one MSB-first bit stream, in output order: row i
    is position row_position[i] under perms[row_symmetry[i]]. The symmetric bit boards of all
    positions are built first; value planes (from `values` (R, K, N*N) through `lut`) are
    scattered per row; rows are then appended plane by plane through one 64-bit accumulator, so
    each output word is stored once, sequentially, whatever the row order."""
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
    rows_used = np.flatnonzero((lut >= 0).sum(axis=1))  # value kinds some plane reads
    vbits = np.zeros((kinds.shape[0], words), dtype=np.uint64)
    acc, filled, out = _ZERO, 0, 0  # bits waiting in acc (at its top), next word of stream
    for i in range(row_position.shape[0]):
        p, j = row_position[i], row_symmetry[i]
        t, own = moves_in[p], 0 if movers[p] == 1 else 1
        if rows_used.shape[0]:
            vbits[:] = _ZERO
            _value_bits(values[p], lut, rows_used, perms[j], vbits)
        for c in range(kinds.shape[0]):
            kind = kinds[c]
            board = p + 1 - lags[c] if t >= lags[c] else 0  # board 0 is empty: before the first move
            for w in range(words):
                n = 64 if w < words - 1 else last_bits
                if kind == _OWN or kind == _OPPONENT:
                    v = bits[j, board, own if kind == _OWN else 1 - own, w]
                elif kind == _EMPTY:
                    v = ones[w] & ~(bits[j, board, 0, w] | bits[j, board, 1, w])
                elif kind == _ONES or (kind == _BLACK_TO_PLAY and own == 0) or (kind == _PASSED and passed[p]):
                    v = ones[w]
                elif kind >= FIRST_VALUE_KIND:
                    v = vbits[c, w]
                else:
                    v = _ZERO
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


def value_lut(table: PlaneTable) -> np.ndarray:
    """(K, VALUE_CAP + 1) int64: the plane a stored value of each value kind sets (-1: none)."""
    lut = np.full((len(VALUE_KINDS), VALUE_CAP + 1), -1, np.int64)
    for c, kind in enumerate(table.kinds):
        if kind >= FIRST_VALUE_KIND:
            lut[kind - FIRST_VALUE_KIND, table.lows[c]:table.highs[c] + 1] = c
    return lut


def encode_rows_packed(stones_list: Sequence[np.ndarray], movers_list: Sequence[np.ndarray],
                       encoder: str | Encoder, positions: np.ndarray, symmetries: np.ndarray) -> np.ndarray:
    """(K, nbytes) uint8: row i is pack_planes of position positions[i] (an index into every
    position of every game, in order) under symmetry symmetries[i], rows in the order asked.

    The ingest asks for its shuffled order directly: rows are written sequentially, never gathered.
    """
    enc = get_encoder(encoder)
    boards, movers, starts, size = concat_games(stones_list, movers_list)
    positions = np.ascontiguousarray(positions, dtype=np.int64).reshape(-1)
    ids = symmetry_ids(symmetries) if len(positions) else np.zeros(0, np.int64)
    if len(ids) != len(positions):
        raise ValueError(f"{len(ids)} row symmetries for {len(positions)} rows")
    if len(positions) and (positions.min() < 0 or positions.max() >= len(movers)):
        raise ValueError(f"row positions must be in 0..{len(movers) - 1}")
    counts = np.bincount(ids, minlength=8)
    used = np.flatnonzero(counts)  # bit boards are built only for the symmetries used
    row_symmetry = (np.cumsum(counts > 0) - 1)[ids]  # (K,) index into used
    perms = np.ascontiguousarray(symmetry.move_table(size)[used, :-1])  # (S, N*N)
    table = plane_table(enc)
    values = game_values(boards, movers, starts, size, enc.value_kinds, enc.reads_ladders,
                         wanted=np.bincount(positions, minlength=len(movers)) > 0)
    if values is None:  # no value planes: the kernel never reads it
        values = np.zeros((1, len(VALUE_KINDS), size * size), np.int8)
    rows, nbytes = len(positions), packed_nbytes(enc.num_planes, size)
    stream = np.empty((rows * nbytes + 7) // 8 + 1, dtype=np.uint64)  # all written; 1 spare word
    _encode_packed(boards, movers, starts, table.kinds, table.lags, values, value_lut(table),
                   games_passed(boards, starts), perms, positions, row_symmetry.astype(np.int64), stream,
                   sys.byteorder == "little")
    return stream.view(np.uint8)[: rows * nbytes].reshape(rows, nbytes)


def encode_games_packed(stones_list: Sequence[np.ndarray], movers_list: Sequence[np.ndarray],
                        encoder: str | Encoder, symmetries: Sequence[int] = (0,)) -> np.ndarray:
    """(R*S, nbytes) uint8, equal to pack_planes(augment(encode_games(...), symmetries)).

    Row r*S + j is position r under symmetries[j]; pair with `augment_moves(moves, symmetries, N)`.
    """
    ids = symmetry_ids(symmetries)
    positions = sum(len(m) for m in movers_list)
    return encode_rows_packed(stones_list, movers_list, encoder,
                              np.repeat(np.arange(positions), len(ids)), np.tile(ids, positions))
