"""Encoded SGF datasets on disk: the Parquet schema, shard and quarantine writers, the manifest.

A dataset directory holds ``shard-*.parquet`` (training rows), ``quarantine.parquet`` (every
refused game with its reason) and ``manifest.json``, written last: readers trust only the shards
the manifest lists, so a crash mid-way never exposes a partial dataset. Per-shard progress lives
in ``.work/`` (one stats file per shard, with its refusals) so a rerun skips finished shards.

Row schema (one row per position per symmetry):

============  ========  ===============================================================
column        type      meaning
============  ========  ===============================================================
encoder       string    feature encoder name (``agz17``, ``oneplane``)
size          int8      board size N
planes        binary    ``numpy.packbits`` of the uint8 planes (C, N, N), C order, big-endian bits
move          int16     move played, in this row's symmetry frame (pass = N*N)
value         int8      +1 the side to move won, -1 lost, 0 jigo or unknown
game_id       string    stable hash of size + komi-free setup + moves (16 hex digits)
move_number   int16     0-based index of the move in the game
symmetry      int8      dihedral symmetry 0..7 applied (0 = identity)
komi          float32   komi of the game
source        string    ``<file relative to the raw dir>#<game index in the file>``
============  ========  ===============================================================
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from gocore.errors import GozeroError
from storage.atomic import WritebackFile, atomic_path, remove_stale_temps, write_json

MANIFEST = "manifest.json"
QUARANTINE = "quarantine.parquet"
WORK_DIR = ".work"
_UNIQUE_COLUMNS = ("planes", "pi", "detail")  # all values differ: a dictionary would be wasted work
_NO_STATISTICS = _UNIQUE_COLUMNS + ("game_id", "source")  # min/max of these would never prune a read

ROW_SCHEMA = pa.schema([
    ("encoder", pa.string()),
    ("size", pa.int8()),
    ("planes", pa.binary()),
    ("move", pa.int16()),
    ("value", pa.int8()),
    ("game_id", pa.string()),
    ("move_number", pa.int16()),
    ("symmetry", pa.int8()),
    ("komi", pa.float32()),
    ("source", pa.string()),
])

QUARANTINE_SCHEMA = pa.schema([
    ("file", pa.string()),
    ("game_index", pa.int32()),
    ("reason", pa.string()),
    ("detail", pa.string()),
])


class DatasetError(GozeroError, RuntimeError):
    """A dataset that is missing, incomplete or does not match the schema."""


def binary_column(packed: np.ndarray) -> pa.Array:
    """A Parquet binary column over fixed-width rows of packed bytes, without copying them."""
    rows, width = packed.shape  # (R, nbytes) uint8
    offsets = np.arange(0, (rows + 1) * width, width, dtype=np.int32)
    data = np.ascontiguousarray(packed).reshape(-1)
    return pa.Array.from_buffers(pa.binary(), rows, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def rows_table(columns: dict[str, Any], dictionaries: bool = False) -> pa.Table:
    """A table in ROW_SCHEMA from columns: numpy arrays (planes as (R, nbytes) uint8) or Arrow arrays.

    String columns given as Arrow dictionary arrays are decoded, unless `dictionaries`: then they
    stay dictionaries (for `write_shard`, which stores them as such and reads back ROW_SCHEMA).
    """
    arrays = []
    for field in ROW_SCHEMA:
        value = columns[field.name]
        if isinstance(value, (pa.Array, pa.ChunkedArray)):
            keep = dictionaries and pa.types.is_dictionary(value.type)
            arrays.append(value if keep else value.cast(field.type))
        elif field.name == "planes":
            arrays.append(binary_column(value))
        else:
            arrays.append(pa.array(value, type=field.type))
    return pa.Table.from_arrays(arrays, names=ROW_SCHEMA.names)


def write_parquet(path: Path, table: pa.Table, row_group_size: int = 65536, sync_dir: bool = True,
                  store_schema: bool = True) -> int:
    """Write `table` atomically with zstd; returns the file's size in bytes (see `atomic_path`
    for `sync_dir`). Small-valued columns are dictionary-encoded, the planes (unique) are not."""
    with atomic_path(path, sync_dir=sync_dir) as temp, WritebackFile(temp) as sink:
        pq.write_table(table, sink, compression="zstd", row_group_size=row_group_size,
                       use_dictionary=[name for name in table.column_names if name not in _UNIQUE_COLUMNS],
                       write_statistics=[name for name in table.column_names if name not in _NO_STATISTICS],
                       store_schema=store_schema, write_batch_size=16_384)  # 1,024 costs ~4% more
    return path.stat().st_size


def quarantine_table(entries: Sequence[dict[str, Any]]) -> pa.Table:
    """Refused games as a table: file, game_index (-1 = the whole file), reason, detail."""
    return pa.Table.from_pylist(list(entries), schema=QUARANTINE_SCHEMA)


def work_dir(dataset: Path) -> Path:
    """Per-shard progress (stats, quarantine parts) of a dataset being built."""
    return dataset / WORK_DIR


def shard_done(dataset: Path, key: str) -> dict[str, Any] | None:
    """The stats of a finished shard with this key, or None if it must be (re)built."""
    stats_path = _stats_path(dataset, key)
    if not stats_path.exists():
        return None
    try:
        stats = json.loads(stats_path.read_bytes())
    except ValueError:  # empty or cut short by a power cut (it is not fsynced): build it again
        return None
    if not isinstance(stats, dict) or "refused" not in stats:  # an older version's: rebuild
        return None
    shard = dataset / stats["shard"]
    if stats["rows"] and (not shard.exists() or shard.stat().st_size != stats["bytes"]):
        return None
    return stats


def write_shard(dataset: Path, name: str, columns: dict[str, Any]) -> int:
    """Write one shard's rows (`rows_table` columns); returns its size.

    String columns may be dictionary arrays: they are written as Parquet dictionaries directly,
    and without the Arrow schema in the file they read back as plain strings, in ROW_SCHEMA.
    Its data is fsynced before `record_shard` writes the stats file that names it and its size
    (which `shard_done` checks); its directory entry is made durable by the manifest's
    directory fsync (the same directory) before any reader is told about it.
    """
    table = rows_table(columns, dictionaries=True)
    return write_parquet(dataset / name, table, sync_dir=False, store_schema=False)


def record_shard(dataset: Path, key: str, stats: dict[str, Any], refused: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mark a shard finished: its stats and refusals in one file, the last one written.

    The file is not fsynced: the shard it names is (`write_shard`), so after a power cut this
    file is either intact, or missing or unreadable, and then `shard_done` has the shard rebuilt.
    The manifest, fsynced, is what readers trust.
    """
    recorded = {**stats, "refused": [dict(entry) for entry in refused]}
    write_json(_stats_path(dataset, key), recorded, indent=None, durable=False)
    return recorded


def _stats_path(dataset: Path, key: str) -> Path:
    return work_dir(dataset) / f"stats-{key}.json"


def clean_partial(dataset: Path) -> int:
    """Remove temp files a crashed writer left behind; returns how many."""
    return remove_stale_temps(dataset) + remove_stale_temps(work_dir(dataset))


def merge_quarantine(dataset: Path, keys: Iterable[str], extra: Sequence[dict[str, Any]]) -> int:
    """Write quarantine.parquet from the shards' parts plus `extra`; returns the row count."""
    entries = []
    for key in keys:
        stats = shard_done(dataset, key)
        if stats is None:
            raise DatasetError(f"shard {key} of {dataset} is not finished; rerun the flow to rebuild it")
        entries += stats["refused"]
    merged = quarantine_table(entries + list(extra))
    path = dataset / QUARANTINE
    if not (path.exists() and pq.read_table(path).equals(merged)):  # a rerun rewrites nothing
        write_parquet(path, merged)
    return merged.num_rows


def write_manifest(dataset: Path, manifest: dict[str, Any]) -> None:
    """Write manifest.json, last: from now on the dataset is complete."""
    write_json(dataset / MANIFEST, manifest)


def read_manifest(dataset: Path) -> dict[str, Any]:
    """The manifest of a complete dataset; DatasetError if there is none."""
    path = dataset / MANIFEST
    if not path.exists():
        raise DatasetError(f"{dataset} has no {MANIFEST}: the dataset is missing or was not finished")
    return json.loads(path.read_text())


def shard_paths(dataset: Path) -> list[Path]:
    """The shards a complete dataset's manifest lists, in order."""
    return [dataset / shard["file"] for shard in read_manifest(dataset)["shards"]]


def remove_unlisted_shards(dataset: Path, listed: Iterable[str]) -> list[str]:
    """Delete shard files the manifest does not list (from an earlier, different build)."""
    keep = set(listed)
    removed = [p.name for p in dataset.glob("shard-*.parquet") if p.name not in keep]
    for name in removed:
        (dataset / name).unlink()
    return removed


def filter_out_games(shard: Path, game_ids: set[str]) -> tuple[int, int]:
    """Rewrite a shard without the rows of `game_ids`; returns (rows left, bytes on disk)."""
    import pyarrow.compute as pc

    table = pq.read_table(shard)
    keep = pc.invert(pc.is_in(table["game_id"], value_set=pa.array(sorted(game_ids), pa.string())))
    table = table.filter(keep)
    if table.num_rows == 0:
        shard.unlink()
        return 0, 0
    return table.num_rows, write_parquet(shard, table)


def summary(dataset: Path) -> dict[str, Any]:
    """Games, positions, rows, bytes per row, results, game lengths and refusals, via polars."""
    import polars as pl

    manifest = read_manifest(dataset)
    listed = [json.loads(_stats_path(dataset, shard["key"]).read_text())
              for shard in manifest["shards"]]
    games = pl.DataFrame(
        [g for stats in listed for g in stats["games"] if g[0] not in set(stats.get("dropped", ()))],
        schema={"game_id": pl.String, "source": pl.String, "moves": pl.Int64, "winner": pl.Int64},
        orient="row",
    )
    lengths = (games.group_by((pl.col("moves") // 10 * 10).alias("from")).len().sort("from"))
    results = games.group_by("winner").len()
    refusals = (pl.read_parquet(dataset / QUARANTINE)
                .group_by(pl.col("reason").str.replace(r"@\d+$", "").alias("reason")).len()
                .sort("len", descending=True))
    rows = manifest["rows"]
    return {
        "games": games.height, "positions": int(games["moves"].sum() or 0), "rows": rows,
        "bytes": manifest["bytes"], "bytes_per_row": manifest["bytes"] / rows if rows else 0.0,
        "results": {{1: "black", -1: "white", 0: "jigo/unknown"}[w]: n for w, n in results.iter_rows()},
        "length_histogram": {f"{lo}-{lo + 9}": n for lo, n in lengths.iter_rows()},
        "refusals": dict(refusals.iter_rows()),
        "games_refused": manifest["games_refused"],
    }


def summary_markdown(name: str, facts: dict[str, Any]) -> str:
    """The summary as a Markdown report (a Prefect artifact)."""
    lines = [f"# Dataset `{name}`", "", "| measure | value |", "|---|---|"]
    for key in ("games", "positions", "rows", "bytes", "games_refused"):
        lines.append(f"| {key} | {facts[key]:,} |")
    lines.append(f"| bytes per row on disk | {facts['bytes_per_row']:.1f} |")
    for title, table in (("Results", facts["results"]), ("Game lengths (moves)", facts["length_histogram"]),
                         ("Refusals by reason", facts["refusals"])):
        lines += ["", f"## {title}", "", "| | games |", "|---|---|"]
        lines += [f"| {key} | {value:,} |" for key, value in table.items()] or ["| (none) | 0 |"]
    return "\n".join(lines)
