"""`--dask-address`: the ingest and self-play flows run their tasks on a real (local) Dask cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from gocore.play.match import play_game
from gocore.rules import sgf
from gocore.search.agents import RandomAgent
from storage import datasets


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local:
        yield local


def test_ingest_and_selfplay_run_on_a_dask_cluster(prefect_harness, cluster, tmp_path: Path):
    from flows.ingest import run_ingest
    from flows.selfplay import run_selfplay

    folder = tmp_path / "sgf"
    folder.mkdir()
    moves = 0
    for i in range(6):
        game = play_game(RandomAgent(seed=i), RandomAgent(seed=50 + i), size=9, max_moves=40)
        (folder / f"g{i}.sgf").write_text(sgf.write(sgf.GameRecord(size=9, moves=game.moves, winner=game.winner,
                                                                   result=game.result)))
        moves += len(game.moves)
    data = tmp_path / "data"
    facts = run_ingest([str(folder)], "on-dask", str(data), dask_address=cluster.scheduler_address,
                       target_rows=moves * 8 // 3)
    manifest = datasets.read_manifest(data / "datasets" / "on-dask")
    assert len(manifest["shards"]) >= 2 and facts.rows == manifest["rows"] == moves * 8

    summary = run_selfplay(model="uniform", games=4, sims=4, generation=0, data_dir=str(data), size=5,
                           dask_address=cluster.scheduler_address, games_per_task=2)
    assert summary.counts.games == 4
    assert len(list((data / "selfplay" / "gen=0").glob("shard-*.parquet"))) == 2
