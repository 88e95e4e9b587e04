"""Tests for gocore.rules.sgf: reading real-looking SGF, every refusal reason, replay, write round trips."""

from __future__ import annotations

import codecs

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sgfmill import sgf as sgfmill_sgf

from gocore.rules.board import Position
from gocore.rules.coords import from_gtp, pass_move
from gocore.rules.sgf import GameRecord, SgfError, Variation, replay, winner_from_result, write
from gocore.rules.sgf_read import read_games, read_games_lenient
from tests.helpers import position_from_ascii


def read_one(data: str | bytes) -> GameRecord:
    games = read_games(data)
    assert len(games) == 1
    return games[0]


def refusal(data: str | bytes) -> str:
    with pytest.raises(SgfError) as caught:
        read_games(data)
    return caught.value.reason


# --- reading real-looking files --------------------------------------------------------------------

def test_ff4_header_and_moves_are_read():
    record = read_one("(;FF[4]GM[1]CA[UTF-8]SZ[9]KM[7.5]RU[Chinese]PB[Alice]PW[Bob]BR[3d]WR[2k]"
                      "DT[2024-05-01]RE[W+0.5];B[ee];W[ai];B[ia])")
    assert (record.size, record.komi, record.rules) == (9, 7.5, "Chinese")
    assert (record.player_black, record.player_white, record.rank_black, record.rank_white) == (
        "Alice", "Bob", "3d", "2k")
    assert (record.date, record.result, record.winner) == ("2024-05-01", "W+0.5", -1)
    # SGF rows count from the top: "ai" is the bottom-left corner (GTP A1), "ia" the top-right.
    assert record.moves == [(1, from_gtp("E5", 9)), (-1, from_gtp("A1", 9)), (1, from_gtp("J9", 9))]
    assert record.first_to_play == 1 and record.handicap == 0 and record.source is None


def test_ff3_game_reads_tt_and_empty_passes_and_lowercase_property_names():
    record = read_one("(;FF[3]GaMe[1]SZ[19]KoMi[5.5];Black[pd];White[tt];B[];W[dp])")
    assert record.komi == 5.5
    assert record.moves == [(1, from_gtp("Q16", 19)), (-1, pass_move(19)), (1, pass_move(19)),
                            (-1, from_gtp("D4", 19))]


def test_missing_size_defaults_to_19_and_missing_komi_to_zero():
    record = read_one("(;GM[1];B[pd])")
    assert (record.size, record.komi, record.moves) == (19, 0.0, [(1, from_gtp("Q16", 19))])


@pytest.mark.parametrize("result, winner", [
    ("B+R", 1), ("W+T", -1), ("B+3.5", 1), ("W+Resign", -1), ("0", 0), ("Draw", 0), ("Jigo", 0),
    ("Void", None), ("?", None), ("B+F", 1), ("b+r", 1), ("w+resign", -1), (" W + 12.5 ", -1),
    ("B+", 1), ("DRAW", 0), ("", None)])
def test_every_result_variant_gives_its_winner_and_keeps_the_text(result, winner):
    record = read_one(f"(;SZ[9]RE[{result}];B[ee])")
    assert (record.winner, record.result) == (winner, result)
    assert winner_from_result(result) == winner


@pytest.mark.parametrize("komi_text, komi", [
    ("6.5", 6.5), ("7.50", 7.5), ("0", 0.0), ("-2.5", -2.5), ("6,5", 6.5), (" 5.5 ", 5.5),
    ("375", 7.5), ("275", 5.5), ("650", 650.0), ("", 0.0)])
def test_komi_variants(komi_text, komi):
    assert read_one(f"(;SZ[9]KM[{komi_text}];B[ee])").komi == komi


def test_gb2312_names_are_decoded_and_gbk_extensions_accepted():
    data = "(;CA[GB2312]SZ[19]PB[柯洁]PW[朱镕基]RE[B+R];B[pd])".encode("gbk")  # 镕 is GBK only
    record = read_one(data)
    assert (record.player_black, record.player_white) == ("柯洁", "朱镕基")


def test_latin1_names_are_decoded():
    record = read_one("(;FF[4]CA[ISO-8859-1]SZ[9]PB[Jérôme]PW[Müller];B[ee])".encode("latin-1"))
    assert (record.player_black, record.player_white) == ("Jérôme", "Müller")


def test_without_charset_utf8_is_tried_before_latin1():
    assert read_one("(;SZ[9]PB[Jérôme];B[ee])".encode()).player_black == "Jérôme"
    assert read_one("(;SZ[9]PB[Jérôme];B[ee])".encode("latin-1")).player_black == "Jérôme"


def test_a_name_broken_in_its_declared_charset_does_not_cost_the_game():
    mislabelled = read_one("(;CA[UTF-8]SZ[9]PB[Jérôme];B[ee])".encode("latin-1"))
    assert mislabelled.player_black == "Jérôme" and len(mislabelled.moves) == 1
    garbled = read_one(b"(;CA[GB2312]SZ[9]PB[\xa1\xff\xff]PW[\xbf\xc2];B[ee])")
    assert "\ufffd" in garbled.player_black and garbled.player_white == "柯"
    assert garbled.moves == [(1, from_gtp("E5", 9))]


def test_str_input_is_taken_as_decoded_whatever_ca_says():
    assert read_one("(;CA[GB2312]SZ[9]PB[柯洁];B[ee])").player_black == "柯洁"


def test_utf16_with_byte_order_mark_is_read():
    record = read_one("(;SZ[9]PB[柯洁];B[ee])".encode("utf-16"))
    assert record.player_black == "柯洁" and record.moves == [(1, from_gtp("E5", 9))]


def test_utf8_byte_order_mark_is_skipped_and_wins_over_ca():
    data = codecs.BOM_UTF8 + "(;CA[ISO-8859-1]SZ[9]PB[Jérôme];B[ee])".encode()
    assert read_one(data).player_black == "Jérôme"


def test_comments_and_variations_follow_the_main_line():
    record = read_one("(;SZ[9]C[game comment];B[ee]C[first \\] move]"
                      "(;W[cc]C[main\nline];B[gg](;W[gc])(;W[cg]))"
                      "(;W[dd]C[variation];B[ff]))")
    assert [move for _, move in record.moves] == [from_gtp(v, 9) for v in ("E5", "C7", "G3", "G7")]
    assert record.comments == {0: "first ] move", 1: "main\nline"}


def test_handicap_game_starts_with_white_after_the_stones():
    record = read_one("(;FF[4]SZ[9]HA[2]KM[0.5]AB[gc][cg];W[ee];B[cc])")
    assert (record.handicap, record.first_to_play) == (2, -1)
    assert record.setup_black == [from_gtp("G7", 9), from_gtp("C3", 9)]
    start = replay(record)[0]
    assert start.to_play == -1 and int(np.sum(start.stones == 1)) == 2


def test_first_to_play_without_moves_uses_pl_then_handicap():
    assert read_one("(;SZ[9]HA[2]AB[gc][cg])").first_to_play == -1
    assert read_one("(;SZ[9]PL[W])").first_to_play == -1
    assert read_one("(;SZ[9]HA[2]AB[gc][cg]PL[B])").first_to_play == 1
    assert read_one("(;SZ[9])").first_to_play == 1


def test_compressed_setup_lists_and_setup_before_the_first_move():
    record = read_one("(;SZ[9]AB[aa:bb][aa]AW[ii];AE[ii]AW[hh];B[ee])")
    assert record.setup_black == [0, 1, 9, 10]
    assert record.setup_white == [from_gtp("H2", 9)]


def test_collection_of_three_games_is_read_in_order():
    data = "(;SZ[9];B[aa])\n(;SZ[13];B[bb])\r\n junk (;SZ[19];B[cc])"
    games = read_games(data, source="games.sgf")
    assert [game.size for game in games] == [9, 13, 19]
    assert [game.source for game in games] == ["games.sgf#0", "games.sgf#1", "games.sgf#2"]


def test_lenient_reader_keeps_good_games_around_a_broken_one():
    data = b"(;SZ[9];B[aa])(;SZ[9];B[aa] %% ;W[bb](;B[cc])(;B[dd]))(;SZ[9];W[ee])"
    games = read_games_lenient(data, source="mixed.sgf")
    assert len(games) == 3
    assert isinstance(games[0], GameRecord) and games[0].moves == [(1, 0)]
    assert isinstance(games[1], SgfError) and games[1].reason == "syntax"
    assert games[1].game_index == 1 and "mixed.sgf#1" in str(games[1])
    assert isinstance(games[2], GameRecord) and games[2].source == "mixed.sgf#2"
    with pytest.raises(SgfError, match="mixed.sgf#1"):
        read_games(data, source="mixed.sgf")


def test_lenient_reader_reports_a_refused_game_with_its_reason():
    games = read_games_lenient("(;SZ[9];B[aa])(;GM[2];B[aa])(;SZ[21])")
    assert [getattr(game, "reason", None) for game in games] == [None, "not-go", "board-size"]


# --- refusals ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("data", ["(;SZ[9];B[aa]", "(;SZ[9]B)", "(;SZ[9];B[aa]5;W[bb])"])
def test_broken_syntax_is_refused(data):
    assert refusal(data) == "syntax"


def test_other_games_than_go_are_refused():
    assert refusal("(;GM[2]SZ[8];B[aa])") == "not-go"


@pytest.mark.parametrize("size", ["4", "20", "9:13", "25"])
def test_unsupported_board_sizes_are_refused(size):
    assert refusal(f"(;SZ[{size}];B[aa])") == "board-size"


@pytest.mark.parametrize("data", ["", "no game here", "()", b"\n\n"])
def test_input_without_a_game_is_empty(data):
    assert refusal(data) == "empty"
    with pytest.raises(SgfError, match="no SGF game"):
        read_games_lenient(data)


def test_undecodable_inputs_are_refused_as_encoding():
    assert refusal("(;SZ[9]PB[x];B[ee])".encode("utf-16-le")) == "encoding"  # no byte-order mark
    assert refusal("(;SZ[9]PB[\ud800];B[ee])") == "encoding"  # a lone surrogate in a str


@pytest.mark.parametrize("data", [
    "(;SZ[9]KM[seven];B[aa])", "(;SZ[9];B[zz])", "(;SZ[9];B[aa][bb])", "(;SZ[9]HA[two])",
    "(;SZ[nine])", "(;SZ[9];B[aa]W[bb])", "(;SZ[9]AB[tt])", "(;SZ[9]PL[X])"])
def test_malformed_properties_are_refused(data):
    assert refusal(data) == "bad-property"


def test_setup_conflicts_are_refused():
    assert refusal("(;SZ[9]AB[aa][bb]AW[bb])") == "setup-conflict"
    assert refusal("(;SZ[9];B[aa];AB[bb];W[cc])") == "setup-conflict"
    surrounded = read_one("(;SZ[9]AB[ba][ab]AW[aa])")  # reading does not replay
    with pytest.raises(SgfError) as caught:
        replay(surrounded)
    assert caught.value.reason == "setup-conflict"


@pytest.mark.parametrize("moves, reason, rule", [
    ("B[cc];W[dd];B[cc]", "illegal-move@3", "occupied"),
    ("B[ba];W[ee];B[ab];W[aa]", "illegal-move@4", "suicide"),
    ("B[ba];W[ca];B[ab];W[cc];B[bc];W[db];B[ee];W[bb];B[cb];W[bb]", "illegal-move@10", "ko")])
def test_illegal_moves_are_refused_at_replay_with_the_rule(moves, reason, rule):
    record = read_one(f"(;SZ[5];{moves})")
    with pytest.raises(SgfError, match=rule) as caught:
        replay(record)
    assert caught.value.reason == reason


DAMAGE_BYTES = list(b"()[];\\:\x00\xff tBWA")
SAMPLE = ("(;FF[4]GM[1]SZ[9]KM[7.5]CA[GB2312]HA[2]AB[cc][gg]PB[柯洁]RE[B+R];W[ee]C[hi]"
          "(;B[dd];W[])(;B[ff]))(;SZ[5];B[aa];W[tt])").encode("gb18030")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(SAMPLE)), st.booleans(), st.sampled_from(DAMAGE_BYTES)),
                min_size=1, max_size=4))
def test_damaged_files_give_records_or_sgf_errors_and_nothing_else(edits):
    data = bytearray(SAMPLE)
    for position, is_insert, byte in edits:
        data[position:position + (not is_insert)] = bytes([byte])
    try:
        games = read_games_lenient(bytes(data))
    except SgfError:
        return
    for game in games:
        assert isinstance(game, (GameRecord, SgfError))


# --- replay -----------------------------------------------------------------------------------------

def test_replay_gives_one_position_per_move_plus_the_final_one_with_captures():
    record = read_one("(;SZ[5]KM[0.5];B[ba];W[aa];B[ab];W[cc];B[];W[])")
    positions = replay(record)
    assert len(positions) == len(record.moves) + 1
    assert positions[2].stones[0, 0] == -1
    assert np.array_equal(positions[-1].stones, position_from_ascii("""
        . X . . .
        X . . . .
        . . O . .
        . . . . .
        . . . . .
    """).stones)
    assert positions[-1].is_game_over() and positions[-1].komi == 0.5


def test_replay_plays_each_move_with_its_recorded_colour():
    positions = replay(read_one("(;SZ[5];B[aa];B[bb];W[cc])"))
    assert positions[2].stones[1, 1] == 1 and positions[-1].to_play == 1


# --- writing ----------------------------------------------------------------------------------------

def test_write_gives_a_utf8_ff4_game_with_comments():
    record = GameRecord(size=9, komi=6.5, rules="Japanese", handicap=2, setup_black=[20, 60],
                        moves=[(-1, 40), (1, 81)], result="B+R", winner=1, player_black="柯洁",
                        comments={1: "a pass]"})
    text = write(record)
    for piece in ("FF[4]", "GM[1]", "CA[UTF-8]", "SZ[9]", "KM[6.5]", "RU[Japanese]", "HA[2]",
                  "AB[cc][gg]", "PB[柯洁]", "RE[B+R]", "W[ee]", "B[]", "C[a pass\\]]"):
        assert piece in text
    assert read_games(text.encode("utf-8")) == [record]


def test_write_makes_a_result_from_the_winner_alone():
    assert read_one(write(GameRecord(size=9, winner=-1))).result == "W+"


NAMES = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=12)
COMMENTS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\t\x0b\x0c\x00"),
                   min_size=1, max_size=20)
RESULTS = st.sampled_from([(None, None), ("B+R", 1), ("W+3.5", -1), ("0", 0), ("Void", None),
                           ("B+T", 1), ("W+Resign", -1), ("?", None)])


@st.composite
def game_records(draw) -> GameRecord:
    """A legal random game, maybe from setup stones, with random metadata."""
    size = draw(st.integers(5, 19))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    points = [int(p) for p in rng.permutation(size * size)[: draw(st.integers(0, 6))]]
    black, white = points[: len(points) // 2 + 1], points[len(points) // 2 + 1:]
    try:
        position = Position.from_setup(size, black, white)
    except ValueError:  # a random setup can leave a chain without liberties
        black, white, position = [], [], Position.initial(size)
    declared = draw(st.sampled_from([None, 1, -1]))
    color = declared or 1
    moves = []
    for _ in range(draw(st.integers(0, 40))):
        legal = np.flatnonzero(position.legal_moves(color))
        move = int(rng.choice(legal))
        position, moves, color = position.play(move, color), moves + [(color, move)], -color
    result, winner = draw(RESULTS)
    comment_keys = draw(st.sets(st.integers(0, max(len(moves) - 1, 0)), max_size=3)) if moves else set()
    return GameRecord(
        size=size, komi=draw(st.sampled_from([0.5, 6.5, 7.5, 5.5, 0.0, -3.5, 2.0])),
        rules=draw(st.sampled_from([None, "Chinese", "Japanese", "tromp-taylor"])),
        handicap=len(black) if black and not white and len(black) >= 2 else 0,
        setup_black=black, setup_white=white, moves=moves, winner=winner, result=result,
        player_black=draw(st.none() | NAMES), player_white=draw(st.none() | NAMES),
        rank_black=draw(st.sampled_from([None, "9p", "3d", "15k"])), rank_white=None,
        date=draw(st.sampled_from([None, "2016-03-09", "1998"])),
        comments={key: draw(COMMENTS) for key in comment_keys}, declared_to_play=declared)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game_records())
def test_written_records_read_back_equal(record):
    text = write(record)
    assert read_games(text) == [record]
    assert read_games(text.encode("utf-8")) == [record]
    assert len(replay(record)) == len(record.moves) + 1


def test_write_branches_variations_off_the_main_line_with_their_comments_and_marks():
    moves = [(1 if i % 2 == 0 else -1, from_gtp(v, 9)) for i, v in enumerate(("E5", "C3", "G7", "C7"))]
    record = GameRecord(size=9, moves=moves, marks={1: {"BM": "2"}, 2: {"TE": "1"}}, variations={
        0: [Variation(((1, from_gtp("D4", 9)), (-1, from_gtp("F6", 9))), "best: D4")],
        1: [Variation(((-1, from_gtp("G3", 9)),))],
        3: [Variation(((-1, from_gtp("D6", 9)),), "a"), Variation(((-1, pass_move(9)),), "b")]})
    text = write(record)
    assert read_one(text).moves == moves  # the main line stays the first branch everywhere
    game = sgfmill_sgf.Sgf_game.from_string(text)
    main, node = [], game.get_root()
    branches = {}
    while len(node):
        branches[len(main)] = [[child.get_move() for child in _line(branch)] for branch in list(node)[1:]]
        node = node[0]
        main.append(node)
    assert [n.get("BM") if n.has_property("BM") else None for n in main] == [None, 2, None, None]
    assert main[2].get("TE") == 1
    assert branches[0] == [[("b", (3, 3)), ("w", (5, 5))]]  # sgfmill counts rows from the bottom
    assert branches[1] == [[("w", (2, 6))]]
    assert branches[3] == [[("w", (5, 3))], [("w", None)]]
    assert game.get_root()[1].get("C") == "best: D4"
    with pytest.raises(ValueError, match="record does not have"):
        write(GameRecord(size=9, variations={0: [Variation(((1, 0),))]}))


def _line(node):
    while True:
        yield node
        if not len(node):
            return
        node = node[0]


@pytest.mark.parametrize("result, margin", [("B+3.5", 3.5), ("w+ 12", -12.0), ("White+0.5", -0.5), ("0", 0.0),
                                            ("Jigo", 0.0), ("B+R", None), ("W+T", None), ("?", None), (None, None)])
def test_result_margin_reads_counted_results_only(result, margin):
    from gocore.rules.sgf import result_margin

    assert result_margin(result) == margin
