"""Baghchal's text: the library's move text, records and FEN, and the text board."""

from __future__ import annotations

import numpy as np
import pytest

from gocore.rules.baghchal.notation import (
    RecordError,
    action_of_text,
    board_text,
    move_text,
    position_from_text,
    read_fen,
    read_record,
    write_fen,
    write_record,
)
from gocore.rules.baghchal.position import GOAT, TIGER, BaghchalRules, Position

# Goat places five goats where the tiger from 11 can jump them.
TIGER_WINS = "1. G12 Bx1113 2. G23 Bx1333 3. G34 Bx3335 4. G44 Bx3553 5. G43 Bx5333# 0-1"


def test_a_record_reads_to_its_moves_and_writes_back_the_same_text() -> None:
    actions, final = read_record(TIGER_WINS)
    assert len(actions) == 10 and final.winner == TIGER and final.reason == "captures"
    assert write_record(actions) == TIGER_WINS


def test_a_record_without_numbers_or_with_the_library_spacing_reads_alike() -> None:
    assert read_record("1.G33 B1112 2.G44")[0] == read_record(" 1. G33 B1112 2. G44")[0] == read_record(
        "G33 B1112 G44")[0]


def test_an_illegal_move_names_its_ply_and_why() -> None:
    with pytest.raises(RecordError, match=r"ply 3 \(2. G33\) is illegal: 33 is occupied"):
        read_record("1. G33 B1112 2. G33")
    with pytest.raises(RecordError, match=r"ply 2 \(1... B2233\): .*no tiger on 22|ply 2 \(1... B2233\) is illegal"):
        read_record("1. G33 B2233")
    with pytest.raises(RecordError, match=r"ply 2 \(1... G44\): G44: it is Tiger's turn"):
        read_record("1. G33 G44")


def test_records_of_other_games_and_boards_are_refused() -> None:
    with pytest.raises(RecordError, match="SGF"):
        read_record("(;GM[1]FF[4]SZ[9];B[ee];W[gc])")
    with pytest.raises(RecordError, match="chess"):
        read_record('[Event "?"]\n1. e4 e5')
    with pytest.raises(RecordError, match="not a Baghchal move"):
        read_record("1. e4 e5 2. Nf3")
    with pytest.raises(RecordError, match="off the 5x5 board"):
        read_record("1. G66")


def test_wrong_move_numbers_and_results_are_refused() -> None:
    with pytest.raises(RecordError, match="expected 2"):
        read_record("1. G33 B1112 3. G44")
    with pytest.raises(RecordError, match="not over"):
        read_record("1. G33 B1112# 1-0")
    with pytest.raises(RecordError, match="by the rules it is 0-1"):
        read_record(TIGER_WINS.replace("0-1", "1-0"))


def test_move_text_names_placements_steps_and_captures() -> None:
    start = Position.initial()
    assert move_text(start, action_of_text(start, "G33")) == "G33"
    after = start.play(action_of_text(start, "G12"))
    assert move_text(after, action_of_text(after, "Bx1113")) == "Bx1113"
    assert move_text(after, action_of_text(after, "B1121")) == "B1121"
    with pytest.raises(RecordError, match="is a jump: a capture is written Bx1113"):
        action_of_text(after, "B1113")
    with pytest.raises(RecordError, match="is a step, not a capture: write B1121"):
        action_of_text(after, "Bx1121")


def test_fen_writes_as_the_library_does_and_reads_back() -> None:
    start = Position.initial()
    assert write_fen(start) == "B3B/5/5/5/B3B G 0"
    actions, final = read_record("1. G33 B1122 2. G44")
    assert write_fen(final) == "4B/1B3/2G2/3G1/B3B B 2"
    again = read_fen(write_fen(final))
    assert again == final and np.array_equal(again.legal_moves(), final.legal_moves())


def test_fen_of_another_board_or_an_impossible_position_is_refused() -> None:
    with pytest.raises(RecordError, match="6 rows"):
        read_fen("B4B/6/6/6/6/B4B G 0")
    with pytest.raises(RecordError, match="row 1"):
        read_fen("B4B/5/5/5/B3B G 0")
    with pytest.raises(RecordError, match="3 tigers"):
        read_fen("B4/5/5/5/B3B G 0")
    with pytest.raises(RecordError, match="only 1 placed"):
        read_fen("B3B/1G3/2G2/5/B3B B 1")
    with pytest.raises(RecordError, match="3 fields"):
        read_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")


def test_the_text_board_reads_back_as_the_same_position() -> None:
    actions, final = read_record("1. G33 B1122 2. G44 B5554")
    drawn = board_text(final)
    assert "1 .---.---.---.---B" in drawn and "Goat to move" in drawn
    again = position_from_text(drawn.rsplit("\n", 1)[0], to_play=GOAT)  # the board without its status line
    assert again.goats == final.goats and again.tigers == final.tigers and again.placed == 2


def test_a_drawing_that_is_not_a_board_is_refused() -> None:
    with pytest.raises(RecordError, match="5 rows"):
        position_from_text("B...B\n.....\nB...B")
    with pytest.raises(RecordError, match="not a row"):
        position_from_text("B...B\n..X..\n.....\n.....\nB...B")


def test_records_follow_the_rules_settings() -> None:
    short = BaghchalRules(captures_to_win=1)
    actions, final = read_record("1. G12 Bx1113# 0-1", short)
    assert final.winner == TIGER and write_record(actions, short).endswith("# 0-1")
