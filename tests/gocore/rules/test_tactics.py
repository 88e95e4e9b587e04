"""Tactical readings (`gocore.rules.tactics`): classic shapes drawn in ASCII, the slow Python
reference (`tactics_reference`) on whole games, replayed games against positions, symmetries.

GNU Go and sgfmill check the same readings on real games in test_tactics_gnugo.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from gocore.rules import symmetry, tactics
from gocore.rules.board import Position, replay_moves
from gocore.rules.coords import from_rowcol
from tests.gocore.rules.tactics_reference import reference_rows
from tests.helpers import position_from_ascii, random_game

LADDER = """
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
. . . X O . . . .
. . . X O X . . .
. . . . X . . . .
. . . . . . . . .
. . . . . . . . .
. . . . . . . . .
"""
ATARI_AT = from_rowcol(2, 4, 9)  # black's atari from above: white runs up and right, to the edge
BREAKER = from_rowcol(1, 7, 9)  # a white stone on the ladder's path
WHITE_RUNS = from_rowcol(3, 5, 9)  # white's only way out of the atari


def points(position: Position, row: int) -> set[int]:
    """The points where reading `row` of the side to move is non-zero."""
    return set(np.flatnonzero(tactics.analyse_positions([position])[0, row]).tolist())


def with_stone(position: Position, move: int, colour: int, to_play: int) -> Position:
    """The same stones plus one, as a setup position with `to_play` to move."""
    stones = position.stones.reshape(-1).copy()
    stones[move] = colour
    return Position.from_setup(position.size, np.flatnonzero(stones == 1).tolist(),
                               np.flatnonzero(stones == -1).tolist(), to_play)


# ---------------------------------------------------------------- classic shapes
def test_a_ladder_on_an_open_board_is_a_capture_only_from_the_right_side():
    position = position_from_ascii(LADDER, to_play=1)
    assert points(position, tactics.LADDER_CAPTURE) == {ATARI_AT}  # the other atari lets white out


def test_a_ladder_breaker_on_the_path_makes_the_capture_fail():
    position = with_stone(position_from_ascii(LADDER), BREAKER, -1, to_play=1)
    assert points(position, tactics.LADDER_CAPTURE) == set()


def test_running_from_a_working_ladder_is_no_escape_unless_a_breaker_waits():
    ataried = with_stone(position_from_ascii(LADDER), ATARI_AT, 1, to_play=-1)
    assert points(ataried, tactics.LADDER_ESCAPE) == set()
    assert WHITE_RUNS in points(ataried, tactics.LEGAL)
    broken = with_stone(ataried, BREAKER, -1, to_play=-1)
    assert points(broken, tactics.LADDER_ESCAPE) == {WHITE_RUNS}


def test_capturing_an_attacker_in_atari_is_the_escape_when_extending_is_caught():
    position = position_from_ascii("""
        . . . . .
        X O X . .
        X O X . .
        O X . . .
        . . . . .
    """, to_play=-1)
    corner, extend = from_rowcol(0, 0, 5), from_rowcol(0, 1, 5)
    # white's extension gets 2 liberties and is caught (GNU Go: ladder_attack B5 = "1 C5")
    assert points(position, tactics.LADDER_ESCAPE) == {corner}
    rows = tactics.analyse_positions([position])[0]
    assert rows[tactics.CAPTURES, corner] == 2 and rows[tactics.LIBERTIES_AFTER, extend] == 2
    assert rows[tactics.SELF_ATARI, from_rowcol(4, 0, 5)] == 2  # joins the corner stone: 1 liberty


def test_a_ladder_across_the_19x19_board_is_read_to_the_far_corner():
    black = [from_rowcol(r, c, 19) for r, c in ((16, 2), (17, 2), (17, 4), (18, 3))]
    position = Position.from_setup(19, black, [from_rowcol(16, 3, 19), from_rowcol(17, 3, 19)], to_play=1)
    atari = from_rowcol(15, 3, 19)  # white runs up and right for 15 lines, to the top edge
    assert points(position, tactics.LADDER_CAPTURE) == {atari}
    far = with_stone(position, from_rowcol(2, 17, 19), -1, to_play=1)  # a breaker near the far corner
    assert points(far, tactics.LADDER_CAPTURE) == set()


def test_captures_self_atari_and_liberties_after_by_hand():
    position = position_from_ascii("""
        . O X . .
        O X . . .
        X . . . .
        . . . . .
        . . . O X
    """, to_play=-1)
    rows = tactics.analyse_positions([position])[0]
    corner, edge = from_rowcol(0, 0, 5), from_rowcol(4, 2, 5)
    assert rows[tactics.LIBERTIES, from_rowcol(0, 1, 5)] == 1  # white's edge stone is in atari
    assert rows[tactics.LIBERTIES, from_rowcol(1, 1, 5)] == 2
    assert rows[tactics.CAPTURES, corner] == 0 and rows[tactics.LIBERTIES_AFTER, corner] == 0  # suicide...
    assert corner not in points(position, tactics.LEGAL)  # ...so not legal
    assert rows[tactics.CAPTURES, from_rowcol(0, 3, 5)] == 0
    assert rows[tactics.CAPTURES, from_rowcol(3, 4, 5)] == 1  # takes the black corner stone
    assert rows[tactics.SELF_ATARI, edge] == 0 and rows[tactics.LIBERTIES_AFTER, edge] == 3


def test_the_ko_retake_is_illegal_from_the_position_and_from_the_games_history():
    before = position_from_ascii("""
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
    """, to_play=1)
    take, retake = from_rowcol(1, 2, 5), from_rowcol(1, 1, 5)
    after = before.play(take)
    assert after.ko == retake and not after.is_legal(retake)
    assert retake not in points(after, tactics.LEGAL)
    assert tactics.analyse_positions([after])[0, tactics.CAPTURES, retake] == 0
    stones, movers = replay_moves(before, [take, 24])
    rows = tactics.analyse_games(stones[:-1].reshape(2, -1), movers, np.array([0, 2]), 5)
    assert rows[1, tactics.LEGAL, retake] == 0  # the board after the retake was seen: superko


def test_own_one_point_eyes_are_marked_for_the_mover_only():
    position = position_from_ascii("""
        . X . . .
        X . X . .
        . X . . .
        . . . . .
        . . . . .
    """, to_play=1)
    assert points(position, tactics.EYE) == {from_rowcol(0, 0, 5), from_rowcol(1, 1, 5)}
    white = Position.from_setup(5, np.flatnonzero(position.stones.reshape(-1) == 1).tolist(), [], to_play=-1)
    assert points(white, tactics.EYE) == set()


# ---------------------------------------------------------------- the reference, the game path, symmetries
@pytest.fixture(scope="module")
def game_positions() -> list[list[Position]]:
    """The positions of random games on 5x5, 9x9 and 13x13 (random play makes plenty of ataris)."""
    rng = np.random.default_rng(41)
    games = []
    for size, count, cap in ((5, 6, 60), (9, 4, 120), (13, 2, 200)):
        for _ in range(count):
            moves, _ = random_game(size, rng, max_moves=cap)
            positions = [Position.initial(size)]
            for move in moves[:-1]:
                positions.append(positions[-1].play(move))
            games.append(positions)
    return games


def test_readings_equal_the_python_reference_on_every_position(game_positions):
    ladders = 0
    for positions in game_positions:
        ours = tactics.analyse_positions(positions)
        for position, rows in zip(positions, ours):
            expected = reference_rows(position)
            assert np.array_equal(rows, expected), f"{position!r}\n" + "\n".join(
                f"{tactics.ROW_NAMES[r]} at {p}: ours {rows[r, p]}, reference {expected[r, p]}"
                for r, p in np.argwhere(rows != expected)[:8])
            ladders += int(rows[tactics.LADDER_CAPTURE].sum() + rows[tactics.LADDER_ESCAPE].sum())
    assert ladders >= 50  # the games did exercise ladder reading


def test_replayed_games_read_like_their_positions(game_positions):
    for positions in game_positions:
        start, size = positions[0], positions[0].size
        moves = [p.last_move for p in positions[1:]]
        stones, movers = replay_moves(start, moves)
        boards = np.concatenate([stones[:-1].reshape(len(moves), -1), positions[-1].stones.reshape(1, -1)])
        rows = tactics.analyse_games(boards, np.append(movers, positions[-1].to_play),
                                     np.array([0, len(positions)]), size)
        np.testing.assert_array_equal(rows, tactics.analyse_positions(positions))


def test_two_games_side_by_side_keep_their_own_histories(game_positions):
    first, second = game_positions[0], game_positions[1]
    boards = [np.stack([p.stones.reshape(-1) for p in g]) for g in (first, second)]
    movers = [np.array([p.to_play for p in g], np.int8) for g in (first, second)]
    both = tactics.analyse_games(np.concatenate(boards), np.concatenate(movers),
                                 np.array([0, len(first), len(first) + len(second)]), 5)
    alone = tactics.analyse_games(boards[1], movers[1], np.array([0, len(second)]), 5)
    np.testing.assert_array_equal(both[len(first):], alone)


def test_a_reading_of_a_transformed_board_is_the_transformed_reading(game_positions):
    for positions in game_positions[::3]:
        for position in positions[10::7]:
            size = position.size
            rows = tactics.analyse_positions([position])[0].reshape(tactics.ROWS, size, size)
            for k in symmetry.SYMMETRIES:
                stones = symmetry.apply(position.stones, k).reshape(-1)
                moved = Position.from_setup(size, np.flatnonzero(stones == 1).tolist(),
                                            np.flatnonzero(stones == -1).tolist(), position.to_play)
                ours = tactics.analyse_positions([moved])[0].reshape(tactics.ROWS, size, size)
                unmoved = tactics.analyse_positions([Position.from_setup(
                    size, np.flatnonzero(position.stones.reshape(-1) == 1).tolist(),
                    np.flatnonzero(position.stones.reshape(-1) == -1).tolist(), position.to_play)])[0]
                np.testing.assert_array_equal(ours, symmetry.apply(unmoved.reshape(rows.shape), k))


def test_positions_of_different_sizes_are_refused():
    with pytest.raises(ValueError, match="one board size"):
        tactics.analyse_positions([Position.initial(5), Position.initial(9)])
