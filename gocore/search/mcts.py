"""Monte Carlo tree search guided by networks: AlphaGo Zero's PUCT and AlphaGo 2016's mixed leaf value.

Owns `MCTSConfig` and its presets, `BatchedSearch` (G games searched in lockstep over trees of
`tree.Node`, whose children's N, W, P are numpy vectors, as in minigo: each round's leaves from
every game go to the evaluator as one batch), move choice with a temperature and the resign rule
(`selfplay.SearchedGame` records a game played by search). Start reading at `BatchedSearch.search`.

Perspective: ``child_W[m]`` sums values from the view of the player to move at the node, who is
the one choosing m, so PUCT maximises ``Q + U`` at every level. A leaf value is from the leaf's
side to move; backing it up flips its sign at each step (a pass flips the mover too).

Counting: a search adds `sims` leaf evaluations (network or terminal). A node's `visits`
is 1 (its own evaluation) plus its children's N, so a fresh root ends a search with
N = sims and children summing to N - 1; a reused root starts from the N it had.

AlphaGo (2016): with ``rollout_lambda`` > 0 a leaf's value is (1 - lambda) * v + lambda * z, z the
sign of one rollout from the leaf's side to move: played by the fast rollout policy when the search
is given one (`rollout.PatternRollouts`, the trained `nets.RolloutPolicy` weights in numba), else
a uniform random playout (`board.random_playouts`); both never fill their own one-point eyes.

Reaches networks only through `gocore.nn.inference.Evaluator`; imports neither torch nor Prefect.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gocore.rules.board import Position, random_playouts
from gocore.rules.game import GO, Game, go_terminal_value
from gocore.search.rollout import PatternRollouts
from gocore.search.targets import forced_root_move, pruned_visits
from gocore.search.tree import Node, expand_all

if TYPE_CHECKING:
    from gocore.nn.inference import Evaluator

RESIGN_STREAK = 2  # a player resigns when its last this-many root values were all below the threshold


@dataclass(frozen=True)
class MCTSConfig:
    """How to search; self-play, matches and AlphaGo use the presets below."""

    sims: int = 800
    """Leaf evaluations added by each search (one search per move)."""
    c_puct: float = 1.25
    """Weight of the prior term in PUCT: Q + c_puct * P * sqrt(sum N) / (1 + N)."""
    dirichlet_alpha: float | None = None
    """Root noise concentration; None = 0.03 * 361 / (N*N): the paper's 19x19 value, scaled so
    alpha times the number of points stays constant (0.134 on 9x9)."""
    dirichlet_epsilon: float = 0.25
    """Weight of the noise in the root priors: (1 - eps) * P + eps * Dir(alpha)."""
    noise: bool = False
    """Add Dirichlet noise to the root priors (self-play only)."""
    temperature_moves: int | None = None
    """Opening moves chosen in proportion to visits (tau = 1), then the most visited (tau -> 0);
    None = N*N // 12 (30 on 19x19, 6 on 9x9)."""
    virtual_loss: float = 1.0
    """Losses charged to every edge of a path while its leaf waits for the network."""
    leaves_per_game: int = 8
    """Leaves collected from each game per evaluator call (diversified by virtual loss)."""
    resign_threshold: float | None = None
    """Resign when the root value stays below this (e.g. -0.9); None never resigns."""
    resign_disabled_fraction: float = 0.1
    """Share of self-play games that never resign, to count false resignations."""
    max_moves: int | None = None
    """Game length cap; a position at the cap is scored as final. None = 3 * N*N, like play_game."""
    rollout_lambda: float = 0.0
    """AlphaGo's lambda: leaf value (1 - lambda) * v + lambda * z_rollout; 0 = AlphaGo Zero."""
    reuse_tree: bool = True
    """Keep the subtree of the move played (its statistics) for the next search."""
    sensible_moves: bool = True
    """Search `board.candidate_moves` (no own-eye filling, no early pass) rather than every legal
    move, as pure AlphaGo Zero does: on 2 CPU cores its first nets then learned nothing (docs/results)."""
    full_search_prob: float = 1.0
    """Playout cap randomization (`targets`): share of self-play moves searched with `sims`
    (noise, forced playouts) and recorded as rows; the rest get `fast_sims`, no noise, no row."""
    fast_sims: int | None = None
    """Budget of a fast (unrecorded) search; None = sims // 4 (KataGo: a quarter to a sixth)."""
    forced_playouts: bool = False
    """With noise: KataGo's forced playouts at the root and the pruned policy target (`targets`)."""
    pass_when_settled: bool = False
    """With `sensible_moves`: pass is a candidate once the board is settled (`board.is_settled`),
    not only after the opponent's pass, so games end when there is nothing left to decide (self-play
    games otherwise ran 85-105 plies against GNU Go's 57, filling dame and their own areas)."""

    def __post_init__(self) -> None:
        problems = [message for is_bad, message in (
            (self.sims < 1, "sims must be >= 1"),
            (self.c_puct < 0, "c_puct must be >= 0"),
            (self.dirichlet_alpha is not None and self.dirichlet_alpha <= 0, "dirichlet_alpha must be > 0"),
            (not 0 <= self.dirichlet_epsilon <= 1, "dirichlet_epsilon must be in [0, 1]"),
            (self.temperature_moves is not None and self.temperature_moves < 0, "temperature_moves must be >= 0"),
            (self.virtual_loss < 0 or self.leaves_per_game < 1, "virtual_loss >= 0 and leaves_per_game >= 1"),
            (not 0 <= self.resign_disabled_fraction <= 1, "resign_disabled_fraction must be in [0, 1]"),
            (self.max_moves is not None and self.max_moves < 1, "max_moves must be >= 1"),
            (not 0 <= self.rollout_lambda <= 1, "rollout_lambda must be in [0, 1]"),
            (not 0 < self.full_search_prob <= 1 or (self.fast_sims is not None and self.fast_sims < 1),
             "full_search_prob must be in (0, 1] and fast_sims >= 1"),
        ) if is_bad]
        if problems:
            raise ValueError("MCTSConfig: " + "; ".join(problems))

    def alpha_for(self, size: int) -> float:
        """Dirichlet alpha on an N x N board."""
        return self.dirichlet_alpha if self.dirichlet_alpha is not None else 0.03 * 361 / (size * size)

    def temperature_moves_for(self, size: int) -> int:
        """Moves played with tau = 1 on an N x N board."""
        return self.temperature_moves if self.temperature_moves is not None else size * size // 12

    def max_moves_for(self, size: int) -> int:
        """The game length cap on an N x N board."""
        return self.max_moves if self.max_moves is not None else 3 * size * size

    def replace(self, **changes: object) -> MCTSConfig:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


SELFPLAY = MCTSConfig(noise=True, resign_threshold=-0.9)  # AlphaGo Zero self-play (it used 1,600 sims)
# Evaluation games: tau -> 0, no noise, one leaf a round. With 8 leaves a round (virtual loss) a fresh
# root's 64 simulations spread over ~23 children (top move 24 % of visits) against ~19 and 43 % with
# one; the same supervised net won 41 of 60 with one leaf and a greedy opening against 8 leaves and
# a sampled opening (issue #24; minigo: 1 virtual loss beat 8, 42/64). Batch width comes from playing
# games side by side, not from leaves of one tree.
MATCH = MCTSConfig(temperature_moves=0, resign_threshold=-0.9, leaves_per_game=1)
# The 2016 paper's c_puct and lambda, one leaf at a time: with 8 leaves a round (virtual loss) a
# 10-simulation search is about 2 rounds that follow the priors; alphago-10 then won 53 of 100
# against its own SL net, and 75 of 100 with 1 (docs/results, "the AlphaGo (2016) pipeline on 9x9").
ALPHAGO = MCTSConfig(c_puct=5.0, temperature_moves=0, rollout_lambda=0.5, leaves_per_game=1)
FAST = MCTSConfig(sims=64, temperature_moves=0)  # tests and quick CPU games
PRESETS: dict[str, MCTSConfig] = {"selfplay": SELFPLAY, "match": MATCH, "alphago": ALPHAGO, "fast": FAST}


@dataclass(frozen=True)
class SearchResult:
    """What one search says about its root."""

    move: int  # the move chosen with this move number's temperature
    pi: np.ndarray  # (N*N+1,) float32 N / sum N: the self-play policy target
    root_value: float  # root Q, side to move's view (+1 = the mover wins)
    visits: np.ndarray  # (N*N+1,) int64 children's N
    is_full: bool = True  # a full search (playout cap randomization): its pi is a training row


def terminal_value(position: Position, max_moves: int) -> float | None:
    """+1/-1/0 (Tromp-Taylor result for the side to move) if the game is over, else None."""
    return go_terminal_value(position, max_moves)


def choose_move(visits: np.ndarray, tau_is_one: bool, rng: np.random.Generator,
                q: np.ndarray | None = None) -> int:
    """A move in proportion to visits (tau = 1) or a most visited one; among equally visited moves
    the best by `q` (the mover's mean value per child, when given), then one at random."""
    if tau_is_one:
        return int(rng.choice(len(visits), p=visits / visits.sum()))
    tied = np.flatnonzero(visits == visits.max())
    if q is not None and len(tied) > 1:
        tied = tied[q[tied] == q[tied].max()]
    return int(rng.choice(tied))


def wants_resign(own_root_values: Sequence[float], threshold: float | None) -> bool:
    """True if the player's last RESIGN_STREAK root values (its own moves) are all below threshold."""
    if threshold is None or len(own_root_values) < RESIGN_STREAK:
        return False
    return max(own_root_values[-RESIGN_STREAK:]) < threshold


class BatchedSearch:
    """Search trees for G games, advanced in lockstep: one evaluator call per round for all games.
    `game` (`gocore.rules.game`): the game of the positions, Go by default; it answers which nodes
    are terminal (and their value) and which moves a new leaf expands."""

    def __init__(self, evaluator: Evaluator, config: MCTSConfig, positions: Sequence[Position],
                 seed: int | None = None, rollout_policy: PatternRollouts | None = None, game: Game = GO):
        self.evaluator, self.config, self.game = evaluator, config, game
        self.rollout_policy = rollout_policy  # None: uniform random playouts
        self.rng = np.random.default_rng(seed)
        self.roots = [self._new_node(p, None, -1) for p in positions]
        self._fast: frozenset[int] = frozenset()  # games of the current search that are fast searches
        self._noisy: frozenset[int] = frozenset()  # games of the current search with root noise

    def search(self, games: Sequence[int] | None = None, deadline: float | None = None,
               sims: int | None = None, fast: Sequence[int] = ()) -> list[SearchResult]:
        """Run `sims` (default: the config's) more simulations on each listed game (default
        all); one result each. With a `deadline` (a `time.monotonic()` value) the search also stops
        after the round that passes it: fewer simulations, never fewer than one round. Games in
        `fast` get a fast search: `fast_sims`, no noise, no forced playouts.
        """
        games = list(range(len(self.roots))) if games is None else list(games)
        self._fast = frozenset(fast)
        self._noisy = frozenset(g for g in games if self.config.noise and g not in self._fast)
        for g in games:
            if self.roots[g].terminal_value is not None:
                raise ValueError(f"game {g} is over: there is nothing to search")
            if g in self._noisy and self.roots[g].prior is not None:
                self._add_noise(self.roots[g])  # a reused root gets fresh noise
        fast_budget = self.config.fast_sims or max(1, self.config.sims // 4)
        remaining = {g: sims or (fast_budget if g in self._fast else self.config.sims) for g in games}
        while remaining:
            self._round(remaining)
            remaining = {g: n for g, n in remaining.items() if n > 0}
            if deadline is not None and time.monotonic() >= deadline:
                break
        return [self.result(g) for g in games]

    def advance(self, game: int, move: int) -> None:
        """Play `move` in game `game`; its subtree becomes the root (kept only if reuse_tree)."""
        root = self.roots[game]
        child = root.children.get(move) if self.config.reuse_tree else None
        if child is None:
            child = self._new_node(root.position.play(move), None, move)
        child.parent = None  # frees the rest of the old tree
        self.roots[game] = child

    def reset(self, game: int, position: Position) -> None:
        """Start game `game` over from `position` with an empty tree."""
        self.roots[game] = self._new_node(position, None, -1)

    def _new_node(self, position: Position, parent: Node | None, move: int) -> Node:
        return Node(position, parent, move, self.game.terminal_value(position, self.config.max_moves))

    def _round(self, remaining: dict[int, int]) -> None:
        """Collect up to leaves_per_game leaves per game, evaluate them in one call, back up."""
        batch: list[tuple[int, Node]] = []
        for g, todo in remaining.items():
            for _ in range(min(self.config.leaves_per_game, todo)):
                leaf = self._descend(self.roots[g], self.config.forced_playouts and g in self._noisy)
                if leaf.terminal_value is not None:  # scored by the rules: no network needed
                    self._backup(leaf, leaf.terminal_value)
                    remaining[g] -= 1
                elif leaf.is_pending:  # virtual loss did not steer away: wait for the next round
                    self._backup(leaf, 0.0, count=0.0)
                    break
                else:
                    leaf.is_pending = True
                    batch.append((g, leaf))
        if not batch:
            return
        priors, values = self.evaluator.evaluate([leaf.position for _, leaf in batch])  # (B, N*N+1), (B,)
        values = self._mix_rollouts([leaf for _, leaf in batch], values)
        candidates = self._candidates([leaf.position for _, leaf in batch])  # (B, N*N+1)
        expand_all([leaf for _, leaf in batch], candidates, np.asarray(priors))
        for (g, leaf), value in zip(batch, values):
            leaf.is_pending = False
            leaf.value = float(value)
            if leaf.parent is None and g in self._noisy:
                self._add_noise(leaf)
            self._backup(leaf, float(value))
            remaining[g] -= 1

    def _candidates(self, positions: Sequence[Position]) -> np.ndarray:
        """(B, A) bool: the moves the search considers at each new leaf (the game's `candidate_masks`:
        Go's is one kernel call for the batch, reusing the evaluator's legal masks)."""
        return self.game.candidate_masks(positions, self.config.sensible_moves, self.config.pass_when_settled)

    def _descend(self, root: Node, forced: bool = False) -> Node:
        """Follow PUCT from the root to an unexpanded or terminal node, charging virtual loss; with
        `forced`, the root's child is a forced playout's when one is due (`targets`)."""
        loss, c_puct = self.config.virtual_loss, self.config.c_puct
        node = root
        node.visits += loss
        while node.prior is not None:
            move = (forced_root_move(node.child_N, node.child_W, node.child_P, node.illegal, c_puct)
                    if forced and node is root else node.best_move(c_puct))
            node = self._charge(node, move, loss)
        return node

    def _charge(self, node: Node, move: int, loss: float) -> Node:
        """Charge virtual loss on `node`'s edge `move` and to its child (made if new); the child."""
        node.count_visits()
        node.child_N[move] += loss
        node.child_W[move] -= loss
        child = node.children.get(move)
        if child is None:
            child = node.children[move] = self._new_node(node.position.play_leaf(move), node, move)
        child.visits += loss
        return child

    def _backup(self, leaf: Node, value: float, count: float = 1.0) -> None:
        """Add `count` visits of `value` (leaf mover's view) up the path, removing virtual loss."""
        loss = self.config.virtual_loss
        node = leaf
        while True:
            node.visits += count - loss
            parent = node.parent
            if parent is None:
                return
            parent.child_N[node.move] += count - loss
            parent.child_W[node.move] += loss - count * value  # the parent's mover sees -value
            value, node = -value, parent

    def _mix_rollouts(self, leaves: list[Node], values: np.ndarray) -> np.ndarray:
        """AlphaGo's leaf value (1 - lambda) * v + lambda * z, z from one rollout (policy or uniform)."""
        lam = self.config.rollout_lambda
        if lam == 0:
            return values
        play = random_playouts if self.rollout_policy is None else self.rollout_policy.scores
        seeds = self.rng.integers(1 << 62, size=len(leaves))
        z = np.array([np.sign(play(leaf.position, 1, int(seed))[0]) * leaf.position.to_play
                      for leaf, seed in zip(leaves, seeds)])  # (B,) side to move's view
        return (1 - lam) * values + lam * z

    def _add_noise(self, root: Node) -> None:
        """Root priors (1 - eps) * P + eps * Dir(alpha) over the legal moves, from the clean P."""
        legal = np.flatnonzero(root.illegal == 0)
        eta = self.rng.dirichlet(np.full(len(legal), self.config.alpha_for(root.position.size)))
        eps = self.config.dirichlet_epsilon
        noisy = (1 - eps) * root.prior
        noisy[legal] += eps * eta
        root.child_P = noisy

    def result(self, game: int) -> SearchResult:
        """What the search so far says about game `game`'s root (the move drawn with its temperature)."""
        root = self.roots[game]
        visits = root.child_N.round().astype(np.int64)  # whole numbers once virtual losses are gone
        kept = visits  # what pi and the move follow: with forced playouts, the pruned visits (`targets`)
        if visits.any() and self.config.forced_playouts and game in self._noisy:
            kept = pruned_visits(visits, root.child_W, root.child_P, self.config.c_puct)
        total = kept.sum()
        pi = (kept / total if total else root.child_P).astype(np.float32)
        tau_is_one = root.position.move_number < self.config.temperature_moves_for(root.position.size)
        q = root.child_W / np.maximum(root.child_N, 1.0)  # (N*N+1,) the mover's mean value per child
        move = choose_move(kept if total else root.child_P, tau_is_one, self.rng, q if total else None)
        return SearchResult(move, pi, root.q, visits, game not in self._fast)
