"""Gumbel root search (Danihelka et al., "Policy improvement by planning with Gumbel", ICLR 2022).

Owns `GumbelConfig`, `GumbelSearch` (a `mcts.BatchedSearch` whose root is searched by sequential
halving: G games still advance in lockstep, each round's leaves from every game in one evaluator
call) and the paper's formulas as small pure functions: `completed_q`, `sigma`,
`improved_policy`, `halving_schedule`. `completed_q` and `sigma` state them in numpy; the search
runs them in numba (`tree_kernels.gumbel_sigma`, `gumbel_choice`: the same operations, one call a
node). Start reading at `GumbelSearch.search`.

At the root (per search, per game):
1. sample g ~ Gumbel(0, 1) for every searched move (noise off: g = 0, as in matches), and keep
   the top k of g + logits (the moves `candidate_moves` allows, like the PUCT search);
2. sequential halving: ceil(log2 k) phases; phase p visits each of its m survivors
   max(1, n // (phases * m)) times and the last phase gets what is left of the budget n, so the
   root's children's N sum to n exactly; after each phase the better half by
   g + logits + sigma(completed Q) survives;
3. the move played is the argmax of g + logits + sigma(completed Q) among the most visited moves
   (mctx's rule: the last survivors, or all considered moves if the budget ran out early);
4. the policy target is softmax(logits + sigma(completed Q)) over the searched moves.

Below the root: the paper's deterministic selection, argmax of pi'(a) - N(a) / (1 + sum N) with
pi' = softmax(logits + sigma(completed Q)), chosen over plain PUCT because it is what the paper's
policy-improvement argument covers and needs no c_puct tuned at 16-32 simulations.

sigma(q) = (c_visit + max_b N(b)) * c_scale * q, with q the completed Q min-max rescaled to [0, 1]
over the node's searched moves (mctx's `qtransform_completed_by_mix_value`): values here lie in
[-1, 1] and the paper's c_visit = 50, c_scale = 1 assume [0, 1].

The `MCTSConfig` given decides the budget, virtual loss, leaves per game, sensible moves and
resignation; its `noise` switches the Gumbel noise on (self-play), and its Dirichlet and
temperature settings are unused: sampling g is this search's exploration.

Each search starts from fresh statistics at the root (the root keeps its network evaluation when
the tree is reused, its children's subtrees go): the halving schedule counts visits from zero.
A search's `sims` are all leaf evaluations below the root; evaluating a new root is extra.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from gocore.rules.board import Position
from gocore.rules.game import GO, Game
from gocore.search import tree_kernels
from gocore.search.mcts import BatchedSearch, MCTSConfig, SearchResult
from gocore.search.rollout import PatternRollouts
from gocore.search.tree import Node, expand_all

if TYPE_CHECKING:
    from gocore.nn.inference import Evaluator

TINY = 1e-30  # floor of a prior before its log: a searched move keeps a finite logit


@dataclass(frozen=True)
class GumbelConfig:
    """The Gumbel root search's own settings (the rest is the `MCTSConfig` it is given)."""

    k: int = 16
    """Moves sampled without replacement at the root (Gumbel-top-k), before sequential halving."""
    c_visit: float = 50.0
    """sigma's visit offset: (c_visit + max N) * c_scale * q (the paper's 50)."""
    c_scale: float = 1.0
    """sigma's scale: the paper's 1.0; mctx's `qtransform_completed_by_mix_value` uses 0.1 with the
    same min-max rescaling. At 16 simulations 1.0 puts 0.81 of a supervised net's improved policy on
    one move (entropy 0.46 nats against the prior's 2.57), 0.1 gives 0.42 and 1.93."""

    def __post_init__(self) -> None:
        if self.k < 1 or self.c_visit < 0 or self.c_scale < 0:
            raise ValueError("GumbelConfig: k must be >= 1, c_visit and c_scale >= 0")


def logits_of(node: Node) -> np.ndarray:
    """(N*N+1,) log priors of the node's searched moves, -inf elsewhere (softmax gives the priors back);
    read-only, computed once a node (every non-root step of a descent asks for it)."""
    if node.log_prior is None:
        node.log_prior = np.log(np.maximum(node.prior, TINY)) + node.illegal
        node.log_prior.flags.writeable = False
    return node.log_prior


def completed_q(node: Node) -> np.ndarray:
    """(N*N+1,) Q of each visited child, and v_mix for every other move (mover's view, [-1, 1]).

    v_mix = (v + sum N * sum_visited(P Q) / sum_visited(P)) / (1 + sum N): the node's own value
    mixed with the prior-weighted Q of its visited children (the paper's appendix D)."""
    visited = node.child_N > 0
    q = np.divide(node.child_W, node.child_N, out=np.zeros_like(node.child_W), where=visited)
    total = node.child_N.sum()
    prior_visited = node.prior[visited].sum()
    if total > 0 and prior_visited > 0:
        v_mix = (node.value + total * (node.prior[visited] @ q[visited]) / prior_visited) / (1 + total)
    else:
        v_mix = node.value
    return np.where(visited, q, v_mix)


def sigma(q: np.ndarray, node: Node, config: GumbelConfig) -> np.ndarray:
    """(N*N+1,) (c_visit + max N) * c_scale * q, q min-max rescaled to [0, 1] over the searched moves."""
    searched = node.illegal == 0
    low, high = q[searched].min(), q[searched].max()
    scaled = (q - low) / max(high - low, 1e-8)
    return (config.c_visit + node.child_N.max()) * config.c_scale * scaled


def sigma_of(node: Node, config: GumbelConfig) -> np.ndarray:
    """(N*N+1,) sigma(completed_q(node), node, config) in one kernel call (`tree_kernels.gumbel_sigma`)."""
    out = np.empty(len(node.child_N))
    tree_kernels.gumbel_sigma(node.child_N, node.child_W, node.prior, node.illegal, float(node.value),
                              float(config.c_visit), float(config.c_scale), out)
    return out


def improved_policy(node: Node, config: GumbelConfig) -> np.ndarray:
    """(N*N+1,) softmax(logits + sigma(completed Q)): the policy target, 0 off the searched moves."""
    scores = logits_of(node) + sigma_of(node, config)
    weights = np.exp(scores - scores.max())
    return weights / weights.sum()


def select_child(node: Node, config: GumbelConfig) -> int:
    """The paper's non-root choice: argmax of improved policy - N / (1 + sum N), in one kernel call
    (`tree_kernels.gumbel_choice`: the formulas above, operation for operation)."""
    return tree_kernels.gumbel_choice(node.child_N, node.child_W, node.prior, logits_of(node), node.illegal,
                                      float(node.value), float(config.c_visit), float(config.c_scale))


def halving_schedule(budget: int, considered: int) -> list[tuple[int, int]]:
    """(survivors, visits each) of every phase for `considered` root moves: visits sum to `budget`.

    The last phase's visits are a ceiling: what is left is dealt round robin, so its survivors
    may differ by one visit."""
    phases = max(1, math.ceil(math.log2(considered)))
    plan, left, survivors = [], budget, considered
    for phase in range(phases):
        each = -(-left // survivors) if phase == phases - 1 else max(1, budget // (phases * survivors))
        plan.append((survivors, each))
        left -= min(left, each * survivors)
        survivors = -(-survivors // 2)
    return plan


@dataclass
class RootPlan:
    """One game's sequential halving in progress."""

    gumbel: np.ndarray  # (N*N+1,) the noise g of this search (zeros without noise)
    survivors: list[int]  # root moves still in the race, best first
    schedule: list[tuple[int, int]]  # halving_schedule of this search
    left: int  # simulations not yet queued
    phase: int = 0
    queue: list[int] = field(default_factory=list)  # root moves still to visit in this phase


class GumbelSearch(BatchedSearch):
    """Search trees for G games in lockstep, the root searched by Gumbel sequential halving."""

    def __init__(self, evaluator: Evaluator, config: MCTSConfig, positions: Sequence[Position],
                 seed: int | None = None, rollout_policy: PatternRollouts | None = None,
                 gumbel: GumbelConfig | None = None, game: Game = GO):
        super().__init__(evaluator, config, positions, seed, rollout_policy, game)
        self.gumbel = gumbel or GumbelConfig()
        self.plans: dict[int, RootPlan] = {}

    def search(self, games: Sequence[int] | None = None, deadline: float | None = None,
               sims: int | None = None, fast: Sequence[int] = ()) -> list[SearchResult]:
        """`sims` (default: the config's) visits below each listed game's root (default all),
        dealt by sequential halving; one result each. `deadline` as in `BatchedSearch.search`; games
        in `fast` get `fast_sims` and no Gumbel noise (the playout cap's fast searches)."""
        games = list(range(len(self.roots))) if games is None else list(games)
        if any(self.roots[g].terminal_value is not None for g in games):
            raise ValueError("a game is over: there is nothing to search")
        self._expand_roots([g for g in games if self.roots[g].prior is None])
        self._fast = frozenset(fast)
        fast_budget = self.config.fast_sims or max(1, self.config.sims // 4)
        self.plans = {g: self._plan(self.roots[g], sims or (fast_budget if g in self._fast
                                                                   else self.config.sims), g not in self._fast)
                      for g in games}
        active = games
        while active:
            self._round(active)
            active = [g for g in active if self._next_phase(g)]
            if deadline is not None and time.monotonic() >= deadline:
                break
        return [self.result(g) for g in games]

    def advance(self, game: int, move: int) -> None:
        """Play `move`; the new root keeps its evaluation (if reused) but starts with no statistics."""
        super().advance(game, move)
        root = self.roots[game]
        if root.prior is not None:
            root.children.clear()
            root.child_N, root.child_W = np.zeros_like(root.child_N), np.zeros_like(root.child_W)
            # its own arrays, not rows that keep the last search's batches alive (`_expand_leaves`)
            root.prior = root.child_P = root.prior.copy()
            root.illegal, root.log_prior = root.illegal.copy(), None
            root.visits = 1.0

    def _expand_roots(self, games: list[int]) -> None:
        """Evaluate the unexpanded roots in one call (not counted as simulations)."""
        if not games:
            return
        roots = [self.roots[g] for g in games]
        priors, values = self.evaluator.evaluate([root.position for root in roots])  # (B, N*N+1), (B,)
        candidates = self._candidates([root.position for root in roots])  # (B, N*N+1)
        for root, prior, value, moves in zip(roots, priors, self._mix_rollouts(roots, values), candidates):
            root.expand(moves, prior)
            root.value, root.visits = float(value), 1.0

    def _plan(self, root: Node, budget: int, noisy: bool = True) -> RootPlan:
        """Gumbel-top-k of the root's searched moves, and the first phase's queue."""
        searched = np.flatnonzero(root.illegal == 0)
        noise = np.zeros(len(root.prior))
        if self.config.noise and noisy:
            noise[searched] = self.rng.gumbel(size=len(searched))
        scores = (noise + logits_of(root))[searched]
        considered = [int(m) for m in searched[np.argsort(-scores, kind="stable")[:self.gumbel.k]]]
        plan = RootPlan(noise, considered, halving_schedule(budget, len(considered)), budget)
        self._queue_phase(plan)
        return plan

    def _queue_phase(self, plan: RootPlan) -> None:
        """The current phase's visits, round robin over the survivors, at most what is left."""
        survivors, each = plan.schedule[plan.phase]
        plan.queue = (plan.survivors[:survivors] * each)[:plan.left]
        plan.left -= len(plan.queue)

    def _next_phase(self, g: int) -> bool:
        """Halve game g's survivors once its phase is done; False when its search is finished."""
        plan = self.plans[g]
        if plan.queue:
            return True
        if plan.phase + 1 >= len(plan.schedule):
            return False
        root = self.roots[g]
        scores = plan.gumbel + logits_of(root) + sigma_of(root, self.gumbel)
        plan.survivors = sorted(plan.survivors, key=lambda m: -scores[m])[:plan.schedule[plan.phase + 1][0]]
        plan.phase += 1
        self._queue_phase(plan)
        return True

    def _round(self, active: list[int]) -> None:  # type: ignore[override]
        """Up to leaves_per_game queued root visits per game, evaluated in one call, backed up."""
        batch: list[Node] = []
        for g in active:
            queue = self.plans[g].queue
            for _ in range(min(self.config.leaves_per_game, len(queue))):
                leaf = self._descend_from(self.roots[g], queue[0])
                if leaf.terminal_value is not None:  # scored by the rules: no network needed
                    self._backup(leaf, leaf.terminal_value)
                elif leaf.is_pending:  # virtual loss did not steer away: visit it next round
                    self._backup(leaf, 0.0, count=0.0)
                    break
                else:
                    leaf.is_pending = True
                    batch.append(leaf)
                queue.pop(0)
        if not batch:
            return
        priors, values = self.evaluator.evaluate([leaf.position for leaf in batch])  # (B, N*N+1), (B,)
        candidates = self._candidates([leaf.position for leaf in batch])  # (B, N*N+1)
        self._expand_leaves(batch, candidates, np.asarray(priors))
        for leaf, value in zip(batch, self._mix_rollouts(batch, values)):
            leaf.is_pending = False
            leaf.value = float(value)
            self._backup(leaf, float(value))

    @staticmethod
    def _expand_leaves(leaves: list[Node], candidates: np.ndarray, priors: np.ndarray) -> None:
        """`tree.expand_all`, and the log priors every descent through a node asks (`logits_of`) for the
        whole batch in two numpy calls: the same values row by row (elementwise). The nodes keep rows
        of the batch's arrays (no copies): every node but the root dies at the next move, and the
        root takes copies then (`advance`)."""
        kept, illegal, is_vanished = expand_all(leaves, candidates, priors, own_rows=False)  # (B, N*N+1) x 2, (B,)
        logs = np.log(np.maximum(kept, TINY)) + illegal  # (B, N*N+1)
        logs.setflags(write=False)
        for leaf, log_prior, vanished in zip(leaves, logs, is_vanished):
            leaf.log_prior = None if vanished else log_prior

    def _descend_from(self, root: Node, move: int) -> Node:
        """Play root move `move`, then the non-root choice down to a leaf, charging virtual loss."""
        loss = self.config.virtual_loss
        node = root
        node.visits += loss
        while True:
            node = self._charge(node, move, loss)
            if node.prior is None:
                return node
            move = select_child(node, self.gumbel)

    def result(self, game: int) -> SearchResult:
        """The move (argmax of g + logits + sigma(completed Q) among the most visited), the improved
        policy as pi, the root value and the visits."""
        root = self.roots[game]
        visits = root.child_N.round().astype(np.int64)
        plan = self.plans.get(game)
        noise = plan.gumbel if plan is not None else np.zeros(len(visits))
        scores = noise + logits_of(root) + sigma_of(root, self.gumbel)
        most = (visits == visits.max()) & (root.illegal == 0)
        move = int(np.where(most, scores, -np.inf).argmax())
        return SearchResult(move, improved_policy(root, self.gumbel).astype(np.float32), root.q, visits,
                            game not in self._fast)


def search_factory(gumbel: GumbelConfig | None, game: Game = GO) -> Callable[..., BatchedSearch]:
    """What self-play builds its search with: PUCT (None) or this Gumbel root search, on `game`."""
    if gumbel is None:
        return BatchedSearch if game is GO else functools.partial(BatchedSearch, game=game)
    return functools.partial(GumbelSearch, gumbel=gumbel, game=game)


ROOT_SEARCHES = ("puct", "gumbel")
"""Names of the root searches self-play can use (`root_search`)."""


def root_search(name: str, scale: float = 1.0) -> GumbelConfig | None:
    """The Gumbel settings a root search name stands for: None for PUCT, the paper's for gumbel (with
    sigma's `scale`, `GumbelConfig.c_scale`)."""
    if name not in ROOT_SEARCHES:
        raise ValueError(f"search {name!r} is not one of {', '.join(ROOT_SEARCHES)}")
    return GumbelConfig(c_scale=scale) if name == "gumbel" else None
