"""GNU Go self-play games: random openings off the edge, and one real game on a small board."""

from __future__ import annotations

import numpy as np
import pytest

from gocore.play.gnugo_games import GnugoGameConfig, play_gnugo_game
from gocore.play.gtp_client import gnugo_command
from gocore.play.match import GtpAgent, play_game
from gocore.play.openings import ScriptedOpening, opening_moves
from gocore.rules import sgf, sgf_read
from gocore.rules.board import Position


@pytest.mark.parametrize("size", [9, 13, 19])
def test_opening_moves_are_distinct_points_off_the_first_two_lines(size: int) -> None:
    for seed in range(20):
        moves = opening_moves(size, 6, np.random.default_rng(seed))
        assert len(set(moves)) == 6
        rows, cols = np.divmod(np.array(moves), size)
        assert min(rows.min(), cols.min()) >= 2 and max(rows.max(), cols.max()) <= size - 3


def test_opening_moves_follow_the_seed() -> None:
    draws = [tuple(opening_moves(9, 4, np.random.default_rng(seed))) for seed in range(30)]
    assert draws[:3] == [tuple(opening_moves(9, 4, np.random.default_rng(seed))) for seed in range(3)]
    assert len(set(draws)) >= 28


def test_opening_moves_go_anywhere_legal_once_the_inner_points_are_full() -> None:
    moves = opening_moves(5, 6, np.random.default_rng(0))  # 5x5: 9 inner points, 6 moves fit
    assert len(set(moves)) == 6
    position = Position.initial(5)
    for move in moves:
        position = position.play(move)  # raises if any was illegal
    many = opening_moves(7, 12, np.random.default_rng(1))  # 7x7: 9 inner points for 12 moves
    assert len(set(many)) == 12 and sum(1 for m in many if m in {16, 17, 18, 23, 24, 25, 30, 31, 32}) == 9


def test_a_game_keeps_its_opening_and_its_result_is_our_count(gnugo_path: str) -> None:
    config = GnugoGameConfig(size=7, level=0, opening=6, seed=5, binary=gnugo_path)
    record = play_gnugo_game(config, 3)
    expected = opening_moves(7, 6, np.random.default_rng([5, 3]))
    assert [move for _, move in record.moves[:6]] == expected  # GNU Go knew its own scripted stones
    assert [color for color, _ in record.moves[:6]] == [1, -1] * 3
    assert "random opening" in record.comments[5]
    (read,) = sgf_read.read_games(sgf.write(record).encode())
    final = sgf.replay(read)[-1]
    assert read.komi == 7.5 and read.rules == "Chinese" and read.result == final.result()
    assert read.moves[-1][1] == read.moves[-2][1] == 49  # played out: both passed
    assert read.player_black == read.player_white == "GNU Go level 0"


def test_gnugo_is_told_the_scripted_moves_of_its_own_colour(gnugo_path: str) -> None:
    command = gnugo_command(0, 7, path=gnugo_path)
    with GtpAgent(command, "scripted", 30) as engine, GtpAgent(command) as white:
        black = ScriptedOpening(engine, {0: 24, 2: 10})
        game = play_game(black, white, size=7, max_moves=4)
        assert [move for _, move in game.moves][0::2] == [24, 10]
        engine = black._engine()  # the engine's own board: its scripted stones and GNU Go's own
        stones = game.final.stones.ravel()  # (N*N,) +1 black, -1 white
        assert engine.list_stones(1, 7) == np.flatnonzero(stones == 1).tolist()
        assert engine.list_stones(-1, 7) == np.flatnonzero(stones == -1).tolist()
