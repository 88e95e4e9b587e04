"""Rules of `gocore.rules.board.Position`, each shown on a board drawn in ASCII.

Diagrams put GTP row N at the top (as `Position.to_ascii` prints them) and moves are written as
GTP vertices, so ``"A1"`` is the bottom-left corner of every diagram.
"""

from __future__ import annotations

import numpy as np
import pytest

from gocore.rules.board import HISTORY_LENGTH, IllegalMove, Position, replay_moves, result_text
from gocore.rules.coords import from_gtp
from tests.helpers import position_from_ascii, random_game


def at(position: Position, vertex: str) -> int:
    """The move for a GTP vertex on this position's board."""
    return from_gtp(vertex, position.size)


def play(position: Position, *vertices: str) -> Position:
    """Play GTP vertices in order, each by the side to move."""
    for vertex in vertices:
        position = position.play(at(position, vertex))
    return position


def stones(diagram: str) -> np.ndarray:
    """The (N, N) stones of an ASCII diagram."""
    return position_from_ascii(diagram).stones


def assert_refused(position: Position, vertex: str, reason: str, color: int | None = None) -> None:
    """`vertex` is refused for `reason` by play, is_legal and legal_moves alike."""
    move = at(position, vertex)
    with pytest.raises(IllegalMove) as caught:
        position.play(move, color)
    assert caught.value.reason == reason
    assert caught.value.move == move
    assert not position.is_legal(move, color)
    assert not position.legal_moves(color)[move]


# --- captures -------------------------------------------------------------------------------

def test_single_stone_capture_removes_the_stone() -> None:
    before = position_from_ascii("""
        . . . . .
        . . X . .
        . X O . .
        . . X . .
        . . . . .
    """)
    after = play(before, "D3")
    assert np.array_equal(after.stones, stones("""
        . . . . .
        . . X . .
        . X . X .
        . . X . .
        . . . . .
    """))
    assert after.ko is None  # the capturing stone has three liberties: no ko
    assert after.to_play == -1


def test_capture_of_a_chain_on_the_edge() -> None:
    before = position_from_ascii("""
        . O O O X
        . X X X .
        . . . . .
        . . . . .
        . . . . .
    """)
    after = play(before, "A5")
    assert np.array_equal(after.stones, stones("""
        X . . . X
        . X X X .
        . . . . .
        . . . . .
        . . . . .
    """))


def test_one_move_captures_several_chains_at_once() -> None:
    before = position_from_ascii("""
        O . O O X
        X . X X .
        . . . . .
        . . . . .
        . . . . .
    """)
    after = play(before, "B5")
    assert np.array_equal(after.stones, stones("""
        . X . . X
        X . X X .
        . . . . .
        . . . . .
        . . . . .
    """))
    assert after.ko is None  # three stones captured: never a ko


def test_move_capturing_four_single_stones_around_it() -> None:
    before = position_from_ascii("""
        . . X . .
        . X O X .
        X O . O X
        . X O X .
        . . X . .
    """)
    after = play(before, "C3")
    assert (after.stones == -1).sum() == 0
    assert (after.stones == 1).sum() == (before.stones == 1).sum() + 1
    assert after.ko is None


def test_snapback_recaptures_the_whole_group_after_the_throw_in_is_taken() -> None:
    start = position_from_ascii("""
        . . . . .
        . . . . .
        X X X X .
        O O O X .
        . . O X .
    """)
    thrown_in = play(start, "A1")  # a self-atari that puts the white group in atari too
    assert thrown_in.stones[4, 0] == 1 and thrown_in.stones[4, 2] == -1
    taken = play(thrown_in, "B1")  # white captures the single stone ...
    assert np.array_equal(taken.stones, stones("""
        . . . . .
        . . . . .
        X X X X .
        O O O X .
        . O O X .
    """))
    assert taken.ko is None  # ... with a stone that joined a big group, so no ko
    snapped = play(taken, "A1")  # ... and black takes back five stones
    assert np.array_equal(snapped.stones, stones("""
        . . . . .
        . . . . .
        X X X X .
        . . . X .
        X . . X .
    """))


# --- ko and superko -------------------------------------------------------------------------

KO_BOARD = """
    . X O . .
    X O . O .
    . X O . .
    . . . . .
    . . . . .
"""


def test_capturing_one_stone_into_a_ko_sets_the_ko_point() -> None:
    taken = play(position_from_ascii(KO_BOARD), "C4")
    assert taken.stones[1, 1] == 0
    assert taken.ko == at(taken, "B4")


def test_capturing_one_stone_with_a_stone_that_keeps_two_liberties_is_not_a_ko() -> None:
    position = position_from_ascii("""
        . X O . .
        X O . . .
        . X O . .
        . . . . .
        . . . . .
    """)
    taken = play(position, "C4")
    assert taken.stones[1, 1] == 0
    assert taken.ko is None
    assert_refused(taken, "B4", "suicide")  # C4 keeps D4, so retaking captures nothing


def test_immediate_ko_recapture_is_illegal() -> None:
    taken = play(position_from_ascii(KO_BOARD), "C4")
    assert_refused(taken, "B4", "ko")


def test_ko_recapture_is_legal_after_both_sides_play_elsewhere() -> None:
    taken = play(position_from_ascii(KO_BOARD), "C4")
    threat = play(taken, "E1")
    assert threat.ko is None
    answered = play(threat, "E2")
    assert answered.is_legal(at(answered, "B4"))
    retaken = play(answered, "B4")
    assert retaken.stones[1, 2] == 0 and retaken.stones[1, 1] == -1
    assert retaken.ko == at(retaken, "C4")  # and now black may not retake at once


def test_the_capturer_may_fill_the_ko_point_when_playing_out_of_turn() -> None:
    """The simple-ko ban binds the opponent only (GNU Go: "the ko is being filled, always allowed")."""
    taken = play(position_from_ascii(KO_BOARD), "C4")
    assert not taken.is_legal(at(taken, "B4"))  # white may not retake ...
    assert taken.is_legal(at(taken, "B4"), color=1)  # ... but black may connect at once
    assert taken.legal_moves(color=1)[at(taken, "B4")]
    filled = taken.play(at(taken, "B4"), color=1)
    assert filled.stones[1, 1] == 1 and filled.ko is None


def test_a_move_that_captures_nothing_clears_the_ko() -> None:
    taken = play(position_from_ascii(KO_BOARD), "C4")
    assert play(taken, "E1").ko is None
    assert taken.play(taken.size ** 2).ko is None  # a pass too


def test_ko_recapture_after_two_passes_repeats_the_board_and_is_superko() -> None:
    taken = play(position_from_ascii(KO_BOARD), "C4")
    both_passed = taken.play(25).play(25)
    assert both_passed.ko is None
    assert_refused(both_passed, "B4", "superko")


def test_triple_ko_cycle_is_refused_by_positional_superko() -> None:
    start = position_from_ascii("""
        . X O . . . X O .
        X O . O . X O . O
        . X O . . . X O .
        . . . . . . . . .
        . O X . . . . . .
        O X . X . . . . .
        . O X . . . . . .
        . . . . . . . . .
        . . . . . . . . .
    """)
    # Each ko is taken once by each side; every move is a legal simple-ko capture ...
    cycle = play(start, "C8", "C4", "H8", "B8", "B4")
    assert cycle.ko == at(cycle, "C4")
    # ... but white's last retake would bring back the starting board.
    assert_refused(cycle, "G8", "superko")
    assert not np.array_equal(cycle.stones, start.stones)


# --- suicide and occupied points ------------------------------------------------------------

def test_single_stone_suicide_is_illegal() -> None:
    position = position_from_ascii("""
        . X . . .
        X . . . .
        . . . . .
        . . . . .
        . . . . .
    """, to_play=-1)
    assert_refused(position, "A5", "suicide")
    assert position.is_legal(at(position, "A5"), color=1)  # filling its own eye is legal for black


def test_multi_stone_suicide_is_illegal() -> None:
    position = position_from_ascii("""
        O . X . .
        X X . . .
        . . . . .
        . . . . .
        . . . . .
    """, to_play=-1)
    assert_refused(position, "B5", "suicide")


def test_filling_the_last_liberty_of_an_own_ring_is_suicide_but_captures_for_the_opponent() -> None:
    position = position_from_ascii("""
        . X X X .
        X O O O X
        X O . O X
        X O O O X
        . X X X .
    """, to_play=-1)
    assert_refused(position, "C3", "suicide")
    captured = position.play(at(position, "C3"), color=1)
    assert (captured.stones == -1).sum() == 0 and captured.stones[2, 2] == 1


def test_move_without_liberties_that_captures_is_not_suicide() -> None:
    position = position_from_ascii("""
        . X O . .
        X O . . .
        . . . . .
        . . . . .
        . . . . .
    """, to_play=-1)
    assert position.is_legal(at(position, "A5"))
    after = play(position, "A5")
    assert np.array_equal(after.stones, stones("""
        O . O . .
        X O . . .
        . . . . .
        . . . . .
        . . . . .
    """))
    assert after.ko == at(after, "B5")


def test_playing_on_an_occupied_point_is_illegal() -> None:
    position = position_from_ascii("""
        . . . . .
        . X . . .
        . . O . .
        . . . . .
        . . . . .
    """)
    assert_refused(position, "B4", "occupied")
    assert_refused(position, "C3", "occupied")
    assert_refused(position, "C3", "occupied", color=-1)


@pytest.mark.parametrize("move", [-1, 26, 1000])
def test_off_board_moves_are_illegal(move: int) -> None:
    position = Position.initial(5)
    with pytest.raises(IllegalMove) as caught:
        position.play(move)
    assert caught.value.reason == "off-board"
    assert not position.is_legal(move)


# --- scoring --------------------------------------------------------------------------------

DAME_BOARD = """
    . . X . O
    . . X . O
    . . X . O
    . . X . O
    . . X . O
"""


def test_empty_board_scores_minus_komi() -> None:
    assert Position.initial(9, komi=7.5).score() == -7.5
    assert Position.initial(19, komi=0.5).score() == -0.5
    assert Position.initial(5, komi=0).score() == 0


def test_area_score_counts_stones_and_surrounded_territory() -> None:
    position = position_from_ascii("""
        . . X O .
        . . X O .
        . . X O .
        . . X O .
        . . X O .
    """, komi=0)
    assert position.score() == 15 - 10


def test_dame_touching_both_colours_counts_for_nobody() -> None:
    position = position_from_ascii(DAME_BOARD, komi=7.5)
    # black: 5 stones + 10 territory; white: 5 stones; the D column reaches both colours.
    assert position.score() == 15 - 5 - 7.5


def test_single_dame_point_between_territories_counts_for_nobody() -> None:
    position = position_from_ascii("""
        . X O . .
        . X O . .
        . X . O .
        . X O . .
        . X O . .
    """, komi=0)
    # black 5 stones + 5 territory; white 5 stones + 9 territory; the empty C3 touches both.
    assert position.score() == 10 - 14


def test_seki_liberties_count_for_nobody_and_both_groups_count_as_stones() -> None:
    position = position_from_ascii("""
        . . . . . . . . .
        . X X X X X X . .
        . X O O O O X . .
        . X O X X O X . .
        . X O . . O X . .
        . X O O O O X . .
        . X X X X X X . .
        . . . . . . . . .
        . . . . . . . . .
    """, komi=7.5)
    # It is a seki: whoever fills a shared liberty (D5, E5) loses their group.
    assert play(position, "D5", "E5").stones[3, 3] == 0
    assert (position.play(at(position, "E5"), color=-1).play(at(position, "D5"), color=1).stones == -1).sum() == 0
    # black: 22 stones + 45 outside points; white: 12 stones; D5 and E5 touch both colours.
    assert position.score() == 22 + 45 - 12 - 7.5


def test_an_empty_region_reaching_only_black_is_black_even_when_large() -> None:
    position = position_from_ascii("""
        . . . . .
        . . . . .
        . . X . .
        . . . . .
        . . . . .
    """, komi=0.5)
    assert position.score() == 25 - 0.5


# --- results --------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("komi", "expected"),
    [(6.5, "B+3.5"), (10.5, "W+0.5"), (10, "0"), (7, "B+3"), (0, "B+10"), (12, "W+2")],
)
def test_result_strings(komi: float, expected: str) -> None:
    position = position_from_ascii(DAME_BOARD, komi=komi)  # black 15, white 5
    assert position.result() == expected


@pytest.mark.parametrize(
    ("score", "expected"),
    [(3.5, "B+3.5"), (-0.5, "W+0.5"), (0.0, "0"), (-0.0, "0"), (3.0, "B+3"), (-81.0, "W+81"),
     (361.0, "B+361"), (-368.5, "W+368.5")],
)
def test_result_text(score: float, expected: str) -> None:
    assert result_text(score) == expected


def test_empty_board_result_is_a_white_win_by_komi() -> None:
    assert Position.initial(9, komi=7.5).result() == "W+7.5"
    assert Position.initial(9, komi=0).result() == "0"


# --- passes and the end of the game ---------------------------------------------------------

def test_two_consecutive_passes_end_the_game() -> None:
    position = Position.initial(9)
    once = position.play(81)
    assert once.passes == 1 and not once.is_game_over()
    twice = once.play(81)
    assert twice.passes == 2 and twice.is_game_over()


def test_a_move_after_a_pass_resets_the_pass_count() -> None:
    position = Position.initial(9).play(81).play(40)
    assert position.passes == 0
    assert not position.play(81).is_game_over()
    assert position.play(81).play(81).is_game_over()


def test_pass_changes_the_side_to_move_but_not_the_board() -> None:
    position = play(Position.initial(9), "E5")
    passed = position.play(81)
    assert passed.to_play == 1
    assert np.array_equal(passed.stones, position.stones)
    assert passed.move_number == position.move_number + 1


# --- legal moves ----------------------------------------------------------------------------

def assert_legal_moves_match_is_legal(position: Position) -> None:
    n = position.size
    for color in (None, 1, -1):
        mask = position.legal_moves(color)
        assert mask.shape == (n * n + 1,) and mask.dtype == np.bool_
        assert mask[n * n]
        assert position.is_legal(n * n, color)
        for move in range(n * n):
            assert mask[move] == position.is_legal(move, color), (move, color)
        assert not mask[:-1][position.stones.ravel() != 0].any()  # occupied points never legal


def test_legal_moves_has_pass_and_matches_is_legal_on_the_empty_board() -> None:
    position = Position.initial(9)
    assert position.legal_moves().all()
    assert_legal_moves_match_is_legal(position)


def test_legal_moves_matches_is_legal_around_ko_suicide_and_superko() -> None:
    taken = play(position_from_ascii(KO_BOARD), "C4")
    assert_legal_moves_match_is_legal(taken)
    assert_legal_moves_match_is_legal(taken.play(25).play(25))
    assert_legal_moves_match_is_legal(position_from_ascii("""
        O . X . .
        X X . . .
        . . . . .
        . . . . .
        . . . . O
    """, to_play=-1))


@pytest.mark.parametrize("seed", range(6))
def test_legal_moves_matches_is_legal_and_play_in_random_games(seed: int) -> None:
    rng = np.random.default_rng(seed)
    moves, final = random_game(7, rng, max_moves=120)
    position = Position.initial(7)
    for i, move in enumerate(moves):
        if i % 15 == 0:
            assert_legal_moves_match_is_legal(position)
            mask = position.legal_moves()
            for point in range(49):
                if not mask[point]:
                    with pytest.raises(IllegalMove):
                        position.play(point)
        position = position.play(move)
    assert position == final


def test_pass_is_legal_even_when_no_point_is() -> None:
    position = position_from_ascii("""
        . X X X X
        X X X X X
        X X . X X
        X X X X X
        X X X X .
    """, to_play=-1)
    mask = position.legal_moves()
    assert mask[-1] and not mask[:-1].any()


# --- colours, immutability, setup -----------------------------------------------------------

def test_play_with_an_explicit_colour_out_of_turn() -> None:
    position = Position.initial(5)
    twice_black = position.play(at(position, "C3"), color=1).play(at(position, "D4"), color=1)
    assert twice_black.stones[2, 2] == 1 and twice_black.stones[1, 3] == 1
    assert twice_black.to_play == -1  # the side after the last mover
    white_first = position.play(at(position, "C3"), color=-1)
    assert white_first.stones[2, 2] == -1 and white_first.to_play == 1


def test_explicit_colour_refuses_a_suicide_only_for_that_colour() -> None:
    position = position_from_ascii("""
        . X . . .
        X . . . .
        . . . . .
        . . . . .
        . . . . .
    """, to_play=1)
    assert position.is_legal(at(position, "A5"))
    assert_refused(position, "A5", "suicide", color=-1)


def test_explicit_colour_must_be_plus_or_minus_one() -> None:
    with pytest.raises(ValueError):
        Position.initial(5).play(0, color=2)


def test_play_returns_a_new_position_and_leaves_the_old_one_unchanged() -> None:
    before = position_from_ascii(KO_BOARD)
    snapshot = before.stones.copy()
    after = play(before, "C4")
    assert after is not before
    assert np.array_equal(before.stones, snapshot)
    assert before.to_play == 1 and before.ko is None and before.move_number == 0
    assert before.is_legal(at(before, "C4"))
    assert after.move_number == 1


def test_stones_array_is_read_only() -> None:
    position = play(Position.initial(5), "C3")
    with pytest.raises(ValueError):
        position.stones[0, 0] = 1
    assert not position.stones.flags.writeable
    for board in position.history:
        with pytest.raises(ValueError):
            board[0, 0] = 1


def test_setup_stones_that_overlap_are_refused() -> None:
    with pytest.raises(ValueError, match="overlap"):
        Position.from_setup(9, black=[40, 41], white=[41])
    with pytest.raises(ValueError, match="overlap"):
        Position.from_setup(9, black=[40, 40], white=[])


def test_setup_chain_without_a_liberty_is_refused() -> None:
    with pytest.raises(ValueError, match="liberty"):
        position_from_ascii("""
            O X . . .
            X . . . .
            . . . . .
            . . . . .
            . . . . .
        """)
    with pytest.raises(ValueError, match="liberty"):
        position_from_ascii("""
            . X X X .
            X O O O X
            . X X X .
            . . . . .
            . . . . .
        """)


def test_setup_stone_off_the_board_is_refused() -> None:
    with pytest.raises(ValueError):
        Position.from_setup(5, black=[25], white=[])
    with pytest.raises(ValueError):
        Position.from_setup(5, black=[], white=[-1])


def test_setup_records_colour_to_play_and_komi() -> None:
    position = Position.from_setup(9, black=[20, 60], white=[40], to_play=-1, komi=5.5)
    assert position.to_play == -1 and position.komi == 5.5
    assert position.stones.ravel()[[20, 60, 40]].tolist() == [1, 1, -1]
    assert position.ko is None and position.passes == 0 and position.move_number == 0


def test_ascii_round_trip() -> None:
    position = position_from_ascii(KO_BOARD)
    assert position_from_ascii(position.to_ascii()) == position


@pytest.mark.parametrize("size", [5, 9, 13, 19])
def test_supported_board_sizes_play(size: int) -> None:
    position = Position.initial(size)
    assert position.stones.shape == (size, size)
    assert position.legal_moves().shape == (size * size + 1,)
    corner = position.play(0).play(1).play(size)
    assert corner.stones[0, 0] == 1 and corner.stones[0, 1] == -1 and corner.stones[1, 0] == 1
    last = position.play(size * size - 1)
    assert last.stones[size - 1, size - 1] == 1


@pytest.mark.parametrize("size", [2, 3, 4, 20, 25])
def test_unsupported_board_sizes_are_refused(size: int) -> None:
    with pytest.raises(ValueError):
        Position.initial(size)
    with pytest.raises(ValueError):
        Position.from_setup(size, black=[], white=[])
    with pytest.raises(ValueError):
        position_from_ascii("\n".join(". " * size for _ in range(size)))


# --- history and hashing --------------------------------------------------------------------

def test_history_holds_previous_boards_most_recent_first() -> None:
    position = Position.initial(9)
    boards = [position.stones]
    for move in [40, 41, 30, 31, 81, 50, 51, 60, 61, 70]:
        position = position.play(move)
        boards.append(position.stones)
    assert len(position.history) == HISTORY_LENGTH == 7
    for back, board in enumerate(position.history, start=1):
        assert np.array_equal(board, boards[-1 - back])


def test_history_grows_one_board_per_move_until_full() -> None:
    position = Position.initial(9)
    assert position.history == ()
    for count in range(1, 10):
        previous = position
        position = position.play(count)
        assert len(position.history) == min(count, HISTORY_LENGTH)
        assert np.array_equal(position.history[0], previous.stones)


def test_zobrist_hash_depends_on_stones_only() -> None:
    a = play(Position.initial(9), "C3", "D4", "E5")
    b = play(Position.initial(9), "E5", "D4", "C3")
    assert a.zobrist_hash == b.zobrist_hash and a == b
    assert Position.initial(9).zobrist_hash == 0
    assert a.play(81).zobrist_hash == a.zobrist_hash
    assert a.zobrist_hash != play(Position.initial(9), "C3", "D4", "E6").zobrist_hash


# --- replay_moves ---------------------------------------------------------------------------

@pytest.mark.parametrize(("size", "seed"), [(5, 0), (9, 1), (9, 2), (13, 3), (19, 4)])
def test_replay_moves_matches_playing_move_by_move(size: int, seed: int) -> None:
    moves, _ = random_game(size, np.random.default_rng(seed))
    moves = moves + [size * size, size * size]
    position = Position.initial(size)
    expected_boards, expected_movers = [position.stones], []
    for move in moves:
        expected_movers.append(position.to_play)
        position = position.play(move)
        expected_boards.append(position.stones)
    boards, movers = replay_moves(Position.initial(size), moves)
    assert boards.shape == (len(moves) + 1, size, size) and boards.dtype == np.int8
    assert np.array_equal(boards, np.stack(expected_boards))
    assert movers.tolist() == expected_movers


def test_replay_moves_from_a_setup_position_with_explicit_colours() -> None:
    start = position_from_ascii(KO_BOARD)
    moves = [at(start, v) for v in ("C4", "E1", "E2", "E3", "B4")]
    colors = [1, 1, -1, 0, -1]
    boards, movers = replay_moves(start, moves, colors)
    position = start
    for i, (move, color) in enumerate(zip(moves, colors)):
        assert np.array_equal(boards[i], position.stones)
        assert movers[i] == (color or position.to_play)
        position = position.play(move, color or None)
    assert np.array_equal(boards[-1], position.stones)
    assert movers.tolist() == [1, 1, -1, 1, -1]


def test_replay_of_no_moves_returns_the_start_board() -> None:
    start = position_from_ascii(KO_BOARD)
    boards, movers = replay_moves(start, [])
    assert boards.shape == (1, 5, 5) and movers.shape == (0,)
    assert np.array_equal(boards[0], start.stones)


SUICIDE_BOARD = """
    . X . . .
    X . . . .
    . . . . .
    . . . . .
    . . . . .
"""


@pytest.mark.parametrize(
    ("diagram", "vertices", "index", "reason"),
    [
        (KO_BOARD, ["E1", "D1", "E1"], 2, "occupied"),
        (KO_BOARD, ["C4", "B4", "E1"], 1, "ko"),
        (KO_BOARD, ["C4", "pass", "pass", "B4", "E1"], 3, "superko"),
        (SUICIDE_BOARD, ["E1", "A5", "E2"], 1, "suicide"),
    ],
)
def test_replay_moves_reports_the_index_of_the_first_illegal_move(
        diagram: str, vertices: list[str], index: int, reason: str) -> None:
    start = position_from_ascii(diagram)
    moves = [at(start, v) for v in vertices]
    with pytest.raises(IllegalMove) as caught:
        replay_moves(start, moves)
    assert caught.value.index == index
    assert caught.value.reason == reason
    assert caught.value.move == moves[index]


def test_replay_moves_refuses_an_off_board_move_with_its_index() -> None:
    with pytest.raises(IllegalMove) as caught:
        replay_moves(Position.initial(9), [40, 41, 82, 42])
    assert caught.value.index == 2 and caught.value.reason == "off-board"


def test_candidate_moves_keep_own_eyes_and_pass_until_the_opponent_passes():
    from gocore.rules.board import candidate_moves

    position = position_from_ascii("""
        . X . . .
        X X . . .
        . . . . .
        . . . . .
        . . . . .
    """, to_play=1)
    legal, sensible = position.legal_moves(), candidate_moves(position)
    assert legal[0] and not sensible[0]  # A5 is black's own one-point eye
    assert legal[-1] and not sensible[-1]  # no pass while there is something else to do
    assert (candidate_moves(position, sensible=False) == legal).all()
    after_pass = position.play(12).play(25)  # black plays the centre, white passes
    assert candidate_moves(after_pass)[-1] and candidate_moves(after_pass)[0]  # now every legal move


def test_a_settled_board_lets_a_search_pass_and_a_dame_or_shared_liberty_does_not():
    from gocore.rules.board import candidate_moves, is_settled

    settled = position_from_ascii("""
        . X O . .
        X X O . .
        X O O . .
        X O . O .
        . X O . .
    """, to_play=1)
    dame = position_from_ascii("""
        . X . O .
        X X . O .
        X X . O O
        . X . O .
        X X . O .
    """, to_play=1)
    assert is_settled(settled) and not is_settled(dame) and not is_settled(Position.initial(5))
    assert candidate_moves(settled, pass_when_settled=True)[-1]
    assert not candidate_moves(settled)[-1]  # off by default: no pass before the opponent's
    assert not candidate_moves(dame, pass_when_settled=True)[-1]  # the dame column is still to fill
