"""Baghchal's rules (`gocore.rules.baghchal.position`), each shown on a board drawn as text.

Diagrams are rows 1..5 from the top: B a tiger, G a goat, . an empty point; moves are the library's
text (``G33``, ``B1122``, ``Bx1133``), row then column from 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from gocore.rules.baghchal.geometry import NUM_ACTIONS, is_even_point, point_of_text
from gocore.rules.baghchal.kernels import GOATS
from gocore.rules.baghchal.notation import action_of_text, move_text, position_from_text
from gocore.rules.baghchal.position import (
    GOAT,
    TIGER,
    BaghchalRules,
    IllegalAction,
    Position,
    random_playouts,
)


def legal_texts(position: Position) -> set[str]:
    """The legal moves of the side to move, as move text."""
    return {move_text(position, int(a)) for a in np.flatnonzero(position.legal_moves())}


def play(position: Position, *moves: str) -> Position:
    """Play move texts in order, each by the side to move."""
    for text in moves:
        position = position.play(action_of_text(position, text))
    return position


def refused(position: Position, text: str) -> str:
    """The reason `text` is refused (it must be)."""
    with pytest.raises(IllegalAction) as caught:
        position.play(action_of_text(position, text))
    return str(caught.value)


# --- the start and placement -------------------------------------------------------------------

def test_the_game_starts_with_tigers_on_the_corners_and_goat_to_place_anywhere_empty() -> None:
    start = Position.initial()
    assert start.to_play == GOAT and start.goats_in_hand == GOATS and start.is_placement
    assert legal_texts(start) == {f"G{r}{c}" for r in range(1, 6) for c in range(1, 6)} - {"G11", "G15", "G51", "G55"}
    assert refused(start, "G11") == "11 is occupied"


def test_goat_cannot_move_a_goat_until_all_twenty_are_placed() -> None:
    position = position_from_text("""
        B . . . B
        . . . . .
        . . G . .
        . . . . .
        B . . . B
    """, to_play=GOAT)
    assert "still places goats" in refused(position, "G3334")
    assert legal_texts(position) == {f"G{r}{c}" for r in range(1, 6) for c in range(1, 6)} - {
        "G11", "G15", "G51", "G55", "G33"}


def test_after_the_twentieth_goat_goat_moves_and_cannot_place() -> None:
    position = position_from_text("""
        B G G G B
        G G G G G
        G G . G G
        G G G G G
        B G G . B
    """, to_play=GOAT, placed=GOATS)  # 19 goats drawn: one captured
    assert not position.is_placement and position.captured == 1
    assert legal_texts(position) == {"G2333", "G3233", "G3433", "G4333", "G2233", "G2433", "G4233", "G4433",
                                     "G4454", "G5354"}
    assert "all 20 goats are placed" in refused(position, "G33")


# --- lines: diagonals only through even points ---------------------------------------------------

def test_diagonal_lines_pass_only_through_even_points() -> None:
    even = position_from_text("""
        . . . . .
        . B . . .
        . . . . .
        . . . . .
        . . . . .
    """, to_play=TIGER)
    assert legal_texts(even) == {"B2211", "B2212", "B2213", "B2221", "B2223", "B2231", "B2232", "B2233"}
    odd = position_from_text("""
        . . . . .
        . . B . .
        . . . . .
        . . . . .
        . . . . .
    """, to_play=TIGER)
    assert legal_texts(odd) == {"B2313", "B2322", "B2324", "B2333"}


@pytest.mark.parametrize("point", [f"{r}{c}" for r in range(1, 6) for c in range(1, 6)])
def test_a_lone_tiger_steps_to_every_neighbour_on_a_line(point: str) -> None:
    row, col = int(point[0]), int(point[1])
    rows = [["."] * 5 for _ in range(5)]
    rows[row - 1][col - 1] = "B"
    position = position_from_text("\n".join("".join(r) for r in rows), to_play=TIGER)
    diagonals = ((-1, -1), (-1, 1), (1, -1), (1, 1)) if is_even_point(point_of_text(point)) else ()
    steps = {f"B{point}{row + dr}{col + dc}" for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1), *diagonals)
             if 1 <= row + dr <= 5 and 1 <= col + dc <= 5}
    assert legal_texts(position) == steps


# --- captures -----------------------------------------------------------------------------------

def test_a_tiger_jumps_over_an_adjacent_goat_onto_the_empty_point_behind_and_captures_it() -> None:
    before = position_from_text("""
        B . . . B
        . G . . .
        . . . . .
        . . . . .
        B . . . B
    """, to_play=TIGER, placed=1)
    assert "Bx1133" in legal_texts(before)
    after = play(before, "Bx1133")
    assert after.captured == 1 and after.goats == 0
    assert np.array_equal(after.board(), position_from_text("""
        . . . . B
        . . . . .
        . . B . .
        . . . . .
        B . . . B
    """).board())


def test_a_tiger_cannot_jump_onto_an_occupied_point_or_over_an_empty_one() -> None:
    position = position_from_text("""
        B G G . B
        . . . . .
        . . . . .
        . . . . .
        B . . . B
    """, to_play=TIGER, placed=2)
    assert "Bx1113" not in legal_texts(position)
    assert refused(position, "Bx1113") == "13 is not empty"
    assert "has none" in refused(position, "Bx1133")


def test_no_diagonal_step_or_jump_from_an_odd_point() -> None:
    position = position_from_text("""
        . B . . B
        . . G . .
        . . . . .
        . . . . .
        B . . . B
    """, to_play=TIGER, placed=1)
    tiger_12 = {text for text in legal_texts(position) if text[1:3] == "12"}
    assert tiger_12 == {"B1211", "B1213", "B1222"}  # 12 is odd: no diagonal to 23, no jump to 34
    with pytest.raises(Exception, match="no line joins 12 to 34"):
        action_of_text(position, "Bx1234")


def test_a_diagonal_jump_from_an_even_point() -> None:
    position = position_from_text("""
        . . B . B
        . . . G .
        . . . . .
        . . . . .
        B . . . B
    """, to_play=TIGER, placed=1)
    assert "Bx1335" in legal_texts(position)  # 13 is even: its diagonal runs 13-24-35


def test_the_fifth_capture_wins_for_tiger() -> None:
    position = position_from_text("""
        B G . . B
        . . . . .
        . . . . .
        . . . . .
        B . . . B
    """, to_play=TIGER, placed=5)  # one goat left on the board: four captured
    assert position.captured == 4 and not position.is_game_over()
    after = play(position, "Bx1113")
    assert after.is_game_over() and after.winner == TIGER and after.reason == "captures"
    assert not after.legal_moves().any()


def test_captures_to_win_is_a_setting() -> None:
    rules = BaghchalRules(captures_to_win=2)
    position = position_from_text("""
        B G . . B
        . . . . .
        . . . . .
        . . . . .
        B . . . B
    """, to_play=TIGER, placed=2, rules=rules)
    assert play(position, "Bx1113").winner == TIGER


# --- no legal move loses ------------------------------------------------------------------------

def test_goat_wins_when_no_tiger_can_move() -> None:
    position = position_from_text("""
        B G G G B
        G G G G G
        G G . G G
        G G G G G
        B G G G B
    """, to_play=GOAT, placed=GOATS)
    trapped = play(position, "G3233")  # 32 is odd and out of every tiger's reach
    assert trapped.to_play == TIGER and not trapped.legal_moves().any()
    assert trapped.is_game_over() and trapped.winner == GOAT and trapped.reason == "tigers-trapped"
    assert not play(position, "G2233").is_game_over()  # 22 empty: the tiger on 11 steps there


def test_goat_with_no_legal_move_loses() -> None:
    position = position_from_text("""
        . B G G G
        B B G G G
        G G G G G
        G G G G G
        G G G G B
    """, to_play=GOAT, placed=GOATS)  # the one empty point touches tigers only
    assert position.is_game_over() and position.winner == TIGER and position.reason == "goats-trapped"
    assert not position.legal_moves().any()


# --- draws --------------------------------------------------------------------------------------

def test_the_third_occurrence_of_an_arrangement_after_placement_is_a_draw() -> None:
    position = position_from_text("""
        B G G G B
        G G G G G
        G G G G G
        G G G . G
        B G G B .
    """, to_play=GOAT, placed=GOATS)
    shuffle = ("G4555", "B5444", "G5545", "B4454")
    twice = play(position, *shuffle)
    assert twice.seen.count(twice.arrangement) == 2 and not twice.is_game_over()
    third = play(twice, *shuffle)
    assert third.is_game_over() and third.winner == 0 and third.reason == "repetition"
    assert not play(twice, *shuffle[:3]).is_game_over()


TRIANGLE = """
    B G G G B
    G G G G G
    G G G G G
    G G G B .
    B G G . .
"""
# The tiger goes round 44-55-45 while a goat shuffles 53-54: the drawn arrangement comes back after
# 7 plies with Tiger to move, and after 12 with Goat to move.
ROUNDS = ("G5354", "B4455", "G5453", "B5545", "G5354", "B4544", "G5453",
          "B4455", "G5354", "B5545", "G5453", "B4544")


def test_repetition_ignores_the_side_to_move() -> None:
    position = position_from_text(TRIANGLE, to_play=GOAT, placed=GOATS)
    seventh = play(position, *ROUNDS[:7])
    assert seventh.arrangement == position.arrangement and seventh.to_play != position.to_play
    assert not seventh.is_game_over()
    ended = play(position, *ROUNDS)
    assert ended.reason == "repetition" and ended.ply == position.ply + 12


def test_the_repetition_draw_is_a_setting() -> None:
    position = position_from_text(TRIANGLE, to_play=GOAT, placed=GOATS, rules=BaghchalRules(repetition=None))
    assert not play(position, *ROUNDS * 3).is_game_over()
    four = position_from_text(TRIANGLE, to_play=GOAT, placed=GOATS, rules=BaghchalRules(repetition=4))
    assert not play(four, *ROUNDS).is_game_over()


def test_repetitions_during_placement_do_not_count() -> None:
    start = Position.initial()
    moved = play(start, "G33", "B1112", "G44", "B1211", "G22", "B1112", "G45", "B1211")
    assert moved.seen == () and not moved.is_game_over()


def test_the_ply_cap_is_a_draw() -> None:
    position = Position.initial(BaghchalRules(max_plies=4))
    capped = play(position, "G33", "B1112", "G44", "B1211")
    assert capped.is_game_over() and capped.winner == 0 and capped.reason == "move-cap"


# --- refusals -----------------------------------------------------------------------------------

def test_moves_of_the_wrong_side_or_on_wrong_points_are_refused_with_reasons() -> None:
    position = play(Position.initial(), "G21")
    with pytest.raises(Exception, match="Tiger's turn"):
        action_of_text(position, "G44")
    assert refused(position, "B1213") == "there is no tiger on 12"
    assert refused(position, "B1121") == "21 is not empty"
    assert refused(play(position, "B1112"), "G1213") .startswith("Goat still places goats")


def test_a_finished_game_refuses_every_action() -> None:
    over = Position.initial(BaghchalRules(max_plies=1)).play(12)
    assert not over.legal_moves().any()
    with pytest.raises(IllegalAction, match="the game is over"):
        over.play(0)
    with pytest.raises(IllegalAction, match="not an action"):
        Position.initial().play(NUM_ACTIONS)


# --- random playouts ---------------------------------------------------------------------------

def test_random_playouts_end_by_the_rules_and_replay_by_seed() -> None:
    winners, plies, reasons = random_playouts(Position.initial(), 300, seed=7)
    again = random_playouts(Position.initial(), 300, seed=7)
    assert np.array_equal(winners, again[0]) and np.array_equal(plies, again[1])
    assert set(winners.tolist()) <= {-1, 0, 1} and (reasons > 0).all()
    assert (plies[winners == GOAT] >= 2 * GOATS).all()  # no tiger is trapped before the goats are placed
