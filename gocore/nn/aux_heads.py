"""Auxiliary heads of the dual net (KataGo's ownership and score targets): the ownership head, the
output tuple with every head, and unit conversions (their loss terms are in `gocore.nn.losses`).

Both targets come from the end of a self-play game, from the side to move's view at each row
(`gocore.search.selfplay.training_columns`): the final Tromp-Taylor owner of every point (+1 the
side to move, -1 the opponent, 0 neither) and the final score lead (area difference with komi,
in points). They are not in either paper; a net has them when `NetConfig.aux_heads` is set.

Units of the outputs:

- ownership: one logit per point; ``tanh(logit)`` is the expected owner in [-1, 1]. The loss is
  the cross-entropy of ``sigmoid(2 * logit) = (tanh(logit) + 1) / 2`` against ``(own + 1) / 2``,
  averaged over the points (KataGo's 1.5 / N² times the sum, with the default weight 1.5);
- score: the lead divided by N (a 9x9 lead of 18 points is 2.0; 19 points on 19x19 is 1.0), so
  its Huber loss (delta 1: squared near the truth, linear for blowouts) has the same scale on
  every board.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

AUX_KEYS = ("ownership", "score", "aux_mask")
"""Batch tensors of the auxiliary targets: ownership (B, N*N) in {-1, 0, 1}, score (B,) points,
aux_mask (B,) 1 where the row has targets (0: a resigned game, or data older than the targets)."""


class OwnershipHead(nn.Module):
    """conv1x1(F)-BN-ReLU-conv1x1(1): one ownership logit per point; tanh of it is in [-1, 1]."""

    def __init__(self, filters: int):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(filters, filters, 1, bias=False), nn.BatchNorm2d(filters)
        self.out = nn.Conv2d(filters, 1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn(self.conv(x)))  # (B, F, N, N)
        return self.out(y).flatten(1)  # (B, N*N)


class DualOutput(NamedTuple):
    """Every head of a DualNet, all from the side to move's view; the auxiliary ones are None
    when the net has no auxiliary heads."""

    policy: torch.Tensor  # (B, N*N+1) move logits
    value: torch.Tensor  # (B,) in [-1, 1]: +1 = the side to move wins
    ownership: torch.Tensor | None  # (B, N*N) logits: tanh(logit) in [-1, 1], +1 = the side to move owns it
    score: torch.Tensor | None  # (B,) final score lead of the side to move divided by N


def ownership_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """Ownership in [-1, 1] (+1 = the side to move owns the point) from `DualOutput.ownership`."""
    return torch.tanh(logits)


def score_in_points(score: torch.Tensor, board_size: int) -> torch.Tensor:
    """The side to move's score lead in points (komi counted) from `DualOutput.score`."""
    return score * board_size
