"""Prefect task of self-play: one model plays a batch of games, written as one Parquet shard + SGF.

`selfplay_games` (mapped over workers by flows/selfplay.py with one `SelfPlaySettings`, declared in
`tasks.app.selfplay_settings`) loads the model, plays `games` games in lockstep
(`gocore.search.selfplay.play`: every search round of every game is one network batch) and writes
them through `storage.selfplay` under ``<data>/selfplay/gen=<k>/``: the games as SGF, the rows as a
shard, and a sidecar, last.

A batch is named by (generation, seed): a rerun finds the sidecar and returns its counts
without playing; the same (generation, seed) with other settings is refused, not overwritten.

Models (`SelfPlaySettings.model`):

    models:/NAME/VERSION, models:/NAME@ALIAS   a registered net (storage.registry)
    a model directory                           a saved net (storage.checkpoints.save_model)
    uniform                                     no net: uniform priors and value 0
                                                (gocore.nn.inference.UniformEvaluator); for tests
                                                and smoke runs, rows use `encoder`
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.errors import GozeroError
from gocore.rules import sgf
from gocore.search.gumbel import root_search
from gocore.search.mcts import SELFPLAY
from gocore.search.selfplay import SelfPlayBatch, SelfPlayConfig, play
from storage import selfplay as selfplay_files
from tasks.app.models import ModelError, conv_path_for, load_model
from tasks.app.selfplay_settings import SelfPlaySettings

if TYPE_CHECKING:
    from gocore.nn.inference import Evaluator

UNIFORM = "uniform"


class SelfPlayError(GozeroError, ValueError):
    """A self-play request that cannot be played as asked (model, board, or a conflicting rerun)."""


@dataclasses.dataclass(frozen=True)
class GameCounts:
    """How a set of self-play games went (the counts of `gocore.search.selfplay.summarize`)."""

    games: int = 0  # games played
    positions: int = 0  # positions, one row each
    black_wins: int = 0  # games black won
    white_wins: int = 0  # games white won
    draws: int = 0  # jigo games
    resignations: int = 0  # games ended by a resignation
    two_passes: int = 0  # games ended by two passes
    move_cap: int = 0  # games stopped at the move cap
    no_resign_games: int = 0  # games played with resignation disabled (to calibrate it)
    would_resign: int = 0  # of those, games where a side would have resigned
    false_resignations: int = 0  # of those, games the would-be resigner went on to win

    @classmethod
    def of(cls, stats: Mapping[str, Any]) -> GameCounts:
        """The counts found in `stats` (a summary or a sidecar); other keys are ignored."""
        return cls(**{f.name: int(stats.get(f.name, 0)) for f in dataclasses.fields(cls)})

    @classmethod
    def total(cls, parts: Sequence[GameCounts]) -> GameCounts:
        """The sum of several batches' counts."""
        return cls(**{f.name: sum(getattr(p, f.name) for p in parts) for f in dataclasses.fields(cls)})


@dataclasses.dataclass(frozen=True)
class BatchResult:
    """One self-play batch, played now or found finished on disk."""

    generation: int  # the generation it belongs to
    seed: int  # its seed: names the batch within the generation
    counts: GameCounts  # how its games went
    model_version: str  # the version label of the model that played
    shard: str  # path of its Parquet shard
    rows: int  # rows in the shard
    game_ids: tuple[str, ...]  # its games, in order
    seconds: float  # play time when it was played
    skipped: bool  # found finished on disk: not played by this call
    winner_lows: tuple[float, ...] = ()  # no-resign games: the winner's lowest value streak (calibration)


@task(cache_policy=NO_CACHE)
def selfplay_games(settings: SelfPlaySettings, games: int, generation: int, seed: int,
                   data_dir: str) -> BatchResult:
    """Play `games` self-play games with one model; one shard + SGF under gen=<generation>."""
    return play_shard(settings, games, generation, seed, data_dir)


def play_shard(settings: SelfPlaySettings, games: int, generation: int, seed: int, data_dir: str) -> BatchResult:
    """The task's work without Prefect (see `selfplay_games`)."""
    data = Path(data_dir)
    done = finished_batch(data, generation, seed, settings.recorded(games), settings.run)
    if done is not None:
        return done
    from gocore.nn.device import return_large_buffers

    started = time.perf_counter()
    return_large_buffers()  # a worker's memory stays near what one batch needs (gocore.nn.device)
    with torch_threads(settings.torch_threads):
        evaluator, model_version, net_encoder = load_evaluator(settings.model, settings.size, str(data),
                                                               settings.local_model, settings.device)
        config = selfplay_config(settings, net_encoder)
        batch = play(evaluator, config, games, generation=generation, seed=seed, model_version=model_version)
    return save_batch(data, generation, seed, settings.recorded(games), batch, model_version,
                      time.perf_counter() - started, settings.run, config.encoder)


def selfplay_config(settings: SelfPlaySettings, net_encoder: str | None) -> SelfPlayConfig:
    """The gocore self-play config of `settings`, rows encoded by the net's encoder (`net_encoder`;
    None for `uniform`: the settings' own)."""
    search = SELFPLAY.replace(sims=settings.sims, max_moves=settings.max_moves,
                              resign_threshold=settings.resign_threshold,
                              resign_disabled_fraction=settings.resign_disabled_fraction,
                              full_search_prob=settings.full_search_prob, fast_sims=settings.fast_sims,
                              forced_playouts=settings.forced_playouts,
                              pass_when_settled=settings.pass_when_settled)
    return SelfPlayConfig(size=settings.size, komi=settings.komi, encoder=net_encoder or settings.encoder,
                          search=search, gumbel=root_search(settings.search, settings.gumbel_scale))


def finished_batch(data: Path, generation: int, seed: int, recorded: dict[str, Any],
                   run: str = "") -> BatchResult | None:
    """The finished batch (generation, seed) if it was played with these settings; None if it must be played."""
    sidecar = selfplay_files.read_finished(data, generation, seed, run)
    if sidecar is None:
        return None
    if sidecar["settings"] != recorded:
        before, now = sidecar["settings"], recorded
        changed = ", ".join(f"{key} {before.get(key)!r} (now {now.get(key)!r})"
                            for key in sorted(set(before) | set(now)) if before.get(key) != now.get(key))
        raise SelfPlayError(f"gen={generation} seed={seed} was played with other settings: {changed}; "
                            "use another seed or generation")
    return _result(sidecar, skipped=True)


def save_batch(data: Path, generation: int, seed: int, recorded: dict[str, Any], batch: SelfPlayBatch,
               model_version: str, seconds: float, run: str, encoder: str) -> BatchResult:
    """The games, the shard and the sidecar (storage.selfplay writes them in that order); the
    sidecar holds the batch's stats, its ids and `recorded`, the settings a rerun must match."""
    sidecar = {**batch.stats, "generation": generation, "seed": seed, "model_version": model_version,
               "encoder": encoder,
               "rows": len(batch.columns["z"]), "game_ids": batch.game_ids, "seconds": round(seconds, 3),
               "settings": recorded}
    games_sgf = {game_id: sgf.write(record) for game_id, record in zip(batch.game_ids, batch.records)}
    written = selfplay_files.write_batch(data, generation, seed, batch.columns, games_sgf, sidecar, run)
    return _result(written, skipped=False)


def _result(sidecar: Mapping[str, Any], skipped: bool) -> BatchResult:
    return BatchResult(generation=int(sidecar["generation"]), seed=int(sidecar["seed"]),
                       counts=GameCounts.of(sidecar), model_version=str(sidecar["model_version"]),
                       shard=str(sidecar["shard"]), rows=int(sidecar["rows"]),
                       game_ids=tuple(sidecar["game_ids"]), seconds=float(sidecar["seconds"]), skipped=skipped,
                       winner_lows=tuple(float(v) for v in sidecar.get("winner_lows", ())))


def load_evaluator(model_uri: str, size: int, data_dir: str | None,
                   local: tuple[str, str] | None = None, device: str = "cpu") -> tuple[Evaluator, str, str | None]:
    """(evaluator, model version label, the net's encoder or None) for a model URI, dir or ``uniform``;
    `local`: the (directory, label) the URI was resolved to, read instead of asking the registry;
    `device`: where the net runs (`choose_device`)."""
    from gocore.nn.inference import NetEvaluator, UniformEvaluator

    if model_uri == UNIFORM:
        return UniformEvaluator(), UNIFORM, None
    try:
        loaded = load_model(model_uri if local is None else local[0], data_dir)
    except ModelError as error:
        raise SelfPlayError(str(error)) from error
    net, version = loaded.net, loaded.version if local is None else local[1]
    if net.config.board_size != size:
        raise SelfPlayError(f"{model_uri} plays {net.config.board_size}x{net.config.board_size}, "
                            f"not {size}x{size}")
    evaluator = NetEvaluator(net, device=device, conv_path=conv_path_for(net, data_dir, device))
    return evaluator, version, evaluator.encoder


@contextlib.contextmanager
def torch_threads(count: int | None) -> Iterator[None]:
    """torch on `count` threads inside (pool workers share the cores), the old count restored after."""
    import torch

    previous = torch.get_num_threads()
    if count:
        torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
