"""How a self-play run plays: `SelfPlaySettings`, one frozen value the flow maps whole to its tasks.

Light on purpose: every self-play worker imports it, and a worker loads no MLflow (the flow hands
it the model's local directory, `local_model`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

FORCED_NEEDS_PUCT = ("forced playouts are a PUCT technique (Gumbel's sequential halving decides every root "
                     "visit itself): add --search puct to --forced-playouts")
"""Why forced playouts and the Gumbel root search are refused together (self-play and the loop)."""
RESIGN_DISABLED_FRACTION = 0.1
"""AlphaGo Zero's share of self-play games neither side may resign; settings record another share only."""


@dataclasses.dataclass(frozen=True)
class SelfPlaySettings:
    """How every batch of a self-play run is played; mapped whole to the tasks."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

    model: str
    """The model that plays both sides: models:/NAME/VERSION, models:/NAME@ALIAS, a model directory, or
    uniform (no net: uniform priors, value 0)."""
    sims: int = 100
    """Search simulations per move (of the full searches, with the playout cap)."""
    size: int = 9
    """Board size N."""
    komi: float = 7.5
    """Komi of every game."""
    encoder: str = "agz17"
    """Feature encoder of the rows for `uniform` (a net uses its own)."""
    max_moves: int | None = None
    """Move cap per game (None: the search's default, 3*N*N)."""
    resign_threshold: float | None = -0.9
    """Resign below this root value; None never."""
    resign_disabled_fraction: float = RESIGN_DISABLED_FRACTION
    """Share of games neither side may resign (they calibrate the threshold); recorded unless 0.1."""
    torch_threads: int | None = 1
    """Torch threads per task (pool workers share the cores); not recorded."""
    device: str = "cpu"
    """Where the net runs (choose_device): cpu, since every pool worker holding its own CUDA context
    would crowd the GPU, so a GPU is used only when asked; not recorded."""
    run: str = ""
    """A loop's name: its games go under <data>/loops/<run>/selfplay/ (storage.layout); empty: the
    data dir's own <data>/selfplay/."""
    local_model: tuple[str, str] | None = None
    """Filled in by the flow, leave it unset: the (directory, version label) `model` resolved to
    (tasks.app.models.local_model), which workers load without MLflow; not recorded."""
    full_search_prob: float = 1.0
    """Playout cap: the share of moves searched with `sims` and recorded as rows (1: every move)."""
    fast_sims: int | None = None
    """Playout cap: simulations of the other moves (None: sims // 4)."""
    forced_playouts: bool = False
    """KataGo's forced playouts and pruned policy targets (a PUCT technique: not with gumbel)."""
    search: str = "puct"
    """Root search: puct or gumbel (gocore.search.gumbel.root_search); recorded unless puct."""
    gumbel_scale: float = 1.0
    """Gumbel: sigma's c_scale (GumbelConfig); recorded unless 1.0."""
    pass_when_settled: bool = False
    """Pass is a candidate once the board is settled (MCTSConfig); recorded if on."""

    def __post_init__(self) -> None:
        if self.forced_playouts and self.search == "gumbel":
            raise ValueError(FORCED_NEEDS_PUCT)

    def recorded(self, games: int) -> dict[str, Any]:
        """What a batch's sidecar keeps of these settings (the search options only when on: older
        sidecars still match); a rerun of the batch must match it."""
        options: dict[str, Any] = {}
        if self.full_search_prob < 1:
            options.update(full_search_prob=self.full_search_prob, fast_sims=self.fast_sims)
        if self.forced_playouts:
            options["forced_playouts"] = True
        if self.search != "puct":
            options["search"] = self.search
        if self.gumbel_scale != 1.0:
            options["gumbel_scale"] = self.gumbel_scale
        if self.pass_when_settled:
            options["pass_when_settled"] = True
        if self.resign_disabled_fraction != RESIGN_DISABLED_FRACTION:
            options["resign_disabled_fraction"] = self.resign_disabled_fraction
        return {"model": self.model, "games": games, "sims": self.sims, "size": self.size, "komi": self.komi,
                "encoder": self.encoder, "max_moves": self.max_moves, "resign_threshold": self.resign_threshold,
                **options}
