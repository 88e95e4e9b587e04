"""Which rows a stream reads, and in what order: the train/validation split and the shuffle buffer.

The split is by game, never by position: a row belongs to validation when a stable hash of its
game_id (`game_bucket`, the same in every process) is below `val_percent`, so no position of a
validation game is ever trained on. The shuffle buffer holds packed rows (still bit-packed, as
read) and gives batches drawn uniformly from it, in bounded memory.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def game_bucket(game_id: str) -> int:
    """0..99, a stable hash of the game id (the same in every process, unlike hash())."""
    digest = hashlib.blake2b(game_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % 100


def is_validation(game_ids: pa.Array, val_percent: int) -> np.ndarray:
    """(R,) bool: the row's game is in the validation split (bucket < val_percent)."""
    encoded = game_ids if pa.types.is_dictionary(game_ids.type) else pc.dictionary_encode(game_ids)
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    used = np.unique(indices)  # hash each game once per chunk, and only games present
    buckets = np.zeros(len(encoded.dictionary), dtype=np.int64)
    names = encoded.dictionary.take(pa.array(used)).to_pylist()
    buckets[used] = [game_bucket(name) for name in names]
    return buckets[indices] < val_percent


class ShuffleBuffer:
    """Rows (dicts of equal-length numpy columns) wait here to be drawn at random; holds at
    most `capacity` rows."""

    def __init__(self, capacity: int, rng: np.random.Generator):
        self.capacity, self._rng = capacity, rng
        self._columns: dict[str, np.ndarray] = {}
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def add(self, rows: dict[str, np.ndarray]) -> int:
        """Copy in as many leading rows as fit; returns how many."""
        count = min(self.capacity - self._size, len(next(iter(rows.values()))))
        if not self._columns:
            self._columns = {k: np.empty((self.capacity,) + v.shape[1:], v.dtype) for k, v in rows.items()}
        for name, column in self._columns.items():
            column[self._size:self._size + count] = rows[name][:count]
        self._size += count
        return count

    def take(self, count: int) -> dict[str, np.ndarray]:
        """Remove `count` rows drawn uniformly without replacement and return them."""
        picks = self._rng.choice(self._size, size=count, replace=False)
        out = {name: column[picks] for name, column in self._columns.items()}
        # Fill the holes below the new end with the surviving rows above it.
        end = self._size - count
        is_picked = np.zeros(count, dtype=bool)
        is_picked[picks[picks >= end] - end] = True
        holes, survivors = picks[picks < end], end + np.flatnonzero(~is_picked)
        for column in self._columns.values():
            column[holes] = column[survivors]
        self._size = end
        return out
