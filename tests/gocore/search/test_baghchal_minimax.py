"""The numba port of the `baghchal` library's minimax engine against the library's own: its static
evaluation (and game-over test) along random games.
"""

from __future__ import annotations

import numpy as np
import pytest

from gocore.play.baghchal_players import library_modules
from gocore.rules.baghchal.notation import move_text
from gocore.rules.baghchal.position import GOAT, LIBRARY_RULES, Position
from gocore.search.baghchal_minimax import best_move, static_evaluation, tigers_trapped


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
