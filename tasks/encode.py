"""Prefect tasks that turn extracted SGF files into a Parquet dataset.

`plan_shards` groups the files into shards keyed by their content and the encode options;
`encode_shard` (mapped in parallel) writes one shard and its refusals; `finalize_dataset`
removes games duplicated across shards, merges the quarantine, writes the manifest (last) and
summarises the dataset with polars. A shard whose key is already recorded is never encoded
twice, with or without Prefect's cache, so a rerun after a crash resumes without duplicates.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import math
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.nn import features
from gocore.nn.encode import EncodeOptions, ShardEncoder
from gocore.rules import sgf, sgf_read
from storage import datasets, schemas

ENCODE_VERSION = "3"  # bump when rows for the same input and options would change (2: .sgfs read by line;
# 3: ownership and score targets of played-out games)
SGF_SUFFIXES = (".sgf", ".sgfs")
_MOVE_NODE = re.compile(rb";\s*[BW]\[")  # a move node: counted, they estimate a file's rows
AUGMENT_FACTOR = {"all8": 8, "random1": 1, "none": 1}
# Shard size: ~100 MiB of packed planes in memory while encoding (606k rows of 9x9 agz17, 136k
# of 19x19), at most 1M rows. Each Prefect task costs 0.2-0.3 s of orchestration, so bigger
# shards ingest 40k games ~12% faster than 200k-row ones, although they encode a little more
# slowly per game (their working set outgrows the caches).
SHARD_PLANE_BYTES, MAX_SHARD_ROWS = 100 * 2**20, 1_000_000
MIN_SHARDS, MIN_SHARD_ROWS = 16, 20_000  # smaller datasets: 16 shards (fewer if tiny)


@dataclass(frozen=True)
class ShardSpec:
    """One unit of parallel encoding: a few SGF files and the key of their content + options."""

    index: int
    key: str
    files: tuple[str, ...]  # absolute paths
    labels: tuple[str, ...]  # the same files as named in the `source` column


def list_sgf_files(roots: list[str], base: Path) -> list[tuple[Path, str]]:
    """(path, label) of every SGF file under the roots, sorted as pathlib sorts (by path parts);
    labels are relative to `base` (lexically), else the file name. Hidden files are skipped;
    directory links are not followed. (os.scandir: pathlib's rglob costs ~20 µs a file.)"""
    found = []
    base_parts = base.parts
    for root in map(Path, roots):
        entries = [((), str(root))] if root.is_file() else _walk(str(root))
        for relative, path in entries:
            name = relative[-1] if relative else root.name
            if name.startswith(".") or os.path.splitext(name)[1].lower() not in SGF_SUFFIXES:
                continue
            parts = root.parts + relative
            label = "/".join(parts[len(base_parts):]) if parts[:len(base_parts)] == base_parts else name
            found.append((Path(path), label or "."))
    return found


def _walk(root: str) -> list[tuple[tuple[str, ...], str]]:
    """(path parts below root, path) of every file under root, sorted by parts."""
    files, pending = [], [((), root)]
    while pending:
        parts, directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                pending.append((parts + (entry.name,), entry.path))
            elif entry.is_file():
                files.append((parts + (entry.name,), entry.path))
    files.sort()
    return files


def group_files(files: list[tuple[Path, str]], options: EncodeOptions,
                target_rows: int) -> list[list[tuple[Path, str]]]:
    """Consecutive groups of files of about equal estimated rows (their move nodes, `count_moves`,
    times the augmentation): as many groups as it takes to stay near `target_rows`, but at least
    MIN_SHARDS while each keeps MIN_SHARD_ROWS, so that a small dataset still spreads evenly over
    2, 4, 8 or 16 workers. The plan depends on the files only, never on the worker count: a rerun
    with other workers finds the same shards. (Bytes were a poor estimate: comments, variations and
    headers made 19x19 shards of 1,904 to 100,864 rows.)"""
    sizes = [count_moves(path) * AUGMENT_FACTOR[options.augment] for path, _ in files]
    total = sum(sizes)
    if not total:
        return [list(files)] if files else []
    count = max(math.ceil(total / max(target_rows, 1)), min(MIN_SHARDS, int(total // MIN_SHARD_ROWS)), 1)
    groups: dict[int, list[tuple[Path, str]]] = {}
    start = 0.0
    for entry, rows in zip(files, sizes):  # each file goes where the middle of its rows falls
        groups.setdefault(min(int((start + rows / 2) * count / total), count - 1), []).append(entry)
        start += rows
    return list(groups.values())


def count_moves(path: Path) -> int:
    """The move nodes (``;B[..]``, ``;W[..]``) of an SGF file, counted without parsing its games."""
    with open(path, "rb") as handle:
        return len(_MOVE_NODE.findall(handle.read()))


def shard_key(group: list[tuple[Path, str]], options: EncodeOptions) -> str:
    """Hash of the files' labels and bytes, the options and the encoder version."""
    digest = hashlib.blake2b(digest_size=12)
    digest.update(json.dumps([asdict(options), ENCODE_VERSION], sort_keys=True).encode())
    for path, label in group:
        digest.update(label.encode() + b"\0")
        with open(path, "rb") as handle:
            digest.update(hashlib.blake2b(handle.read(), digest_size=16).digest())
    return digest.hexdigest()


def default_target_rows(options: EncodeOptions) -> int:
    """Rows per shard for these options: SHARD_PLANE_BYTES of packed planes, at most MAX_SHARD_ROWS."""
    encoder = features.get_encoder(options.encoder)
    return min(MAX_SHARD_ROWS, SHARD_PLANE_BYTES // features.packed_nbytes(encoder.num_planes, options.size))


@task(cache_policy=NO_CACHE)
def plan_shards(roots: list[str], base_dir: str, dataset_dir: str, options: EncodeOptions,
                target_rows: int | None = None) -> list[ShardSpec]:
    """Split the SGF files under `roots` into shards (of `default_target_rows` unless given);
    the plan is saved for progress display."""
    dataset = Path(dataset_dir)
    datasets.clean_partial(dataset)
    target = default_target_rows(options) if target_rows is None else target_rows
    groups = group_files(list_sgf_files(roots, Path(base_dir)), options, target)
    plan = [ShardSpec(i, shard_key(g, options), tuple(str(p) for p, _ in g), tuple(lab for _, lab in g))
            for i, g in enumerate(groups)]
    datasets.write_plan(dataset, [{"index": spec.index, "key": spec.key, "files": list(spec.files),
                                   "labels": list(spec.labels)} for spec in plan])  # asdict without deep copies
    return plan


def _cache_key(context: Any, parameters: dict[str, Any]) -> str | None:
    """Prefect cache key of a shard, offered only while its output is really on disk."""
    shard: ShardSpec = parameters["shard"]
    if datasets.shard_done(Path(parameters["dataset_dir"]), shard.key) is None:
        return None
    return f"encode-shard-{shard.key}"


@task(cache_key_fn=_cache_key, persist_result=True)
def encode_shard(shard: ShardSpec, dataset_dir: str, options: EncodeOptions) -> dict[str, Any]:
    """Encode one shard's games to ``shard-*.parquet``; returns its stats (rows, games, refusals)."""
    dataset = Path(dataset_dir)
    done = datasets.shard_done(dataset, shard.key)
    return done if done is not None else _encode(shard, dataset, options)


@functools.cache
def _freeze_imported_objects() -> None:
    """Once per process: move the objects that exist now (imports: numba, pyarrow, prefect, ...)
    out of the garbage collector's way. Otherwise every full collection re-scans all of them,
    ~80 ms each time on this machine, to free nothing; objects made later are collected as usual."""
    gc.freeze()


def _encode(shard: ShardSpec, dataset: Path, options: EncodeOptions) -> dict[str, Any]:
    """Encode every game of the shard's files and record the shard (file, then stats)."""
    _freeze_imported_objects()
    encoder = ShardEncoder(options, seed=int(shard.key[:8], 16))
    refused: list[dict[str, Any]] = []
    for path, label in zip(shard.files, shard.labels):
        refused.extend(_add_file(encoder, path, label))
    encoded = encoder.finish()
    name = datasets.shard_name(shard.index, shard.key)
    rows = len(encoded)
    size = datasets.write_shard(dataset, name, encoded) if rows else 0
    # "games" lists every game encoded; "dropped" those later removed as cross-shard duplicates.
    stats = {"shard": name, "key": shard.key, "rows": rows, "bytes": size, "games": encoder.game_list(),
             "dropped": []}
    return datasets.record_shard(dataset, shard.key, stats, refused)


def _add_file(encoder: ShardEncoder, path: str, label: str) -> list[dict[str, Any]]:
    """Feed one file's games to the encoder; returns quarantine entries for the refused ones."""
    try:
        games = read_games(path, label)
    except sgf.SgfError as error:
        return [{"file": label, "game_index": -1, "reason": error.reason, "detail": str(error)}]
    refused = []
    for index, game in enumerate(games):
        if isinstance(game, sgf.SgfError):
            refusal = (game.reason, str(game))
        else:
            refusal = encoder.add_game(game, f"{label}#{index}")
        if refusal is not None:
            refused.append({"file": label, "game_index": index, "reason": refusal[0], "detail": refusal[1]})
    return refused


def read_games(path: str, label: str) -> list[sgf.GameRecord | sgf.SgfError]:
    """The games of one file, in order. An ``.sgfs`` holds one game per line and is read line by
    line: read whole, a line that lost its closing ')' would swallow every game after it.
    (`path` is a str: pathlib costs as much per file as parsing a game's root.)"""
    with open(path, "rb") as handle:
        data = handle.read()
    if not path.lower().endswith(".sgfs"):
        return sgf_read.read_games_lenient(data, source=label)
    games: list[sgf.GameRecord | sgf.SgfError] = []
    for line in filter(bytes.strip, data.splitlines()):
        try:
            found = sgf_read.read_games_lenient(line, source=label)
        except sgf.SgfError as error:  # a line with no game in it
            found = [error]
        for game in found:
            index = len(games)
            games.append(game.located(index, f"{label}#{index}") if isinstance(game, sgf.SgfError) else game)
    return games


@task(cache_policy=NO_CACHE)
def finalize_dataset(dataset_dir: str, plan: list[ShardSpec], options: EncodeOptions,
                     sources: list[str]) -> dict[str, Any]:
    """Drop games repeated across shards, merge the quarantine, write the manifest last."""
    dataset = Path(dataset_dir)
    shard_stats, duplicates = _drop_cross_shard_duplicates(dataset, plan, options)
    refused = datasets.merge_quarantine(dataset, [s["key"] for s in shard_stats], duplicates)
    listed = [s["shard"] for s in shard_stats if s["rows"]]
    games = sum(len(s["games"]) - len(s["dropped"]) for s in shard_stats)
    if games == 0:  # before the manifest: a dataset of no game is no dataset
        reasons = ", ".join(f"{reason}: {count}" for reason, count in datasets.refusal_counts(dataset).items())
        raise datasets.EmptyDatasetError(
            f"no game accepted into dataset {dataset.name}: {refused} refused ({reasons or 'no game found'})"
            f"; the filters are --size {options.size}, --min-moves {options.min_moves}, "
            f"--{'' if options.require_result else 'no-'}require-result, --{'' if options.allow_handicap else 'no-'}handicap")
    manifest = {
        "encoder": options.encoder, "augment": options.augment, "options": asdict(options),
        "sources": sources, "code_version": ENCODE_VERSION, "schema": schemas.ROW_SCHEMA.names,
        "rows": sum(s["rows"] for s in shard_stats), "bytes": sum(s["bytes"] for s in shard_stats),
        "games_accepted": games, "games_refused": refused,
        "shards": [{"file": s["shard"], "rows": s["rows"], "bytes": s["bytes"], "key": s["key"]}
                   for s in shard_stats if s["rows"]],
    }
    datasets.write_manifest(dataset, manifest)
    # Only now: until the new manifest is in place, the old one may still list these shards.
    datasets.remove_unlisted_shards(dataset, listed)
    return manifest


def _recorded(dataset: Path, key: str) -> dict[str, Any]:
    """The stats sidecar of a shard: what is on disk now (task results may come from a cache)."""
    stats = datasets.shard_done(dataset, key)
    if stats is None:
        raise datasets.DatasetError(f"shard {key} of {dataset} is not on disk; rerun the flow to rebuild it")
    return stats


def _drop_cross_shard_duplicates(dataset: Path, plan: list[ShardSpec], options: EncodeOptions
                                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Keep each game_id in its first shard only; returns (stats per shard, quarantine entries).

    A shard that lost games to an earlier build's dedupe but must hold them now (the first
    copy's file is gone) is encoded again from its files.
    """
    seen: set[str] = set()
    kept, quarantined = [], []
    for shard in sorted(plan, key=lambda spec: spec.index):
        stats = _recorded(dataset, shard.key)
        game_ids = [gid for gid, *_ in stats["games"]]
        repeated = {gid for gid in game_ids if gid in seen}
        seen.update(game_ids)
        if set(stats["dropped"]) - repeated:
            stats = _encode(shard, dataset, options)
        if repeated - set(stats["dropped"]):
            stats = _drop_games(dataset, stats, repeated)
        quarantined += [{"file": source.rpartition("#")[0], "game_index": int(source.rpartition("#")[2]),
                         "reason": "duplicate", "detail": f"game_id {gid} is already in an earlier shard"}
                        for gid, source, *_ in stats["games"] if gid in repeated]
        kept.append(stats)
    return kept, quarantined


def _drop_games(dataset: Path, stats: dict[str, Any], game_ids: set[str]) -> dict[str, Any]:
    """Rewrite a shard without `game_ids`; its stats (written after) record them as dropped."""
    rows, size = datasets.filter_out_games(dataset / stats["shard"], game_ids)
    stats = dict(stats, rows=rows, bytes=size, dropped=sorted(game_ids))
    return datasets.record_shard(dataset, stats["key"], stats, stats["refused"])
