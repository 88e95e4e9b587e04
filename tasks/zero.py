"""Prefect tasks of the AlphaGo Zero loop's own steps: generation 0, training a candidate, promotion,
and the resign threshold. Self-play and the gate are the `selfplay` and `evaluate` flows, run as
subflows by flows/zero_loop.py.

Every task is safe to run again after a crash: each first looks for what an earlier run already
made (a version tagged with this loop and generation, the alias already moved) and returns it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from gocore.errors import GozeroError
from gocore.nn.features import get_encoder
from gocore.nn.training import TrainConfig
from gocore.search.gumbel import root_search
from gocore.search.selfplay import calibrate_resign_threshold, training_steps, window_rows
from storage import checkpoints, layout, loops, registry, run_dirs, runs
from tasks.models import INITIAL, promote
from tasks.selfplay import FORCED_NEEDS_PUCT
from tasks.train import GPU_TAG, DatasetFacts, ExpertMix, dataset_facts, selfplay_facts, train_and_register

GATES = ("sprt", "fixed", "off")
LR_SCHEDULES = ("constant", "cosine")
OPTIONAL_DEFAULTS: dict[str, Any] = {"encoder": "agz17", "gumbel_scale": 1.0, "lr_schedule": "constant",
                                     "pass_when_settled": False}
"""Settings loop.json records only when they differ from these (loops recorded before them resume
unchanged); `expert_share` is recorded with `expert` only."""
WARM_START_KEYS = ("family", "board_size", "encoder", "in_planes", "blocks", "filters", "value_hidden")
"""What a warm start net must share with the loop's preset (its auxiliary heads may differ)."""


class WarmStartError(GozeroError):
    """A warm start net the loop cannot begin from; the message says what differs."""


TECHNIQUES_OFF: dict[str, Any] = {"aux_heads": False, "playout_cap": False, "forced_playouts": False,
                                  "search": "puct"}
"""What each technique was in a loop.json without its key (they were recorded only when on)."""
TECHNIQUE_DEFAULTS: dict[str, Any] = {**TECHNIQUES_OFF, "aux_heads": True, "search": "gumbel"}
"""Each technique for a new loop that does not choose it; on only once it has won its own A/B at equal
budget (docs/results: the A/B sections): the auxiliary heads 140 of 200 against the plain loop,
Gumbel root search 148 of 200 against the loop with the heads. Forced playouts (89 of 200) and the
playout cap (106 of 200) did not win theirs."""


@dataclass(frozen=True)
class LoopSettings:
    """What a zero loop is; recorded in loop.json, and a rerun must match it (but `generations`)."""

    loop: str = "zero-9x9"
    """The loop's name: its directory under <data>/loops/ and the tag on its model versions."""
    size: int = 9
    """Board size N."""
    komi: float = 7.5
    """Komi of every game (Chinese rules, Tromp-Taylor count)."""
    generations: int = 5
    """Generations to reach (generation 0 is the random net): a rerun with more goes on."""
    games: int = 200
    """Self-play games per generation."""
    sims: int = 32
    """Search simulations per move in self-play and in the gate."""
    preset: str = "tiny"
    """Net preset (tiny, small, full): every generation has the same architecture."""
    batch_size: int = 128
    """Rows per training step."""
    replay: float = 2.0
    """Training samples per new self-play row (see `training_steps`)."""
    min_window: int = 20_000
    """Rows the training window keeps before it starts growing sub-linearly (`window_rows`)."""
    window_generations: int | None = None
    """Train on exactly the last K generations instead of the growing row window."""
    gate: str = "sprt"
    """sprt (elo0 0, elo1 35, alpha = beta = 0.05, 55 % rule if undecided), fixed (55 % of all
    gate games) or off (every candidate is promoted: the AlphaZero variant)."""
    gate_games: int = 400
    """Most games a gate plays."""
    resign_threshold: float = -0.95
    """Resign threshold of generation 1; later generations use the calibrated one."""
    lr: float = 0.01
    """Learning rate of each generation's training (SGD with momentum)."""
    ladder_opponents: int = 2
    """After a promotion, the new champion meets this many informative ladder opponents (0: none)."""
    ladder_games: int = 10
    """Games against each ladder opponent."""
    seed: int = 0
    """Base seed of self-play, training and gate games."""
    aux_heads: bool | None = None
    """Nets with ownership and score heads (KataGo's auxiliary targets). None, like every technique
    below: the loop's recorded choice on a rerun, `TECHNIQUE_DEFAULTS` for a new loop (`resolved`)."""
    playout_cap: bool | None = None
    """KataGo's playout cap randomization in self-play: `full_search_prob` of the moves searched with
    `sims` and recorded as rows, the others with `fast_sims_fraction` * sims and not."""
    full_search_prob: float = 0.25
    """With playout_cap: the share of moves searched in full and recorded (KataGo: 0.25)."""
    fast_sims_fraction: float = 0.25
    """With playout_cap: a fast search's simulations as a share of `sims` (KataGo: 1/6 to 1/4)."""
    forced_playouts: bool | None = None
    """KataGo's forced playouts and policy target pruning at the root of self-play's full searches."""
    search: str | None = None
    """Self-play's root search: puct (AlphaGo Zero, Dirichlet noise) or gumbel (Gumbel sequential halving)."""
    warm_start: str | None = None
    """Generation 0 from this net's weights (a ``models:/`` URI or a model directory: a dual net of
    the loop's preset, size and encoder) instead of a random net; None: tabula rasa."""
    encoder: str = "agz17"
    """Feature encoder of the loop's nets (gocore.nn.features.ENCODERS); a warm start must share it."""
    gumbel_scale: float = 1.0
    """Gumbel root search: sigma's c_scale (the paper's 1.0; mctx's default 0.1)."""
    expert: str | None = None
    """A dataset (``<data>/datasets/NAME``, e.g. GNU Go's games) whose rows fill `expert_share` of every
    training batch, so the loop improves on imitation without forgetting it; None: self-play only."""
    expert_share: float = 0.5
    """With `expert`: the share of each training batch drawn from it."""
    lr_schedule: str = "constant"
    """Each generation's learning rate: constant `lr`, or cosine from `lr` down to 0 over its steps."""
    pass_when_settled: bool = False
    """Self-play may pass once the board is settled (`gocore.rules.board.is_settled`), not only after
    the opponent passed: shorter games, the same Tromp-Taylor results."""

    def __post_init__(self) -> None:
        if self.gate not in GATES:
            raise ValueError(f"gate {self.gate!r} is not one of {', '.join(GATES)}")
        if self.generations < 1 or self.games < 1 or self.sims < 1 or self.gate_games < 2:
            raise ValueError("generations, games and sims must be >= 1, gate_games >= 2")
        if not (0 < self.full_search_prob <= 1 and 0 < self.fast_sims_fraction <= 1):
            raise ValueError("full_search_prob and fast_sims_fraction must be in (0, 1]")
        if self.search is not None:
            root_search(self.search)  # a ValueError names the searches there are
        for name in ("aux_heads", "playout_cap", "forced_playouts"):
            if getattr(self, name) not in (None, True, False):
                raise ValueError(f"{name} must be true, false or unset, not {getattr(self, name)!r}")
        if self.forced_playouts and self.search == "gumbel":
            raise ValueError(FORCED_NEEDS_PUCT)
        if not 0 < self.expert_share < 1 or self.gumbel_scale <= 0 or self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"expert_share must be in (0, 1), gumbel_scale > 0, lr_schedule one of "
                             f"{', '.join(LR_SCHEDULES)}")
        get_encoder(self.encoder)  # a ValueError names the encoders there are

    def undecided(self) -> list[str]:
        """The techniques still unset; ValueError from the callers that need them decided."""
        return [name for name in TECHNIQUE_DEFAULTS if getattr(self, name) is None]

    def resolved(self, recorded: Mapping[str, Any] | None) -> LoopSettings:
        """These settings with every unset technique decided: as the loop recorded it (`recorded`,
        its loop.json; a key it lacks was off, `TECHNIQUES_OFF`), or for a new loop (None) as
        `TECHNIQUE_DEFAULTS` says. So a default can change without refusing older loops' reruns. With
        the playout cap on, a share left at its default (`full_search_prob`, `fast_sims_fraction`:
        no command-line flags) is the one the loop recorded; a share set otherwise is kept, and a
        rerun that changes it is refused as other settings."""
        chosen = {name: (TECHNIQUE_DEFAULTS[name] if recorded is None else recorded.get(name, TECHNIQUES_OFF[name]))
                  for name in TECHNIQUE_DEFAULTS if getattr(self, name) is None}
        if recorded is not None and chosen.get("playout_cap", self.playout_cap) and recorded.get("playout_cap"):
            defaults = {field.name: field.default for field in dataclasses.fields(self)}
            chosen.update({name: recorded[name] for name in ("full_search_prob", "fast_sims_fraction")
                           if name in recorded and getattr(self, name) == defaults[name]})
        if chosen.get("forced_playouts", self.forced_playouts) and chosen.get("search", self.search) == "gumbel":
            began = "the default for new loops" if recorded is None else "as it began"
            raise loops.LoopError(f"{FORCED_NEEDS_PUCT} (this loop's search is gumbel, {began})")
        return dataclasses.replace(self, **chosen) if chosen else self

    @property
    def model_name(self) -> str:
        """The registered model of the loop's board size."""
        return registry.model_name(self.size)


@dataclass(frozen=True)
class ModelRef:
    """One registered version: what the loop plays and promotes."""

    name: str
    version: int

    @property
    def uri(self) -> str:
        """``models:/NAME/VERSION``: pinned, unlike the moving ``@champion``."""
        return f"models:/{self.name}/{self.version}"

    @property
    def label(self) -> str:
        return f"{self.name}/{self.version}"


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
    from tasks.models import ModelError, load_net

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
    if settings.window_generations:
        chosen = list(range(max(1, generation - settings.window_generations + 1), generation + 1))
    else:
        target, chosen, kept = window_rows(sum(rows.values()), settings.min_window), [], 0
        for g in range(generation, 0, -1):  # newest first, until the window is full
            chosen.append(g)
            kept += rows[g]
            if kept >= target:
                break
    return selfplay_facts(data, sorted(chosen), settings.loop), rows[generation]


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
        dataset_facts(layout.dataset_dir(data, settings.expert)), settings.expert_share)
    own_rows = settings.batch_size - (0 if expert is None else expert.rows_per_batch(settings.batch_size))
    steps = training_steps(new_rows, window.rows, own_rows, settings.replay)  # self-play rows sampled as without
    config = TrainConfig(steps=steps, batch_size=settings.batch_size, lr=settings.lr, lr_steps=(),
                         lr_schedule="cosine" if settings.lr_schedule == "cosine" else "steps",
                         checkpoint_every=max(1, steps // 4), val_every=steps, val_batches=8,
                         log_every=max(1, steps // 10), device=device, seed=settings.seed + generation,
                         objective="dual")
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


def loop_record(settings: LoopSettings) -> dict[str, Any]:
    """The settings as loop.json records them (aux_heads, the playout cap and forced playouts only
    when on, search only when not puct, warm_start only when set: loops recorded before they existed
    resume unchanged). The techniques must be decided first (`LoopSettings.resolved`)."""
    if unset := settings.undecided():
        raise ValueError(f"decide the loop's techniques before recording it (resolved): {', '.join(unset)} unset")
    record = dataclasses.asdict(settings)
    if not settings.aux_heads:
        del record["aux_heads"]
    if not settings.playout_cap:
        for name in ("playout_cap", "full_search_prob", "fast_sims_fraction"):
            del record[name]
    if not settings.forced_playouts:
        del record["forced_playouts"]
    if settings.search == "puct":
        del record["search"]
    if settings.warm_start is None:
        del record["warm_start"]
    for name, default in OPTIONAL_DEFAULTS.items():
        if record[name] == default:
            del record[name]
    if settings.expert is None:
        del record["expert"], record["expert_share"]
    return record


def selfplay_search(settings: LoopSettings) -> dict[str, Any]:
    """The self-play flow's search options of the loop (`flows.selfplay.selfplay` keywords, mapped
    into `MCTSConfig.full_search_prob`, `fast_simulations`, `forced_playouts`, and the root search);
    empty when all off."""
    if unset := settings.undecided():
        raise ValueError(f"decide the loop's techniques first (resolved): {', '.join(unset)} unset")
    options: dict[str, Any] = {}
    if settings.search != "puct":
        options["search"] = settings.search
        if settings.gumbel_scale != 1.0:
            options["gumbel_scale"] = settings.gumbel_scale
    if settings.pass_when_settled:
        options["pass_when_settled"] = True
    if settings.playout_cap:
        options["full_search_prob"] = settings.full_search_prob
        options["fast_sims"] = max(1, round(settings.sims * settings.fast_sims_fraction))
    if settings.forced_playouts:
        options["forced_playouts"] = True
    return options


RESUMABLE = frozenset({"generations"})
"""Settings a rerun of a loop may change."""
