"""storage.selfplay: a batch's files (SGF, shard, sidecar last), the finished-batch check, progress counts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from storage import selfplay
from storage.schemas import SELFPLAY_SCHEMA


def columns(rows: int) -> dict[str, np.ndarray]:
    """SELFPLAY_SCHEMA columns of `rows` 5x5 rows of one game."""
    pi = np.full((rows, 26), 1 / 26, np.float32)
    return {"encoder": np.full(rows, "oneplane", object), "size": np.full(rows, 5, np.int8),
            "planes": np.zeros((rows, 7), np.uint8), "pi": pi, "z": np.ones(rows, np.int8),
            "game_id": np.full(rows, "g", object), "move_number": np.arange(rows, dtype=np.int16),
            "generation": np.zeros(rows, np.int32), "model_version": np.full(rows, "v", object),
            "symmetry": np.zeros(rows, np.int8), "komi": np.full(rows, 7.5, np.float32)}


def write(data: Path, seed: int, games: int, generation: int = 2) -> dict:
    return selfplay.write_batch(data, generation, seed, columns(3), {f"g{seed}": "(;GM[1]SZ[5])"},
                                {"games": games, "settings": {"sims": 4}})


def test_a_batch_writes_its_games_shard_and_sidecar_and_reads_back_finished(tmp_path: Path) -> None:
    sidecar = write(tmp_path, 7, 1)
    assert sidecar["shard"] == str(selfplay.shard_path(tmp_path, 2, 7)) and sidecar["bytes"] > 0
    assert pq.read_schema(sidecar["shard"]).equals(SELFPLAY_SCHEMA)
    assert selfplay.game_path(tmp_path, 2, "g7").read_text() == "(;GM[1]SZ[5])"
    assert selfplay.read_finished(tmp_path, 2, 7) == sidecar
    assert selfplay.read_finished(tmp_path, 2, 8) is None


def test_a_batch_whose_shard_changed_or_vanished_is_not_finished(tmp_path: Path) -> None:
    write(tmp_path, 1, 1)
    shard = selfplay.shard_path(tmp_path, 2, 1)
    shard.write_bytes(shard.read_bytes() + b"x")
    assert selfplay.read_finished(tmp_path, 2, 1) is None
    shard.unlink()
    assert selfplay.read_finished(tmp_path, 2, 1) is None


def test_progress_counts_the_games_of_finished_batches_among_the_seeds(tmp_path: Path) -> None:
    write(tmp_path, 0, 3)
    write(tmp_path, 1, 2)
    write(tmp_path, 5, 4)  # another run's seed
    selfplay.sidecar_path(tmp_path, 2, 2).write_text("{")  # being written
    assert selfplay.games_done(tmp_path, 2, [0, 1, 2, 3]) == 5


def test_the_shard_table_built_from_buffers_equals_pyarrows_conversion() -> None:
    # schemas builds the plain columns from buffers (no pandas): the same values and nulls as pa.array
    import pyarrow as pa

    from storage.schemas import selfplay_table

    rows = 5
    given = {**columns(rows), "game_id": np.array(["g-0", "g-0", "partie-é", "g-2", "g-2"], object),
             "komi": np.array([7.5, 6.5, 0.5, -3, 7.5], np.float32),
             "ownership": np.zeros((rows, 25), np.int8), "score": np.array([1.5, np.nan, -2, np.nan, 0], np.float32)}
    table = selfplay_table(given)
    table.validate(full=True)
    for name in ("encoder", "size", "z", "game_id", "move_number", "generation", "model_version", "symmetry",
                 "komi", "score"):
        expected = pa.array(given[name], type=SELFPLAY_SCHEMA.field(name).type, from_pandas=True)
        assert table.column(name).combine_chunks().equals(expected), name
    assert table.column("score").null_count == 2 and table.column("ownership").null_count == 2
    assert selfplay_table({name: value[:0] for name, value in given.items()}).num_rows == 0


def test_the_first_split_holds_once_a_batch_of_it_finished_and_not_before(tmp_path: Path) -> None:
    assert selfplay.pin_split(tmp_path, 2, 4, 10, 2) == 2  # 4 games from seed 10: batches 10, 11
    assert selfplay.pin_split(tmp_path, 2, 4, 10, 4) == 4  # nothing played yet: a rerun may choose again
    assert selfplay.read_split(tmp_path, 2, 4, 10) == 4
    write(tmp_path, 10, 4)  # the batch of seed 10 under that split finished
    assert selfplay.pin_split(tmp_path, 2, 4, 10, 1) == 4  # fewer workers now: the first split holds
    assert selfplay.read_split(tmp_path, 2, 8, 10) is None  # another generation size is another plan


def test_finished_batches_of_another_self_play_are_refused_not_read_beside_the_new_games(tmp_path: Path) -> None:
    assert selfplay.pin_split(tmp_path, 3, 4, 0, 2) == 2  # 4 games from seed 0: batches 0, 1
    write(tmp_path, 0, 2, generation=3)
    write(tmp_path, 1, 2, generation=3)
    assert selfplay.pin_split(tmp_path, 3, 4, 0, 4) == 2  # the same games again: the first split holds
    with pytest.raises(selfplay.SelfPlayFilesError, match=r"gen=3 .*seeds 0, 1\).*new generation"):
        selfplay.pin_split(tmp_path, 3, 6, 10, 3)  # other games and seed: 0 and 1 are not theirs
    with pytest.raises(selfplay.SelfPlayFilesError, match=r"seeds 1\)"):
        selfplay.pin_split(tmp_path, 3, 2, 0, 2)  # fewer games from seed 0: batch 1 is not theirs
    assert selfplay.read_split(tmp_path, 3, 4, 0) == 2  # refusals leave the plan as it was
    assert selfplay.pin_split(tmp_path, 4, 6, 10, 3) == 3  # another generation is free


def test_plan_batches_splits_games_with_consecutive_seeds():
    assert selfplay.plan_batches(5, 2, 10) == [(10, 2), (11, 2), (12, 1)]
    assert selfplay.plan_batches(4, 8, 0) == [(0, 4)]


def test_a_generation_written_before_plan_json_keeps_the_split_its_batches_show(tmp_path: Path) -> None:
    write(tmp_path, 5, 2, generation=1)  # 6 games from seed 5 in tasks of 2; no plan.json (older data)
    write(tmp_path, 7, 2, generation=1)
    assert selfplay.pin_split(tmp_path, 1, 6, 5, 3) == 2  # other workers now: the batches' own split holds
    assert selfplay.read_split(tmp_path, 1, 6, 5) == 2
    assert selfplay.pin_split(tmp_path, 1, 6, 5, 6) == 2  # and stays pinned
    write(tmp_path, 9, 1, generation=2)  # a lone short batch at seed 9 of 6 games from seed 5 ...
    with pytest.raises(selfplay.SelfPlayFilesError, match=r"seeds 9\)"):
        selfplay.pin_split(tmp_path, 2, 4, 5, 2)  # ... is in no split of 4 games from seed 5
