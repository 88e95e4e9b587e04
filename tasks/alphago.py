"""Prefect tasks of the AlphaGo (2016) pipeline: the supervised stages (SL policy, rollout policy),
the value stage (one position per game, the net, its held-out check) and promotion. Its settings and
presets are `tasks.app.alphago_settings`; the RL stage is tasks/reinforce.py, the evaluation round
robin tasks/alphago_eval.py.

Every registered version carries the tags ``alphago`` (the run's name) and ``stage``; a rerun finds
them (`stage_version`) instead of registering again, and training resumes from its checkpoints.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
from prefect import task
from prefect.cache_policies import NO_CACHE

from storage import layout, registry
from storage import selfplay as selfplay_files
from tasks.app.alphago_settings import AlphaGoSettings
from tasks.app.models import ModelRef
from tasks.promotion import promote
from tasks.train import GPU_TAG, DatasetFacts, selfplay_facts, train_and_register


def stage_version(settings: AlphaGoSettings, family: str, data: Path, **tags: str) -> ModelRef | None:
    """The version of `family` this run registered with these tags (a crashed run's, found again)."""
    try:
        versions = registry.list_versions(settings.model(family), data)
    except registry.RegistryError:
        return None
    wanted = {"alphago": settings.name, **tags}
    for info in versions:
        if all(info.tags.get(k) == v for k, v in wanted.items()):
            return ModelRef(info.name, int(info.version))
    return None


def _supervised(settings: AlphaGoSettings, family: str, steps: int, data: Path, device: str) -> dict[str, Any]:
    """Train and register `family` on the expert dataset (resuming), then make it champion."""
    dataset_dir = layout.dataset_dir(data, settings.dataset)
    result = train_and_register(dataset_dir, family, settings.preset, settings.train_config(steps, device), data,
                                run_name=f"{settings.name}-{family}",
                                version_tags={"alphago": settings.name, "stage": family})
    accuracy = result.metrics.get("val/policy_top1")
    evidence = {"alphago": settings.name, "steps": result.step, "val_policy_accuracy": accuracy}
    promote(result.model_name, result.version, f"alphago {settings.name}: trained on {settings.dataset}",
            {k: v for k, v in evidence.items() if v is not None}, data)
    return {"model": asdict_ref(ModelRef(result.model_name, result.version)), "steps": result.step,
            "val_policy_top1": None if accuracy is None else round(accuracy, 4), "seconds": result.seconds}


def asdict_ref(ref: ModelRef) -> dict[str, Any]:
    """A ModelRef as a stage record keeps it."""
    return dataclasses.asdict(ref)


@task(cache_policy=NO_CACHE, tags=[GPU_TAG])
def train_sl_policy(settings: AlphaGoSettings, data_dir: str, device: str = "auto") -> dict[str, Any]:
    """Stage 1: the SL policy net on the expert games (the existing supervised trainer)."""
    return _supervised(settings, "policy", settings.sl_steps, Path(data_dir), device)


@task(cache_policy=NO_CACHE)
def train_rollout_policy(settings: AlphaGoSettings, data_dir: str, device: str = "auto") -> dict[str, Any]:
    """Stage 2: the fast rollout policy (a linear softmax over local pattern features, played by a
    numba kernel) on the expert games, registered as gozero-<N>x<N>-rollout (tasks.rollout); champion
    when it predicts held-out expert moves better than a uniform choice among the candidates."""
    from gocore.nn.rollout_training import RolloutTrainConfig
    from tasks.rollout import train_and_register_rollout

    data = Path(data_dir)
    result = train_and_register_rollout(layout.dataset_dir(data, settings.dataset), settings.size,
                                        RolloutTrainConfig(steps=settings.rollout_steps, seed=settings.seed), data)
    passed = result.val_accuracy > result.uniform_accuracy
    if passed:
        promote(result.model_name, result.version, f"alphago {settings.name}: rollout policy on "
                f"{settings.dataset}", {"alphago": settings.name, "val_accuracy": round(result.val_accuracy, 4),
                                        "uniform_accuracy": round(result.uniform_accuracy, 4)}, data)
    return {"model": asdict_ref(ModelRef(result.model_name, result.version)), "steps": settings.rollout_steps,
            "val_move_top1": round(result.val_accuracy, 4), "uniform_top1": round(result.uniform_accuracy, 4),
            "champion": passed}


# ---------------------------------------------------------------- value data, net and check
VALUE_TRAIN, VALUE_HELDOUT = 0, 1  # the value data's two "generations": training and held-out games


def value_run(settings: AlphaGoSettings) -> str:
    """The name under which the run's value data is stored (storage.selfplay's `run`)."""
    return f"{settings.name}-value"


def value_batches(settings: AlphaGoSettings) -> list[tuple[int, int, int]]:
    """(generation, seed, games) of every batch of value data: training games, then held-out ones."""
    batches = []
    for generation, total in ((VALUE_TRAIN, settings.value_games), (VALUE_HELDOUT, settings.value_heldout_games)):
        for index, start in enumerate(range(0, total, settings.value_games_per_task)):
            seed = settings.seed * 1_000_000 + generation * 100_000 + index
            batches.append((generation, seed, min(settings.value_games_per_task, total - start)))
    return batches


@task(cache_policy=NO_CACHE)
def play_value_batch(batch: tuple[int, int, int], settings: AlphaGoSettings, sl_uri: str, rl_uri: str,
                     data_dir: str, device: str = "cpu") -> dict[str, Any]:
    """One batch of value data (skipped if stored): SL moves, a random move at U, RL to the end;
    the nets on `device` (cpu by default: batches run side by side in a pool)."""
    from gocore.nn.device import choose_device, set_threads
    from gocore.nn.features import value_encoder
    from gocore.nn.reinforce import net_encoder
    from gocore.nn.value_data import value_columns, value_samples
    from tasks.app.models import load_model

    generation, seed, games = batch
    data, run = Path(data_dir), value_run(settings)
    if (done := selfplay_files.read_finished(data, generation, seed, run)) is not None:
        return {"rows": int(done["rows"]), "skipped": True}
    set_threads(1)  # batches run side by side in a pool
    sl, rl = load_model(sl_uri, data), load_model(rl_uri, data)
    where = choose_device(device)
    samples = value_samples(sl.net.to(where), rl.net.to(where), games, settings.size, settings.komi, np.random.default_rng(seed),
                            max_u=settings.max_u)
    ids = [f"value-g{generation}-s{seed}-{index:04d}" for index in range(games)]
    encoder = value_encoder(net_encoder(sl.net))  # the paper's value net also reads the colour to play
    columns = value_columns(samples, ids, encoder=encoder, generation=generation, model_version=rl.version)
    sidecar = {"games": games, "rows": games, "generation": generation, "seed": seed, "model_version": rl.version,
               "encoder": encoder, "game_ids": ids, "z_sum": int(samples.z.sum()), "ended_early": samples.ended_early,
               "mean_u": float(samples.u.mean()), "mean_length": float(samples.lengths.mean()),
               "settings": {"size": settings.size, "komi": settings.komi, "encoder": encoder,
                            "sl": sl.version, "rl": rl.version, "max_u": settings.max_u}}
    selfplay_files.write_batch(data, generation, seed, columns, {}, sidecar, run)
    return {"rows": games, "skipped": False}


def value_facts(settings: AlphaGoSettings, data: Path, generation: int) -> DatasetFacts:
    """The stored value data of the training (0) or held-out (1) games, as one dataset."""
    return selfplay_facts(data, [generation], value_run(settings))


@task(cache_policy=NO_CACHE, tags=[GPU_TAG])
def train_value_net(settings: AlphaGoSettings, data_dir: str, device: str = "auto") -> dict[str, Any]:
    """Stage 4's net: the value net on the one-position-per-game data (resuming); registered."""
    data = Path(data_dir)
    result = train_and_register(value_facts(settings, data, VALUE_TRAIN), "value", settings.preset,
                                settings.train_config(settings.value_steps, device), data,
                                run_name=f"{settings.name}-value",
                                version_tags={"alphago": settings.name, "stage": "value"})
    return {"model": asdict_ref(ModelRef(result.model_name, result.version)), "steps": result.step,
            "seconds": result.seconds}


@task(cache_policy=NO_CACHE)
def check_value_net(settings: AlphaGoSettings, value: ModelRef, data_dir: str) -> dict[str, Any]:
    """MSE of the value net on the held-out games against the constant predictor (the training
    games' mean outcome); champion if it is lower."""
    import torch

    from storage.stream import StreamFactory
    from tasks.app.models import load_net
    from tasks.app.rows import ROW_DECODER

    data = Path(data_dir)
    train_sidecars = selfplay_files.finished_sidecars(data, VALUE_TRAIN, value_run(settings))
    constant = sum(s["z_sum"] for s in train_sidecars) / max(sum(s["rows"] for s in train_sidecars), 1)
    heldout = value_facts(settings, data, VALUE_HELDOUT)
    net, errors, constant_errors = load_net(value.uri, data), [], []
    stream = StreamFactory(heldout.path, 256, ROW_DECODER, val_percent=100, prefetch=0)("val")
    with torch.inference_mode():
        for batch in stream:
            v = net(torch.from_numpy(batch.planes).float()).numpy()  # (B,)
            errors.append((v - batch.value) ** 2)
            constant_errors.append((constant - batch.value) ** 2)
    mse, constant_mse = float(np.concatenate(errors).mean()), float(np.concatenate(constant_errors).mean())
    passed = mse < constant_mse
    if passed:
        promote(value.name, value.version, f"alphago {settings.name}: held-out MSE below the constant's",
                {"alphago": settings.name, "heldout_mse": round(mse, 4),
                 "constant_mse": round(constant_mse, 4), "heldout_games": heldout.rows}, data)
    return {"mse": round(mse, 4), "constant_mse": round(constant_mse, 4), "constant": round(constant, 4),
            "heldout_games": heldout.rows, "passed": passed}
