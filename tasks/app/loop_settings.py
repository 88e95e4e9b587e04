"""What a zero loop is: `LoopSettings`, the techniques' defaults, and the settings as loop.json records them.

    settings = LoopSettings(loop="zero-9x9", generations=5).resolved(loops.read_settings(data, "zero-9x9"))
    loops.claim(data, settings.loop, loop_record(settings), RESUMABLE)   # a rerun must match (but generations)
    SelfPlaySettings(model, settings.sims, ..., **selfplay_search(settings))   # the loop's self-play search

The loop's Prefect tasks are in `tasks.zero`, its flow in `flows/zero_loop.py`; named settings in
`tasks.app.loop_presets`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gocore.nn.features import get_encoder
from gocore.search.gumbel import root_search
from storage import loops, registry
from tasks.app.selfplay_settings import FORCED_NEEDS_PUCT, RESIGN_DISABLED_FRACTION

GATES = ("sprt", "fixed", "off")
LR_SCHEDULES = ("constant", "cosine")
TRAIN_FROM = ("champion", "latest")
OPTIONAL_DEFAULTS: dict[str, Any] = {"encoder": "agz17", "gumbel_scale": 1.0, "lr_schedule": "constant",
                                     "pass_when_settled": False, "loader_workers": 0, "train_from": "champion",
                                     "value_mix": 0.0, "reanalyse": 0, "cpu_bf16": False,
                                     "resign_disabled_fraction": RESIGN_DISABLED_FRACTION}
"""Settings loop.json records only when they differ from these (loops recorded before them resume
unchanged); `expert_share` is recorded with `expert` only, its schedule only when set,
`reanalyse_expert` only with both `reanalyse` and `expert`."""
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

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

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
    resign_disabled_fraction: float = RESIGN_DISABLED_FRACTION
    """Self-play games in which neither side may resign (AlphaGo Zero's 10 %): they calibrate the next
    generation's threshold, and only they are played out to the count; 1: every game played out, so
    the nets train on the late positions where resigned games stop (where a value head that never
    sees a group die goes on believing it lives)."""
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
    """With `expert`: the share of each training batch drawn from it (in generation 1)."""
    expert_share_final: float | None = None
    """With `expert`: the share falls linearly from `expert_share` in generation 1 to this one in
    generation `expert_share_generations` and stays there (as self-play data grows, imitation
    should weigh less); None: `expert_share` throughout."""
    expert_share_generations: int = 20
    """With `expert_share_final`: the generation whose batches reach it."""
    lr_schedule: str = "constant"
    """Each generation's learning rate: constant `lr`, or cosine from `lr` down to 0 over its steps."""
    pass_when_settled: bool = False
    """Self-play may pass once the board is settled (`gocore.rules.board.is_settled`), not only after
    the opponent passed: shorter games, the same Tromp-Taylor results."""
    train_from: str = "champion"
    """Whose weights each candidate trains from: champion (the generation's pinned champion), or
    latest (the previous generation's candidate, promoted or not: AlphaGo Zero's continual training,
    so the steps of candidates that failed their gate are not thrown away)."""
    value_mix: float = 0.0
    """Value target of self-play rows: (1 - value_mix) * z + value_mix * q, q the root's searched value
    of the move (KataGo mixes search values into its value targets; less noise than one game's result
    alone); 0: the game result z, as AlphaGo Zero. Rows of shards written before q was stored use z."""
    reanalyse: int = 0
    """Reanalysis (MuZero Reanalyze): positions of earlier games searched again by each generation's
    champion (the self-play search, no noise) after its self-play, their rows trained on beside it
    with the new search's pi and q (`gocore.search.reanalysis`); 0: off."""
    reanalyse_expert: float = 0.5
    """With `reanalyse` and `expert`: the share of those positions drawn from the expert games
    (AlphaGo's data re-searched), the rest from the self-play games of the previous generation's
    training window; all from one kind when the other has no games yet (generation 1: expert only)."""
    loader_workers: int = 0
    """Training batches: 0 decoded in-process (numpy symmetry); 1 raw uint8 batches with the symmetry and
    float32 on the device (for a GPU); n >= 2 decoded by n processes (TrainConfig.loader_workers). The
    same batches either way, so a rerun may change it."""
    cpu_bf16: bool = False
    """Training on a CPU that does bf16 natively (AMX, AVX512-BF16): bf16 autocast with NHWC weights,
    about 2.5x the samples per CPU-second of float32 (TrainConfig.cpu_bf16; float32 on other CPUs and
    on a GPU, which trains in bf16 anyway). Self-play's precision is the conv path's choice. A rerun may
    change it."""

    def __post_init__(self) -> None:
        if self.gate not in GATES:
            raise ValueError(f"gate {self.gate!r} is not one of {', '.join(GATES)}")
        if self.generations < 1 or self.games < 1 or self.sims < 1 or self.gate_games < 2 or self.loader_workers < 0:
            raise ValueError("generations, games and sims must be >= 1, gate_games >= 2, loader_workers >= 0")
        if not (0 < self.full_search_prob <= 1 and 0 < self.fast_sims_fraction <= 1):
            raise ValueError("full_search_prob and fast_sims_fraction must be in (0, 1]")
        if self.search is not None:
            root_search(self.search)  # a ValueError names the searches there are
        for name in ("aux_heads", "playout_cap", "forced_playouts"):
            if getattr(self, name) not in (None, True, False):
                raise ValueError(f"{name} must be true, false or unset, not {getattr(self, name)!r}")
        if self.forced_playouts and self.search == "gumbel":
            raise ValueError(FORCED_NEEDS_PUCT)
        if self.train_from not in TRAIN_FROM:
            raise ValueError(f"train_from must be one of {', '.join(TRAIN_FROM)}, not {self.train_from!r}")
        if not 0 <= self.value_mix <= 1:
            raise ValueError(f"value_mix must be in [0, 1], not {self.value_mix}")
        if not 0 <= self.resign_disabled_fraction <= 1:
            raise ValueError(f"resign_disabled_fraction must be in [0, 1], not {self.resign_disabled_fraction}")
        if self.reanalyse < 0 or not 0 <= self.reanalyse_expert <= 1:
            raise ValueError(f"reanalyse must be >= 0 and reanalyse_expert in [0, 1], not {self.reanalyse} "
                             f"and {self.reanalyse_expert}")
        if self.expert_share_final is not None and (not 0 < self.expert_share_final < 1
                                                    or self.expert_share_generations < 2):
            raise ValueError("expert_share_final must be in (0, 1) and expert_share_generations >= 2")
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


def loop_record(settings: LoopSettings) -> dict[str, Any]:
    """The settings as loop.json records them (aux_heads, the playout cap, forced playouts and
    reanalysis only when on, search only when not puct, warm_start only when set: loops recorded
    before they existed resume unchanged). The techniques must be decided first (`LoopSettings.resolved`)."""
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
    if settings.expert is None or settings.expert_share_final is None:
        del record["expert_share_final"], record["expert_share_generations"]
    if settings.expert is None or not settings.reanalyse:
        del record["reanalyse_expert"]
    return record


def expert_share_at(settings: LoopSettings, generation: int) -> float:
    """The share of generation `generation`'s training batches from the expert dataset."""
    final = settings.expert_share_final
    if final is None:
        return settings.expert_share
    progress = min(1.0, max(0, generation - 1) / (settings.expert_share_generations - 1))
    return round(settings.expert_share + (final - settings.expert_share) * progress, 4)


def selfplay_search(settings: LoopSettings) -> dict[str, Any]:
    """The loop's self-play search options as `SelfPlaySettings` keywords (the playout cap's share
    `fast_sims_fraction` becomes the count `fast_sims`; `MCTSConfig` takes them by the same names,
    and the root search); empty when all off."""
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
    if settings.resign_disabled_fraction != OPTIONAL_DEFAULTS["resign_disabled_fraction"]:
        options["resign_disabled_fraction"] = settings.resign_disabled_fraction
    return options


RESUMABLE = frozenset({"generations", "loader_workers", "train_from", "value_mix", "cpu_bf16", "expert_share_final",
                       "expert_share_generations"})
"""Settings a rerun of a loop may change (train_from: only how the next candidates start; the expert
share's schedule: the share of the generations still to train)."""
BETWEEN_GENERATIONS = frozenset({"games", "sims", "reanalyse", "reanalyse_expert", "resign_disabled_fraction"})
"""Settings a rerun may change only while no generation is under way (`flows.loop_driver`): how the
generations still to come are played (their self-play games and simulations, gates at those
simulations, reanalysis, how many games are played out without resigning). A copy of a loop's data
dir can so go on with more search or more games than the loop it was copied from: an A/B of those
levers from one champion."""
