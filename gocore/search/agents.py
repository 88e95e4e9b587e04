"""Players: anything with ``select_move(position) -> move``.

Baselines: `RandomAgent` (uniform over legal moves that do not fill its own eye) and `UCTAgent`
(UCT with random-rollout leaf values, the classic Monte Carlo player). Network players:
`PolicyAgent` (the policy net's move, no search), `ValueGreedyAgent` (the
value net one ply deep), `AlphaZeroAgent` (PUCT search on one net, the
2017 player) and `AlphaGoAgent` (the same search with AlphaGo 2016's leaf value, policy net priors
and value net + rollouts). The search itself lives in `gocore.search.mcts`; networks are reached only
through a `gocore.nn.inference.Evaluator`.

A player resigns by returning `RESIGN` (-1, the game boundary's sentinel in `gocore.rules.game`)
from `select_move`; `gocore.play.game_match.play_game` scores that as a loss for the side to move.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from gocore.rules.board import Position, candidate_moves, own_eye_mask, random_playouts
from gocore.rules.game import RESIGN
from gocore.search import mcts
from gocore.search.rollout import PatternRollouts

if TYPE_CHECKING:
    from gocore.nn.inference import Evaluator


class Agent(Protocol):
    """A Go player."""

    name: str

    def select_move(self, position: Position) -> int:
        """The move to play in `position` (pass = N*N)."""
        ...


def sensible_moves(position: Position) -> np.ndarray:
    """Legal board moves that do not fill the mover's own one-point eye (int array)."""
    mask = position.legal_moves() & ~own_eye_mask(position)
    return np.flatnonzero(mask[:-1])


class RandomAgent:
    """Uniformly random among sensible moves; passes when there is none."""

    def __init__(self, seed: int | None = None):
        self.name = "random"
        self._rng = np.random.default_rng(seed)

    def select_move(self, position: Position) -> int:
        moves = sensible_moves(position)
        return int(self._rng.choice(moves)) if len(moves) else position.size ** 2


@dataclass(eq=False)
class _Node:
    """A search node; `wins` counts from the view of the player who moved into it."""

    position: Position
    untried: list[int]
    parent: _Node | None = None
    move: int = -1
    visits: int = 0
    wins: float = 0.0
    children: list[_Node] = field(default_factory=list)


class UCTAgent:
    """UCT (UCB1 tree policy) with one uniform random playout per new leaf."""

    def __init__(self, sims: int = 800, exploration: float = 1.0, seed: int | None = None):
        self.name = f"uct-{sims}"
        self.sims, self.exploration = sims, exploration
        self._rng = np.random.default_rng(seed)

    def select_move(self, position: Position) -> int:
        if len(sensible_moves(position)) == 0:
            return position.size ** 2
        root = self._new_node(position, None, -1)
        for _ in range(self.sims):
            node = self._descend(root)
            black_wins = self._rollout(node.position)
            self._backup(node, black_wins)
        best = max(root.children, key=lambda child: child.visits)
        return best.move

    def _new_node(self, position: Position, parent: _Node | None, move: int) -> _Node:
        untried = [int(m) for m in sensible_moves(position)]
        self._rng.shuffle(untried)
        if not untried and not position.is_game_over():
            untried = [position.size ** 2]  # nothing sensible left: the only move is pass
        return _Node(position, untried, parent, move)

    def _descend(self, node: _Node) -> _Node:
        """Follow UCB1 to a node with untried moves, expand one, return the new leaf."""
        while not node.untried and node.children:
            log_n = math.log(node.visits)
            node = max(node.children, key=lambda c: c.wins / c.visits
                       + self.exploration * math.sqrt(log_n / c.visits))
        if node.untried:
            move = node.untried.pop()
            child = self._new_node(node.position.play(move), node, move)
            node.children.append(child)
            node = child
        return node

    def _rollout(self, position: Position) -> float:
        """1.0 if black wins a random playout from `position`, 0.0 if white, 0.5 for jigo."""
        score = random_playouts(position, 1, seed=int(self._rng.integers(1 << 62)))[0]
        return 1.0 if score > 0 else 0.0 if score < 0 else 0.5

    @staticmethod
    def _backup(node: _Node | None, black_wins: float) -> None:
        while node is not None:
            node.visits += 1
            mover = -node.position.to_play  # the player who moved into this node
            node.wins += black_wins if mover == 1 else 1.0 - black_wins
            node = node.parent


class PolicyAgent:
    """The policy net alone: its most probable legal move (greedy) or a sample from it.

    With `sampled_moves` > 0 a greedy agent samples its moves before that move number, so that
    match games differ (as search players sample their opening by visits)."""

    def __init__(self, evaluator: Evaluator, greedy: bool = True, seed: int | None = None,
                 sampled_moves: int = 0):
        self.name = "policy-greedy" if greedy else "policy-sample"
        self.evaluator, self.greedy, self.sampled_moves = evaluator, greedy, sampled_moves
        self._rng = np.random.default_rng(seed)

    def select_move(self, position: Position) -> int:
        priors, _ = self.evaluator.evaluate([position])  # (1, N*N+1), zero on illegal moves
        if self.greedy and position.move_number >= self.sampled_moves:
            return int(priors[0].argmax())
        return int(self._rng.choice(len(priors[0]), p=priors[0] / priors[0].sum()))


class ValueGreedyAgent:
    """The value net alone, one ply deep: the candidate move after which the opponent's value is lowest.

    Samples its first `sampled_moves` moves uniformly among the best-valued few (so match games
    differ): among candidates within `margin` of the best value. Passes when nothing else is left."""

    def __init__(self, evaluator: Evaluator, seed: int | None = None, sampled_moves: int = 0,
                 margin: float = 0.05):
        self.name = "value-greedy"
        self.evaluator, self.sampled_moves, self.margin = evaluator, sampled_moves, margin
        self._rng = np.random.default_rng(seed)

    def select_move(self, position: Position) -> int:
        moves = np.flatnonzero(candidate_moves(position))
        if len(moves) == 1:
            return int(moves[0])
        _, values = self.evaluator.evaluate([position.play(int(m)) for m in moves])  # (M,) opponent's view
        mine = -values
        if position.move_number < self.sampled_moves:
            return int(self._rng.choice(moves[mine >= mine.max() - self.margin]))
        return int(moves[int(mine.argmax())])


class AlphaZeroAgent:
    """AlphaGo Zero's player: PUCT search on one net, the most visited move, tree reuse.

    Follows its config (the `MATCH` preset: no noise, tau -> 0, resigns below -0.9 twice in a
    row). Between calls it keeps the subtree of its own move and, when the position it is asked
    about is that node or one of its children (matched by the opponent's last move and checked
    board, side, ko, history and move number), searches on from there.
    """

    kind = "alphazero"

    def __init__(self, evaluator: Evaluator, config: mcts.MCTSConfig = mcts.MATCH, seed: int | None = None):
        self.name = f"{self.kind}-{config.sims}"
        self.evaluator, self.config = evaluator, config
        self._seed = seed
        self._search: mcts.BatchedSearch | None = None
        self._root_values: dict[int, list[float]] = {1: [], -1: []}  # per colour, this game: resigning
        self.last_result: mcts.SearchResult | None = None  # the latest search, for logs and GTP
        self._time_budget: float | None = None
        self.rollout_policy: PatternRollouts | None = None  # AlphaGo's; None: uniform random rollouts

    def set_time_budget(self, seconds: float | None) -> None:
        """Think at most about `seconds` per move (GTP time controls); None: simulations only."""
        self._time_budget = seconds

    def select_move(self, position: Position) -> int:
        """The searched move; a pass in a finished game (both passed: a match's cleanup phase asks
        on after the opponent's third pass; or the search's move cap reached), where the search has
        nothing to search."""
        self._start_from(position)
        if self._search.roots[0].terminal_value is not None:
            self.last_result = None
            return position.size ** 2
        deadline = None if self._time_budget is None else time.monotonic() + self._time_budget
        return self._decide(position, self._search.search(deadline=deadline)[0])

    def analyse(self, position: Position, sims: int) -> mcts.Node:
        """Search `sims` more (0: none) from `position`, on the kept tree when it is that
        position or a child of it, and return the root, for `gocore.search.analysis`; a finished
        game is not searched."""
        self._start_from(position)
        if sims > 0 and self._search.roots[0].terminal_value is None:
            self._search.search(sims=sims)
        return self._search.roots[0]

    @property
    def time_budget(self) -> float | None:
        """Seconds to think about this move (GTP time controls), or None: simulations only."""
        return self._time_budget

    def select_searched_move(self, position: Position) -> int:
        """The move (or RESIGN) for `position` from the search `analyse` has done, without searching more."""
        self._start_from(position)
        if self._search.roots[0].terminal_value is not None:  # the game is over: nothing was searched
            return position.size ** 2
        return self._decide(position, self._search.result(0))

    def _decide(self, position: Position, result: mcts.SearchResult) -> int:
        """Resign, or keep the subtree of the move searched and play it."""
        self.last_result = result
        own_values = self._root_values[position.to_play]
        own_values.append(result.root_value)
        if mcts.wants_resign(own_values, self.config.resign_threshold):
            return RESIGN
        self._search.advance(0, result.move)
        return result.move

    def _start_from(self, position: Position) -> None:
        """Reuse the kept tree if `position` is its root or a child of it, else start afresh."""
        if self._search is None:
            self._search = mcts.BatchedSearch(self.evaluator, self.config, [position], self._seed,
                                              rollout_policy=self.rollout_policy)
            return
        root = self._search.roots[0]
        if _is_same_state(root.position, position):  # e.g. the same agent plays both colours
            return
        last = position.last_move
        if last is not None and root.position.is_legal(last):
            child = root.children.get(last)  # an unexplored reply has no node yet: play it to compare
            if _is_same_state(child.position if child else root.position.play(last), position):
                self._search.advance(0, last)
                return
        self._search.reset(0, position)
        self._root_values = {1: [], -1: []}  # a different game (or a jump in this one)


class AlphaGoAgent(AlphaZeroAgent):
    """AlphaGo (2016): priors from the SL policy net, leaf value (1 - lambda) * v + lambda * z_rollout.

    Give it ``NetEvaluator(policy_net=sl_policy, value_net=value_net)`` and the fast rollout
    policy (``PatternRollouts(rollout_net.weights_array())``); without one, rollouts are uniform
    random playouts (see `gocore.search.mcts`). Plays the most visited move (the `ALPHAGO` preset).
    """

    kind = "alphago"

    def __init__(self, evaluator: Evaluator, config: mcts.MCTSConfig = mcts.ALPHAGO, seed: int | None = None,
                 rollout_policy: PatternRollouts | None = None):
        if config.rollout_lambda == 0:
            raise ValueError("AlphaGoAgent mixes in rollouts: give it a config with rollout_lambda > 0 "
                             "(AlphaZeroAgent is the lambda = 0 player)")
        super().__init__(evaluator, config, seed)
        self.rollout_policy = rollout_policy


def _is_same_state(a: Position, b: Position) -> bool:
    """Same board, side, ko, recent history and move number: the same node of the same game."""
    return (a == b and a.move_number == b.move_number and len(a.history) == len(b.history)
            and all(np.array_equal(x, y) for x, y in zip(a.history, b.history)))
