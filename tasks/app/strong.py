"""The strength recipe's settings and its read model: AlphaGo's order on a small machine.

Imitate cheap expert play first (GNU Go playing itself offline), then improve by search and
self-play without forgetting (the gate on, a low learning rate, expert rows kept in every batch),
and measure each champion against GNU Go levels. `flows/strong.py` runs it; this module says what a
recipe run is (`StrongSettings`, recorded and checked on every rerun like a loop's), how its zero
loop is set up (`loop_settings`), and what it has spent and reached (`recipe_spend`, `anchor_rows`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gocore.nn.features import get_encoder
from gocore.nn.training import TrainConfig
from storage.gnugo_source import parse_gnugo_source
from tasks.app.loop_settings import LoopSettings
from tasks.app.selfplay_settings import RESIGN_DISABLED_FRACTION

RESUMABLE = frozenset({"budget_cpu_hours", "generations", "anchor_games", "anchor_every", "train_from", "value_mix",
                       "cpu_bf16", "expert_share_final", "expert_share_generations"})
"""Settings a rerun may change: a recipe can be continued later with a larger budget, and its expert
share may start to fall (a copy of a run's data dir taken after its supervised step can so train the
same supervised net on with another schedule: an A/B from one start). `games`, `sims` and reanalysis
may change too, between generations (`tasks.app.loop_settings.BETWEEN_GENERATIONS`)."""
MEASURING_STEPS = frozenset({"anchors", "ladder"})
"""Steps that only measure strength: not counted in the budget (reported beside it)."""


@dataclass(frozen=True)
class StrongSettings:
    """One strength recipe run: expert games, a supervised dual net, then zero-loop generations."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

    name: str = "strong-9x9"
    """The run's name: its records under <data>/loops/<name>-recipe/, its loop <data>/loops/<name>/."""
    size: int = 9
    """Board size N."""
    komi: float = 7.5
    """Komi of every game."""
    expert: tuple[str, ...] = ("gnugo-9x9:level=1,games=2400",)
    """GNU Go sources of the expert games (`storage.gnugo_source`), encoded into one dataset."""
    encoder: str = "tactical"
    """Feature encoder of the dataset and every net: `tactical` (agz17's planes plus liberties, captures,
    self-atari and ladders) gave a tiny net 43.9 % validation top-1 against agz17's 39.0 % on the same
    300 GNU Go games (docs/results, "feature encoders, agz17 vs tactical")."""
    preset: str = "tiny"
    """Net preset (tiny, small, full) of the supervised net and the loop."""
    sl_steps: int = 4000
    """Optimizer steps of the supervised net."""
    sl_batch_size: int = 256
    """Rows per supervised step."""
    sl_lr: float = 0.02
    """Supervised learning rate (SGD with momentum, cosine to 0)."""
    sl_value_weight: float = 0.25
    """Weight of the value loss in the supervised net: 800 outcomes overfit a value head at 1.0."""
    generations: int = 50
    """Most loop generations (the CPU budget usually stops the loop first)."""
    games: int = 200
    """Self-play games per generation."""
    sims: int = 64
    """Simulations per self-play move (Gumbel root search) and per gate move."""
    gate: str = "sprt"
    """Gate of each candidate: sprt (55 % when undecided), fixed or off."""
    gate_games: int = 100
    """Most games a gate plays."""
    lr: float = 0.002
    """Learning rate of each generation (cosine to 0): low, so the imitation is refined, not overwritten."""
    expert_share: float = 0.5
    """Share of every loop training batch from the expert games (generation 1's, with a schedule)."""
    expert_share_final: float | None = None
    """The share falls linearly to this by generation `expert_share_generations` (LoopSettings); None: constant."""
    expert_share_generations: int = 20
    """With `expert_share_final`: the generation that reaches it."""
    gumbel_scale: float = 0.1
    """Gumbel sigma's c_scale in self-play (mctx's default)."""
    value_mix: float = 0.0
    """Self-play value targets (1 - value_mix) * z + value_mix * q, q the searched root value
    (LoopSettings.value_mix); 0: the game result alone."""
    reanalyse: int = 0
    """Positions of earlier games each generation's champion searches again after its self-play, rows
    for training (LoopSettings.reanalyse: MuZero Reanalyze, and the expert games re-searched); 0: off."""
    reanalyse_expert: float = 0.5
    """The share of those positions from the expert games, the rest from earlier self-play games."""
    resign_disabled_fraction: float = RESIGN_DISABLED_FRACTION
    """Self-play games played out without resigning (LoopSettings.resign_disabled_fraction); 1: all."""
    pass_when_settled: bool = True
    """Self-play may pass once the board is settled, as the GNU Go games it imitates do."""
    train_from: str = "latest"
    """Each candidate trains from the previous one (LoopSettings.train_from): restarted from the
    champion, generations 2 and 3 failed their gates (48, 52 of 100); continual, the next candidate
    won 60 of 100 and then 65 of 100 against the supervised net (docs/results, 2026-11-28)."""
    anchors: tuple[str, ...] = ("gnugo-1",)
    """Opponents every new champion (the supervised net first) plays, to rate it on the ladder."""
    anchor_games: int = 40
    """Games against each anchor (pairs of openings with both colours)."""
    anchor_sims: int = 64
    """Simulations per move of our nets in anchor games."""
    anchor_every: int = 1
    """Rate the champion against the anchors after every k-th generation (when it is new since the
    last rating): with the gate off every generation promotes, and 40 games against GNU Go level 10
    cost about as much as a generation's self-play."""
    cpu_bf16: bool = False
    """Train the supervised net and every candidate in bf16 on a CPU that does it natively
    (LoopSettings.cpu_bf16, TrainConfig.cpu_bf16); float32 elsewhere."""
    budget_cpu_hours: float = 4.0
    """No generation starts once expert games, training, self-play and gates have spent this much CPU."""
    seed: int = 0
    """Base seed of the loop."""

    def __post_init__(self) -> None:
        sources = [parse_gnugo_source(text) for text in self.expert]  # a GnugoSourceError names the rule
        if not sources or any(source.size != self.size for source in sources):
            raise ValueError(f"expert sources must be GNU Go games on {self.size}x{self.size}: {self.expert}")
        get_encoder(self.encoder)
        if self.budget_cpu_hours <= 0 or self.sl_steps < 1 or self.anchor_games < 0 or self.anchor_every < 1:
            raise ValueError("budget_cpu_hours must be > 0, sl_steps >= 1, anchor_games >= 0 and anchor_every >= 1")
        self.loop_settings("models:/check/1")  # the loop's own checks, now

    @property
    def recipe(self) -> str:
        """The run directory of the recipe's own steps (the loop has its own, `name`)."""
        return f"{self.name}-recipe"

    @property
    def dataset(self) -> str:
        """The expert dataset's name."""
        return f"{self.name}-expert"

    @property
    def supervised_run(self) -> str:
        """The supervised net's training run (its checkpoints and progress, `tasks.train`)."""
        return f"{self.name}-supervised"

    def sl_config(self) -> TrainConfig:
        """How the supervised net is trained (policy, value and the auxiliary heads)."""
        return TrainConfig(objective="dual", steps=self.sl_steps, batch_size=self.sl_batch_size, lr=self.sl_lr,
                           lr_schedule="cosine", value_weight=self.sl_value_weight,
                           checkpoint_every=max(1, self.sl_steps // 8), val_every=max(1, self.sl_steps // 4),
                           val_batches=40, log_every=50, seed=self.seed, cpu_bf16=self.cpu_bf16)

    def loop_settings(self, warm_start: str) -> LoopSettings:
        """The zero loop that improves on the supervised net `warm_start`."""
        return LoopSettings(loop=self.name, size=self.size, komi=self.komi, generations=self.generations,
                            games=self.games, sims=self.sims, preset=self.preset, gate=self.gate,
                            gate_games=self.gate_games, lr=self.lr, lr_schedule="cosine", ladder_opponents=0,
                            seed=self.seed, aux_heads=True, playout_cap=False, forced_playouts=False,
                            search="gumbel", gumbel_scale=self.gumbel_scale, warm_start=warm_start,
                            encoder=self.encoder, expert=self.dataset, expert_share=self.expert_share,
                            pass_when_settled=self.pass_when_settled, train_from=self.train_from,
                            value_mix=self.value_mix, expert_share_final=self.expert_share_final,
                            expert_share_generations=self.expert_share_generations,
                            reanalyse=self.reanalyse, reanalyse_expert=self.reanalyse_expert, cpu_bf16=self.cpu_bf16,
                            resign_disabled_fraction=self.resign_disabled_fraction)

    def record(self) -> dict[str, Any]:
        """The settings as the recipe's record keeps them (lists for tuples; pass_when_settled,
        reanalysis, cpu_bf16 and a resign_disabled_fraction other than 0.1 only when set: runs recorded before
        them resume unchanged)."""
        record = {key: list(value) if isinstance(value, tuple) else value
                  for key, value in dataclasses.asdict(self).items()}
        if not self.pass_when_settled:
            del record["pass_when_settled"]
        if self.anchor_every == 1:
            del record["anchor_every"]
        if self.value_mix == 0:
            del record["value_mix"]
        if self.expert_share_final is None:
            del record["expert_share_final"], record["expert_share_generations"]
        if not self.reanalyse:
            del record["reanalyse"], record["reanalyse_expert"]
        if not self.cpu_bf16:
            del record["cpu_bf16"]
        if self.resign_disabled_fraction == RESIGN_DISABLED_FRACTION:
            del record["resign_disabled_fraction"]
        return record


@dataclass(frozen=True)
class Spend:
    """CPU a recipe run has spent, in hours: what counts against the budget and what only measured."""

    learning: float
    """Expert games, supervised training, self-play, training and gates."""
    measuring: float
    """Anchor and ladder games."""


def recipe_spend(records: Sequence[Mapping[str, Any]]) -> Spend:
    """The CPU hours in step records (the recipe's and its loop's, `storage.loops.read_steps`)."""
    learning = sum(float(r.get("cpu_seconds", 0.0)) for r in records if r["step"] not in MEASURING_STEPS
                   and not str(r["step"]).startswith("anchors"))
    measuring = sum(float(r.get("cpu_seconds", 0.0)) for r in records if r["step"] in MEASURING_STEPS
                    or str(r["step"]).startswith("anchors"))
    return Spend(round(learning / 3600, 4), round(measuring / 3600, 4))
