"""Baghchal's training batches: self-play rows (numpy columns) -> the batches `training.train` reads.

Rows come as `storage.baghchal.ROWS_SCHEMA` columns (states, pi, z), every position already in its
8 symmetries. `RowStreams` splits them by game (a game's rows, all its symmetries, on one side)
into a train part, drawn in seeded shuffled passes without end, and a validation part read once;
``factory(split, skip_batches)`` is `training.StreamFactory`: the same seed yields the same batches,
so a resumed run skips exactly the batches it already took.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from gocore.nn.baghchal_planes import States, encode_states


@dataclass(frozen=True)
class Batch:
    """One batch as `training.BatchLike` reads it."""

    planes: np.ndarray  # (B, 5, 5, 5) float32
    move: np.ndarray  # (B,) int64: the most visited action (top-1 accuracy)
    value: np.ndarray  # (B,) float32 z for the side to move
    pi: np.ndarray  # (B, A) float32


def is_validation_game(game_id: str, fraction: float) -> bool:
    """Whether a game's rows are held out (a stable hash of its id: the same split every run)."""
    digest = int.from_bytes(hashlib.sha1(game_id.encode()).digest()[:4], "big")
    return digest < fraction * 2 ** 32


class RowStreams:
    """Train and validation batches of `batch_size` rows from self-play row columns."""

    def __init__(self, columns: Mapping[str, np.ndarray], batch_size: int, seed: int = 0,
                 val_fraction: float = 0.05):
        self.columns, self.batch_size, self.seed = columns, batch_size, seed
        held = np.array([is_validation_game(str(g), val_fraction) for g in columns["game_id"]], bool)
        self.train_rows, self.val_rows = np.flatnonzero(~held), np.flatnonzero(held)
        if len(self.train_rows) < batch_size:
            raise ValueError(f"{len(self.train_rows)} training rows, fewer than a batch of {batch_size}")

    def __call__(self, split: str, skip_batches: int = 0) -> Iterator[Batch]:
        """`training.StreamFactory`: 'train' (endless) or 'val' (one pass)."""
        if split == "val":
            return (self.batch(self.val_rows[start:start + self.batch_size])
                    for start in range(0, len(self.val_rows), self.batch_size))
        return self._train(skip_batches)

    def _train(self, skip_batches: int) -> Iterator[Batch]:
        rng = np.random.default_rng(self.seed)
        per_pass = len(self.train_rows) // self.batch_size
        taken = 0
        while True:
            order = rng.permutation(self.train_rows)
            for start in range(0, per_pass * self.batch_size, self.batch_size):
                taken += 1
                if taken > skip_batches:
                    yield self.batch(order[start:start + self.batch_size])

    def batch(self, rows: np.ndarray) -> Batch:
        """The batch of these row indices."""
        columns = self.columns
        states = States(columns["goats"][rows], columns["tigers"][rows], columns["placed"][rows],
                        columns["to_play"][rows])
        pi = columns["pi"][rows].astype(np.float32)  # (B, A)
        pi /= np.maximum(pi.sum(axis=1, keepdims=True), 1e-12)  # float16 storage: sums drift a little
        return Batch(encode_states(states), pi.argmax(axis=1).astype(np.int64),
                     columns["z"][rows].astype(np.float32), pi)
