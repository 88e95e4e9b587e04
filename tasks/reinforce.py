"""Prefect tasks of AlphaGo's RL stage: REINFORCE from the SL policy against a pool of its own
snapshots (gocore.nn.reinforce), every snapshot a registered version, and the RL-vs-SL check.

    net, pool = SL weights, [snapshot 0 = the SL weights]
    for iteration i: opponent = a random member of the pool
                     n games net vs opponent → one REINFORCE step
                     every K iterations: register the net (gozero-<N>x<N>-rl, tags alphago,
                     iteration), add it to the pool, checkpoint (net, optimizer, pool)

A rerun resumes from the newest checkpoint (written at each snapshot): iteration i's games are
seeded by (seed, i), so a resumed run plays the games an uninterrupted one would have, and a
snapshot registered before a crash is found by its tags rather than registered twice.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.nn.nets import build_net
from gocore.nn.reinforce import play_policy_games, reinforce_step
from storage import checkpoints, layout, registry, run_dirs, runs
from tasks.alphago import asdict_ref, stage_version
from tasks.app.alphago_settings import AlphaGoSettings
from tasks.app.evaluate import MatchSettings, play_match_here
from tasks.app.models import ModelRef, load_net
from tasks.promotion import promote
from tasks.train import GPU_TAG, latest_checkpoint, log_history

KEEP_CHECKPOINTS = 2
GATE = 0.55  # the RL policy becomes champion if it scores this much against the SL policy


def rl_run_key(settings: AlphaGoSettings) -> str:
    """The RL stage's run directory (checkpoints and metric history) under <data>/checkpoints/."""
    return f"{settings.name}-rl"


@task(cache_policy=NO_CACHE, tags=[GPU_TAG])
def train_rl_policy(settings: AlphaGoSettings, sl: ModelRef, data_dir: str, device: str = "auto") -> dict[str, Any]:
    """Stage 3: the RL policy by REINFORCE from `sl`; every K-th iteration a registered snapshot.
    The games and the updates run on `device` (`choose_device`): one process, the `gpu` slot's."""
    from gocore.nn.device import choose_device, set_threads

    set_threads()
    where = choose_device(device)
    data = Path(data_dir)
    directory = run_dirs.run_dir(data, rl_run_key(settings))
    net = build_net({**load_net(sl.uri, data).config.to_dict(), "family": "rl"}).to(where)
    optimizer = torch.optim.SGD(net.parameters(), lr=settings.rl_lr)
    start, pool, history = _resume(settings, sl, net, optimizer, directory, data)
    started = time.perf_counter()
    for iteration in range(start, settings.iterations):
        rng = np.random.default_rng([settings.seed, iteration])
        opponent = load_net(ModelRef(settings.model("rl"), pool[int(rng.integers(len(pool)))]).uri, data).to(where)
        games = play_policy_games(net, opponent, settings.games_per_iteration, settings.size, settings.komi, rng)
        metrics = reinforce_step(net, optimizer, games, settings.baseline)
        for name, value in metrics.items():
            history.setdefault(f"rl/{name}", []).append((iteration + 1, value))
        if (iteration + 1) % settings.snapshot_every == 0 or iteration + 1 == settings.iterations:
            pool.append(_snapshot(settings, net, iteration + 1, history, data).version)
            _checkpoint(directory, net, optimizer, iteration + 1, pool, history)
    final = ModelRef(settings.model("rl"), pool[-1])
    return {"model": asdict_ref(final), "iterations": settings.iterations, "snapshots": pool,
            "games": settings.iterations * settings.games_per_iteration,
            "resumed_from": start, "selfplay_seconds": round(time.perf_counter() - started, 2),
            "final_win_rate": history["rl/win_rate"][-1][1] if history.get("rl/win_rate") else None}


def _resume(settings: AlphaGoSettings, sl: ModelRef, net: Any, optimizer: torch.optim.Optimizer, directory: Path,
            data: Path) -> tuple[int, list[int], dict[str, list[tuple[int, float]]]]:
    """(first iteration to play, the pool's versions, the metric history) after loading the newest
    checkpoint into net and optimizer; a fresh start copies the SL weights and registers them as
    snapshot 0, the pool's first member."""
    resume = latest_checkpoint(directory)
    if resume is not None:
        net.load_state_dict(resume.model_state)
        optimizer.load_state_dict(resume.optimizer_state)
        history = {k: [(int(s), float(v)) for s, v in points] for k, points in resume.extra["history"].items()}
        return resume.step, [int(v) for v in resume.extra["pool"]], history
    net.load_state_dict(load_net(sl.uri, data).state_dict())
    return 0, [_snapshot(settings, net, 0, {}, data).version], {}


def _snapshot(settings: AlphaGoSettings, net: Any, iteration: int, history: dict[str, list[tuple[int, float]]],
              data: Path) -> ModelRef:
    """Register the net as it is after `iteration` iterations (once: a rerun finds it by its tags)."""
    if (found := stage_version(settings, "rl", data, stage="rl", iteration=str(iteration))) is not None:
        return found
    directory = run_dirs.run_dir(data, rl_run_key(settings))
    model_dir = checkpoints.save_model(run_dirs.model_dir(directory) / f"iteration-{iteration}", net,
                                       net.config.to_dict(), extra={"alphago": settings.name, "iteration": iteration})
    params = {"alphago": settings.name, "iteration": iteration, "net": net.config.to_dict(),
              "rl": {k: getattr(settings, k) for k in ("iterations", "games_per_iteration", "snapshot_every",
                                                        "rl_lr", "baseline", "seed")}}
    with runs.training_run(settings.size, params, run_name=f"{settings.name}-rl-{iteration}", data=data) as run_id:
        log_history(run_id, history, data)
        if history:
            runs.log_curves(run_id, history, data)
        runs.log_model(run_id, model_dir, data)
        version = registry.register(run_id, generation=iteration,
                                    tags={"alphago": settings.name, "stage": "rl", "iteration": str(iteration)},
                                    data=data)
    return ModelRef(settings.model("rl"), version)


def _checkpoint(directory: Path, net: Any, optimizer: torch.optim.Optimizer, iteration: int, pool: list[int],
                history: dict[str, list[tuple[int, float]]]) -> None:
    path = run_dirs.checkpoint_path(directory, iteration)
    checkpoints.save_training_checkpoint(path, net.state_dict(), optimizer.state_dict(), iteration,
                                         net.config.to_dict(), extra={"pool": pool, "history": history})
    run_dirs.prune_checkpoints(directory, KEEP_CHECKPOINTS)


@task(cache_policy=NO_CACHE)
def check_rl_policy(settings: AlphaGoSettings, rl: ModelRef, sl: ModelRef, data_dir: str,
                    device: str = "cpu") -> dict[str, Any]:
    """RL policy (A) against the SL policy, colours alternating, nets on `device`; champion if it
    scores >= 55 %."""
    data = Path(data_dir)
    match = str(layout.match_dir(data, f"{settings.name}-rl-{rl.version}-vs-sl-{sl.version}"))
    config_match = MatchSettings(rl.uri, sl.uri, settings.check_games, 1,
                                 _match_config(settings, settings.seed + 7), device=device)
    summary = play_match_here(match, config_match, gate=GATE)
    passed = bool(summary["gate_passed"])
    if passed:
        promote(rl.name, rl.version, f"alphago {settings.name}: beat the SL policy",
                {"alphago": settings.name, "gate_win_rate": round(summary["a_winrate"], 4),
                 "gate_games": summary["games"], "sl_policy": sl.label}, data)
    return {"win_rate": round(summary["a_winrate"], 4), "low": round(summary["a_winrate_low"], 4),
            "high": round(summary["a_winrate_high"], 4), "games": summary["games"], "passed": passed,
            "match": Path(match).name}


def _match_config(settings: AlphaGoSettings, seed: int) -> Any:
    from gocore.play.match import MatchConfig

    return MatchConfig(settings.size, settings.komi, None, seed)
