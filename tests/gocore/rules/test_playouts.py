"""Random playouts (`board.random_playouts`) and the one-point-eye rule they use (`batch.is_eye`)."""

from __future__ import annotations

import numpy as np
import pytest

from gocore.rules import kernels
from gocore.rules.batch import is_eye
from gocore.rules.board import Position, random_playouts
from gocore.rules.coords import from_gtp
from tests.helpers import position_from_ascii

BLACK_ALIVE_WITH_TWO_EYES = """
    X X X X X X X X X
    X . X X . X X X X
    X X X X X X X X X
    X X X X X X X X X
    X X X X X X X X X
    X X X X X X X X X
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
"""

BOTH_ALIVE_ONLY_EYES_LEFT = """
    X X X X X
    X . X . X
    X X X X X
    O O O O O
    O . O . O
"""


def eye_for(position: Position, vertex: str, color: int) -> bool:
    """`batch.is_eye` at a GTP vertex for +1 (black) or -1 (white)."""
    n = position.size
    code = kernels.BLACK if color == 1 else kernels.WHITE
    return bool(is_eye(position._state, n + 2, kernels.to_padded(from_gtp(vertex, n), n), code))


# --- the eye rule ---------------------------------------------------------------------------

def test_point_surrounded_by_own_stones_in_the_centre_is_an_eye() -> None:
    position = position_from_ascii("""
        . . . . .
        . . X . .
        . X . X .
        . . X . .
        . . . . .
    """)
    assert eye_for(position, "C3", 1)
    assert not eye_for(position, "C3", -1)


def test_centre_eye_with_one_enemy_diagonal_is_still_an_eye() -> None:
    position = position_from_ascii("""
        . . . . .
        . O X . .
        . X . X .
        . . X . .
        . . . . .
    """)
    assert eye_for(position, "C3", 1)


def test_centre_point_with_two_enemy_diagonals_is_a_false_eye() -> None:
    position = position_from_ascii("""
        . . . . .
        . O X . .
        . X . X .
        . . X O .
        . . . . .
    """)
    assert not eye_for(position, "C3", 1)


def test_edge_eye_is_an_eye_only_without_enemy_diagonals() -> None:
    clean = position_from_ascii("""
        . . . . .
        X X . . .
        . X . . .
        X X . . .
        . . . . .
    """)
    assert eye_for(clean, "A3", 1)
    false_eye = position_from_ascii("""
        . . . . .
        X O . . .
        . X . . .
        X X . . .
        . . . . .
    """)
    assert not eye_for(false_eye, "A3", 1)


def test_corner_eye_is_an_eye_only_without_the_enemy_diagonal() -> None:
    corner = position_from_ascii("""
        . . . . .
        . . . . .
        . . . . .
        O . . . .
        . O . . .
    """)
    assert eye_for(corner, "A1", -1)
    assert not eye_for(corner, "A1", 1)
    false_corner = position_from_ascii("""
        . . . . .
        . . . . .
        . . . . .
        O X . . .
        . O . . .
    """)
    assert not eye_for(false_corner, "A1", -1)


def test_point_with_an_empty_or_enemy_neighbour_is_not_an_eye() -> None:
    position = position_from_ascii("""
        . . . . .
        . . X . .
        . X . . .
        . . X . .
        . . . . .
    """)
    assert not eye_for(position, "C3", 1)  # D3 is empty
    position = position_from_ascii("""
        . . . . .
        . . X . .
        . X . O .
        . . X . .
        . . . . .
    """)
    assert not eye_for(position, "C3", 1)


# --- random_playouts ------------------------------------------------------------------------

def test_playouts_are_deterministic_for_a_seed() -> None:
    start = Position.initial(9)
    first = random_playouts(start, 64, seed=123)
    again = random_playouts(start, 64, seed=123)
    assert first.dtype == np.float64 and first.shape == (64,)
    assert np.array_equal(first, again)


def test_different_seeds_give_different_playouts() -> None:
    start = Position.initial(9)
    assert not np.array_equal(random_playouts(start, 64, seed=1), random_playouts(start, 64, seed=2))


def test_playouts_within_one_call_differ() -> None:
    scores = random_playouts(Position.initial(9), 64, seed=5)
    assert len(np.unique(scores)) > 5


@pytest.mark.parametrize(("size", "komi"), [(5, 0.5), (9, 7.5), (13, 6.5), (19, 7.5)])
def test_playout_scores_lie_within_the_board_area(size: int, komi: float) -> None:
    scores = random_playouts(Position.initial(size, komi), 200, seed=size)
    area = size * size
    assert scores.min() >= -area - komi and scores.max() <= area - komi
    assert np.allclose(scores + komi, np.round(scores + komi))  # whole points before komi


def test_playouts_from_a_won_position_favour_black() -> None:
    start = position_from_ascii(BLACK_ALIVE_WITH_TWO_EYES, komi=7.5)
    scores = random_playouts(start, 500, seed=7)
    # Black's 54 points (52 stones, two eyes) can't be taken; white gets at most the 27 below.
    assert scores.min() >= 54 - 27 - 7.5
    assert scores.mean() > 54 - 27 - 7.5


def test_playouts_never_fill_their_own_eyes() -> None:
    start = position_from_ascii(BOTH_ALIVE_ONLY_EYES_LEFT, komi=0.5)
    scores = random_playouts(start, 200, seed=3)
    # Every empty point is an eye of one side and suicide for the other: both pass at once.
    assert np.all(scores == start.score())
    assert start.score() == 15 - 10 - 0.5


def test_zero_move_playouts_score_the_start_position() -> None:
    start = position_from_ascii(BLACK_ALIVE_WITH_TWO_EYES, komi=7.5)
    assert np.all(random_playouts(start, 10, seed=0, max_moves=0) == start.score())


def test_playouts_from_a_finished_game_score_it_as_it_stands() -> None:
    start = Position.initial(9, komi=7.5).play(40).play(81).play(81)
    assert start.is_game_over()
    assert np.all(random_playouts(start, 10, seed=0) == start.score())


# --- the kernel against a slow Python reference ---------------------------------------------

def reference_playout(start: Position, rng: np.random.Generator, max_moves: int) -> float:
    """One uniform random playout with Position.play: legal points that are not the mover's eye."""
    n = start.size
    position = start
    for _ in range(max_moves):
        if position.is_game_over():
            break
        code = kernels.BLACK if position.to_play == 1 else kernels.WHITE
        move = n * n
        for candidate in rng.permutation(np.flatnonzero(position.legal_moves()[:-1])):
            if not is_eye(position._state, n + 2, kernels.to_padded(candidate, n), code):
                move = int(candidate)
                break
        position = position.play(move)
    return position.score()


def variance_standard_error(scores: np.ndarray) -> float:
    """Large-sample standard error of the variance of `scores`, with no normality assumption."""
    centred = scores - scores.mean()
    return float(np.sqrt(((centred**4).mean() - (centred**2).mean() ** 2) / scores.size))


def test_kernel_playouts_match_a_python_reference_on_the_empty_9x9_board() -> None:
    start = Position.initial(9, komi=7.5)
    cap = 3 * 9 * 9
    kernel = random_playouts(start, 4000, seed=2024, max_moves=cap)
    rng = np.random.default_rng(2024)
    reference = np.array([reference_playout(start, rng, cap) for _ in range(500)])
    # Means: a difference beyond 4 standard errors would happen by chance about once in 16,000.
    standard_error = np.sqrt(kernel.var(ddof=1) / kernel.size + reference.var(ddof=1) / reference.size)
    assert abs(kernel.mean() - reference.mean()) < 4 * standard_error, (kernel.mean(), reference.mean())
    # Black's winning rate, with the binomial standard error of the two estimates.
    p_kernel, p_reference = (kernel > 0).mean(), (reference > 0).mean()
    p = ((kernel > 0).sum() + (reference > 0).sum()) / (kernel.size + reference.size)
    win_error = np.sqrt(p * (1 - p) * (1 / kernel.size + 1 / reference.size))
    assert abs(p_kernel - p_reference) < 4 * win_error, (p_kernel, p_reference)
    # Spread: compare variances, each with the standard error (m4 - var^2) / n of a sample variance.
    var_error = np.sqrt(sum(variance_standard_error(scores) ** 2 for scores in (kernel, reference)))
    assert abs(kernel.var() - reference.var()) < 4 * var_error, (kernel.var(), reference.var())
