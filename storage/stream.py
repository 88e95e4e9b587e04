"""Streaming Parquet datasets (SGF rows or self-play rows) into training batches, in bounded memory.

Start at `BatchStream`. It reads the shards a dataset's manifest lists (or an explicit list of
shard files, e.g. several self-play generations), one row group at a time, several shards
interleaved, through a shuffle buffer, and yields `Batch`es of numpy arrays ready for torch:

    shards ─ row groups in a per-epoch shuffled order, `interleave` of them read round-robin
           ─ rows of the wrong split dropped (validation = a hash of game_id, never by position)
           ─ `storage.shuffle.ShuffleBuffer` (at most `shuffle_buffer` rows, still bit-packed)
           ─ batch: `RowDecoder` unpacks bits, optional random symmetry → float32 → prefetch queue
             (with `aux_targets`, ownership and score targets too, masked where absent); with
             `workers`, raw uint8 batches, symmetry left to the device, unpacked here or by worker
             processes (`storage.stream_workers`, `gocore.nn.batch_device`), same rows in the same order

Memory: the buffer's rows (packed: 173 bytes per agz17 9x9 row), the `interleave` row groups
being read, and `prefetch` decoded batches; never the dataset. Everything is a function of
`seed`: row-group order per epoch, buffer draws, per-batch symmetries, so `skip_batches=k`
positions a new stream exactly where an earlier one was after k batches (it replays the
reading and drawing without decoding planes): that is how a resumed training run gets the
batches an uninterrupted one would have.

storage knows bytes, not Go: the bits → planes step, the plane and move symmetries and
their width come from a `RowDecoder` the caller passes (tasks.app.rows.ROW_DECODER), as
`storage.registry.load(build=...)` takes its net builder: once per batch, never per row.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow.parquet as pq

from storage.datasets import DatasetError, shard_paths
from storage.schemas import PI_DTYPE
from storage.shuffle import ShuffleBuffer, is_validation
from storage.stream_columns import Shard, aux_chunk, fixed_width_rows, open_shard, selfplay_value
from storage.stream_workers import decode_raw, open_pool, pi_from_bytes

SPLITS = ("train", "val")
DEFAULT_SHUFFLE_BUFFER = 32_768  # rows; ~5.7 MB packed for agz17 9x9, ~25 MB for 19x19


class RowDecoder(Protocol):
    """The Go side of reading rows (packed planes, symmetries), injected by the caller."""

    def row_bytes(self, encoder: str, size: int) -> int:
        """Bytes of one row's packed planes for this encoder and board size N."""
        ...

    def unpack(self, packed: np.ndarray, encoder: str, size: int) -> np.ndarray:
        """(B, nbytes) uint8 packed planes → (B, C, N, N) planes of 0/1."""
        ...

    def transform(self, planes: np.ndarray, move: np.ndarray, pi: np.ndarray | None, symmetries: np.ndarray,
                  size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Row r's planes (B, C, N, N), move (B,) and pi (B, N*N+1) moved by symmetry symmetries[r]."""
        ...

    def transform_points(self, values: np.ndarray, symmetries: np.ndarray, size: int) -> np.ndarray:
        """Row r's per-point values (B, N*N) (ownership) moved like its planes by symmetries[r]."""
        ...


# ---------------------------------------------------------------- batches
@dataclass(frozen=True)
class Batch:
    """One batch as numpy arrays; row i of every field is the same sample."""

    planes: np.ndarray  # (B, C, N, N) float32 0/1
    move: np.ndarray  # (B,) int64: the expert move (SGF) or the most visited (self-play); pass = N*N
    value: np.ndarray  # (B,) float32 z: +1 the side to move won, -1 lost, 0 jigo/unknown
    pi: np.ndarray | None  # (B, N*N+1) float32 search distribution; None for SGF data
    symmetry: np.ndarray  # (B,) int8 symmetry applied at read time (0 without random_symmetry), or still to apply
    game_id: np.ndarray | None = None  # (B,) str, only with ids=True
    move_number: np.ndarray | None = None  # (B,) int64, only with ids=True
    ownership: np.ndarray | None = None  # (B, N*N) float32 final owner, side to move's view; aux_targets only
    score: np.ndarray | None = None  # (B,) float32 final lead of the side to move in points (0 if unknown)
    aux_mask: np.ndarray | None = None  # (B,) float32 1 where the row has ownership and score targets
    # True for a raw batch (`workers` >= 1, `storage.stream_workers`): planes (B, C, N, N) uint8,
    # move, pi and ownership (int8) still in the stored frame, value int8; the consumer applies
    # `symmetry` and converts (gocore.nn.batch_device.batch_tensors does, on the device).
    symmetry_pending: bool = False

    def __len__(self) -> int:
        return len(self.move)


class BatchStream:
    """Batches from Parquet shards: interleaved, split by game, shuffled, prefetched; iterable."""

    def __init__(self, source: Path | Sequence[Path], batch_size: int, *, decoder: RowDecoder, split: str = "train",
                 val_percent: int = 5, shuffle_buffer: int = DEFAULT_SHUFFLE_BUFFER, seed: int = 0,
                 random_symmetry: bool = False, prefetch: int = 2, epochs: int | None = None,
                 skip_batches: int = 0, interleave: int = 4, read_rows: int = 1024,
                 drop_last: bool = False, ids: bool = False, aux_targets: bool = False, workers: int = 0,
                 value_mix: float = 0.0):
        """source: a dataset directory (its manifest's shards) or shard files; epochs None = endless;
        decoder: the Go side of rows (tasks.app.rows.ROW_DECODER); aux_targets: batches carry
        ownership, score and aux_mask (rows without targets, and older shards', masked out);
        value_mix: a self-play row's value target is (1 - value_mix) * z + value_mix * q, q its
        search's root value (z alone where a row or an older shard has no q);
        workers: 0 = decode here (numpy symmetry, float32); 1 = raw batches (uint8, symmetry left to the
        consumer's device) decoded here; n >= 2 = raw batches decoded by n processes (`stream_workers`)."""
        if (split not in SPLITS or not 0 <= val_percent <= 100 or batch_size < 1 or prefetch < 0 or workers < 0
                or not 0 <= value_mix <= 1):
            raise ValueError(f"bad stream settings: split={split!r} val_percent={val_percent} "
                             f"batch_size={batch_size} prefetch={prefetch} workers={workers} value_mix={value_mix}")
        paths = shard_paths(Path(source)) if isinstance(source, (str, Path)) else [Path(p) for p in source]
        self.shards = [s for s in map(open_shard, paths) if s is not None]
        if len({(s.encoder, s.size, s.is_selfplay) for s in self.shards}) > 1:
            raise DatasetError(f"shards of {source} mix encoders, board sizes or row kinds")
        self.batch_size, self.split, self.val_percent, self.seed = batch_size, split, val_percent, seed
        self.capacity = max(shuffle_buffer, batch_size)  # a batch is drawn from a full buffer
        self.random_symmetry, self.prefetch, self.epochs = random_symmetry, prefetch, epochs
        self.skip_batches, self.interleave, self.read_rows = skip_batches, interleave, read_rows
        self.drop_last, self.ids, self.decoder = drop_last, ids, decoder
        self.aux_targets, self.workers, self.value_mix = aux_targets, workers, value_mix
        self.peak_buffered_rows = 0  # the most rows the shuffle buffer held (memory check)

    @property
    def is_selfplay(self) -> bool:
        """Rows carry a search distribution pi (self-play) rather than an expert move."""
        return bool(self.shards) and self.shards[0].is_selfplay

    def __iter__(self) -> Iterator[Batch]:
        if self.workers > 1:
            return self._decoded_by_pool()
        if self.prefetch == 0:
            return self._batches()
        return self._prefetched()

    # ------------------------------------------------------------ reading
    def _units(self) -> list[tuple[Shard, int]]:
        return [(s, g) for s in self.shards for g in range(s.metadata.num_row_groups)]

    def _chunks(self) -> Iterator[dict[str, np.ndarray]]:
        """Row chunks of this split, epoch after epoch, row groups in a seeded order."""
        units, epoch = self._units(), 0
        while self.epochs is None or epoch < self.epochs:
            order = np.random.default_rng([self.seed, 1, epoch]).permutation(len(units))
            rows = 0
            for chunk in self._interleaved([units[i] for i in order]):
                rows += len(chunk["planes"])
                yield chunk
            if rows == 0 and self.epochs is None:
                raise DatasetError(f"no {self.split} rows in {len(self.shards)} shard(s) "
                                   f"(val_percent={self.val_percent})")
            epoch += 1

    def _interleaved(self, units: list[tuple[Shard, int]]) -> Iterator[dict[str, np.ndarray]]:
        """Round-robin over `interleave` open row groups; a finished one is replaced by the next."""
        pending = iter(units)
        active = [self._read_unit(*u) for u in (next(pending, None) for _ in range(self.interleave)) if u]
        turn = 0
        while active:
            turn %= len(active)
            chunk = next(active[turn], None)
            if chunk is not None:
                yield chunk
                turn += 1
                continue
            unit = next(pending, None)
            if unit is None:
                del active[turn]
            else:
                active[turn] = self._read_unit(*unit)

    def _read_unit(self, shard: Shard, row_group: int) -> Iterator[dict[str, np.ndarray]]:
        """Chunks of `read_rows` rows of one row group, this split's rows only."""
        file = pq.ParquetFile(shard.path, metadata=shard.metadata, read_dictionary=["game_id"])
        targets = ["pi", "z"] if shard.is_selfplay else ["move", "value"]
        targets += ["q"] if shard.is_selfplay and self.value_mix and shard.has_q else []
        columns = ["planes", "game_id", *targets] + (["move_number"] if self.ids else [])
        columns += ["ownership", "score"] if self.aux_targets and shard.has_aux else []
        width = self.decoder.row_bytes(shard.encoder, shard.size)
        for record in file.iter_batches(self.read_rows, row_groups=[row_group], columns=columns,
                                        use_threads=False):
            keep = is_validation(record.column("game_id"), self.val_percent) == (self.split == "val")
            if not keep.any():
                continue
            chunk = {"planes": fixed_width_rows(record.column("planes"), width)}
            if shard.is_selfplay:
                chunk["pi"] = fixed_width_rows(record.column("pi"), PI_DTYPE.itemsize * (shard.size ** 2 + 1))
                chunk["value"] = selfplay_value(record, self.value_mix, shard.has_q)
            else:
                chunk["move"] = record.column("move").to_numpy().astype(np.int64)
                chunk["value"] = record.column("value").to_numpy()
            if self.aux_targets:
                chunk.update(aux_chunk(record, shard))
            if self.ids:
                chunk["game_id"] = np.asarray(record.column("game_id").to_pylist(), dtype=object)
                chunk["move_number"] = record.column("move_number").to_numpy().astype(np.int64)
            yield {name: column[keep] for name, column in chunk.items()}

    # ------------------------------------------------------------ batching
    def _row_batches(self) -> Iterator[dict[str, np.ndarray]]:
        """Packed rows, `batch_size` at a time, drawn from the shuffle buffer."""
        buffer = ShuffleBuffer(self.capacity, np.random.default_rng([self.seed, 0]))
        for chunk in self._chunks():
            start, rows = 0, len(chunk["planes"])
            while start < rows:
                start += buffer.add({name: column[start:] for name, column in chunk.items()})
                self.peak_buffered_rows = max(self.peak_buffered_rows, len(buffer))
                if len(buffer) == self.capacity:
                    yield buffer.take(self.batch_size)
        while len(buffer) >= self.batch_size or (len(buffer) and not self.drop_last):
            yield buffer.take(min(self.batch_size, len(buffer)))

    def _batches(self, stop: threading.Event | None = None,
                 pool: ProcessPoolExecutor | None = None) -> Iterator[Batch | Future]:
        """Decoded batches after the first `skip_batches` (those are drawn but not decoded); with
        `workers`, raw ones, and with a `pool` futures of raw ones, in the same order."""
        shard = self.shards[0] if self.shards else None
        for index, rows in enumerate(self._row_batches()):
            if stop is not None and stop.is_set():
                return
            if index < self.skip_batches:
                continue
            if not self.workers:
                yield self._decode(rows, index)
                continue
            job = (self.decoder, shard.encoder, shard.size, shard.is_selfplay, self.aux_targets, rows,
                   self._symmetries(index, len(rows["planes"])))
            yield pool.submit(decode_raw, *job) if pool else Batch(**decode_raw(*job), symmetry_pending=True)

    def _symmetries(self, index: int, rows: int) -> np.ndarray:
        """(rows,) int64: batch `index`'s random symmetries, zeros without random_symmetry."""
        if not self.random_symmetry:
            return np.zeros(rows, dtype=np.int64)
        # Seeded by batch index, not drawn in sequence, so skipped batches cost no draws.
        return np.random.default_rng([self.seed, 2, index]).integers(0, 8, rows)

    def _decode(self, rows: dict[str, np.ndarray], index: int) -> Batch:
        """Unpack bits to float32 planes; apply this batch's random symmetries if asked."""
        shard = self.shards[0]
        planes = self.decoder.unpack(rows["planes"], shard.encoder, shard.size)  # (B, C, N, N)
        pi = pi_from_bytes(rows["pi"]) if shard.is_selfplay else None  # (B, N*N+1)
        move = pi.argmax(axis=1) if pi is not None else rows["move"]  # (B,)
        symmetries = self._symmetries(index, len(move))
        if self.random_symmetry:
            planes, move, pi = self.decoder.transform(planes, move, pi, symmetries, shard.size)
        aux = {}
        if self.aux_targets:
            ownership = rows["ownership"].view(np.int8)  # (B, N*N)
            if self.random_symmetry:
                ownership = self.decoder.transform_points(ownership, symmetries, shard.size)
            known = ~np.isnan(rows["score"])  # (B,)
            aux = {"ownership": ownership.astype(np.float32), "score": np.where(known, rows["score"], 0),
                   "aux_mask": known.astype(np.float32)}
        return Batch(planes=planes.astype(np.float32), move=np.asarray(move, np.int64),
                     value=rows["value"].astype(np.float32), pi=pi, symmetry=symmetries.astype(np.int8),
                     game_id=rows.get("game_id"), move_number=rows.get("move_number"), **aux)

    def _decoded_by_pool(self) -> Iterator[Batch]:
        """Raw batches decoded by `workers` processes, drawn by the prefetch thread as always."""
        pool = open_pool(self.workers)
        try:
            yield from self._prefetched(pool)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _prefetched(self, pool: ProcessPoolExecutor | None = None) -> Iterator[Batch]:
        """`_batches` made by a background thread, at most `prefetch` batches ahead (with a pool,
        `prefetch` + `workers` batches in flight, so that every worker has one)."""
        ready: queue.Queue = queue.Queue(maxsize=self.prefetch + (self.workers if pool is not None else 0))
        stop = threading.Event()
        thread = threading.Thread(target=self._fill, args=(ready, stop, pool), daemon=True, name="batch-stream")
        thread.start()
        try:
            while (item := ready.get()) is not _END:
                if isinstance(item, BaseException):
                    raise item
                yield Batch(**item.result(), symmetry_pending=True) if isinstance(item, Future) else item
        finally:
            stop.set()
            while thread.is_alive():  # unblock a producer waiting on a full queue
                try:
                    ready.get(timeout=0.05)
                except queue.Empty:
                    pass

    def _fill(self, ready: queue.Queue, stop: threading.Event, pool: ProcessPoolExecutor | None = None) -> None:
        try:
            for batch in self._batches(stop, pool):
                if not _put(ready, batch, stop):
                    return
            _put(ready, _END, stop)
        except BaseException as error:  # handed to the consumer, raised there
            _put(ready, error, stop)


_END = object()


def _put(ready: queue.Queue, item: Any, stop: threading.Event) -> bool:
    """Put `item`, waiting while the queue is full; False if the consumer has gone."""
    while not stop.is_set():
        try:
            ready.put(item, timeout=0.05)
            return True
        except queue.Full:
            continue
    return False


@dataclass(frozen=True)
class StreamFactory:
    """Makes the streams a training run needs: `factory(split, skip_batches)`.

    The train stream is endless and randomly augmented if asked; the validation stream is one
    pass without augmentation and a small buffer (val rows are a few percent of what is read).
    """

    source: Path | tuple[Path, ...]  # dataset directory or shard files
    batch_size: int  # rows per batch
    decoder: RowDecoder  # the Go side of rows: unpacking, symmetries (tasks.app.rows.ROW_DECODER)
    val_percent: int = 5  # percent of games (by game_id hash) held out for validation
    shuffle_buffer: int = DEFAULT_SHUFFLE_BUFFER  # rows in the train shuffle buffer
    seed: int = 0  # data order and augmentation seed
    random_symmetry: bool = False  # random dihedral symmetry per train row (un-augmented data)
    prefetch: int = 2  # batches decoded ahead by a background thread
    aux_targets: bool = False  # batches carry ownership, score and aux_mask (nets with aux heads)
    loader_workers: int = 0  # 0: decode here; 1: raw batches (symmetry on the device); n >= 2: n decoding processes
    value_mix: float = 0.0  # train rows of self-play: value target (1 - m) * z + m * q (validation keeps z)

    def __call__(self, split: str, skip_batches: int = 0) -> BatchStream:
        is_train = split == "train"
        return BatchStream(self.source, self.batch_size, decoder=self.decoder, split=split,
                           val_percent=self.val_percent,
                           shuffle_buffer=self.shuffle_buffer if is_train else 4 * self.batch_size,
                           seed=self.seed, random_symmetry=self.random_symmetry and is_train,
                           prefetch=self.prefetch, epochs=None if is_train else 1,
                           skip_batches=skip_batches, aux_targets=self.aux_targets,
                           workers=self.loader_workers if is_train else 0,
                           value_mix=self.value_mix if is_train else 0.0)
