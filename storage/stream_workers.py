"""Decoding a stream's batches in worker processes: packed rows in, raw batches (uint8 planes,
integer targets, the symmetry still to apply) out, in the order the rows were drawn.

`storage.stream.BatchStream(workers=n)`, n >= 2, keeps reading Parquet and drawing from its shuffle buffer
in its own (prefetch) thread, exactly as with `workers=0`, and hands each drawn batch of packed
rows to `decode_raw` in a process pool; the futures queue in draw order, so the batches come out
in the same order whatever the worker count, and `skip_batches` skips the same draws. What a
worker does is the part that grows with rows: unpacking bits, float16 pi to float32, the argmax
move. The symmetry and the float conversion of planes are the consumer's, on its device
(`gocore.nn.batch_device`), which is why the batch ships uint8: a quarter of float32's bytes
through the pipe and into pinned memory. (`workers=1` calls `decode_raw` in the prefetch thread.)

On the loaded 2-core machine of `benchmarks/loader.py` the hand-off costs more than it saves:
unpacking a batch is ~0.1 ms for 9x9, and each pool round trip took 6-14 ms; the reading and the
shuffle buffer, which stay in the prefetch thread, are most of the remaining cost.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from storage.schemas import PI_DTYPE

START_METHOD = "spawn"
"""Not fork: the parent has threads (prefetch, torch) a fork would copy mid-state. Not the fork
server either: there is one per process, its first starter fixes what it preloads for good, and
it is the task pools' (`flows.runtime._forked`: torch, Prefect, numba preloaded); a loader that
started it first left every later pool's workers importing those themselves (issue #39). These
workers need only numpy and this module, and start once per training run."""


def pi_from_bytes(rows: np.ndarray) -> np.ndarray:
    """(R, 2M) uint8 rows of float16 → (R, M) float32, each nonzero row summing to 1."""
    pi = np.ascontiguousarray(rows).view(PI_DTYPE).astype(np.float32)  # (R, M)
    total = pi.sum(axis=1, keepdims=True)
    return np.divide(pi, total, out=pi, where=total > 0)


def decode_raw(decoder: Any, encoder: str, size: int, is_selfplay: bool, aux_targets: bool,
               rows: dict[str, np.ndarray], symmetries: np.ndarray) -> dict[str, Any]:
    """The fields of a raw `Batch` from one drawn batch of packed rows (runs in a worker).

    decoder: a picklable `storage.stream.RowDecoder`; symmetries (B,): each row's symmetry, not
    applied here."""
    planes = decoder.unpack(rows["planes"], encoder, size)  # (B, C, N, N) uint8 0/1
    pi = pi_from_bytes(rows["pi"]) if is_selfplay else None  # (B, N*N+1) float32
    move = pi.argmax(axis=1) if pi is not None else rows["move"]  # (B,)
    fields: dict[str, Any] = {"planes": np.ascontiguousarray(planes, np.uint8), "move": np.asarray(move, np.int64),
                              "value": rows["value"], "pi": pi, "symmetry": symmetries.astype(np.int8),
                              "game_id": rows.get("game_id"), "move_number": rows.get("move_number")}
    if aux_targets:
        known = ~np.isnan(rows["score"])  # (B,)
        fields.update(ownership=rows["ownership"].view(np.int8), score=np.where(known, rows["score"], 0),
                      aux_mask=known.astype(np.float32))
    return fields


def open_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of `workers` decoding processes (started lazily, on the first batch)."""
    if workers < 1:
        raise ValueError(f"a decoding pool needs at least 1 worker, not {workers}")
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(START_METHOD))
