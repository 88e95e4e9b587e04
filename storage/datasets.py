"""Encoded SGF datasets on disk: every file name of a dataset, shard and quarantine writers, the manifest, progress.

A dataset directory holds ``shard-*.parquet`` (training rows), ``quarantine.parquet`` (every
refused game with its reason) and ``manifest.json``, written last: readers trust only the shards
the manifest lists, so a crash mid-way never exposes a partial dataset. Per-shard progress lives
in ``.work/`` (one stats file per shard, with its refusals) so a rerun skips finished shards.

    <dataset>/shard-<index>-<key>.parquet   training rows (storage.schemas.ROW_SCHEMA)
    <dataset>/quarantine.parquet            refused games (storage.schemas.QUARANTINE_SCHEMA)
    <dataset>/manifest.json                 the dataset's facts and its shards, written last
    <dataset>/.work/plan.json               the shards being built: index, key, files, labels
    <dataset>/.work/stats-<key>.json        one finished shard: its counts, games and refusals

Re-planning removes the stats files of shards the new plan does not hold.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from gocore.errors import GozeroError
from storage import locks
from storage.atomic import WritebackFile, atomic_path, remove_stale_temps, write_json
from storage.schemas import GameRows, encoded_rows_table, quarantine_table

MANIFEST = "manifest.json"
QUARANTINE = "quarantine.parquet"
WORK_DIR = ".work"
PLAN = "plan.json"
SHARD_GLOB = "shard-*.parquet"
_UNIQUE_COLUMNS = ("planes", "pi", "detail")  # all values differ: a dictionary would be wasted work
_NO_STATISTICS = _UNIQUE_COLUMNS + ("game_id", "source")  # min/max of these would never prune a read

class DatasetError(GozeroError, RuntimeError):
    """A dataset that is missing, incomplete or does not match the schema."""


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


def work_dir(dataset: Path) -> Path:
    """Per-shard progress (stats, quarantine parts) of a dataset being built."""
    return dataset / WORK_DIR


def build_lock(dataset: Path) -> contextlib.AbstractContextManager[None]:
    """Held while a run builds `dataset`: a second run (a retry while the first still works)
    is refused with `locks.BusyError` naming the first."""
    return locks.exclusive(work_dir(dataset) / "build.lock", f"dataset {dataset.name} ({dataset})")


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


def shard_name(index: int, key: str) -> str:
    """File name of the shard at `index` of the plan, with content key `key`."""
    return f"shard-{index:05d}-{key[:8]}.parquet"


def write_shard(dataset: Path, name: str, rows: GameRows) -> int:
    """Write one shard's rows; returns its size.

    String columns may be dictionary arrays: they are written as Parquet dictionaries directly,
    and without the Arrow schema in the file they read back as plain strings, in ROW_SCHEMA.
    Its data is fsynced before `record_shard` writes the stats file that names it and its size
    (which `shard_done` checks); its directory entry is made durable by the manifest's
    directory fsync (the same directory) before any reader is told about it.
    """
    table = encoded_rows_table(rows, dictionaries=True)
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


def write_plan(dataset: Path, shards: Sequence[Mapping[str, Any]]) -> list[str]:
    """Save the plan (one JSON object per shard, each with its "key") for progress displays,
    only when it changed; remove the stats files of shards it no longer holds (returned)."""
    path = work_dir(dataset) / PLAN
    document = [dict(shard) for shard in shards]
    if not path.exists() or json.loads(path.read_bytes()) != document:
        write_json(path, document, indent=None)  # only when changed: a rerun rewrites nothing
    keys = {shard["key"] for shard in document}
    stale = [p for p in work_dir(dataset).glob("stats-*.json") if _key_of_stats(p) not in keys]
    for stats_path in stale:
        stats_path.unlink(missing_ok=True)
    return sorted(_key_of_stats(p) for p in stale)


def progress(dataset: Path) -> tuple[int, int]:
    """(shards finished, shards planned) of a dataset being built; (0, 0) before it is planned."""
    try:
        keys = {shard["key"] for shard in json.loads((work_dir(dataset) / PLAN).read_bytes())}
    except (OSError, ValueError, KeyError, TypeError):  # not planned yet, or being replaced
        return 0, 0
    done = sum(1 for path in work_dir(dataset).glob("stats-*.json") if _key_of_stats(path) in keys)
    return done, len(keys)


def _key_of_stats(path: Path) -> str:
    return path.stem.removeprefix("stats-")


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


class DatasetExistsError(DatasetError):
    """A complete dataset of this name was built from other sources or options."""


class EmptyDatasetError(DatasetError):
    """A build that accepted no game (every one refused)."""


def refuse_other_build(dataset: Path, sources: Sequence[str], options: Mapping[str, Any]) -> None:
    """DatasetExistsError naming what differs if a complete dataset is at `dataset` with other
    `sources` or `options` than these (a rebuild would replace its shards, under the models trained
    on them); nothing if there is none or they match (a rerun)."""
    try:
        manifest = read_manifest(dataset)
    except (DatasetError, ValueError):
        return
    asked = json.loads(json.dumps({"sources": list(sources), "options": dict(options)}))  # its JSON form
    differences = []
    if manifest.get("sources") != asked["sources"]:
        differences.append(f"sources {', '.join(manifest.get('sources', []))} (asked {', '.join(asked['sources'])})")
    built = manifest.get("options", {})
    differences += [f"{key} {built.get(key)!r} (asked {asked['options'].get(key)!r})"
                    for key in sorted(set(built) | set(asked["options"]))
                    if built.get(key) != asked["options"].get(key)]
    if differences:
        raise DatasetExistsError(f"dataset {dataset.name} exists, built with other " + "; ".join(differences)
                                 + ": choose another name, or replace it on purpose (--replace)")


def refusal_counts(dataset: Path) -> dict[str, int]:
    """{reason: games} of the quarantine being merged or merged (most first); {} if there is none."""
    import pyarrow.compute as pc

    path = dataset / QUARANTINE
    if not path.exists():
        return {}
    reasons = pc.replace_substring_regex(pq.read_table(path, columns=["reason"])["reason"], r"@\d+$", "")
    counts = {row["values"]: row["counts"] for row in pc.value_counts(reasons).to_pylist()}
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def remove_unfinished(dataset: Path) -> bool:
    """Delete the dataset folder if it holds no complete dataset (a failed first build); whether it did."""
    import shutil

    if not dataset.is_dir() or (dataset / MANIFEST).exists():
        return False
    shutil.rmtree(dataset, ignore_errors=True)
    return True


def write_manifest(dataset: Path, manifest: Mapping[str, Any]) -> bool:
    """Write manifest.json, last: from now on the dataset is complete. An unchanged manifest is
    not rewritten (a rerun rewrites nothing); returns whether it was written."""
    try:
        if read_manifest(dataset) == json.loads(json.dumps(manifest)):  # compared in its JSON form
            return False
    except (DatasetError, ValueError):  # none yet, or unreadable: write it
        pass
    write_json(dataset / MANIFEST, dict(manifest))
    return True


def read_manifest(dataset: Path) -> dict[str, Any]:
    """The manifest of a complete dataset; DatasetError if there is none."""
    path = dataset / MANIFEST
    if not path.exists():
        raise DatasetError(f"{dataset} has no {MANIFEST}: the dataset is missing or was not finished")
    return json.loads(path.read_text())


def manifest_id(manifest: Mapping[str, Any]) -> str:
    """16 hex digits of the manifest's canonical JSON SHA-256: which build of the dataset it is."""
    canonical = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(canonical).hexdigest()[:16]


def shard_paths(dataset: Path) -> list[Path]:
    """The shards a complete dataset's manifest lists, in order."""
    return [dataset / shard["file"] for shard in read_manifest(dataset)["shards"]]


def listed_games(dataset: Path) -> list[list]:
    """[game_id, source, moves, winner] of every game in a complete dataset's listed shards (games
    dropped as cross-shard duplicates left out), shard by shard; `source` is ``<file label>#<index>``."""
    games = []
    for shard in read_manifest(dataset)["shards"]:
        stats = json.loads(_stats_path(dataset, shard["key"]).read_text())
        dropped = set(stats.get("dropped", ()))
        games += [game for game in stats["games"] if game[0] not in dropped]
    return games


def source_files(dataset: Path, sources: Sequence[str], raw: Path) -> list[tuple[Path, int]]:
    """(SGF file, index of the game in it) of each game's `source` label (``<file label>#<index>``):
    the file the dataset's build planned under that label, else the label under `raw` (the data
    dir's downloads, which labels are relative to). A file may have been deleted since."""
    try:
        plan = json.loads((work_dir(dataset) / PLAN).read_bytes())
        files = {name: path for shard in plan for name, path in zip(shard["labels"], shard["files"])}
    except (OSError, ValueError, KeyError, TypeError):  # no plan kept: the labels alone
        files = {}
    found = []
    for source in sources:
        label, _, index = source.rpartition("#")
        found.append((Path(files.get(label) or raw / label), int(index)))
    return found


def remove_unlisted_shards(dataset: Path, listed: Iterable[str]) -> list[str]:
    """Delete shard files the manifest does not list (from an earlier, different build)."""
    keep = set(listed)
    removed = [p.name for p in dataset.glob(SHARD_GLOB) if p.name not in keep]
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


@dataclass(frozen=True)
class DatasetSummary:
    """What a complete dataset holds: the ingest flow's result and its report."""

    dataset: str  # the dataset directory
    games: int  # games in the listed shards (after cross-shard dedupe)
    positions: int  # their positions (moves), before augmentation
    rows: int  # rows in the listed shards (positions x symmetries kept)
    bytes: int  # bytes of the listed shards on disk
    bytes_per_row: float  # bytes / rows (0 for an empty dataset)
    results: dict[str, int]  # games by winner: black, white, jigo/unknown
    length_histogram: dict[str, int]  # games by length in moves, in buckets of ten ("30-39")
    refusals: dict[str, int]  # refused games by reason (without the move of an illegal move)
    games_refused: int  # refused games in all


def summary(dataset: Path) -> DatasetSummary:
    """Games, positions, rows, bytes per row, results, game lengths and refusals, via polars."""
    import polars as pl

    manifest = read_manifest(dataset)
    games = pl.DataFrame(
        listed_games(dataset),
        schema={"game_id": pl.String, "source": pl.String, "moves": pl.Int64, "winner": pl.Int64},
        orient="row",
    )
    lengths = (games.group_by((pl.col("moves") // 10 * 10).alias("from")).len().sort("from"))
    results = games.group_by("winner").len()
    refusals = (pl.read_parquet(dataset / QUARANTINE)
                .group_by(pl.col("reason").str.replace(r"@\d+$", "").alias("reason")).len()
                .sort("len", descending=True))
    rows = manifest["rows"]
    return DatasetSummary(
        dataset=str(dataset), games=games.height, positions=int(games["moves"].sum() or 0), rows=rows,
        bytes=manifest["bytes"], bytes_per_row=manifest["bytes"] / rows if rows else 0.0,
        results={{1: "black", -1: "white", 0: "jigo/unknown"}[w]: n for w, n in results.iter_rows()},
        length_histogram={f"{lo}-{lo + 9}": n for lo, n in lengths.iter_rows()},
        refusals=dict(refusals.iter_rows()), games_refused=manifest["games_refused"],
    )


def summary_markdown(name: str, facts: DatasetSummary) -> str:
    """The summary as a Markdown report (a Prefect artifact)."""
    lines = [f"# Dataset `{name}`", "", "| measure | value |", "|---|---|"]
    for key in ("games", "positions", "rows", "bytes", "games_refused"):
        lines.append(f"| {key} | {getattr(facts, key):,} |")
    lines.append(f"| bytes per row on disk | {facts.bytes_per_row:.1f} |")
    for title, table in (("Results", facts.results), ("Game lengths (moves)", facts.length_histogram),
                         ("Refusals by reason", facts.refusals)):
        lines += ["", f"## {title}", "", "| | games |", "|---|---|"]
        lines += [f"| {key} | {value:,} |" for key, value in table.items()] or ["| (none) | 0 |"]
    return "\n".join(lines)
