"""What a Baghchal zero loop and a Baghchal match are: `BaghchalLoopSettings`, `BaghchalMatchSettings`.

    settings = BaghchalLoopSettings(loop="baghchal", generations=5)
    loops.claim(data, settings.loop, dataclasses.asdict(settings), BAGHCHAL_RESUMABLE)  # a rerun must match

The loop's tasks are `tasks.baghchal`, its flow `flows/baghchal_loop.py`; player specs (our nets,
random, the library's engine, a person) are `tasks.app.baghchal_players`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gocore.rules.baghchal.position import BaghchalRules
from gocore.search.gumbel import ROOT_SEARCHES

MODEL_NAME = "baghchal"  # the registered model of every Baghchal net (storage.registry: its game's name)
GATES = ("fixed", "sprt", "off")


@dataclass(frozen=True)
class BaghchalLoopSettings:
    """What a Baghchal zero loop is; recorded in loop.json, and a rerun must match it (but `generations`,
    `budget_cpu_hours` and `cpu_bf16`)."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

    loop: str = "baghchal"
    """The loop's name: its directory under <data>/loops/ and the tag on its model versions."""
    generations: int = 5
    """Generations to reach (generation 0 is the random net): a rerun with more goes on."""
    games: int = 64
    """Self-play games per generation."""
    games_per_task: int = 16
    """Self-play games per task (one Parquet shard each); tasks run on the pool's workers."""
    sims: int = 64
    """Search simulations per move in self-play and in the gate."""
    temperature_plies: int = 20
    """Self-play plies chosen in proportion to visits (tau = 1) before the most visited is played."""
    full_search_prob: float = 1.0
    """Playout cap randomization: share of self-play moves searched with `sims` (noise, a training
    row); the rest get `fast_sims`, no noise and no row. 1 = every move in full."""
    fast_sims: int | None = None
    """Simulations of a fast self-play move; None = sims // 4."""
    search: str = "puct"
    """Root search of self-play: puct or gumbel."""
    preset: str = "cpu"
    """Net size: cpu (4 blocks x 64), full (the documented 256 filters, 10 blocks), tiny, or b<blocks>c<filters>."""
    blocks: int | None = None
    """Residual blocks, overriding the preset's."""
    filters: int | None = None
    """Filters of every trunk conv, overriding the preset's."""
    window_generations: int = 4
    """Train each candidate on the rows of the last this-many generations."""
    batch_size: int = 128
    """Rows per training step."""
    replay: float = 2.0
    """Training samples per new row (rows are stored in all 8 symmetries: 2 = 16 samples a position),
    at most 2 passes over the window (`training_steps`)."""
    lr: float = 0.002
    """Learning rate (AdamW, cosine decay within a generation)."""
    cpu_bf16: bool = False
    """Training on a CPU that does bf16 natively (AMX, AVX512-BF16): bf16 autocast with NHWC weights, the
    heads in float32 (TrainConfig.cpu_bf16; float32 elsewhere), and self-play on the fastest conv path
    bf16 included (without it: the fastest float32 one). A choice of each run, as the training device
    is: a rerun trains and self-plays as its own command says, also inside a generation whose training
    was cut off."""
    gate: str = "fixed"
    """fixed (the candidate scores at least `gate_threshold` of the gate games, draws half), sprt (a
    draw-aware SPRT, elo0 0 against elo1 35, alpha = beta = 0.05, checked after every 16 games: it
    stops a gate once decided; `gate_threshold` if undecided after `gate_games`) or off."""
    gate_games: int = 40
    """Games of the gate (at most, with sprt), candidate against champion, sides alternating."""
    gate_threshold: float = 0.55
    """Score the candidate needs in the gate."""
    ladder_games: int = 20
    """After a promotion, games of the new champion against each ladder anchor (0: no ladder)."""
    ladder_depth: int = 1
    """Depth of the `baghchal` library's engine on the ladder (an anchor beside random); 0 = random only."""
    captures_to_win: int = 5
    """Tiger wins on this capture."""
    repetition: int | None = 3
    """The occurrence of an arrangement, once every goat is placed, that draws; None = never."""
    max_plies: int | None = 200
    """A game still going after this many plies is a draw."""
    seed: int = 0
    """Seeds every generation's self-play, training and games."""
    budget_cpu_hours: float | None = None
    """Start no new generation once the loop's learning (self-play, training, gate: the steps' process
    trees; not the ladder) has spent this many CPU hours; None = no budget, `generations` alone."""

    def __post_init__(self) -> None:
        problems = [message for is_bad, message in (
            (self.search not in ROOT_SEARCHES, f"search must be one of {', '.join(ROOT_SEARCHES)}"),
            (self.gate not in GATES, f"gate must be one of {', '.join(GATES)}"),
            (min(self.generations, self.games, self.games_per_task, self.sims, self.batch_size,
                 self.window_generations) < 1, "generations, games, games_per_task, sims, batch_size and "
                                               "window_generations must be >= 1"),
            (not 0 < self.gate_threshold < 1, "gate_threshold must be in (0, 1)"),
            (self.temperature_plies < 0, "temperature_plies must be >= 0"),
            (not 0 < self.full_search_prob <= 1, "full_search_prob must be in (0, 1]"),
            (self.fast_sims is not None and self.fast_sims < 1, "fast_sims must be >= 1"),
            (self.budget_cpu_hours is not None and self.budget_cpu_hours <= 0, "budget_cpu_hours must be > 0"),
            (min(self.gate_games, self.ladder_games, self.ladder_depth) < 0, "gate_games, ladder_games and "
                                                                             "ladder_depth must be >= 0"),
        ) if is_bad]
        if problems:
            raise ValueError("BaghchalLoopSettings: " + "; ".join(problems))
        self.rules()  # the rules' own checks

    def resolved(self, recorded: Mapping[str, Any] | None) -> BaghchalLoopSettings:
        """These settings for the loop that recorded `recorded` (its loop.json; None: a new loop):
        a budget not given is the one the loop recorded, so a rerun without it stops as before."""
        if recorded is None or self.budget_cpu_hours is not None:
            return self
        return dataclasses.replace(self, budget_cpu_hours=recorded.get("budget_cpu_hours"))

    def rules(self) -> BaghchalRules:
        """The rules' settings of every game of the loop."""
        return BaghchalRules(self.captures_to_win, self.repetition, self.max_plies)


BAGHCHAL_RESUMABLE = frozenset({"generations", "budget_cpu_hours", "cpu_bf16"})
"""Settings a rerun of a Baghchal loop may change."""
ADDED_LATER: dict[str, Any] = {"temperature_plies": 20, "full_search_prob": 1.0, "fast_sims": None,
                               "budget_cpu_hours": None, "cpu_bf16": False}
"""What a loop begun before these settings existed ran with (its loop.json lacks them)."""


@dataclass(frozen=True)
class BaghchalMatchSettings:
    """A Baghchal match: two players (`tasks.app.baghchal_players` specs) and how they play."""

    __pydantic_config__ = {"use_attribute_docstrings": True}

    player_a: str
    """Player A: a model URI or directory, random, uniform, library:<depth> (or human, in the CLI)."""
    player_b: str
    """Player B, the same kinds."""
    games: int = 20
    """Games; A is Goat in even games, Tiger in odd ones."""
    sims: int = 64
    """Search simulations per move of our nets (and of uniform)."""
    opening: int = 2
    """Random plies at the start of each game, shared by games 2i and 2i + 1."""
    seed: int = 0
    """Seeds the openings and players."""
    captures_to_win: int = 5
    """Tiger wins on this capture."""
    repetition: int | None = 3
    """The occurrence of an arrangement, once every goat is placed, that draws; None = never."""
    max_plies: int | None = 200
    """A game still going after this many plies is a draw."""
    device: str = "cpu"
    """Where our nets run."""

    def rules(self) -> BaghchalRules:
        """The rules' settings of every game."""
        return BaghchalRules(self.captures_to_win, self.repetition, self.max_plies)
