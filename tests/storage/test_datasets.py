"""storage.datasets and storage.schemas: the binary planes column, atomic Parquet writes, shard bookkeeping,
the plan and progress, manifest, summary."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from gocore.nn.encode import EncodedRows
from storage import datasets, schemas
from storage.atomic import TEMP_PREFIX, write_json
from tests.corpus import files_of


def packed_rows(rows: int, width: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (rows, width), dtype=np.uint8)  # (R, nbytes)


def row_columns(game_ids: list[str], moves_per_game: int = 3, width: int = 11) -> dict[str, np.ndarray]:
    """Columns in ROW_SCHEMA: `moves_per_game` rows for each game id, distinct planes per row."""
    rows = len(game_ids) * moves_per_game
    return {
        "encoder": np.full(rows, "agz17", object), "size": np.full(rows, 9, np.int8),
        "planes": packed_rows(rows, width), "move": np.arange(rows, dtype=np.int16) % 82,
        "value": np.where(np.arange(rows) % 2, 1, -1).astype(np.int8),
        "game_id": np.repeat(np.array(game_ids, object), moves_per_game),
        "move_number": np.tile(np.arange(moves_per_game, dtype=np.int16), len(game_ids)),
        "symmetry": np.zeros(rows, np.int8), "komi": np.full(rows, 7.5, np.float32),
        "source": np.repeat(np.array([f"{g}.sgf#0" for g in game_ids], object), moves_per_game),
    }


def game_rows(game_ids: list[str], moves_per_game: int = 3, width: int = 11) -> EncodedRows:
    """The rows of `row_columns` as the encoder returns them: numpy columns, strings once per game."""
    columns = row_columns(game_ids, moves_per_game, width)
    return EncodedRows(encoder="agz17", size=9, planes=columns["planes"], move=columns["move"],
                       value=columns["value"], move_number=columns["move_number"], symmetry=columns["symmetry"],
                       komi=columns["komi"], game=np.repeat(np.arange(len(game_ids), dtype=np.int32), moves_per_game),
                       game_ids=tuple(game_ids), sources=tuple(f"{g}.sgf#0" for g in game_ids))


# --- the planes column ----------------------------------------------------------------------------

def test_binary_column_shares_the_packed_bytes_without_copying():
    packed = packed_rows(50, 173)
    column = schemas.binary_column(packed)
    assert column.buffers()[2].address == packed.ctypes.data
    assert len(column) == 50 and column.type == pa.binary()


def test_binary_column_round_trips_every_row():
    packed = packed_rows(37, 173, seed=1)
    column = schemas.binary_column(packed)
    assert column.to_pylist() == [row.tobytes() for row in packed]
    back = np.frombuffer(column.buffers()[2], np.uint8).reshape(37, 173)
    assert np.array_equal(back, packed)


def test_binary_column_of_a_strided_view_holds_the_viewed_rows():
    packed = packed_rows(20, 9, seed=2)
    view = packed[::3, 1:]
    assert schemas.binary_column(view).to_pylist() == [row.tobytes() for row in view]


def test_binary_column_of_no_rows_is_empty():
    assert len(schemas.binary_column(np.zeros((0, 173), np.uint8))) == 0


def test_rows_table_has_the_row_schema_and_reads_back_from_parquet_with_pyarrow_and_polars(tmp_path):
    columns = row_columns(["a", "b"])
    path = tmp_path / "shard-00000.parquet"
    datasets.write_parquet(path, schemas.rows_table(columns))
    table = pq.read_table(path)
    assert table.schema.equals(schemas.ROW_SCHEMA)
    assert table["planes"].to_pylist() == [row.tobytes() for row in columns["planes"]]
    assert table["game_id"].to_pylist() == columns["game_id"].tolist()
    frame = pl.read_parquet(path)
    assert frame.schema == pl.from_arrow(schemas.ROW_SCHEMA.empty_table()).schema
    assert frame["planes"].to_list() == [row.tobytes() for row in columns["planes"]]


def test_a_shard_written_from_per_game_rows_reads_back_in_the_row_schema(tmp_path):
    datasets.write_shard(tmp_path, "shard-00000-k.parquet", game_rows(["a", "b", "c"]))
    table = pq.read_table(tmp_path / "shard-00000-k.parquet")
    columns = row_columns(["a", "b", "c"])
    assert table.schema.equals(schemas.ROW_SCHEMA)
    assert table.equals(schemas.rows_table(columns))
    assert pl.read_parquet(tmp_path / "shard-00000-k.parquet").schema == pl.from_arrow(
        schemas.ROW_SCHEMA.empty_table()).schema
    assert schemas.encoded_rows_table(game_rows(["a", "b", "c"])).equals(schemas.rows_table(columns))
    kept = schemas.encoded_rows_table(game_rows(["a", "b", "c"]), dictionaries=True)
    assert pa.types.is_dictionary(kept.schema.field("game_id").type)


# --- atomic Parquet writes -------------------------------------------------------------------------

def test_write_parquet_returns_the_size_on_disk_and_leaves_no_temp_file(tmp_path):
    path = tmp_path / "t.parquet"
    size = datasets.write_parquet(path, schemas.rows_table(row_columns(["a"])))
    assert size == path.stat().st_size > 0
    assert [p.name for p in tmp_path.iterdir()] == ["t.parquet"]


def test_a_failed_parquet_write_keeps_the_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "t.parquet"
    datasets.write_parquet(path, schemas.rows_table(row_columns(["a"])))
    before = path.read_bytes()

    def crash_mid_write(table, where, **kwargs):
        where.write(b"PAR1 half a file")  # the temp file, opened by write_parquet
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", crash_mid_write)
    with pytest.raises(OSError, match="disk full"):
        datasets.write_parquet(path, schemas.rows_table(row_columns(["b"])))
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["t.parquet"]


# --- manifest ------------------------------------------------------------------------------------

def test_a_dataset_without_manifest_is_a_dataset_error(tmp_path):
    (tmp_path / "shard-00000-aaaa.parquet").write_bytes(b"")
    for read in (datasets.read_manifest, datasets.shard_paths, datasets.summary):
        with pytest.raises(datasets.DatasetError, match="no manifest.json"):
            read(tmp_path)


def test_shard_paths_are_the_manifests_in_its_order(tmp_path):
    names = ["shard-00001-b.parquet", "shard-00000-a.parquet"]
    datasets.write_manifest(tmp_path, {"shards": [{"file": name} for name in names]})
    assert datasets.shard_paths(tmp_path) == [tmp_path / name for name in names]


def test_remove_unlisted_shards_deletes_only_unlisted_shard_files(tmp_path):
    for name in ("shard-00000-a.parquet", "shard-00001-b.parquet", "quarantine.parquet", "notes.txt"):
        (tmp_path / name).write_bytes(b"x")
    assert datasets.remove_unlisted_shards(tmp_path, ["shard-00001-b.parquet"]) == ["shard-00000-a.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "quarantine.parquet", "shard-00001-b.parquet"]


# --- per-shard progress ---------------------------------------------------------------------------

def recorded_shard(dataset: Path, key: str, game_ids: list[str], refused=()) -> dict:
    """Write a shard of `game_ids` and record it as finished; returns its stats."""
    name = f"shard-00000-{key[:8]}.parquet"
    size = datasets.write_shard(dataset, name, game_rows(game_ids))
    stats = {"shard": name, "key": key, "rows": 3 * len(game_ids), "bytes": size,
             "games": [[g, f"{g}.sgf#0", 3, 1] for g in game_ids]}
    return datasets.record_shard(dataset, key, stats, list(refused))


def test_shard_done_is_none_until_the_shard_is_recorded(tmp_path):
    assert datasets.shard_done(tmp_path, "k1") is None
    entry = {"file": "a.sgf", "game_index": 2, "reason": "syntax", "detail": "bad"}
    stats = recorded_shard(tmp_path, "k1", ["a"], [entry])
    assert stats["refused"] == [entry]
    assert datasets.shard_done(tmp_path, "k1") == stats


def test_stats_of_an_older_version_without_refusals_mean_rebuild(tmp_path):
    stats = recorded_shard(tmp_path, "k1", ["a"])
    del stats["refused"]
    write_json(datasets.work_dir(tmp_path) / "stats-k1.json", stats)
    assert datasets.shard_done(tmp_path, "k1") is None
    with pytest.raises(datasets.DatasetError, match="k1"):
        datasets.merge_quarantine(tmp_path, ["k1"], [])


@pytest.mark.parametrize("damage", [b"", b'{"shard": "shard-00000-k1.par', b"[1, 2]"])
def test_an_unreadable_stats_file_means_rebuild_not_an_error(tmp_path, damage):
    recorded_shard(tmp_path, "k1", ["a"])
    (datasets.work_dir(tmp_path) / "stats-k1.json").write_bytes(damage)  # e.g. after a power cut
    assert datasets.shard_done(tmp_path, "k1") is None


def test_the_stats_file_is_not_fsynced_but_the_shard_is(tmp_path, monkeypatch):
    synced: list[str] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), real(fd)))
    recorded_shard(tmp_path, "k1", ["a"])
    assert len(synced) == 1 and ".tmp-shard-00000-k1" in synced[0]


def test_shard_done_is_none_when_the_shard_file_is_gone_or_changed(tmp_path):
    stats = recorded_shard(tmp_path, "k1", ["a", "b"])
    shard = tmp_path / stats["shard"]
    shard.write_bytes(shard.read_bytes()[:-1])
    assert datasets.shard_done(tmp_path, "k1") is None
    shard.unlink()
    assert datasets.shard_done(tmp_path, "k1") is None


def test_a_recorded_shard_without_rows_needs_no_file(tmp_path):
    stats = {"shard": "shard-00003-k0.parquet", "key": "k0", "rows": 0, "bytes": 0, "games": []}
    recorded = datasets.record_shard(tmp_path, "k0", stats, [{"file": "a.sgf", "game_index": 0,
                                                              "reason": "syntax", "detail": "bad"}])
    assert datasets.shard_done(tmp_path, "k0") == recorded


def plan_of(keys: list[str]) -> list[dict]:
    return [{"index": i, "key": key, "files": [f"/{key}.sgf"], "labels": [f"{key}.sgf"]} for i, key in enumerate(keys)]


def test_progress_counts_finished_shards_of_the_current_plan_only(tmp_path):
    assert datasets.progress(tmp_path) == (0, 0)  # not planned yet
    datasets.write_plan(tmp_path, plan_of(["k1", "k2", "k3"]))
    assert datasets.progress(tmp_path) == (0, 3)
    recorded_shard(tmp_path, "k1", ["a"])
    recorded_shard(tmp_path, "k3", ["c"])
    assert datasets.progress(tmp_path) == (2, 3)
    (datasets.work_dir(tmp_path) / datasets.PLAN).write_bytes(b"[{")  # being replaced right now
    assert datasets.progress(tmp_path) == (0, 0)


def test_replanning_removes_the_stats_of_shards_no_longer_planned(tmp_path):
    datasets.write_plan(tmp_path, plan_of(["k1", "k2"]))
    recorded_shard(tmp_path, "k1", ["a"])
    recorded_shard(tmp_path, "k2", ["b"])
    assert datasets.write_plan(tmp_path, plan_of(["k2", "k3"])) == ["k1"]
    assert sorted(p.name for p in datasets.work_dir(tmp_path).iterdir()) == ["plan.json", "stats-k2.json"]
    assert datasets.shard_done(tmp_path, "k2") is not None and datasets.progress(tmp_path) == (1, 2)


def test_an_unchanged_plan_is_not_rewritten(tmp_path):
    datasets.write_plan(tmp_path, plan_of(["k1"]))
    before = files_of(tmp_path)
    assert datasets.write_plan(tmp_path, plan_of(["k1"])) == []
    assert files_of(tmp_path) == before


def test_clean_partial_removes_temp_files_of_the_dataset_and_its_work_dir(tmp_path):
    work = datasets.work_dir(tmp_path)
    work.mkdir()
    for path in (tmp_path / f"{TEMP_PREFIX}shard-00000.parquet.x1", work / f"{TEMP_PREFIX}stats-k.json.y",
                 tmp_path / "shard-00000-a.parquet", work / "stats-k.json"):
        path.write_bytes(b"x")
    assert datasets.clean_partial(tmp_path) == 2
    assert sorted(files_of(tmp_path)) == [".work/stats-k.json", "shard-00000-a.parquet"]


def test_merge_quarantine_joins_the_shards_parts_and_the_extra_entries(tmp_path):
    entry = {"file": "a.sgf", "game_index": 2, "reason": "syntax", "detail": "bad"}
    recorded_shard(tmp_path, "k1", ["a"], [entry])
    recorded_shard(tmp_path, "k2", ["b"], [dict(entry, file="b.sgf", reason="not-go")])
    extra = [dict(entry, file="c.sgf", game_index=0, reason="duplicate")]
    assert datasets.merge_quarantine(tmp_path, ["k1", "k2"], extra) == 3
    table = pq.read_table(tmp_path / datasets.QUARANTINE)
    assert table.schema.equals(schemas.QUARANTINE_SCHEMA)
    assert {(r["file"], r["game_index"], r["reason"]) for r in table.to_pylist()} == {
        ("a.sgf", 2, "syntax"), ("b.sgf", 2, "not-go"), ("c.sgf", 0, "duplicate")}


def test_merge_quarantine_rewrites_the_file_only_when_it_changes(tmp_path):
    entry = {"file": "a.sgf", "game_index": 2, "reason": "syntax", "detail": "bad"}
    recorded_shard(tmp_path, "k1", ["a"], [entry])
    datasets.merge_quarantine(tmp_path, ["k1"], [])
    before = files_of(tmp_path)
    datasets.merge_quarantine(tmp_path, ["k1"], [])
    assert files_of(tmp_path) == before
    datasets.merge_quarantine(tmp_path, ["k1"], [dict(entry, game_index=3)])
    assert pq.read_table(tmp_path / datasets.QUARANTINE).num_rows == 2


def test_filter_out_games_drops_exactly_those_games_rows(tmp_path):
    stats = recorded_shard(tmp_path, "k1", ["a", "b", "c"])
    shard = tmp_path / stats["shard"]
    before = pq.read_table(shard)
    kept_before = before.filter(pc.equal(before["game_id"], "b"))
    rows, size = datasets.filter_out_games(shard, {"a", "c", "not-there"})
    table = pq.read_table(shard)
    assert (rows, size) == (table.num_rows, shard.stat().st_size)
    assert table.equals(kept_before)


def test_filter_out_games_deletes_a_shard_left_without_rows(tmp_path):
    stats = recorded_shard(tmp_path, "k1", ["a", "b"])
    assert datasets.filter_out_games(tmp_path / stats["shard"], {"a", "b"}) == (0, 0)
    assert not (tmp_path / stats["shard"]).exists()


# --- summary -------------------------------------------------------------------------------------

def test_summary_counts_the_listed_shards_games_results_lengths_and_refusals(tmp_path):
    refusals = [{"file": "x.sgf", "game_index": i, "reason": reason, "detail": ""}
                for i, reason in enumerate(["illegal-move@12", "illegal-move@3", "syntax"])]
    listed = recorded_shard(tmp_path, "k1", ["a", "b"], refusals)
    listed["games"] = [["a", "a.sgf#0", 37, 1], ["b", "b.sgf#0", 42, -1], ["c", "c.sgf#0", 5, 0]]
    datasets.record_shard(tmp_path, "k1", listed, refusals)
    recorded_shard(tmp_path, "stale", ["z"])  # an earlier build's shard: not in the manifest
    datasets.merge_quarantine(tmp_path, ["k1"], [])
    datasets.write_manifest(tmp_path, {"rows": listed["rows"], "bytes": listed["bytes"], "games_refused": 3,
                                       "shards": [{"file": listed["shard"], "key": "k1"}]})
    facts = datasets.summary(tmp_path)
    assert facts.games == 3 and facts.positions == 37 + 42 + 5
    assert (facts.rows, facts.bytes) == (listed["rows"], listed["bytes"])
    assert facts.bytes_per_row == pytest.approx(listed["bytes"] / listed["rows"])
    assert facts.results == {"black": 1, "white": 1, "jigo/unknown": 1}
    assert facts.length_histogram == {"0-9": 1, "30-39": 1, "40-49": 1}
    assert facts.refusals == {"illegal-move": 2, "syntax": 1}
    markdown = datasets.summary_markdown("tiny", facts)
    assert markdown.startswith("# Dataset `tiny`") and "| illegal-move | 2 |" in markdown
