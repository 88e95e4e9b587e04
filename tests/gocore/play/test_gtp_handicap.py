"""GTP handicap games, rules and GoGui's analysis menu: `gocore.play.gtp_setup`, `gocore.play.handicap`,
`gocore.play.gtp_gogui`, checked against real GNU Go where it has an answer."""

from __future__ import annotations

import re

import pytest
import torch

from gocore.nn.inference import NetEvaluator
from gocore.nn.nets import build_net, preset
from gocore.play.gtp import GtpEngine
from gocore.play.gtp_client import GtpClient, GtpError
from gocore.play.handicap import fixed_placement, free_placement
from gocore.rules.coords import from_gtp, to_gtp
from gocore.search import mcts
from gocore.search.agents import AlphaZeroAgent, RandomAgent
from tests.gocore.play.test_gtp import ask, ok, refused

# A settled 9x9 game after 2 handicap stones (C3 G7): black walls column G, white column H.
WALLS = ["play W H1", "play B G1", "play W H2", "play B G2", "play W H3", "play B G3", "play W H4", "play B G4",
         "play W H5", "play B G5", "play W H6", "play B G6", "play W H7", "play B G8", "play W H8", "play B G9",
         "play W H9", "play B pass", "play W pass"]


@pytest.fixture
def engine() -> GtpEngine:
    return GtpEngine(RandomAgent(seed=7), name="gozero", version="test")


@pytest.fixture
def gnugo(gnugo_path):
    """A fresh GNU Go: its clear_board keeps the handicap count of an earlier game for final_score."""
    with GtpClient([gnugo_path, "--mode", "gtp", "--chinese-rules"], name="gnugo") as client:
        yield client


def gnugo_answer(gnugo: GtpClient, command: str) -> str | None:
    try:
        return gnugo.send(command)
    except GtpError:
        return None


def test_fixed_handicap_places_what_gnu_go_places_for_every_size_and_count(engine, gnugo):
    compared = 0
    for size in range(5, 20):
        for count in range(0, 11):
            gnugo.send_many([f"boardsize {size}", "clear_board"])
            ok(engine, f"boardsize {size}")
            theirs = gnugo_answer(gnugo, f"fixed_handicap {count}")
            success, ours = ask(engine, f"fixed_handicap {count}")
            assert success == (theirs is not None), (size, count, ours, theirs)
            if success:
                assert set(ours.split()) == set(theirs.split()), (size, count)
                assert ours.split() == [to_gtp(p, size) for p in fixed_placement(size, count)]
                compared += 1
            else:
                assert ours == "invalid handicap"
    assert compared == 6 * 8 + 6 * 3 + 3  # 2..9 stones on odd boards from 9x9, 2..4 on even ones and on 7x7


@pytest.mark.parametrize("setup", ["fixed_handicap 2", "set_free_handicap C3 G7"])
def test_handicap_games_are_scored_with_a_point_per_stone_for_white_as_gnu_go_chinese_rules(engine, gnugo, setup):
    for client_send in (lambda line: ok(engine, line), gnugo.send):
        for line in ["boardsize 9", "clear_board", "komi 0.5", setup, *WALLS]:
            client_send(line)
    assert ok(engine, "final_score") == gnugo.send("final_score") == "B+42.5"  # area 63 - 18 - 0.5 komi - 2
    assert engine.moves[0] == (-1, from_gtp("H1", 9))  # white moves first; the stones are no moves


def test_an_even_game_of_the_same_stones_gets_no_compensation(engine, gnugo):
    moves = ["play B C3", "play W pass", "play B G7"]
    for line in ["boardsize 9", "clear_board", "komi 0.5", *moves, *WALLS]:
        ok(engine, line)
        gnugo.send(line)
    assert ok(engine, "final_score") == gnugo.send("final_score") == "B+44.5"


def test_rules_change_white_s_compensation_and_gozero_refuses_rules_it_cannot_play(engine):
    for line in ["boardsize 9", "komi 0.5", "fixed_handicap 2", *WALLS]:
        ok(engine, line)
    assert ok(engine, "kgs-rules aga") == "" and ok(engine, "final_score") == "B+43.5"  # N-1
    assert ok(engine, "kata-set-rules new zealand") == "" and ok(engine, "final_score") == "B+44.5"
    assert ok(engine, 'kata-set-rules {"scoring":"AREA","whiteHandicapBonus":"N"}') == ""
    assert ok(engine, "final_score") == "B+42.5"
    assert '"whiteHandicapBonus": "N"' in ok(engine, "kata-get-rules")
    for rules, reason in (("japanese", "territory"), ("stone_scoring", "stone scoring"),
                          ('{"scoring":"TERRITORY"}', "territory"), ("aga-button", "button")):
        message = refused(engine, f"kata-set-rules {rules}")
        assert reason in message and "chinese" in message  # why, and what it plays instead
    assert "unknown rules" in refused(engine, "kgs-rules go-moku")
    assert ok(engine, "final_score") == "B+42.5"  # refused rules change nothing


def test_place_free_handicap_takes_the_table_then_spreads_further_stones(engine):
    ok(engine, "boardsize 19")
    assert ok(engine, "place_free_handicap 4").split() == ["D4", "Q16", "D16", "Q4"]
    assert engine.position.to_play == -1 and int((engine.position.stones == 1).sum()) == 4
    assert refused(engine, "place_free_handicap 4") == "board not empty"
    ok(engine, "clear_board")
    many = ok(engine, "place_free_handicap 13").split()
    assert len(set(many)) == 13 and many[:9] == [to_gtp(p, 19) for p in fixed_placement(19, 9)]
    ok(engine, "boardsize 5")
    assert ok(engine, "place_free_handicap 3").split() == [to_gtp(p, 5) for p in free_placement(5, 3)]
    ok(engine, "clear_board")
    assert refused(engine, "place_free_handicap 1") == "invalid number of stones"
    assert refused(engine, "place_free_handicap 25") == "invalid number of stones"
    assert len(ok(engine, "place_free_handicap 24").split()) == 24  # all but one point: still legal


def test_free_placement_keeps_stones_apart_and_off_the_edge_while_it_can():
    stones = free_placement(19, 17)
    rows, cols = zip(*(divmod(p, 19) for p in stones))
    assert min(rows + cols) >= 2 and max(rows + cols) <= 16  # third line or further in
    gaps = [min(max(abs(r - r2), abs(c - c2)) for r2, c2 in zip(rows, cols) if (r2, c2) != (r, c))
            for r, c in zip(rows, cols)]
    assert min(gaps) >= 3


def test_set_free_handicap_takes_the_controller_s_stones_and_refuses_bad_lists(engine):
    assert ok(engine, "set_free_handicap A1 J9 E5") == ""
    assert sorted(to_gtp(int(p), 9) for p in (engine.position.stones.ravel() == 1).nonzero()[0]) == ["A1", "E5", "J9"]
    assert engine.position.to_play == -1 and engine.moves == ()
    assert refused(engine, "set_free_handicap C3 G7") == "board not empty"
    ok(engine, "clear_board")
    for bad in ("C3", "C3 C3", "C3 pass", "C3 Z99"):
        assert refused(engine, f"set_free_handicap {bad}").startswith("bad vertex list")
    ok(engine, "play b E5")
    assert refused(engine, "fixed_handicap 2") == "board not empty"


def test_gogui_gets_only_the_rules_answers_from_an_engine_without_a_search_tree(engine):
    assert ok(engine, "gogui-analyze_commands").split("\n") == [
        "string/Final score/final_score", "plist/Alive stones/final_status_list alive"]


def test_gogui_analysis_commands_draw_search_policy_and_ownership():
    torch.manual_seed(0)
    evaluator = NetEvaluator(build_net(preset("tiny", 9, 17, encoder="agz17", aux_heads=True)))
    engine = GtpEngine(AlphaZeroAgent(evaluator, mcts.MATCH.replace(sims=24), seed=0), sizes={9})
    menu = ok(engine, "gogui-analyze_commands").split("\n")
    assert all(re.fullmatch(r"(gfx|string|plist)/[^/]+/\S+( \w+)?", line) for line in menu)
    commands = [line.split("/")[2].split()[0] for line in menu]
    assert all(ok(engine, f"known_command {name}") == "true" for name in commands)
    ok(engine, "play b E5")
    search = ok(engine, "gozero-search_gfx").split("\n")
    assert search[0].startswith("LABEL ") and search[1].startswith("VAR w ") and search[2].startswith("TEXT 24 visits, W wins")
    assert "E5" not in search[0].split()[1::2] and "leads by" in search[2]
    policy = ok(engine, "gozero-policy_gfx").split("\n")
    assert policy[0].startswith("LABEL ") and re.fullmatch(r"TEXT pass \d+%", policy[-1])
    influence = ok(engine, "gozero-ownership_gfx").split()
    assert influence[0] == "INFLUENCE" and len(influence) == 1 + 2 * 81
    assert all(-1 <= float(v) <= 1 for v in influence[2::2])
