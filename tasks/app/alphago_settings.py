"""What an AlphaGo (2016) pipeline run is: `AlphaGoSettings`, its named `PRESETS` (tiny, small,
full: the paper's counts and 13-layer nets), its stages in order, and what a rerun may change
(`RESUMABLE`).

    settings = dataclasses.replace(PRESETS["tiny"], name="ag5", size=5)
    settings.model("policy")                 # gozero-5x5-policy: where its SL policy is registered

The pipeline's Prefect tasks are in `tasks.alphago` (`tasks.reinforce`, `tasks.alphago_eval`), its
flow in `flows/alphago.py`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from gocore.nn.net_sizes import NetConfigError, net_size
from gocore.nn.training import PRESETS as TRAIN_PRESETS
from gocore.nn.training import TrainConfig
from storage import registry

STAGES = ("sl", "rollout", "rl", "value", "eval")
BASELINES = ("mean", "none")


@dataclass(frozen=True)
class AlphaGoSettings:
    """What an AlphaGo pipeline run is; recorded in its loop.json, a rerun must match it."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

    name: str = "alphago-9x9"
    """The run's name: its directory under <data>/loops/ and the `alphago` tag on its versions."""
    dataset: str = "gnugo-9x9"
    """The ingested expert dataset (<data>/datasets/<dataset>) the SL and rollout policies learn."""
    size: int = 9
    """Board size N."""
    komi: float = 7.5
    """Komi of every game the pipeline plays."""
    preset: str = "small"
    """Net size of the policy, RL and value nets: tiny, small, full, alphago (the paper's 13 layers of
    192 filters) or b<layers>c<filters> (b11c128); its training schedule is the size's (tiny, small, full)."""
    sl_steps: int = 4000
    """Training steps of the SL policy."""
    rollout_steps: int = 2000
    """Training steps of the rollout policy."""
    batch_size: int = 128
    """Rows per supervised training step."""
    iterations: int = 200
    """REINFORCE minibatches of the RL stage."""
    games_per_iteration: int = 32
    """n: games per minibatch (the learner is black in half)."""
    snapshot_every: int = 20
    """K: every K iterations the RL policy is registered and joins the opponent pool."""
    rl_lr: float = 0.001
    """Learning rate of the RL policy's SGD."""
    baseline: str = "mean"
    """REINFORCE baseline: mean (the minibatch's mean outcome) or none."""
    value_games: int = 2000
    """Games of value data (one training position each)."""
    value_heldout_games: int = 200
    """Further games whose positions only check the value net."""
    value_games_per_task: int = 100
    """Games of value data per task (one stored batch each)."""
    value_steps: int = 2000
    """Training steps of the value net."""
    max_u: int | None = None
    """U is drawn from 0 .. max_u - 1, the games' plausible length; None = N*N."""
    check_games: int = 40
    """Games of the RL policy against the SL policy (its check: a score of 55 % or more)."""
    eval_games: int = 100
    """Games of every pair in the evaluation round robin (colours alternate)."""
    key_games: int | None = None
    """Games of the key pairs (each AlphaGo player against the SL policy and against UCT), when
    more than `eval_games`: 100 give those pairs a 95 % interval within about ±10 points."""
    eval_sims: tuple[int, ...] = (10, 100)
    """Simulations per move of the AlphaGo players in the round robin (one player per count)."""
    uct_sims: int = 100
    """Simulations of the UCT player in the round robin (the replication's MCTS agent)."""
    gnugo_levels: tuple[int, ...] = (1, 5)
    """GNU Go levels in the round robin (left out when GNU Go is not installed)."""
    seed: int = 0
    """Base seed of every game and training run."""

    def __post_init__(self) -> None:
        problems = [message for is_bad, message in (
            (not _is_net_size(self.preset), f"preset {self.preset!r} is not a net size: tiny, small, full, "
             "alphago or b<layers>c<filters> such as b11c128"),
            (self.baseline not in BASELINES, f"baseline must be one of {', '.join(BASELINES)}"),
            (min(self.iterations, self.games_per_iteration, self.snapshot_every) < 1,
             "iterations, games per iteration and snapshot_every must be >= 1"),
            (min(self.value_games, self.value_heldout_games, self.value_games_per_task) < 1,
             "value games must be >= 1"),
            (self.check_games < 2 or self.eval_games < 2, "check and eval games must be >= 2"),
            (self.key_games is not None and self.key_games < 2, "key games must be >= 2"),
            (not self.eval_sims or min(self.eval_sims) < 1, "eval_sims needs simulation counts >= 1"),
        ) if is_bad]
        if problems:
            raise ValueError("AlphaGo settings: " + "; ".join(problems))

    def model(self, family: str) -> str:
        """The registered model of a family on this board size (gozero-9x9-policy, -rl, ...)."""
        return registry.model_name(self.size, family)

    def train_config(self, steps: int, device: str) -> TrainConfig:
        """The preset's training schedule with these steps, the batch size and the device."""
        base = TRAIN_PRESETS.get(self.preset) or TRAIN_PRESETS[net_size(self.preset).schedule]
        every = max(1, steps // 4)
        return dataclasses.replace(base, steps=steps, batch_size=self.batch_size, device=device, seed=self.seed,
                                   checkpoint_every=every, val_every=every, log_every=max(1, steps // 20))


def _is_net_size(name: str) -> bool:
    try:
        net_size(name)
    except NetConfigError:
        return False
    return True


PRESETS: dict[str, AlphaGoSettings] = {
    "tiny": AlphaGoSettings(preset="tiny", sl_steps=40, rollout_steps=20, batch_size=32, iterations=4,
                            games_per_iteration=4, snapshot_every=2, value_games=24, value_heldout_games=8,
                            value_games_per_task=12, value_steps=20, check_games=4, eval_games=2,
                            eval_sims=(4, 8), uct_sims=8, gnugo_levels=()),
    "small": AlphaGoSettings(),
    "full": AlphaGoSettings(preset="alphago", sl_steps=100_000, rollout_steps=20_000, batch_size=512,
                            iterations=2000, games_per_iteration=128, snapshot_every=100, value_games=200_000,
                            value_heldout_games=2000, value_games_per_task=500, value_steps=100_000),
}
RESUMABLE = frozenset({"eval_games", "key_games", "eval_sims", "uct_sims", "gnugo_levels"})
"""Settings a rerun may change: the evaluation's (the trained nets stay what they are)."""
