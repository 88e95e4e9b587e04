"""The shards `storage.stream` reads and how it reads their columns: binary columns as fixed-width
uint8 rows, the search distribution, the auxiliary targets and the self-play value target (z, or z
mixed with the root's searched value q)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from storage.datasets import DatasetError
from storage.stream_workers import pi_from_bytes


# ---------------------------------------------------------------- reading binary columns
def decode_pi(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """(R, N*N+1) float32 from an `encode_pi` column; rows renormalised to sum 1."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    width = pc.binary_length(column)[0].as_py() if len(column) else 0
    return pi_from_bytes(fixed_width_rows(column, width))


def fixed_width_rows(array: pa.Array, width: int) -> np.ndarray:
    """(R, width) uint8 view of a binary column whose every value has `width` bytes."""
    if array.null_count:
        raise DatasetError("a binary column (planes or pi) has null values")
    if len(array) == 0:
        return np.zeros((0, width), np.uint8)
    offset_type = np.int64 if pa.types.is_large_binary(array.type) else np.int32
    _, offset_buffer, data = array.buffers()
    first = array.offset * np.dtype(offset_type).itemsize
    offsets = np.frombuffer(offset_buffer, offset_type, len(array) + 1, first)  # (R+1,)
    if np.any(np.diff(offsets) != width):
        raise DatasetError(f"binary rows are not all {width} bytes long (wrong encoder or board size?)")
    start = int(offsets[0])
    return np.frombuffer(data, np.uint8, len(array) * width, start).reshape(len(array), width)


def aux_chunk(record: pa.RecordBatch, shard: Shard) -> dict[str, np.ndarray]:
    """ownership (R, N*N) uint8 bytes of int8 (0 where null) and score (R,) float32 (NaN where null)."""
    points = shard.size ** 2
    if not shard.has_aux:
        return {"ownership": np.zeros((record.num_rows, points), np.uint8),
                "score": np.full(record.num_rows, np.nan, np.float32)}
    ownership = pc.fill_null(record.column("ownership"), pa.scalar(bytes(points), pa.binary()))
    score = record.column("score").to_numpy(zero_copy_only=False).astype(np.float32)  # nulls -> NaN
    return {"ownership": fixed_width_rows(ownership, points), "score": score}


@dataclass(frozen=True)
class Shard:
    """One Parquet file to read: its metadata, row kind, encoder and board size."""

    path: Path
    metadata: pq.FileMetaData
    is_selfplay: bool
    encoder: str
    size: int
    has_aux: bool  # rows with the ownership and score columns (older shards lack them)
    has_q: bool = False  # self-play rows with the root's searched value (older shards lack it)


def selfplay_value(record: pa.RecordBatch, value_mix: float, has_q: bool) -> np.ndarray:
    """(R,) value targets of self-play rows: z (int8) without a mix; with one, float32 for every
    shard (the shuffle buffer keeps one dtype): (1 - value_mix) * z + value_mix * q where q, the
    root's searched value, is known, z where it is null or the shard has no q."""
    z = record.column("z").to_numpy()
    if not value_mix:
        return z
    if not has_q:
        return z.astype(np.float32)
    q = pc.fill_null(record.column("q"), np.nan).to_numpy(zero_copy_only=False).astype(np.float32)
    return np.where(np.isnan(q), z, (1 - value_mix) * z + value_mix * q).astype(np.float32)


def open_shard(path: Path) -> Shard | None:
    """The shard's facts from its footer and first row; None if it has no rows."""
    file = pq.ParquetFile(path)
    names = set(file.schema_arrow.names)
    is_selfplay = "pi" in names
    needed = {"planes", "game_id", "encoder", "size"} | ({"pi", "z"} if is_selfplay else {"move", "value"})
    if needed - names:
        raise DatasetError(f"{path}: missing columns {sorted(needed - names)}")
    if file.metadata.num_rows == 0:
        return None
    first = file.read_row_group(0, columns=["encoder", "size"]).slice(0, 1).to_pylist()[0]
    return Shard(path, file.metadata, is_selfplay, first["encoder"], int(first["size"]),
                  {"ownership", "score"} <= names, "q" in names)
