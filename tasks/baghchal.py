"""Prefect tasks of the Baghchal zero loop: generation 0, self-play batches, training a candidate.

Each reads through storage, calls gocore and writes through storage, and is safe to run again after
a crash: a self-play batch with a sidecar is read back, not played; a candidate registered for its
loop and generation is found again; training resumes from its newest checkpoint. Matches (the gate,
the ladder) are `tasks.baghchal_match`'s.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.nn.training import TrainConfig
from gocore.search.selfplay import training_steps
from storage import baghchal as files
from storage import checkpoints, registry, run_dirs, runs
from tasks.app.baghchal_settings import MODEL_NAME, BaghchalLoopSettings
from tasks.app.models import ModelRef
from tasks.promotion import INITIAL, promote
from tasks.train import GPU_TAG, Recorder, latest_checkpoint

if TYPE_CHECKING:
    from gocore.search.baghchal_selfplay import BaghchalSelfPlayConfig

BOARD_SIZE = 5


def champion(settings: BaghchalLoopSettings, data: Path) -> ModelRef | None:
    """The loop's champion: its newest promoted version (generation 0, then each candidate that
    passed its gate), or None before generation 0."""
    promoted = [v for v in _versions(data) if v.tags.get("loop") == settings.loop and "promoted_at" in v.tags]
    if not promoted:
        return None
    newest = max(promoted, key=lambda v: int(v.tags.get("generation", -1)))
    return ModelRef(newest.name, int(newest.version))


def loop_version(settings: BaghchalLoopSettings, data: Path, generation: int) -> ModelRef | None:
    """The version this loop registered for `generation` (a crashed run's, found again), or None."""
    for info in _versions(data):
        if info.tags.get("loop") == settings.loop and info.tags.get("generation") == str(generation):
            return ModelRef(info.name, int(info.version))
    return None


def _versions(data: Path) -> list[Any]:
    try:
        return registry.list_versions(MODEL_NAME, data)
    except registry.RegistryError:  # no Baghchal model yet
        return []


@task(cache_policy=NO_CACHE)
def initial_champion(settings: BaghchalLoopSettings, data_dir: str) -> ModelRef:
    """Generation 0: a randomly initialised net of the loop's size (seeded), registered and promoted
    with reason ``initial``; once made, the loop's champion."""
    data = Path(data_dir)
    if (current := champion(settings, data)) is not None:
        return current
    made = loop_version(settings, data, 0) or _register_first_net(settings, data)
    promote(made.name, made.version, INITIAL, {"loop": settings.loop}, data)
    return made


def _register_first_net(settings: BaghchalLoopSettings, data: Path) -> ModelRef:
    import torch

    from gocore.nn.baghchal_net import build, net_config

    torch.manual_seed(settings.seed)
    config = net_config(settings.preset, settings.blocks, settings.filters)
    directory = run_dirs.run_dir(data, f"{settings.loop}-gen0")
    model_dir = checkpoints.save_model(run_dirs.model_dir(directory), build(config), config.to_dict())
    params = {"net": config.to_dict(), "net_preset": settings.preset, "loop": dataclasses.asdict(settings)}
    with runs.training_run(BOARD_SIZE, params, run_name=f"{settings.loop}-gen0", data=data, game=MODEL_NAME) as run_id:
        runs.log_model(run_id, model_dir, data)
        version = registry.register(run_id, generation=0, tags={"loop": settings.loop}, data=data)
    return ModelRef(MODEL_NAME, version)


# -------------------------------------------------------------- self-play
def batch_seed(settings: BaghchalLoopSettings, generation: int, index: int) -> int:
    """The seed of self-play batch `index` of a generation (it names the batch's files)."""
    return settings.seed * 1_000_000 + generation * 1_000 + index


@task(cache_policy=NO_CACHE)
def selfplay_batch(settings: BaghchalLoopSettings, model_uri: str, generation: int, seed: int, games: int,
                   data_dir: str, device: str = "cpu") -> dict[str, Any]:
    """Play `games` self-play games with the model; rows (8 symmetries each), records and a sidecar."""
    from gocore.nn.device import set_threads

    set_threads(1)  # batches run side by side in a pool: more threads only wait on each other
    return play_batch(settings, model_uri, generation, seed, games, data_dir, device)


def selfplay_config(settings: BaghchalLoopSettings) -> BaghchalSelfPlayConfig:
    """The loop's self-play search: Baghchal's `SELFPLAY` with the loop's simulations, temperature
    plies, playout cap and root search."""
    from gocore.search.baghchal_selfplay import SELFPLAY, BaghchalSelfPlayConfig
    from gocore.search.gumbel import root_search

    search = SELFPLAY.replace(sims=settings.sims, temperature_moves=settings.temperature_plies,
                              full_search_prob=settings.full_search_prob, fast_sims=settings.fast_sims)
    return BaghchalSelfPlayConfig(search=search, gumbel=root_search(settings.search), rules=settings.rules())


def play_batch(settings: BaghchalLoopSettings, model_uri: str, generation: int, seed: int, games: int,
               data_dir: str, device: str = "cpu") -> dict[str, Any]:
    """The task's work without Prefect (see `selfplay_batch`)."""
    from gocore.search.baghchal_selfplay import play_games, record_text, summarize, training_rows
    from tasks.app.baghchal_players import load_evaluator

    data = Path(data_dir)
    recorded = {"model": model_uri, "games": games, "sims": settings.sims, "search": settings.search}
    if (done := files.read_finished(data, settings.loop, generation, seed)) is not None:
        if done["settings"] != recorded:
            raise ValueError(f"gen={generation} seed={seed} was played with {done['settings']}, not {recorded}")
        return done
    started = time.perf_counter()
    evaluator, version = load_evaluator(model_uri, data, device, bf16=settings.cpu_bf16)
    config = selfplay_config(settings)
    played = play_games(evaluator, config, games, seed=seed)
    ids = [f"gen{generation}-s{seed}-{index:04d}" for index in range(games)]
    columns = training_rows(played, ids, generation=generation, model_version=version)
    records = {game_id: record_text(game, config.rules) for game_id, game in zip(ids, played)}
    sidecar = {**summarize(played), "generation": generation, "seed": seed, "model_version": version,
               "rows": len(columns["z"]), "game_ids": ids, "seconds": round(time.perf_counter() - started, 2),
               "settings": recorded}
    return files.write_batch(data, settings.loop, generation, seed, columns, records, sidecar)


# -------------------------------------------------------------- training
def train_config(settings: BaghchalLoopSettings, generation: int, steps: int, device: str) -> TrainConfig:
    """How a generation's candidate trains: AdamW with cosine decay, four checkpoints, one validation."""
    return TrainConfig(objective="dual", steps=steps, batch_size=settings.batch_size, optimizer="adamw",
                       lr=settings.lr, lr_steps=(), lr_schedule="cosine", checkpoint_every=max(1, steps // 4),
                       val_every=steps, val_batches=8, log_every=max(1, steps // 10), device=device,
                       seed=settings.seed * 1_000 + generation, cpu_bf16=settings.cpu_bf16)


@task(cache_policy=NO_CACHE, tags=[GPU_TAG])
def train_candidate(settings: BaghchalLoopSettings, generation: int, start: ModelRef, data_dir: str,
                    device: str = "auto") -> dict[str, Any]:
    """Train generation `generation`'s candidate from `start`'s weights on the rows of the last
    `window_generations` generations; register it tagged with the loop and generation (not
    promoted). A rerun finds the registered candidate, or resumes from the newest checkpoint."""
    from gocore.nn.device import set_threads

    set_threads()  # the cores idle now: self-play has finished
    return train_here(settings, generation, start, Path(data_dir), device)


def train_here(settings: BaghchalLoopSettings, generation: int, start: ModelRef, data: Path,
               device: str = "auto") -> dict[str, Any]:
    """The task's work without Prefect (see `train_candidate`)."""
    import torch

    from gocore.nn.baghchal_net import build, net_config
    from gocore.nn.baghchal_training import RowStreams
    from gocore.nn.training import train
    from tasks.app.models import load_net

    window = list(range(max(1, generation - settings.window_generations + 1), generation + 1))
    columns = files.read_rows(data, settings.loop, window)
    new_rows = sum(int(s["rows"]) for s in files.finished_batches(data, settings.loop, generation).values())
    steps = training_steps(new_rows, len(columns["z"]), settings.batch_size, settings.replay)
    facts = {"steps": steps, "window_rows": len(columns["z"]), "new_rows": new_rows, "window": window}
    if (found := loop_version(settings, data, generation)) is not None:
        return {"candidate": found.version, **facts, "metrics": {}, "resumed": True}
    config, net_shape = train_config(settings, generation, steps, device), net_config(settings.preset, settings.blocks,
                                                                                      settings.filters)
    directory = run_dirs.run_dir(data, f"{settings.loop}-gen{generation}")
    resume = latest_checkpoint(directory)
    history = run_dirs.read_history(directory, resume.step if resume else 0)
    torch.manual_seed(config.seed)
    net = build(net_shape)
    if resume is None:
        net.load_state_dict(load_net(start.uri, data).state_dict())
    params = {"train": config.to_dict(), "net": net_shape.to_dict(), "net_preset": settings.preset,
              "loop": settings.loop, "generation": generation, "start": start.uri, "window": window}
    run_name = f"{settings.loop}-gen{generation}"
    with runs.training_run(BOARD_SIZE, params, run_name=run_name, data=data, game=MODEL_NAME) as run_id:
        recorder = Recorder(run_id, directory, steps, history, data)
        outcome = train(net, RowStreams(columns, settings.batch_size, seed=config.seed), config, resume=resume,
                        save_checkpoint=recorder.checkpoint, on_metrics=recorder.report)
        model_dir = checkpoints.save_model(run_dirs.model_dir(directory), net, net_shape.to_dict())
        runs.log_model(run_id, model_dir, data)
        version = registry.register(run_id, generation=generation, tags={"loop": settings.loop}, data=data)
    metrics = {k: round(v, 4) for k, v in {**outcome.metrics, **{f"val_{k}": v for k, v in outcome.val_metrics.items()}}
               .items() if k in ("loss", "policy_loss", "value_mse", "val_policy_loss", "val_value_mse")}
    return {"candidate": version, **facts, "metrics": metrics, "seconds": round(outcome.seconds, 2)}
