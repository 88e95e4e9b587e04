"""Training batches from two row sources at once: the zero loop's self-play window with a fixed
share of expert rows in every train batch (`MixedStreamFactory`), joined row-wise (`join_batches`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from storage.stream import Batch, BatchStream, StreamFactory


@dataclass(frozen=True)
class MixedStreamFactory:
    """Train batches with a fixed number of rows from a second source (the zero loop's expert rows
    beside its self-play window); validation is the first source's alone, so its metrics mean what
    they meant without the mix. Both streams skip the same batches on resume, so a resumed run
    gets the batches an uninterrupted one would have."""

    first: StreamFactory  # e.g. self-play rows, batch_size = its rows per batch
    second: StreamFactory  # e.g. expert rows, batch_size = its rows per batch

    def __call__(self, split: str, skip_batches: int = 0) -> Iterator[Batch]:
        if split != "train":
            return iter(self.first(split, skip_batches))
        return _mixed(self.first(split, skip_batches), self.second(split, skip_batches))


def _mixed(first: BatchStream, second: BatchStream) -> Iterator[Batch]:
    """One batch of each stream, joined; endless like both."""
    for a, b in zip(first, second):
        yield join_batches(a, b)


def join_batches(a: Batch, b: Batch) -> Batch:
    """Rows of `a` then `b` as one batch; a side without search distributions (expert rows) gets
    one-hot ones on its move, and auxiliary targets are joined when both carry them. Raw batches
    (`symmetry_pending`) join raw ones: a one-hot pi on a stored-frame move moves with its row."""
    moves = a.pi.shape[1] if a.pi is not None else b.pi.shape[1] if b.pi is not None else None

    def pi_of(batch: Batch) -> np.ndarray | None:
        if moves is None or batch.pi is not None:
            return batch.pi
        one_hot = np.zeros((len(batch), moves), np.float32)  # (B, N*N+1)
        one_hot[np.arange(len(batch)), batch.move] = 1.0
        return one_hot

    def joined(name: str) -> np.ndarray | None:
        left, right = getattr(a, name), getattr(b, name)
        return None if left is None or right is None else np.concatenate([left, right])

    if a.symmetry_pending != b.symmetry_pending:
        raise ValueError("cannot join a raw batch (symmetry pending) with a decoded one")
    pis = [pi_of(a), pi_of(b)]
    return Batch(planes=np.concatenate([a.planes, b.planes]), move=np.concatenate([a.move, b.move]),
                 value=np.concatenate([a.value, b.value]), pi=None if pis[0] is None else np.concatenate(pis),
                 symmetry=np.concatenate([a.symmetry, b.symmetry]), symmetry_pending=a.symmetry_pending,
                 **{name: joined(name) for name in ("game_id", "move_number", "ownership", "score", "aux_mask")})
