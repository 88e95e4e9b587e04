"""Raw batches (decoded here or in worker processes): the same training tensors as decoded batches."""

from __future__ import annotations

import dataclasses
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
import torch

from gocore.nn.batch_device import batch_tensors
from storage import datasets
from storage.schemas import selfplay_table
from storage.stream import Batch, BatchStream, StreamFactory
from storage.stream_mix import MixedStreamFactory, join_batches
from tasks.app.rows import ROW_DECODER
from tests.storage.test_stream import POINTS, synthetic_columns, write_sgf_dataset

CPU = torch.device("cpu")


def write_aux_selfplay(root: Path, shards: int = 2, games: int = 16, moves: int = 20) -> list[Path]:
    """Self-play shards with ownership and score (null on every third game's rows)."""
    rng, paths = np.random.default_rng(5), []
    for shard in range(shards):
        columns = synthetic_columns(range(shard * games, (shard + 1) * games), moves, rng)
        rows = len(columns["move"])
        pi = rng.random((rows, POINTS + 1)).astype(np.float32)  # (R, N*N+1)
        score = rng.normal(0, 5, rows).astype(np.float32)  # (R,)
        score[(np.arange(rows) // moves) % 3 == 0] = np.nan
        columns.update(pi=pi / pi.sum(axis=1, keepdims=True), z=columns["value"],
                       generation=np.full(rows, shard, np.int32), model_version=np.full(rows, "v1", object),
                       ownership=rng.integers(-1, 2, (rows, POINTS)).astype(np.int8), score=score)
        paths.append(root / f"selfplay-{shard}.parquet")
        datasets.write_parquet(paths[-1], selfplay_table(columns), row_group_size=120)
    return paths


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | list[Path]]:
    root = tmp_path_factory.mktemp("workers")
    return {"sgf": write_sgf_dataset(root / "sgf"), "selfplay": write_aux_selfplay(root / "selfplay")}


def tensors(batches: list[Batch]) -> list[dict[str, torch.Tensor]]:
    return [batch_tensors(batch, CPU) for batch in batches]


def assert_same(left: list[dict[str, torch.Tensor]], right: list[dict[str, torch.Tensor]]) -> None:
    assert len(left) == len(right) > 0
    for a, b in zip(left, right):
        assert a.keys() == b.keys()
        for name in a:
            assert a[name].dtype == b[name].dtype, name
            torch.testing.assert_close(a[name], b[name], rtol=0, atol=0, msg=name)


@pytest.mark.parametrize("kind", ["sgf", "selfplay"])
def test_zero_one_and_two_workers_give_the_same_batches(sources: dict, kind: str) -> None:
    options = {"batch_size": 32, "shuffle_buffer": 200, "seed": 3, "random_symmetry": True,
               "aux_targets": kind == "selfplay", "epochs": 2}
    runs = {workers: list(BatchStream(sources[kind], decoder=ROW_DECODER, workers=workers, **options))
            for workers in (0, 1, 2)}
    assert not runs[0][0].symmetry_pending and runs[1][0].symmetry_pending and runs[2][0].symmetry_pending
    assert runs[2][0].planes.dtype == np.uint8  # shipped as bytes, made float on the device
    assert len({int(k) for b in runs[0] for k in b.symmetry}) == 8  # every symmetry was exercised
    assert_same(tensors(runs[0]), tensors(runs[1]))
    assert_same(tensors(runs[0]), tensors(runs[2]))


def test_a_resumed_stream_with_workers_continues_where_the_in_process_one_was(sources: dict) -> None:
    factory = StreamFactory(sources["selfplay"], 24, ROW_DECODER, shuffle_buffer=150, seed=4,
                            random_symmetry=True, aux_targets=True)
    workers = dataclasses.replace(factory, loader_workers=2)
    uninterrupted = tensors(list(islice(factory("train", 0), 9)))
    resumed = tensors(list(islice(workers("train", 5), 4)))
    assert_same(uninterrupted[5:], resumed)


def test_validation_streams_decode_in_process(sources: dict) -> None:
    factory = StreamFactory(sources["sgf"], 16, ROW_DECODER, loader_workers=2)
    assert factory("val").workers == 0 and factory("train").workers == 2


def test_mixed_raw_batches_match_mixed_decoded_ones(sources: dict) -> None:
    def mixed(workers: int) -> MixedStreamFactory:
        return MixedStreamFactory(
            StreamFactory(sources["selfplay"], 24, ROW_DECODER, shuffle_buffer=150, seed=2, random_symmetry=True,
                          loader_workers=workers),
            StreamFactory(sources["sgf"], 8, ROW_DECODER, shuffle_buffer=150, seed=3, random_symmetry=True,
                          loader_workers=workers))
    assert_same(tensors(list(islice(mixed(0)("train", 0), 3))), tensors(list(islice(mixed(1)("train", 0), 3))))


def test_raw_and_decoded_batches_do_not_join(sources: dict) -> None:
    raw = next(iter(BatchStream(sources["sgf"], 8, decoder=ROW_DECODER, workers=1, epochs=1)))
    decoded = next(iter(BatchStream(sources["sgf"], 8, decoder=ROW_DECODER, epochs=1)))
    with pytest.raises(ValueError, match="raw batch"):
        join_batches(raw, decoded)


def test_a_failing_worker_raises_in_the_consumer(tmp_path: Path) -> None:
    root = write_sgf_dataset(tmp_path / "sgf", shards=1)
    stream = BatchStream(root, 8, decoder=_BrokenDecoder(), workers=2, epochs=1)
    with pytest.raises(ValueError, match="broken on purpose"):
        list(stream)


class _BrokenDecoder:
    """A decoder whose unpack fails (in the worker process)."""

    def row_bytes(self, encoder: str, size: int) -> int:
        return ROW_DECODER.row_bytes(encoder, size)

    def unpack(self, packed: np.ndarray, encoder: str, size: int) -> np.ndarray:
        raise ValueError("broken on purpose")


def test_closing_a_stream_ends_its_worker_processes(sources: dict) -> None:
    psutil = pytest.importorskip("psutil")
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    stream = iter(BatchStream(sources["sgf"], 16, decoder=ROW_DECODER, workers=2, shuffle_buffer=100))
    next(stream), next(stream), next(stream)
    workers = [p for p in me.children(recursive=True)  # spawned: our children (beside multiprocessing's
               if p.pid not in before and "resource_tracker" not in " ".join(p.cmdline())]  # resource tracker)
    assert len(workers) == 2
    stream.close()
    _, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive
