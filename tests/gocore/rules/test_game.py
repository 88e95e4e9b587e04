"""What matches ask of a game through the boundary: whether it is over, and where a random opening
may play."""

from __future__ import annotations

import numpy as np

from gocore.rules.baghchal.position import BaghchalRules
from gocore.rules.game import BAGHCHAL, GO, BaghchalGame, GoGame
from tests.helpers import position_from_ascii


def test_go_opening_mask_keeps_off_the_first_two_lines_and_never_passes() -> None:
    position = position_from_ascii("""
        . . . . . . .
        . . . . . . .
        . . X . . . .
        . . . . . . .
        . . . . O . .
        . . . . . . .
        . . . . . . .
    """)
    mask = GoGame(7).opening_mask(position)
    inner = {r * 7 + c for r in range(2, 5) for c in range(2, 5)}
    assert mask.shape == (50,) and not mask[49]
    assert set(np.flatnonzero(mask)) == inner - {2 * 7 + 2, 4 * 7 + 4}


def test_go_opening_mask_falls_back_to_every_legal_point_once_the_inner_points_are_full() -> None:
    position = position_from_ascii("""
        . . . . .
        . X X X .
        . X O O .
        . X O O .
        . . . . .
    """)
    mask = GoGame(5).opening_mask(position)
    legal = position.legal_moves().copy()
    legal[25] = False
    assert mask.any() and np.array_equal(mask, legal)


def test_baghchal_opening_mask_is_every_legal_action() -> None:
    position = BAGHCHAL.initial().play(12)
    assert np.array_equal(BAGHCHAL.opening_mask(position), position.legal_moves())


def test_go_is_over_after_two_passes_in_a_row() -> None:
    position = GO.initial().play(81)
    assert not GO.is_over(position) and GO.is_over(position.play(81))
    assert not GO.is_over(position.play(40).play(81))


def test_baghchal_is_over_by_its_rules_ply_cap_included() -> None:
    game = BaghchalGame(BaghchalRules(max_plies=2))
    position = game.initial()
    assert not game.is_over(position)
    for _ in range(2):
        position = position.play(int(np.flatnonzero(position.legal_moves())[0]))
    assert game.is_over(position) and game.winner(position) == 0
