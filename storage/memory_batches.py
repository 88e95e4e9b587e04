"""Batches held in memory: the training benchmark's no-I/O baseline, and small in-memory data in tests.

`storage.stream.BatchStream` reads Parquet; `InMemoryBatches` slices arrays already loaded (or
collected from a stream) into the same `Batch`es.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from storage.stream import Batch


class InMemoryBatches:
    """Batches sliced from arrays already in memory (the benchmark's no-I/O baseline).

    Rows are shuffled once, at construction; batches are then views, so iterating costs nothing.
    """

    def __init__(self, planes: np.ndarray, move: np.ndarray, value: np.ndarray,
                 pi: np.ndarray | None = None, *, batch_size: int, seed: int = 0,
                 epochs: int | None = None, skip_batches: int = 0):
        order = np.random.default_rng(seed).permutation(len(move))
        self.planes = np.ascontiguousarray(planes[order], dtype=np.float32)  # (R, C, N, N)
        self.move, self.value = move[order].astype(np.int64), value[order].astype(np.float32)
        self.pi = None if pi is None else np.ascontiguousarray(pi[order], dtype=np.float32)
        self.batch_size, self.epochs, self.skip_batches = batch_size, epochs, skip_batches

    @classmethod
    def collect(cls, batches: Iterable[Batch], **options: Any) -> InMemoryBatches:
        """All of `batches` (e.g. one epoch of a BatchStream) held in memory."""
        batches = list(batches)
        pis = [b.pi for b in batches]
        return cls(np.concatenate([b.planes for b in batches]), np.concatenate([b.move for b in batches]),
                   np.concatenate([b.value for b in batches]),
                   None if any(p is None for p in pis) else np.concatenate(pis), **options)

    def __len__(self) -> int:
        return len(self.move)

    def __iter__(self) -> Iterator[Batch]:
        epoch, index, full = 0, 0, len(self.move) // self.batch_size
        if full == 0:
            raise ValueError(f"{len(self.move)} rows do not make one batch of {self.batch_size}")
        while self.epochs is None or epoch < self.epochs:
            for start in range(0, full * self.batch_size, self.batch_size):
                if index >= self.skip_batches:
                    yield self._batch(slice(start, start + self.batch_size))
                index += 1
            epoch += 1

    def _batch(self, rows: slice) -> Batch:
        return Batch(self.planes[rows], self.move[rows], self.value[rows],
                     None if self.pi is None else self.pi[rows], np.zeros(rows.stop - rows.start, np.int8))
