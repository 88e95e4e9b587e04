"""Training the rollout policy (`nets.RolloutPolicy`) on expert moves: pure, numpy in, torch inside.

Rows become examples with `patterns.candidate_features` (one (N*N, FEATURES_PER_MOVE) block of
feature ids per position); an example is kept when the expert move is one of the mover's
candidates, so passes (which a rollout plays only when it has no candidate), own-eye fills and
the rare illegal row are left out. The loss is the softmax cross-entropy over the candidates, as
in the paper; Adam on the one weight vector. `accuracy` is top-1 move prediction on the same
kind of examples; `uniform_accuracy` is what a uniform choice among the candidates expects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from gocore.errors import GozeroError
from gocore.nn import patterns
from gocore.nn.nets import RolloutPolicy


class RolloutTrainError(GozeroError, ValueError):
    """Rollout training that cannot start: no rows, no usable expert move, a wrong board size."""


@dataclass(frozen=True)
class RolloutTrainConfig:
    """How to fit the rollout weights."""

    steps: int = 3000
    """Optimizer steps."""
    batch_size: int = 256
    """Positions per step."""
    lr: float = 0.02
    """Adam learning rate."""
    l2: float = 1e-5
    """L2 penalty on the weights, per weight (keeps rare patterns near 0)."""
    seed: int = 0
    """Seeds the batch order."""

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch_size < 1 or self.lr <= 0 or self.l2 < 0:
            raise ValueError(f"RolloutTrainConfig: steps, batch_size >= 1, lr > 0, l2 >= 0; got {self}")


@dataclass(frozen=True)
class Examples:
    """Positions with their candidates' feature ids and the index of the expert's move."""

    ids: np.ndarray  # (R, N*N, FEATURES_PER_MOVE) int32, -1 on non-candidates
    targets: np.ndarray  # (R,) int64: the expert move (a candidate)
    rows: np.ndarray  # (R,) int64: each example's row in the rows it was made from

    def __len__(self) -> int:
        return len(self.targets)


def examples(planes: np.ndarray, moves: np.ndarray, plane_names: tuple[str, ...], size: int) -> Examples:
    """Examples of the rows (planes (R, C, N, N), expert moves (R,)) whose move is a candidate."""
    ids = patterns.candidate_features(planes, plane_names, size)  # (R, N*N, K)
    moves = np.asarray(moves, dtype=np.int64)
    on_board = moves < size * size
    keep = on_board.copy()
    keep[on_board] = ids[np.flatnonzero(on_board), moves[on_board], 0] >= 0
    return Examples(ids[keep], moves[keep], np.flatnonzero(keep))


def concat(parts: list[Examples]) -> Examples:
    """One set of examples from several (e.g. batches read one by one); rows lose their meaning."""
    if not parts:
        raise RolloutTrainError("no examples to join")
    return Examples(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("ids", "targets", "rows")))


def loss_of(net: RolloutPolicy, ids: np.ndarray, targets: np.ndarray) -> torch.Tensor:
    """Mean softmax cross-entropy of the expert moves over the candidates."""
    logits = net(torch.from_numpy(ids))  # (B, N*N)
    return F.cross_entropy(logits, torch.from_numpy(targets))


def fit(net: RolloutPolicy, train: Examples, config: RolloutTrainConfig,
        on_loss: Callable[[int, float], None] | None = None, report_every: int = 100) -> float:
    """Train `net` in place on `train`; calls on_loss(step, mean loss) every `report_every`
    steps and returns the last such mean loss."""
    if len(train) == 0:
        raise RolloutTrainError("no training examples: every expert move was a pass or no candidate")
    rng = np.random.default_rng(config.seed)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr)
    net.train()
    running, mean = [], float("nan")
    for step in range(1, config.steps + 1):
        rows = rng.integers(0, len(train), size=min(config.batch_size, len(train)))
        loss = loss_of(net, train.ids[rows], train.targets[rows])
        penalty = config.l2 * net.weight.square().sum()
        optimizer.zero_grad()
        (loss + penalty).backward()
        optimizer.step()
        running.append(loss.item())
        if step % report_every == 0 or step == config.steps:
            mean = float(np.mean(running))
            running = []
            if on_loss is not None:
                on_loss(step, mean)
    net.eval()
    return mean


@torch.no_grad()
def accuracy(net: RolloutPolicy, data: Examples, batch_size: int = 4096) -> float:
    """Share of examples whose expert move has the highest logit."""
    hits = 0
    for start in range(0, len(data), batch_size):
        logits = net(torch.from_numpy(data.ids[start:start + batch_size]))
        hits += int((logits.argmax(dim=1).numpy() == data.targets[start:start + batch_size]).sum())
    return hits / max(len(data), 1)


def uniform_accuracy(data: Examples) -> float:
    """Expected top-1 accuracy of a uniform random choice among each example's candidates."""
    candidates = (data.ids[:, :, 0] >= 0).sum(axis=1)
    return float(np.mean(1.0 / candidates)) if len(data) else 0.0
