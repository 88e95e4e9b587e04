"""The 8 dihedral symmetries of the board, as ints 0..7, for planes and for moves.

Symmetry ``k`` of an (N, N) array ``a`` is ``numpy.rot90(a, k % 4)``, followed by
``numpy.fliplr`` when ``k >= 4``: 0 is the identity, 1..3 rotate by 90/180/270 degrees
counter-clockwise, 4..7 are the four reflections. A move goes where its point goes; pass
(``N*N``) is fixed.

Two index tables make the symmetries cheap on flattened planes (row-major points):

- ``gather_index(k, N)``: ``planes_flat[..., gather_index(k, N)]`` equals ``apply(planes, k)``
  flattened (output point i reads input point ``gather[i]``);
- ``move_permutation(k, N)``: ``perm[move]`` is the symmetric move (the inverse mapping: input
  point p lands at output point ``perm[p]``), with ``perm[N*N] == N*N``.

Tables are cached per (k, size) and read-only.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

SYMMETRIES = tuple(range(8))
IDENTITY = 0
# Rotations invert to the opposite rotation; the reflections (4..7) are their own inverses.
INVERSE = (0, 3, 2, 1, 4, 5, 6, 7)


def _check(k: int) -> None:
    if k not in SYMMETRIES:
        raise ValueError(f"symmetry must be an int in 0..7, not {k!r}")


def apply(planes: np.ndarray, k: int) -> np.ndarray:
    """Symmetry k of an array shaped (..., N, N): rotate/flip the last two axes (a view)."""
    _check(k)
    out = np.rot90(planes, k % 4, axes=(-2, -1))
    return np.flip(out, axis=-1) if k >= 4 else out


def inverse(k: int) -> int:
    """The symmetry that undoes k: ``apply(apply(a, k), inverse(k))`` equals a."""
    _check(k)
    return INVERSE[k]


@lru_cache(maxsize=None)
def compose_table() -> np.ndarray:
    """(8, 8) int: ``apply(apply(a, i), j) == apply(a, table[i, j])`` (i first, then j)."""
    generic = np.arange(9).reshape(3, 3)  # distinct values, so every symmetry gives a distinct array
    images = [apply(generic, k) for k in SYMMETRIES]
    table = np.empty((8, 8), dtype=np.int64)
    for i in SYMMETRIES:
        for j in SYMMETRIES:
            both = apply(images[i], j)
            table[i, j] = next(k for k in SYMMETRIES if np.array_equal(images[k], both))
    table.flags.writeable = False
    return table


def compose(first: int, then: int) -> int:
    """The single symmetry equal to applying `first`, then `then`."""
    _check(first)
    _check(then)
    return int(compose_table()[first, then])


@lru_cache(maxsize=None)
def gather_index(k: int, size: int) -> np.ndarray:
    """(N*N,) int64: ``planes_flat[..., index]`` is ``apply(planes, k)`` flattened; read-only."""
    _check(k)
    points = np.arange(size * size, dtype=np.int64).reshape(size, size)
    index = np.ascontiguousarray(apply(points, k)).reshape(-1)
    index.flags.writeable = False
    return index


point_permutation = gather_index  # the name the issue uses for the same table


@lru_cache(maxsize=None)
def move_permutation(k: int, size: int) -> np.ndarray:
    """(N*N+1,) int64: ``perm[move]`` is the symmetric move; pass maps to itself; read-only."""
    gather = gather_index(k, size)
    perm = np.empty(size * size + 1, dtype=np.int64)
    perm[gather] = np.arange(size * size)  # input point gather[i] lands at output point i
    perm[size * size] = size * size
    perm.flags.writeable = False
    return perm


def apply_to_move(move: int, k: int, size: int) -> int:
    """The move symmetric to `move` under k (pass stays pass)."""
    if not 0 <= move <= size * size:
        raise ValueError(f"move {move} is outside 0..{size * size} for a {size}x{size} board")
    return int(move_permutation(k, size)[move])


@lru_cache(maxsize=None)
def gather_table(size: int) -> np.ndarray:
    """(8, N*N) int64: row k is `gather_index(k, size)`, for per-row symmetries; read-only."""
    table = np.stack([gather_index(k, size) for k in SYMMETRIES])
    table.flags.writeable = False
    return table


@lru_cache(maxsize=None)
def move_table(size: int) -> np.ndarray:
    """(8, N*N+1) int64: row k is `move_permutation(k, size)`; read-only."""
    table = np.stack([move_permutation(k, size) for k in SYMMETRIES])
    table.flags.writeable = False
    return table
