"""tasks.encode through `task.fn(...)`: planning, exact rows and quarantine, reruns, crashes, duplicates."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import tasks.encode as encode_task
from gocore.nn.encode import EncodeOptions
from storage import datasets
from storage.atomic import TEMP_PREFIX
from tasks.encode import encode_shard, finalize_dataset, group_files, list_sgf_files, plan_shards, shard_key
from tests.corpus import (
    Corpus,
    CorpusBuilder,
    agent_records,
    assert_rows_match_games,
    files_of,
    gnugo_records,
    mixed_corpus,
    position_keys,
    read_rows,
    sgf_text,
)

FACTOR = {"all8": 8, "random1": 1, "none": 1}
SHARD_POSITIONS = 400  # (estimated) a few files per shard, several shards per corpus


@pytest.fixture(scope="module")
def mixed(gnugo_path: str) -> Corpus:
    return mixed_corpus(gnugo_records(gnugo_path))


def build(tmp_path: Path, corpus: Corpus, options: EncodeOptions, target_rows: int | None = None,
          shards: slice = slice(None)) -> tuple[Path, list, dict | None]:
    """Plan, encode `shards` of the plan and (for the whole plan) finalize, as the flow does.

    Files go to tmp_path/raw/corpus (written once), the dataset to tmp_path/dataset; source labels
    are therefore ``corpus/<file>``. Returns (dataset dir, plan, manifest or None).
    """
    root = tmp_path / "raw" / "corpus"
    if not root.exists():
        corpus.write(root)
    dataset = tmp_path / "dataset"
    target_rows = target_rows or SHARD_POSITIONS * FACTOR[options.augment]
    plan = plan_shards.fn([str(root)], str(tmp_path / "raw"), str(dataset), options, target_rows)
    for spec in plan[shards]:
        encode_shard.fn(spec, str(dataset), options)
    if shards != slice(None):
        return dataset, plan, None
    return dataset, plan, finalize_dataset.fn(str(dataset), plan, options, ["corpus"])


def quarantine_of(dataset: Path) -> set[tuple[str, int, str]]:
    return {(r["file"], r["game_index"], r["reason"]) for r in pq.read_table(dataset / datasets.QUARANTINE).to_pylist()}


def visible_files(dataset: Path) -> set[str]:
    """What a reader of the dataset directory sees outside the work dir."""
    return {p.name for p in dataset.iterdir() if p.name != datasets.WORK_DIR}


# --- planning ------------------------------------------------------------------------------------

def test_list_sgf_files_finds_sgf_and_sgfs_files_sorted_with_labels_relative_to_base(tmp_path):
    for name in ("b/two.sgf", "a.SGF", "c.sgfs", ".hidden.sgf", "notes.txt", "b/.extracted.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("(;)")
    found = list_sgf_files([str(tmp_path)], tmp_path.parent)
    assert [label for _, label in found] == [f"{tmp_path.name}/{n}" for n in ("a.SGF", "b/two.sgf", "c.sgfs")]
    assert all(path.is_file() for path, _ in found)


def pathlib_listing(roots: list[str], base: Path) -> list[tuple[Path, str]]:
    """The straightforward pathlib version list_sgf_files must agree with."""
    found = []
    for root in map(Path, roots):
        for path in [root] if root.is_file() else sorted(root.rglob("*")):
            if path.is_file() and path.suffix.lower() in (".sgf", ".sgfs") and not path.name.startswith("."):
                label = path.relative_to(base) if path.is_relative_to(base) else Path(path.name)
                found.append((path, label.as_posix()))
    return found


def test_list_sgf_files_orders_and_labels_like_pathlib_on_a_tricky_tree(tmp_path):
    raw = tmp_path / "raw"
    for name in ("a.sgf", "a/b.sgf", "a-b.sgf", "A/c.SGF", ".hid/d.sgf", "z/y/x.sgfs", "z/y.sgf/w.sgf",
                 "e.sgf.txt", "f.", "deep/1/2/3/g.sgf", "Z.sgf"):
        (raw / name).parent.mkdir(parents=True, exist_ok=True)
        (raw / name).write_text("(;)")
    (raw / "link.sgf").symlink_to(raw / "a.sgf")  # a file link counts, a directory link is not walked
    (raw / "dirlink").symlink_to(raw / "deep", target_is_directory=True)
    outside = tmp_path / "elsewhere" / "o.sgf"
    outside.parent.mkdir()
    outside.write_text("(;)")
    roots = [str(raw), str(outside), str(tmp_path / "missing"), str(raw / "a")]
    assert list_sgf_files(roots, raw) == pathlib_listing(roots, raw)
    assert list_sgf_files(roots, tmp_path / "other") == pathlib_listing(roots, tmp_path / "other")
    labels = [label for _, label in list_sgf_files([str(raw)], raw)]
    assert labels.index("a.sgf") > labels.index("a/b.sgf") > labels.index("A/c.SGF")  # by parts, as pathlib


def sized_files(tmp_path: Path, sizes: list[int]) -> list[tuple[Path, str]]:
    files = []
    for i, size in enumerate(sizes):
        path = tmp_path / f"{i:02d}.sgf"
        path.write_bytes(b";B[aa]" * (size // 6))  # a move in 6 bytes: `size` bytes of moves
        files.append((path, path.name))
    return files


def labels_of(groups) -> list[list[str]]:
    return [[label for _, label in group] for group in groups]


def test_group_files_keeps_file_order_and_makes_as_many_groups_as_the_target_needs(tmp_path):
    files = sized_files(tmp_path, [600, 600, 600, 3000, 60])  # augment none: 6 bytes per row
    groups = group_files(files, EncodeOptions(augment="none"), target_rows=250)  # 810 rows: 4 groups
    assert labels_of(groups) == [["00.sgf", "01.sgf"], ["02.sgf"], ["03.sgf"], ["04.sgf"]]
    for tiny in (1, 0):
        assert labels_of(group_files(files, EncodeOptions(augment="none"), target_rows=tiny)) == [
            [label] for _, label in files]  # never an empty group, never a file split or repeated
    (tmp_path / "empty").mkdir()
    assert labels_of(group_files(sized_files(tmp_path / "empty", [0, 0]), EncodeOptions(), 100)) == [
        ["00.sgf", "01.sgf"]]
    assert group_files([], EncodeOptions(), 100) == []


def test_group_files_spreads_a_small_dataset_evenly_over_min_shards_without_tiny_ones(tmp_path):
    files = sized_files(tmp_path, [8_000 * 6 // 8] * 64)  # 8,000 rows each (all8: 8 rows per 6 bytes)
    groups = group_files(files, EncodeOptions(), target_rows=200_000)
    assert len(groups) == encode_task.MIN_SHARDS  # 512k rows: 16 shards of 32k, not 3 of up to 200k
    assert {len(group) for group in groups} == {4}  # even: 2, 4, 8 or 16 workers finish together
    assert [label for group in groups for _, label in group] == [label for _, label in files]
    few = group_files(files[:8], EncodeOptions(), target_rows=200_000)
    assert [len(group) for group in few] == [3, 2, 3]  # 64k rows: 3 shards of >= MIN_SHARD_ROWS (20k)
    many = group_files(files, EncodeOptions(), target_rows=20_000)
    assert len(many) == 26  # 512k / 20k: past MIN_SHARDS the target sets the count


def test_shards_are_planned_by_moves_not_bytes_so_commented_games_do_not_skew_them(tmp_path):
    game = b"(;GM[1]SZ[19]" + b";B[dd];W[pp]" * 50  # 100 moves
    files = []
    for i in range(32):  # every other file is padded with comments: 100 moves in 40 times the bytes
        path = tmp_path / f"{i:02d}.sgf"
        path.write_bytes((game + (b"C[" + b"a long review comment " * 200 + b"]" if i % 2 else b"") + b")") * 25)
        files.append((path, path.name))
    assert encode_task.count_moves(files[1][0]) == encode_task.count_moves(files[0][0]) == 2_500
    groups = group_files(files, EncodeOptions(), target_rows=100_000)  # 32 files x 20,000 rows: 7 shards
    rows = [sum(encode_task.count_moves(path) * 8 for path, _ in group) for group in groups]
    assert max(rows) <= 2 * min(rows), rows  # by bytes: one shard of 1 padded file beside 31 plain ones


def test_default_shards_hold_about_100_mib_of_planes_whatever_the_board():
    rows = {size: encode_task.default_target_rows(EncodeOptions(size=size)) for size in (9, 13, 19)}
    assert rows == {9: 100 * 2**20 // 173, 13: 100 * 2**20 // 360, 19: 100 * 2**20 // 768}  # agz17 bytes
    assert encode_task.default_target_rows(EncodeOptions(encoder="oneplane", size=9)) == encode_task.MAX_SHARD_ROWS


def test_shard_key_follows_file_bytes_labels_and_options_only(tmp_path):
    path = tmp_path / "a.sgf"
    path.write_bytes(b"(;GM[1])")
    group, options = [(path, "a.sgf")], EncodeOptions()
    key = shard_key(group, options)
    assert shard_key(group, EncodeOptions()) == key
    assert shard_key([(path, "b.sgf")], options) != key
    assert shard_key(group, EncodeOptions(augment="none")) != key
    path.write_bytes(b"(;GM[1]SZ[9])")
    assert shard_key(group, options) != key


def test_plan_shards_saves_the_plan_and_clears_temp_files(tmp_path, mixed):
    dataset = tmp_path / "dataset"
    (datasets.work_dir(dataset)).mkdir(parents=True)
    (dataset / f"{TEMP_PREFIX}shard-00000.parquet.abc").write_bytes(b"half")
    _, plan, _ = build(tmp_path, mixed, EncodeOptions(), shards=slice(0))
    saved = json.loads((datasets.work_dir(dataset) / "plan.json").read_text())
    assert [spec["key"] for spec in saved] == [spec.key for spec in plan]
    assert sorted(label for spec in plan for label in spec.labels) == sorted(f"corpus/{n}" for n in mixed.files)
    assert not any(p.name.startswith(TEMP_PREFIX) for p in dataset.rglob("*"))


# --- exact rows and quarantine -----------------------------------------------------------------------

@pytest.mark.parametrize("augment", sorted(FACTOR))
def test_rows_are_every_accepted_move_times_the_augmentation(tmp_path, mixed, augment):
    dataset, plan, manifest = build(tmp_path, mixed, EncodeOptions(augment=augment))
    rows = read_rows(datasets.shard_paths(dataset))
    assert len(plan) > 3
    assert manifest["rows"] == len(rows["planes"]) == mixed.expected_rows(FACTOR[augment])
    assert len(set(position_keys(rows))) == len(rows["planes"])
    assert sorted(set(rows["source"].tolist())) == sorted(mixed.records_by_source("corpus/"))


@pytest.mark.parametrize("augment", sorted(FACTOR))
def test_quarantine_holds_exactly_the_broken_games(tmp_path, mixed, augment):
    dataset, _, manifest = build(tmp_path, mixed, EncodeOptions(augment=augment))
    expected = mixed.expected_quarantine("corpus/")
    assert quarantine_of(dataset) == expected
    assert manifest["games_refused"] == len(expected)
    assert manifest["games_accepted"] == len(mixed.accepted)


@pytest.mark.parametrize("augment", ["random1", "all8"])
def test_rows_decode_to_the_positions_moves_and_results_of_their_games(tmp_path, mixed, augment):
    dataset, _, _ = build(tmp_path, mixed, EncodeOptions(augment=augment))
    assert_rows_match_games(read_rows(datasets.shard_paths(dataset)), mixed.records_by_source("corpus/"))


def test_a_broken_line_of_an_sgfs_file_costs_only_that_line(tmp_path):
    games = agent_records(4)
    lines = [sgf_text(games[0]), sgf_text(games[1])[:-1], sgf_text(games[2]), sgf_text(games[3])]
    corpus = CorpusBuilder().collection("games.sgfs", [
        (lines[0], games[0], None), (lines[1], None, "syntax"), (lines[2], games[2], None),
        (lines[3], games[3], None)]).build()
    dataset, _, manifest = build(tmp_path, corpus, EncodeOptions(augment="none"))
    assert manifest["rows"] == corpus.expected_rows(1)
    assert quarantine_of(dataset) == {("corpus/games.sgfs", 1, "syntax")}
    assert set(read_rows(datasets.shard_paths(dataset))["source"].tolist()) == {
        "corpus/games.sgfs#0", "corpus/games.sgfs#2", "corpus/games.sgfs#3"}


def test_duplicates_across_shards_are_removed_and_quarantined(tmp_path):
    games = agent_records(4)
    twin = dataclasses.replace(games[0], player_black="Someone", player_white="Else", komi=6.5)
    builder = CorpusBuilder()
    for i, record in enumerate(games):
        builder.game(f"g{i}.sgf", record)
    corpus = builder.game("z-twin.sgf", twin, "duplicate").build()
    dataset, plan, manifest = build(tmp_path, corpus, EncodeOptions(augment="none"), target_rows=1)
    assert len(plan) == len(corpus.files)  # one file per shard: the twin is alone in the last one
    rows = read_rows(datasets.shard_paths(dataset))
    assert manifest["rows"] == len(rows["planes"]) == corpus.expected_rows(1)
    assert "corpus/z-twin.sgf#0" not in set(rows["source"].tolist())
    assert quarantine_of(dataset) == {("corpus/z-twin.sgf", 0, "duplicate")}
    assert len(manifest["shards"]) == len(games)  # the twin's shard lost all its rows
    assert visible_files(dataset) == {s["file"] for s in manifest["shards"]} | {"manifest.json", "quarantine.parquet"}


# --- reruns and crashes --------------------------------------------------------------------------

def test_encoding_a_recorded_shard_again_returns_its_stats_without_encoding(tmp_path, mixed, monkeypatch):
    options = EncodeOptions(augment="none")
    dataset, plan, _ = build(tmp_path, mixed, options, shards=slice(0, 2))
    first = [datasets.shard_done(dataset, spec.key) for spec in plan[:2]]

    class NoEncoding:
        def __init__(self, *args, **kwargs):
            raise AssertionError("a recorded shard was encoded again")

    monkeypatch.setattr(encode_task, "ShardEncoder", NoEncoding)
    assert [encode_shard.fn(spec, str(dataset), options) for spec in plan[:2]] == first


def test_a_second_run_creates_and_rewrites_no_file(tmp_path, mixed):
    dataset, _, manifest = build(tmp_path, mixed, EncodeOptions())
    before = files_of(dataset)
    _, _, again = build(tmp_path, mixed, EncodeOptions())
    assert files_of(dataset) == before
    assert again == manifest


def test_a_rerun_after_a_crash_completes_the_dataset_without_duplicate_rows(tmp_path, mixed):
    options = EncodeOptions()
    dataset, plan, _ = build(tmp_path, mixed, options, shards=slice(0, 3))
    # The crash: shard 2 reached the disk but not its stats; temp files of unfinished writes remain.
    (datasets.work_dir(dataset) / f"stats-{plan[2].key}.json").unlink()
    (dataset / f"{TEMP_PREFIX}shard-00003-{plan[3].key[:8]}.parquet.x9").write_bytes(b"PAR1 partial")
    (datasets.work_dir(dataset) / f"{TEMP_PREFIX}stats-{plan[3].key}.json.x9").write_bytes(b"{")
    _, _, manifest = build(tmp_path, mixed, options)
    rows = read_rows(datasets.shard_paths(dataset))
    assert manifest["rows"] == len(rows["planes"]) == mixed.expected_rows(8)
    assert len(set(position_keys(rows))) == len(rows["planes"])
    assert Counter(Counter(zip(rows["source"].tolist(), rows["move_number"].tolist())).values()) == {
        8: mixed.expected_rows(1)}
    assert visible_files(dataset) == {s["file"] for s in manifest["shards"]} | {"manifest.json", "quarantine.parquet"}
    assert not any(p.name.startswith(TEMP_PREFIX) for p in dataset.rglob("*"))
    assert quarantine_of(dataset) == mixed.expected_quarantine("corpus/")


def test_a_shard_truncated_after_recording_is_encoded_again(tmp_path, mixed):
    options = EncodeOptions(augment="none")
    dataset, plan, manifest = build(tmp_path, mixed, options)
    shard = dataset / manifest["shards"][1]["file"]
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    _, _, again = build(tmp_path, mixed, options)
    assert again == manifest
    assert len(read_rows(datasets.shard_paths(dataset))["planes"]) == mixed.expected_rows(1)


def test_finalize_refuses_a_shard_that_is_not_on_disk(tmp_path, mixed):
    options = EncodeOptions(augment="none")
    dataset, plan, _ = build(tmp_path, mixed, options, shards=slice(None, 2))
    stats = [datasets.shard_done(dataset, spec.key) for spec in plan[:2]]
    (dataset / stats[1]["shard"]).unlink()
    with pytest.raises(datasets.DatasetError, match="rerun"):
        finalize_dataset.fn(str(dataset), plan[:2], options, ["corpus"])
    assert not (dataset / datasets.MANIFEST).exists()


def test_a_rebuild_that_fails_before_its_manifest_keeps_the_previous_dataset_whole(tmp_path, mixed, monkeypatch):
    options = EncodeOptions(augment="none")
    dataset, _, old = build(tmp_path, mixed, options)
    changed = tmp_path / "raw" / "corpus" / mixed.accepted[0].file  # in a shard with rows
    changed.write_bytes(changed.read_bytes() + b"\n")  # same games, new bytes: a new shard key

    def crash(*args, **kwargs):
        raise OSError("power cut")

    monkeypatch.setattr(datasets, "write_manifest", crash)
    with pytest.raises(OSError, match="power cut"):
        build(tmp_path, mixed, options)
    assert datasets.read_manifest(dataset) == old
    assert all(path.exists() for path in datasets.shard_paths(dataset))


def test_removing_the_original_of_a_duplicate_keeps_the_copy_on_rebuild(tmp_path):
    games = agent_records(2)
    builder = CorpusBuilder().game("a.sgf", games[0]).game("b.sgf", games[1])
    corpus = builder.game("c.sgf", dataclasses.replace(games[0], player_black="Someone"), "duplicate").build()
    options = EncodeOptions(augment="none")
    build(tmp_path, corpus, options, target_rows=1)
    (tmp_path / "raw" / "corpus" / "a.sgf").unlink()
    _, _, manifest = build(tmp_path, corpus, options, target_rows=1)
    assert manifest["rows"] == len(games[0].moves) + len(games[1].moves)  # c.sgf now holds the only copy


def test_an_encoding_process_freezes_its_imported_objects_once(tmp_path):
    script = ("import gc\n"
              "from tasks.encode import _freeze_imported_objects as freeze\n"
              "assert gc.get_freeze_count() == 0\n"
              "freeze()\n"
              "frozen = gc.get_freeze_count()\n"
              "later = [[i] for i in range(1000)]\n"
              "freeze()\n"
              "assert gc.get_freeze_count() == frozen > 10_000, (frozen, gc.get_freeze_count())\n")
    subprocess.run([sys.executable, "-c", script], check=True, cwd=Path(__file__).resolve().parents[2])
