"""Prefect tasks of the AlphaGo Zero loop's own steps: generation 0, training a candidate, promotion,
and the resign threshold. Self-play and the gate are the `selfplay` and `evaluate` flows, run as
subflows by flows/zero_loop.py.

Every task is safe to run again after a crash: each first looks for what an earlier run already
made (a version tagged with this loop and generation, the alias already moved) and returns it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.errors import GozeroError
from gocore.nn.features import get_encoder
from gocore.nn.training import TrainConfig
from gocore.search.selfplay import calibrate_resign_threshold, training_steps, window_rows
from storage import checkpoints, layout, loops, registry, run_dirs, runs
from tasks.app.loop_settings import LoopSettings, expert_share_at
from tasks.app.models import ModelRef
from tasks.promotion import INITIAL, promote
from tasks.train import GPU_TAG, DatasetFacts, ExpertMix, dataset_facts, selfplay_facts, train_and_register

WARM_START_KEYS = ("family", "board_size", "encoder", "in_planes", "blocks", "filters", "value_hidden")
"""What a warm start net must share with the loop's preset (its auxiliary heads may differ)."""


class WarmStartError(GozeroError):
    """A warm start net the loop cannot begin from; the message says what differs."""


def champion(settings: LoopSettings, data: Path) -> ModelRef | None:
    """The loop's own champion: its newest promoted version (generation 0, then each candidate that
    passed its gate), or None before generation 0. Loops sharing a data dir keep their own
    champions; the registry alias ``champion`` follows the latest promotion of any of them."""
    try:
        versions = registry.list_versions(settings.model_name, data)
    except registry.RegistryError:
        versions = []
    promoted = [v for v in versions if v.tags.get("loop") == settings.loop and "promoted_at" in v.tags]
    if promoted:
        newest = max(promoted, key=lambda v: int(v.tags.get("generation", -1)))
        return ModelRef(newest.name, int(newest.version))
    pinned = [r["champion"] for r in loops.read_steps(data, settings.loop) if r["step"] == "start"]
    return ModelRef(**pinned[-1]) if pinned else None  # a loop recorded when loops began from any champion


def loop_version(settings: LoopSettings, data: Path, generation: int) -> ModelRef | None:
    """The version this loop registered for `generation` (a crashed run's, found again), or None."""
    try:
        versions = registry.list_versions(settings.model_name, data)
    except registry.RegistryError:
        return None
    for info in versions:
        if info.tags.get("loop") == settings.loop and info.tags.get("generation") == str(generation):
            return ModelRef(info.name, int(info.version))
    return None


@task(cache_policy=NO_CACHE)
def initial_champion(settings: LoopSettings, data_dir: str) -> ModelRef:
    """Generation 0: a randomly initialised net (tabula rasa), or the `warm_start` net's weights,
    registered and promoted with reason ``initial`` or ``warm-start``; once made, the loop's champion."""
    data = Path(data_dir)
    if (current := champion(settings, data)) is not None:
        return current
    made = loop_version(settings, data, 0) or _register_first_net(settings, data)
    promote(made.name, made.version, INITIAL if settings.warm_start is None else "warm-start", {"loop": settings.loop}, data)
    return made


def _register_first_net(settings: LoopSettings, data: Path) -> ModelRef:
    """Save, log and register generation 0: a net of the loop's preset, seeded (a rerun makes the
    same net), with the warm start's weights if the loop has one."""
    import torch

    from gocore.nn.nets import build_net, preset

    torch.manual_seed(settings.seed)
    config = preset(settings.preset, settings.size, get_encoder(settings.encoder).num_planes,
                    encoder=settings.encoder, aux_heads=settings.aux_heads)
    net = build_net(config)
    if settings.warm_start is not None:
        copy_warm_start(net, settings.warm_start, data)
    directory = run_dirs.run_dir(data, f"{settings.loop}-gen0")
    model_dir = checkpoints.save_model(run_dirs.model_dir(directory), net, config.to_dict())
    params = {"net": config.to_dict(), "net_preset": settings.preset, "loop": dataclasses.asdict(settings)}
    tags = {"loop": settings.loop, **({"warm_start": settings.warm_start} if settings.warm_start else {})}
    with runs.training_run(settings.size, params, run_name=f"{settings.loop}-gen0", data=data) as run_id:
        runs.log_model(run_id, model_dir, data)
        version = registry.register(run_id, generation=0, tags=tags, data=data)
    return ModelRef(settings.model_name, version)


def copy_warm_start(net: Any, uri: str, data: Path) -> None:
    """Copy the weights of the model `uri` into the loop's fresh `net` (a `DualNet`); WarmStartError
    if it is another kind of net. Auxiliary heads are copied when both nets have them; heads that
    only one of them has are left out (the loop's own start random)."""
    from tasks.app.models import ModelError, load_net

    try:
        source = load_net(uri, data)
    except ModelError as error:
        raise WarmStartError(f"warm start {uri}: {error}") from None
    have, want = source.config, net.config
    if differs := [f"{key} {getattr(have, key)!r}" for key in WARM_START_KEYS if getattr(have, key) != getattr(want, key)]:
        raise WarmStartError(f"warm start {uri} has {', '.join(differs)}: the loop needs a dual net (policy and value "
                             f"heads) like its own, {want.board_size}x{want.board_size}, encoder {want.encoder}, "
                             f"{want.blocks} blocks x {want.filters} filters, value_hidden {want.value_hidden}")
    aux = ("ownership_head.", "score_head.")  # the same config but these builds the same modules
    both = have.aux_heads and want.aux_heads  # then the heads are copied too (a supervised net's are trained)
    net.load_state_dict({k: v for k, v in source.state_dict().items() if both or not k.startswith(aux)},
                        strict=both)


def training_window(settings: LoopSettings, data: Path, generation: int) -> tuple[DatasetFacts, int]:
    """(the window of recent self-play to train generation `generation` on, the new rows in it)."""
    rows = {g: selfplay_facts(data, [g], settings.loop).rows for g in range(1, generation + 1)}  # sidecars read once
    return selfplay_facts(data, window_generations(settings, rows, generation), settings.loop), rows[generation]


def window_generations(settings: LoopSettings, rows: dict[int, int], generation: int) -> list[int]:
    """The generations of generation `generation`'s training window, oldest first: the last
    `window_generations`, else the newest whose rows (`rows`: each generation's) fill `window_rows`."""
    if settings.window_generations:
        return list(range(max(1, generation - settings.window_generations + 1), generation + 1))
    target, chosen, kept = window_rows(sum(rows[g] for g in range(1, generation + 1)), settings.min_window), [], 0
    for g in range(generation, 0, -1):  # newest first, until the window is full
        chosen.append(g)
        kept += rows[g]
        if kept >= target:
            break
    return sorted(chosen)


def candidate_config(settings: LoopSettings, generation: int, steps: int, device: str = "auto") -> TrainConfig:
    """How generation `generation`'s candidate trains: `steps` updates at the loop's batch size and lr,
    seeded by the generation, with the loop's value mix, loader and precision."""
    return TrainConfig(steps=steps, batch_size=settings.batch_size, lr=settings.lr, lr_steps=(),
                       lr_schedule="cosine" if settings.lr_schedule == "cosine" else "steps",
                       checkpoint_every=max(1, steps // 4), val_every=steps, val_batches=8,
                       log_every=max(1, steps // 10), device=device, seed=settings.seed + generation,
                       objective="dual", loader_workers=settings.loader_workers, value_mix=settings.value_mix,
                       cpu_bf16=settings.cpu_bf16)


@task(cache_policy=NO_CACHE, tags=[GPU_TAG])
def train_candidate(settings: LoopSettings, generation: int, start: ModelRef, data_dir: str,
                    device: str = "auto") -> dict[str, Any]:
    """Train generation `generation`'s candidate from `start`'s weights on the window; register it
    tagged with the loop and generation (not promoted). A rerun resumes from its checkpoint."""
    from gocore.nn.device import set_threads

    set_threads()  # the cores idle now: self-play has finished
    data = Path(data_dir)
    window, new_rows = training_window(settings, data, generation)
    expert = None if settings.expert is None else ExpertMix(
        dataset_facts(layout.dataset_dir(data, settings.expert)), expert_share_at(settings, generation))
    own_rows = settings.batch_size - (0 if expert is None else expert.rows_per_batch(settings.batch_size))
    steps = training_steps(new_rows, window.rows, own_rows, settings.replay)  # self-play rows sampled as without
    config = candidate_config(settings, generation, steps, device)
    if (found := loop_version(settings, data, generation)) is not None:
        return {"candidate": found.version, "steps": steps, "window_rows": window.rows,
                "window": window.name, "metrics": {}, "resumed": True}
    result = train_and_register(window, "dual", settings.preset, config, data, f"{settings.loop}-gen{generation}",
                                init_from=start.uri, version_tags={"loop": settings.loop,
                                                                   "generation": str(generation)},
                                aux_heads=settings.aux_heads, expert=expert)
    metrics = {k: round(v, 4) for k, v in result.metrics.items() if k.startswith("val/") or k == "train/loss"}
    return {"candidate": result.version, "steps": steps, "window_rows": window.rows, "window": window.name,
            "metrics": metrics, "seconds": result.seconds}


@task(cache_policy=NO_CACHE)
def promote_candidate(candidate: ModelRef, reason: str, evidence: dict[str, Any], data_dir: str) -> int | None:
    """Move ``champion`` to the candidate with its evidence as tags (once: a retry changes nothing)."""
    return promote(candidate.name, candidate.version, reason, evidence, Path(data_dir))


def next_resign_threshold(settings: LoopSettings, winner_lows: tuple[float, ...], current: float) -> float:
    """The resign threshold for the next generation's self-play from this one's no-resign games
    (false resignations at most 5 %); the current one when there were no such games."""
    calibrated = calibrate_resign_threshold(winner_lows)
    return current if calibrated is None else round(calibrated, 4)
