"""The numba port of the `baghchal` library's minimax engine against the library's own, in one process
(so both take the library's root moves in the same hash order): at every ply of a game, the same
move and the same value at each depth.

Games are played by engines (the port, some moves random) and by random players from a few random
opening plies, on the library's rules (no ply cap), so that the positions compared include the
endings that decide the values: a fourth capture, trapped tigers, repetitions in the movement phase
and positions lost by force (where the library returns move 0). The fast tier compares depths 1 to
3; ``-m slow`` compares depth 4 on a few hundred positions (about a minute: the library deep-copies
its board at every node).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest

from gocore.play.baghchal_players import LibraryEngineAgent, library_modules
from gocore.rules.baghchal.notation import move_text
from gocore.rules.baghchal.position import GOAT, LIBRARY_RULES, Position
from gocore.search.baghchal_minimax import INF, best_move, static_evaluation, tigers_trapped


@dataclass
class Comparison:
    """What a game compared: positions, the first disagreements, and which endings the values saw."""

    positions: int = 0
    disagreements: list[str] = field(default_factory=list)
    seen: Counter = field(default_factory=Counter)

    def record(self, position: Position, depth: int, ours: tuple, theirs: tuple) -> None:
        self.positions += 1
        if ours != theirs and len(self.disagreements) < 10:
            self.disagreements.append(f"{position!r} depth {depth}: ours {ours}, library {theirs}")
        move, value = theirs
        self.seen.update(name for name, is_seen in (
            ("fourth-capture", position.captured == 4),
            ("trapped-tiger", tigers_trapped(position.goats, position.tigers) > 0),
            ("lost-by-force", move == 0),
            ("won-or-lost", abs(value) == INF),
            # with a goat taken every leaf scores below 0 unless a repetition drew it
            ("repetition-draw", value == 0 and position.captured > 0 and not position.is_placement),
        ) if is_seen)


def port_move(position: Position, depth: int) -> int:
    """The port's move with our action order at the root: games that do not depend on string hashing."""
    legal = np.flatnonzero(position.legal_moves())
    return int(legal[max(best_move(position, depth, legal)[0], 0)])


def compared_game(goat_depth: int, tiger_depth: int, epsilon: float, seed: int, depths: tuple[int, ...],
                  every: dict[int, int] | None = None, opening: int = 4) -> Comparison:
    """One game between the port at `goat_depth` and `tiger_depth` (0 = random; each move random
    with probability `epsilon`, the first `opening` plies too), comparing both engines at each depth
    of `depths` on every ply, or every ``every[depth]``-th ply."""
    rng = np.random.default_rng(seed)
    pairs = {depth: (LibraryEngineAgent(depth), LibraryEngineAgent(depth, slow=True)) for depth in depths}
    comparison, position = Comparison(), Position.initial(LIBRARY_RULES)
    while not position.is_game_over():
        for depth, (fast, slow) in pairs.items():
            if position.ply % (every or {}).get(depth, 1) == 0:
                ours, theirs = fast.best_move(position), slow.best_move(position)
                comparison.record(position, depth, ours, theirs)
                if theirs[0] == 0:  # lost by force: both play the first legal move
                    assert fast.select_move(position) == slow.select_move(position)
        depth = goat_depth if position.to_play == GOAT else tiger_depth
        if position.ply < opening or not depth or rng.random() < epsilon:
            action = int(rng.choice(np.flatnonzero(position.legal_moves())))
        else:
            action = port_move(position, depth)
        for agent in (agent for pair in pairs.values() for agent in pair):
            agent.observe(position, action)
        position = position.play(action)
    return comparison


GAMES = {  # (goat depth, tiger depth, epsilon, seed): the endings its positions reach
    (0, 0, 0.0, 1): {"fourth-capture", "trapped-tiger", "lost-by-force"},
    (3, 1, 0.1, 2): {"fourth-capture", "trapped-tiger", "repetition-draw"},
    (3, 1, 0.1, 3): {"fourth-capture", "trapped-tiger", "lost-by-force"},
}


@pytest.mark.parametrize("game", GAMES)
def test_the_port_plays_the_library_engines_move_with_its_value_at_depths_1_to_3(game: tuple) -> None:
    comparison = compared_game(*game, depths=(1, 2, 3), every={3: 4})
    assert comparison.disagreements == []
    assert GAMES[game] <= set(comparison.seen), comparison.seen


@pytest.mark.slow
def test_the_port_plays_the_library_engines_move_with_its_value_at_depth_4() -> None:
    total = Comparison()
    for seed, game in enumerate([(4, 1, 0.1), (3, 3, 0.2), (2, 2, 0.1), (0, 0, 0.0), (4, 4, 0.3)]):
        comparison = compared_game(*game, seed=seed, depths=(4,))
        total.positions += comparison.positions
        total.disagreements += comparison.disagreements
        total.seen += comparison.seen
    assert total.disagreements == []
    assert total.positions >= 200 and {"fourth-capture", "trapped-tiger", "lost-by-force"} <= set(total.seen)


def test_the_static_evaluation_is_the_librarys_along_random_games() -> None:
    env, engine = library_modules()
    evaluate, rng = engine.Engine(1).static_evaluation, np.random.default_rng(7)
    for _ in range(20):
        board, position = env.Board(), Position.initial(LIBRARY_RULES)
        while True:
            repeats = 0 if position.is_placement else position.seen.count(position.arrangement)
            assert tigers_trapped(position.goats, position.tigers) == board.baghs_trapped
            is_over, value = static_evaluation(position.goats, position.tigers, position.placed,
                                               position.captured, position.to_play == GOAT, repeats)
            assert (is_over, value) == (board.is_game_over(), evaluate(board))
            if is_over:
                break
            action = int(rng.choice(np.flatnonzero(position.legal_moves())))
            board.move(move_text(position, action))
            position = position.play(action)


def test_a_depth_below_1_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        best_move(Position.initial(), 0, [12])
