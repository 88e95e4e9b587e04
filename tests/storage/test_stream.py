"""Batch streaming: every row once per epoch, game-split validation, bounded buffer, symmetry, seeds."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from gocore.nn.features import pack_planes
from gocore.rules import symmetry
from storage import datasets
from storage.memory_batches import InMemoryBatches
from storage.schemas import SELFPLAY_SCHEMA, encode_pi, rows_table, selfplay_table
from storage.shuffle import ShuffleBuffer, game_bucket
from storage.stream import Batch, BatchStream, StreamFactory
from storage.stream_columns import decode_pi
from storage.stream_mix import MixedStreamFactory
from tasks.app.rows import ROW_DECODER, transform_pi

SIZE = 5
POINTS = SIZE * SIZE


def synthetic_columns(games: range, moves_per_game: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """oneplane rows whose plane 0 marks the move (empty for pass) and plane 1 is noise."""
    rows = len(games) * moves_per_game
    move = rng.integers(0, POINTS + 1, rows)  # (R,)
    planes = np.zeros((rows, 2, POINTS + 1), np.uint8)
    planes[np.arange(rows), 0, move] = 1
    planes[:, 1, :POINTS] = rng.integers(0, 2, (rows, POINTS))
    planes = planes[:, :, :POINTS].reshape(rows, 2, SIZE, SIZE)  # (R, 2, N, N)
    return {"encoder": np.full(rows, "oneplane", object), "size": np.full(rows, SIZE, np.int8),
            "planes": pack_planes(planes), "move": move.astype(np.int16),
            "value": rng.choice(np.array([-1, 1], np.int8), rows),
            "game_id": np.repeat([f"game-{g:05d}" for g in games], moves_per_game).astype(object),
            "move_number": np.tile(np.arange(moves_per_game, dtype=np.int16), len(games)),
            "symmetry": np.zeros(rows, np.int8), "komi": np.full(rows, 7.5, np.float32),
            "source": np.full(rows, "synthetic", object)}


def write_sgf_dataset(root: Path, shards: int = 3, games_per_shard: int = 40, moves_per_game: int = 25,
                      row_group_size: int = 200, seed: int = 0) -> Path:
    """A dataset in ROW_SCHEMA with a manifest, several shards of several row groups each."""
    rng, listed = np.random.default_rng(seed), []
    for shard in range(shards):
        games = range(shard * games_per_shard, (shard + 1) * games_per_shard)
        columns = synthetic_columns(games, moves_per_game, rng)
        name = f"shard-{shard:05d}.parquet"
        size = datasets.write_parquet(root / name, rows_table(columns), row_group_size=row_group_size)
        listed.append({"file": name, "rows": len(columns["move"]), "bytes": size, "key": str(shard)})
    datasets.write_manifest(root, {"shards": listed, "rows": sum(s["rows"] for s in listed)})
    return root


def write_selfplay_shards(root: Path, shards: int = 2, games_per_shard: int = 20, moves_per_game: int = 20
                          ) -> list[Path]:
    """Self-play shards whose pi is proportional to plane 1 plus a little pass."""
    rng, paths = np.random.default_rng(1), []
    for shard in range(shards):
        columns = synthetic_columns(range(shard * games_per_shard, (shard + 1) * games_per_shard),
                                    moves_per_game, rng)
        noise = np.unpackbits(columns["planes"], axis=1, count=2 * POINTS)[:, POINTS:].astype(np.float32)
        pi = np.concatenate([noise + 0.01, np.full((len(noise), 1), 0.05, np.float32)], axis=1)
        columns.update(pi=pi / pi.sum(axis=1, keepdims=True), z=columns["value"],
                       generation=np.full(len(pi), shard, np.int32), model_version=np.full(len(pi), "v1", object))
        paths.append(root / f"selfplay-{shard}.parquet")
        datasets.write_parquet(paths[-1], selfplay_table(columns), row_group_size=150)
    return paths


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 shards x 1,000 rows in row groups of 200; 120 games of 25 moves."""
    return write_sgf_dataset(tmp_path_factory.mktemp("stream") / "dataset")


def row_keys(batches: list[Batch]) -> list[tuple[str, int]]:
    """(game_id, move_number) of every row read, in order."""
    return [(g, int(m)) for b in batches for g, m in zip(b.game_id, b.move_number)]


def read_all(source: Path | list[Path], **options) -> list[Batch]:
    options = {"batch_size": 64, "epochs": 1, "ids": True, "shuffle_buffer": 300, **options}
    return list(BatchStream(source, options.pop("batch_size"), decoder=ROW_DECODER, **options))


def test_every_row_is_read_exactly_once_per_epoch(dataset: Path) -> None:
    all_rows = {(f"game-{g:05d}", m) for g in range(120) for m in range(25)}
    train, val = read_all(dataset, split="train"), read_all(dataset, split="val")
    assert Counter(row_keys(train) + row_keys(val)) == Counter(all_rows)
    twice = Counter(row_keys(read_all(dataset, split="train", epochs=2)))
    assert set(twice.values()) == {2} and set(twice) == set(row_keys(train))


def test_validation_split_is_by_game_disjoint_and_stable(dataset: Path) -> None:
    val_games = {g for g, _ in row_keys(read_all(dataset, split="val", val_percent=20))}
    train_games = {g for g, _ in row_keys(read_all(dataset, split="train", val_percent=20, seed=9))}
    assert not val_games & train_games
    assert val_games == {f"game-{g:05d}" for g in range(120) if game_bucket(f"game-{g:05d}") < 20}
    assert 10 <= len(val_games) <= 40  # ~20% of 120 games
    again = {g for g, _ in row_keys(read_all(dataset, split="val", val_percent=20, seed=123))}
    assert again == val_games
    assert game_bucket("game-00001") == game_bucket("game-00001")  # no per-process hash salt
    assert not read_all(dataset, split="val", val_percent=0)


def test_shuffle_buffer_stays_within_its_size_on_a_bigger_dataset(dataset: Path) -> None:
    stream = BatchStream(dataset, 32, decoder=ROW_DECODER, shuffle_buffer=100, epochs=1, ids=True, val_percent=0)
    rows = row_keys(list(stream))
    assert len(rows) == len(set(rows)) == 3000  # 30x the buffer, all read
    assert stream.peak_buffered_rows == 100


def test_shuffle_buffer_takes_what_fits_and_returns_distinct_rows() -> None:
    buffer = ShuffleBuffer(10, np.random.default_rng(0))
    assert buffer.add({"x": np.arange(25)}) == 10 and len(buffer) == 10
    taken = buffer.take(4)["x"]
    assert len(buffer) == 6 and buffer.add({"x": np.arange(100, 125)}) == 4
    rest = buffer.take(10)["x"]
    assert sorted(np.concatenate([taken, rest])) == list(range(10)) + list(range(100, 104))


def test_rows_are_shuffled_across_shards(dataset: Path) -> None:
    first = read_all(dataset, batch_size=64, shuffle_buffer=500)[0]
    shards = {int(g.split("-")[1]) // 40 for g in first.game_id}
    assert len(shards) >= 2
    assert len(set(first.game_id)) > 10  # not one game's consecutive rows


def test_same_seed_same_batches_and_another_seed_differs(dataset: Path) -> None:
    def first_batches(seed: int) -> list[tuple[str, int]]:
        return row_keys(read_all(dataset, seed=seed, random_symmetry=True)[:5])

    assert first_batches(3) == first_batches(3)
    assert first_batches(3) != first_batches(4)


def test_skip_batches_continues_exactly_where_a_stream_was(dataset: Path) -> None:
    full = read_all(dataset, seed=5, random_symmetry=True, epochs=2)
    skipped = read_all(dataset, seed=5, random_symmetry=True, epochs=2, skip_batches=37)
    assert len(skipped) == len(full) - 37
    for a, b in zip(full[37:], skipped):
        assert np.array_equal(a.planes, b.planes) and np.array_equal(a.move, b.move)
        assert np.array_equal(a.symmetry, b.symmetry) and list(a.game_id) == list(b.game_id)


def test_random_symmetry_moves_planes_and_move_together(dataset: Path) -> None:
    batches = read_all(dataset, random_symmetry=True, seed=2)
    batch = batches[0]
    assert batch.planes.dtype == np.float32 and batch.planes.shape == (64, 2, SIZE, SIZE)
    assert len(set(np.concatenate([b.symmetry for b in batches]).tolist())) == 8
    for b in batches:
        marked = b.planes[:, 0].reshape(len(b), -1)  # (B, N*N): one 1 at the move, none for pass
        has_point = b.move < POINTS
        assert np.array_equal(marked.sum(axis=1), has_point.astype(np.float32))
        assert np.array_equal(marked[has_point].argmax(axis=1), b.move[has_point])


def test_random_symmetry_moves_pi_with_the_planes(tmp_path: Path) -> None:
    shards = write_selfplay_shards(tmp_path)
    plain = read_all(shards, seed=4)
    turned = read_all(shards, seed=4, random_symmetry=True)
    for a, b in zip(plain, turned):
        assert b.pi is not None and b.pi.shape == (len(b), POINTS + 1)
        assert np.allclose(b.pi.sum(axis=1), 1.0, atol=1e-5)
        board_pi = b.pi[:, :POINTS].reshape(-1, SIZE, SIZE)
        noise = b.planes[:, 1]  # pi was made from this plane: it must have turned with it
        assert np.allclose(board_pi, (noise + 0.01) * board_pi.max(axis=(1, 2), keepdims=True) / 1.01, atol=2e-3)
        for row, k in enumerate(b.symmetry):
            assert np.array_equal(b.planes[row], symmetry.apply(a.planes[row], int(k)))
        assert np.array_equal(b.move, symmetry.move_table(SIZE)[b.symmetry, a.move])
        assert np.array_equal(b.pi[:, -1], a.pi[:, -1])  # pass stays pass


def test_pi_column_round_trips_as_float16(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    pi = rng.dirichlet(np.full(POINTS + 1, 0.3), size=50).astype(np.float32)  # (R, N*N+1)
    column = encode_pi(pi)
    assert column.type == SELFPLAY_SCHEMA.field("pi").type
    assert len(column[0].as_py()) == 2 * (POINTS + 1)
    back = decode_pi(column)
    assert np.allclose(back, pi, atol=1e-3) and np.allclose(back.sum(axis=1), 1.0, atol=1e-6)
    with pytest.raises(ValueError):
        encode_pi(-pi)


def test_transform_pi_agrees_with_the_board_symmetry() -> None:
    rng = np.random.default_rng(0)
    pi = rng.random((8, POINTS + 1)).astype(np.float32)
    turned = transform_pi(pi, np.arange(8), SIZE)
    for k in range(8):
        board = pi[k, :POINTS].reshape(SIZE, SIZE)
        assert np.array_equal(turned[k, :POINTS].reshape(SIZE, SIZE), symmetry.apply(board, k))
        assert turned[k, POINTS] == pi[k, POINTS]


def test_selfplay_batches_carry_pi_z_and_the_most_visited_move(tmp_path: Path) -> None:
    shards = write_selfplay_shards(tmp_path)
    stream = BatchStream(shards, 50, decoder=ROW_DECODER, epochs=1, val_percent=0, prefetch=0)
    batches = list(stream)
    assert stream.is_selfplay and sum(len(b) for b in batches) == 2 * 20 * 20
    assert all(set(np.unique(b.value)) <= {-1.0, 1.0} for b in batches)
    assert all(np.array_equal(b.move, b.pi.argmax(axis=1)) for b in batches)  # stored frame: first of ties


def test_prefetch_thread_stops_when_the_consumer_does(dataset: Path) -> None:
    iterator = iter(BatchStream(dataset, 16, decoder=ROW_DECODER, epochs=None, prefetch=2))
    next(iterator)
    iterator.close()
    assert not [t for t in threading.enumerate() if t.name == "batch-stream"]


def test_reader_errors_reach_the_consumer(tmp_path: Path, dataset: Path) -> None:
    columns = synthetic_columns(range(3), 10, np.random.default_rng(0))
    columns["planes"] = columns["planes"][:, :-1]  # rows one byte short: not oneplane 5x5
    datasets.write_parquet(tmp_path / "bad.parquet", rows_table(columns))
    with pytest.raises(datasets.DatasetError, match="bytes long"):
        list(BatchStream([tmp_path / "bad.parquet"], 8, decoder=ROW_DECODER, epochs=1, val_percent=0))
    with pytest.raises(datasets.DatasetError, match="no manifest.json|has no"):
        BatchStream(tmp_path / "missing", 8, decoder=ROW_DECODER)
    mixed = [*datasets.shard_paths(dataset), *write_selfplay_shards(tmp_path)]
    with pytest.raises(datasets.DatasetError, match="mix"):
        BatchStream(mixed, 8, decoder=ROW_DECODER)


def test_factory_gives_an_endless_train_stream_and_one_validation_pass(dataset: Path) -> None:
    factory = StreamFactory(dataset, 64, ROW_DECODER, val_percent=20, shuffle_buffer=500, seed=1, random_symmetry=True)
    train = iter(factory("train", 0))
    assert sum(len(next(train)) for _ in range(60)) == 60 * 64  # more than the ~2,400 train rows
    train.close()
    val_rows = sum(len(b) for b in factory("val", 0))
    assert 0 < val_rows < 3000 * 0.4
    assert all(not b.symmetry.any() for b in factory("val", 0))


def test_a_mixed_stream_puts_a_fixed_share_of_expert_rows_in_every_train_batch(dataset: Path, tmp_path: Path) -> None:
    selfplay = tuple(write_selfplay_shards(tmp_path))
    factory = MixedStreamFactory(StreamFactory(selfplay, 48, ROW_DECODER, shuffle_buffer=200, seed=2),
                                 StreamFactory(dataset, 16, ROW_DECODER, shuffle_buffer=200, seed=3))
    train = iter(factory("train", 0))
    batches = [next(train) for _ in range(3)]
    for batch in batches:
        assert len(batch) == 64 and batch.pi.shape == (64, POINTS + 1)
        expert = batch.pi[48:]  # the expert rows' targets: one-hot on their moves
        assert (expert.sum(axis=1) == 1).all() and (expert[np.arange(16), batch.move[48:]] == 1).all()
        assert (batch.pi[:48].max(axis=1) < 1).all()  # self-play rows keep their search distributions
    resumed = next(iter(factory("train", 2)))
    assert np.array_equal(resumed.planes, batches[2].planes) and np.array_equal(resumed.pi, batches[2].pi)
    assert all(b.pi is not None and len(b) <= 48 for b in factory("val", 0))  # validation: self-play alone


def test_in_memory_batches_hold_the_same_samples(dataset: Path) -> None:
    batches = read_all(dataset, val_percent=0)
    memory = InMemoryBatches.collect(batches, batch_size=100, seed=0, epochs=1)
    assert len(memory) == 3000
    served = list(memory)
    assert len(served) == 30 and all(len(b) == 100 for b in served)
    assert served[0].planes.base is not None  # a view, not a copy
    key = lambda planes, moves: sorted(zip(moves.tolist(), planes.reshape(len(moves), -1).sum(1).tolist()))
    assert key(np.concatenate([b.planes for b in served]), np.concatenate([b.move for b in served])) == key(
        np.concatenate([b.planes for b in batches]), np.concatenate([b.move for b in batches]))


class CountingDecoder:
    """ROW_DECODER, counting its calls: the stream must decode a batch at a time, never a row."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def row_bytes(self, encoder: str, size: int) -> int:
        self.calls["row_bytes"] += 1
        return ROW_DECODER.row_bytes(encoder, size)

    def unpack(self, packed: np.ndarray, encoder: str, size: int) -> np.ndarray:
        self.calls["unpack"] += 1
        return ROW_DECODER.unpack(packed, encoder, size)

    def transform(self, planes, move, pi, symmetries, size):
        self.calls["transform"] += 1
        return ROW_DECODER.transform(planes, move, pi, symmetries, size)


def test_the_injected_decoder_is_called_once_per_batch_and_row_group(dataset: Path) -> None:
    decoder = CountingDecoder()
    batches = list(BatchStream(dataset, 64, decoder=decoder, epochs=1, val_percent=0, random_symmetry=True,
                               skip_batches=3, prefetch=0))
    assert decoder.calls["unpack"] == decoder.calls["transform"] == len(batches) == 3000 // 64 + 1 - 3
    assert decoder.calls["row_bytes"] == 15  # one per row group read: 3 shards x 5


def test_batches_are_the_ones_the_stream_gave_before_the_decoder_was_injected(tmp_path: Path) -> None:
    """Digests of a fixed-seed stream computed before the decode step moved to tasks/app/rows.py."""
    def digest(source, **options) -> str:
        hashed = hashlib.sha256()
        for batch in BatchStream(source, 32, decoder=ROW_DECODER, seed=3, epochs=2, shuffle_buffer=300,
                                 prefetch=0, skip_batches=2, **options):
            for array in (batch.planes, batch.move, batch.value, batch.pi, batch.symmetry):
                if array is not None:
                    hashed.update(np.ascontiguousarray(array).tobytes())
        return hashed.hexdigest()[:16]

    (tmp_path / "sgf").mkdir()
    sgf = write_sgf_dataset(tmp_path / "sgf")
    (tmp_path / "selfplay").mkdir()
    selfplay = write_selfplay_shards(tmp_path / "selfplay")
    assert digest(sgf, random_symmetry=True) == "54f72c646abb30d7"
    assert digest(sgf, split="val") == "0a5355c75c9b97c2"
    assert digest(selfplay, random_symmetry=True) == "a27fd487b415381f"
