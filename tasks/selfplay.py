"""Prefect task of self-play: one model plays a batch of games, written as one Parquet shard + SGF.

`selfplay_games` (mapped over workers by flows/selfplay.py) loads the model, plays `games` games
in lockstep (`gocore.search.selfplay.play`: every search round of every game is one network batch) and
writes, under ``<data>/selfplay/gen=<k>/``:

    games/<game id>.sgf              every game (atomic, one file each)
    shard-s<seed>.parquet            the rows, storage.stream.SELFPLAY_SCHEMA (atomic)
    shard-s<seed>.json               the sidecar: settings and counts, written last

A batch is named by (generation, seed): a rerun finds the sidecar and returns its counts
without playing; the same (generation, seed) with other settings is refused, not overwritten.

Models (`model_uri`):

    models:/NAME/VERSION, models:/NAME@ALIAS   a registered net (storage.registry)
    a model directory                           a saved net (storage.checkpoints.save_model)
    uniform                                     no net: uniform priors and value 0
                                                (gocore.nn.inference.UniformEvaluator); for tests
                                                and smoke runs, rows use `encoder`
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.errors import GozeroError
from gocore.rules import sgf
from gocore.search.mcts import SELFPLAY
from gocore.search.selfplay import SelfPlayConfig, play
from storage import layout
from storage.atomic import write_bytes, write_json
from storage.datasets import write_parquet
from tasks.models import ModelError, load_model

if TYPE_CHECKING:
    from gocore.nn.inference import Evaluator

UNIFORM = "uniform"
GAMES_DIR = "games"


class SelfPlayError(GozeroError, ValueError):
    """A self-play request that cannot be played as asked (model, board, or a conflicting rerun)."""


def shard_path(data: Path, generation: int, seed: int) -> Path:
    """The Parquet shard of the batch (generation, seed)."""
    return layout.selfplay_dir(data, generation) / f"shard-s{seed}.parquet"


def sidecar_path(data: Path, generation: int, seed: int) -> Path:
    """The sidecar that marks the batch (generation, seed) finished; written last."""
    return shard_path(data, generation, seed).with_suffix(".json")


@task(cache_policy=NO_CACHE)
def selfplay_games(model_uri: str, games: int, sims: int, generation: int, seed: int, data_dir: str,
                   size: int = 9, komi: float = 7.5, encoder: str = "agz17", max_moves: int | None = None,
                   resign_threshold: float | None = -0.9, torch_threads: int | None = 1) -> dict[str, Any]:
    """Play `games` self-play games with one model; one shard + SGF under gen=<generation>; the counts."""
    return play_shard(model_uri, games, sims, generation, seed, data_dir, size=size, komi=komi,
                      encoder=encoder, max_moves=max_moves, resign_threshold=resign_threshold,
                      torch_threads=torch_threads)


def play_shard(model_uri: str, games: int, sims: int, generation: int, seed: int, data_dir: str,
               size: int = 9, komi: float = 7.5, encoder: str = "agz17", max_moves: int | None = None,
               resign_threshold: float | None = -0.9, torch_threads: int | None = 1) -> dict[str, Any]:
    """The task's work without Prefect (see `selfplay_games`)."""
    data = Path(data_dir)
    settings = {"model": model_uri, "games": games, "sims": sims, "size": size, "komi": komi,
                "encoder": encoder, "max_moves": max_moves, "resign_threshold": resign_threshold}
    done = finished_batch(data, generation, seed, settings)
    if done is not None:
        return {**done, "skipped": True}
    started = time.perf_counter()
    with _torch_threads(torch_threads):
        evaluator, model_version, net_encoder = load_evaluator(model_uri, size, str(data))
        config = SelfPlayConfig(size=size, komi=komi, encoder=net_encoder or encoder,
                                search=SELFPLAY.replace(simulations=sims, max_moves=max_moves,
                                                        resign_threshold=resign_threshold))
        batch = play(evaluator, config, games, generation=generation, seed=seed, model_version=model_version)
    return _write_batch(data, generation, seed, settings, batch, model_version, time.perf_counter() - started)


def finished_batch(data: Path, generation: int, seed: int, settings: dict[str, Any]) -> dict[str, Any] | None:
    """The sidecar of a finished batch with these settings; None if it must be played."""
    sidecar, shard = sidecar_path(data, generation, seed), shard_path(data, generation, seed)
    if not sidecar.exists():
        return None
    stats = json.loads(sidecar.read_text())
    if not shard.exists() or shard.stat().st_size != stats["bytes"]:
        return None  # the shard was lost or replaced after the sidecar: play again
    if stats["settings"] != settings:
        raise SelfPlayError(f"gen={generation} seed={seed} was played with other settings "
                            f"({stats['settings']}): use another seed or generation")
    return stats


def _write_batch(data: Path, generation: int, seed: int, settings: dict[str, Any], batch: Any,
                 model_version: str, seconds: float) -> dict[str, Any]:
    """SGF files, then the shard, then the sidecar (last: it marks the batch finished)."""
    from storage.stream import selfplay_table

    games_dir = layout.selfplay_dir(data, generation) / GAMES_DIR
    for game_id, record in zip(batch.game_ids, batch.records):
        write_bytes(games_dir / f"{game_id}.sgf", sgf.write(record).encode())
    shard = shard_path(data, generation, seed)
    size_bytes = write_parquet(shard, selfplay_table(batch.columns))
    stats = {**batch.stats, "generation": generation, "seed": seed, "model_version": model_version,
             "shard": str(shard), "bytes": size_bytes, "rows": len(batch.columns["z"]),
             "game_ids": batch.game_ids, "seconds": round(seconds, 3), "settings": settings}
    write_json(sidecar_path(data, generation, seed), stats)
    return {**stats, "skipped": False}


def load_evaluator(model_uri: str, size: int, data_dir: str | None) -> tuple[Evaluator, str, str | None]:
    """(evaluator, model version label, the net's encoder or None) for a model URI, dir or ``uniform``."""
    from gocore.nn.inference import NetEvaluator, UniformEvaluator

    if model_uri == UNIFORM:
        return UniformEvaluator(), UNIFORM, None
    try:
        loaded = load_model(model_uri, data_dir)
    except ModelError as error:
        raise SelfPlayError(str(error)) from error
    net = loaded.net
    if net.config.board_size != size:
        raise SelfPlayError(f"{model_uri} plays {net.config.board_size}x{net.config.board_size}, "
                            f"not {size}x{size}")
    evaluator = NetEvaluator(net)
    return evaluator, loaded.version, evaluator.encoder


@contextlib.contextmanager
def _torch_threads(count: int | None) -> Iterator[None]:
    """torch on `count` threads inside (pool workers share the cores), the old count restored after."""
    import torch

    previous = torch.get_num_threads()
    if count:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
