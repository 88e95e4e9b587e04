"""KataGo's self-play root techniques (Wu, "Accelerating Self-Play Learning in Go", 2019), as pure numpy
on a root's children vectors (N, W, P: `mcts.Node.child_*`); `mcts.BatchedSearch` calls them.

- Forced playouts: in a self-play search with noise, a root child c with fewer than
  ``n_forced(c) = sqrt(k * P(c) * sum N)`` visits (k = 2) is chosen before PUCT is asked
  (`forced_root_choice`), so every move the noise lifts gets looked at.
- Policy target pruning (`pruned_visits`): those forced visits would teach the net
  moves the search did not want; for the training target, every child but the most visited loses
  up to n_forced(c) visits as long as its PUCT score stays below the best child's; children left
  with one visit or none are removed; pi = the remaining visits normalised.
- Playout cap randomization (`is_full_search`): a move is searched with the full budget (noise,
  forced playouts, recorded as a training row) with probability p, else with a small budget and
  not recorded; `selfplay.play_games` draws it per move and `selfplay.training_columns` keeps the rows.

Scores use the search's PUCT: Q + c_puct * P * sqrt(sum N) / (1 + N), Q = W / max(N, 1).
"""

from __future__ import annotations

import math

import numpy as np

FORCED_K = 2.0  # KataGo's k in n_forced(c) = sqrt(k * P(c) * sum N)


def forced_visits(child_P: np.ndarray, total: float, k: float = FORCED_K) -> np.ndarray:
    """n_forced of each child: sqrt(k * P * total), `total` the root's children's visits summed."""
    return np.sqrt(k * child_P * max(total, 0.0))  # (N*N+1,)


def puct_scores(child_N: np.ndarray, child_W: np.ndarray, child_P: np.ndarray, c_puct: float,
                total: float) -> np.ndarray:
    """Q + U of every child, with `total` (sum of the children's N) under the square root."""
    scale = c_puct * math.sqrt(max(total, 1.0))  # max(.., 1): as `Node.best_move`, U > 0 on a fresh node
    return child_W / np.maximum(child_N, 1.0) + scale * child_P / (1.0 + child_N)  # (N*N+1,)


def forced_root_choice(child_N: np.ndarray, child_P: np.ndarray, legal: np.ndarray, scores: np.ndarray,
                       k: float = FORCED_K) -> int | None:
    """The legal child with fewer visits than n_forced and the highest score among such, or None
    when every child has its forced visits (then PUCT chooses)."""
    short = legal & (child_P > 0) & (child_N < forced_visits(child_P, child_N.sum(), k))  # (N*N+1,) bool
    if not short.any():
        return None
    return int(np.where(short, scores, -np.inf).argmax())


def forced_root_move(child_N: np.ndarray, child_W: np.ndarray, child_P: np.ndarray, illegal: np.ndarray,
                     c_puct: float, k: float = FORCED_K) -> int:
    """The root's next child in a search with forced playouts: one still short of n_forced, else
    PUCT's; `illegal` is 0 on legal moves, -inf elsewhere (`mcts.Node.illegal`)."""
    scores = puct_scores(child_N, child_W, child_P, c_puct, child_N.sum()) + illegal  # (N*N+1,)
    forced = forced_root_choice(child_N, child_P, illegal == 0, scores, k)
    return int(scores.argmax()) if forced is None else forced


def pruned_visits(child_N: np.ndarray, child_W: np.ndarray, child_P: np.ndarray, c_puct: float,
                  k: float = FORCED_K) -> np.ndarray:
    """Visits with the forced playouts taken back (KataGo's policy target pruning): the most visited
    child keeps its N; every other child c keeps the fewest visits n >= N(c) - n_forced(c) at which
    its score Q(c) + U(c, n) is still at most the best child's (Q is kept: only the count shrinks);
    a child left with 1 visit or less drops to 0. Never more than `child_N`. The search's pi and
    its tau = 1 move choice follow these."""
    visits = np.asarray(child_N, dtype=np.float64)
    total = visits.sum()
    if total <= 0:
        return visits.copy()
    best = int(visits.argmax())
    scores = puct_scores(visits, child_W, child_P, c_puct, total)
    q = child_W / np.maximum(visits, 1.0)
    gap = scores[best] - q  # room U(c, n) may fill: U(c, n) <= gap
    prior_term = c_puct * math.sqrt(total) * child_P
    needed = np.where(gap > 0, np.ceil(prior_term / np.where(gap > 0, gap, 1.0) - 1.0), visits)  # no room: keep all
    floor = visits - np.floor(forced_visits(child_P, total, k))
    kept = np.clip(np.maximum(needed, floor), 0.0, visits)
    kept[kept <= 1.0] = 0.0
    kept[best] = visits[best]
    return kept  # (N*N+1,)


def is_full_search(rng: np.random.Generator, full_search_prob: float) -> bool:
    """Playout cap randomization's draw for one move: True (full budget, recorded) with probability
    p; no draw at p = 1, so searches without the cap keep their random streams (and their games)."""
    return full_search_prob >= 1.0 or bool(rng.random() < full_search_prob)
