"""The GTP engine in-process: scripted sessions through `GtpEngine.handle` and `serve`."""

from __future__ import annotations

import io
import time

import numpy as np
import pytest

from gocore.play.gtp import GtpEngine
from gocore.play.gtp_board import chains
from gocore.play.gtp_clock import LAG_SECONDS, MIN_MOVE_SECONDS, TIME_SAFETY, Clock, TimeSettings
from gocore.play.gtp_protocol import preprocess
from gocore.rules import sgf
from gocore.rules.board import Position, own_eye_mask, result_text
from gocore.rules.coords import from_gtp, to_gtp
from gocore.search.agents import RESIGN, RandomAgent
from tests.helpers import position_from_ascii, random_game

REQUIRED = ("protocol_version", "name", "version", "known_command", "list_commands", "quit",
            "boardsize", "clear_board", "komi", "play", "genmove")
EXTRAS = ("undo", "showboard", "final_score", "final_status_list", "time_settings", "time_left",
          "kgs-genmove_cleanup", "loadsgf", "fixed_handicap", "place_free_handicap", "set_free_handicap",
          "kgs-rules", "kata-set-rules", "kata-get-rules", "gogui-analyze_commands")


class PassingAgent:
    """Always passes: lets kgs-genmove_cleanup's own choice show."""

    name = "pass"

    def select_move(self, position: Position) -> int:
        return position.size ** 2


class ResigningAgent:
    """Always resigns."""

    name = "resign"

    def select_move(self, position: Position) -> int:
        return RESIGN


class BudgetRecordingAgent(RandomAgent):
    """A random player that accepts a time budget and remembers each one."""

    def __init__(self, think_seconds: float = 0.0) -> None:
        super().__init__(seed=0)
        self.think_seconds = think_seconds
        self.budgets: list[float | None] = []

    def set_time_budget(self, seconds: float | None) -> None:
        self.budgets.append(seconds)

    def select_move(self, position: Position) -> int:
        time.sleep(self.think_seconds)
        return super().select_move(position)


class FailingAgent:
    """An agent with a bug."""

    name = "broken"

    def select_move(self, position: Position) -> int:
        raise RuntimeError("kaboom")


class IllegalAgent:
    """Always answers the top-left point, legal or not."""

    name = "illegal"

    def select_move(self, position: Position) -> int:
        return 0


def ask(engine: GtpEngine, line: str) -> tuple[bool, str]:
    """(success, response text without the status and id) for one command line."""
    response = engine.handle(line)
    assert response is not None and response.endswith("\n\n") and "\n\n" not in response[:-2]
    status, rest = response[0], response[1:].lstrip("0123456789")
    assert status in "=?"
    return status == "=", rest[1:].rstrip("\n") if rest.startswith(" ") else rest.rstrip("\n")


def ok(engine: GtpEngine, line: str) -> str:
    """The response text of a command that must succeed."""
    success, text = ask(engine, line)
    assert success, f"{line!r} failed: {text}"
    return text


def refused(engine: GtpEngine, line: str) -> str:
    """The error message of a command that must fail."""
    success, text = ask(engine, line)
    assert not success, f"{line!r} succeeded: {text}"
    return text


@pytest.fixture
def engine() -> GtpEngine:
    return GtpEngine(RandomAgent(seed=7), name="gozero", version="test")


def play_diagram(engine: GtpEngine, diagram: str) -> Position:
    """Play every stone of an ASCII diagram (out of turn where needed); the diagram's position."""
    position = position_from_ascii(diagram, komi=engine.komi)
    for move in np.flatnonzero(position.stones.ravel()):
        color = "b" if position.stones.ravel()[move] == 1 else "w"
        ok(engine, f"play {color} {to_gtp(int(move), position.size)}")
    return position


# --- protocol basics -------------------------------------------------------------------------

def test_known_command_tells_the_truth_and_list_commands_lists_the_same_set(engine):
    listed = ok(engine, "list_commands").split("\n")
    assert set(listed) == set(REQUIRED + EXTRAS) == set(engine.commands)
    assert all(ok(engine, f"known_command {name}") == "true" for name in listed)
    for name in ("is_legal", "GENMOVE", "gozero-analyze", "gozero-search_gfx"):  # gfx: with a tree only
        assert ok(engine, f"known_command {name}") == "false"


def test_identity_commands(engine):
    assert ok(engine, "protocol_version") == "2"
    assert ok(engine, "name") == "gozero"
    assert ok(engine, "version") == "test"


def test_ids_are_echoed_on_success_and_failure(engine):
    assert engine.handle("12 name") == "=12 gozero\n\n"
    assert engine.handle("5 play b Z99").startswith("?5 ")
    assert engine.handle("7 frobnicate") == "?7 unknown command\n\n"
    response = engine.handle("12 genmove b")
    assert response.startswith("=12 ") and from_gtp(response[4:].strip(), 9) < 81


def test_comments_blank_lines_cr_and_tabs_are_preprocessed(engine):
    for line in ("", "   \n", "# a comment\n", "  # indented comment", "\r\n", "\x01\x02\n"):
        assert engine.handle(line) is None
    assert engine.handle("3\tplay\tb  D4 # the centre-ish\r\n") == "=3 \n\n"
    assert engine.handle("na\x07me\r\n") == "= gozero\n\n"
    assert preprocess("genmove\tw # x\r") == "genmove w"
    assert engine.moves == ((1, from_gtp("D4", 9)),)


@pytest.mark.parametrize("line, message", [
    ("frobnicate", "unknown command"),
    ("play x A1", "syntax error: invalid color 'x'"),
    ("play b Z99", "syntax error: invalid vertex 'Z99'"),
    ("play b I5", "syntax error: invalid vertex 'I5'"),
    ("play b", "syntax error: usage: play COLOR VERTEX"),
    ("genmove", "syntax error: usage: genmove COLOR"),
    ("genmove purple", "syntax error: invalid color 'purple'"),
    ("boardsize 99", "unacceptable size"),
    ("boardsize 4", "unacceptable size"),
    ("boardsize nine", "syntax error: the board size must be a non-negative integer, not 'nine'"),
    ("komi abc", "syntax error: komi must be a number, not 'abc'"),
    ("komi nan", "syntax error: komi must be a number, not 'nan'"),
    ("komi", "syntax error: usage: komi KOMI"),
    ("known_command", "syntax error: usage: known_command COMMAND"),
    ("time_settings 10 5", "syntax error: usage: time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES"),
    ("time_left b -3 0", "syntax error: time must be a non-negative number, not '-3'"),
    ("final_status_list zombie", "syntax error: status must be alive, dead or seki, not 'zombie'"),
    ("loadsgf", "syntax error: usage: loadsgf FILE [MOVE_NUMBER]"),
    ("42", "syntax error: an id but no command"),
])
def test_malformed_lines_are_refused_and_the_engine_keeps_going(engine, line, message):
    assert refused(engine, line) == message
    assert engine.is_running and ok(engine, "name") == "gozero"
    assert engine.moves == ()


def test_an_agent_bug_is_answered_as_an_error_and_the_session_goes_on():
    engine = GtpEngine(FailingAgent())
    assert refused(engine, "genmove b") == "internal error: RuntimeError: kaboom"
    assert ok(engine, "play b C3") == "" and engine.moves == ((1, from_gtp("C3", 9)),)


def test_an_illegal_move_from_the_agent_is_refused_not_played():
    engine = GtpEngine(IllegalAgent())
    ok(engine, "play w A9")
    assert refused(engine, "genmove b").startswith("the agent chose an illegal move")
    assert len(engine.moves) == 1


# --- the game ----------------------------------------------------------------------------------

def test_play_on_an_occupied_point_is_an_illegal_move(engine):
    ok(engine, "play b D4")
    assert refused(engine, "play w d4") == "illegal move"
    assert len(engine.moves) == 1


def test_suicide_is_an_illegal_move(engine):
    ok(engine, "play w A2")
    ok(engine, "play w B1")
    assert refused(engine, "play b A1") == "illegal move"
    ok(engine, "play w A1")  # filling its own eye is not suicide for white


def test_playing_out_of_turn_is_allowed(engine):
    ok(engine, "play b D4")
    ok(engine, "play b E4")
    assert engine.moves == ((1, from_gtp("D4", 9)), (1, from_gtp("E4", 9)))
    assert engine.position.stones.sum() == 2 and engine.position.to_play == -1


def test_two_passes_end_the_game_and_the_board_is_scored(engine):
    ok(engine, "play b E5")
    ok(engine, "play w pass")
    ok(engine, "play b PASS")
    assert engine.position.is_game_over() and engine.moves[-1] == (1, 81)
    assert ok(engine, "final_score") == "B+73.5"


def test_a_capture_by_play_removes_stones_and_undo_restores_them(engine):
    before = play_diagram(engine, """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . X . . . .
        . . . X O . . . .
        . . . . X . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .""")
    ok(engine, "play b F5")
    assert engine.position.stones.ravel()[from_gtp("E5", 9)] == 0
    ok(engine, "undo")
    assert np.array_equal(engine.position.stones, before.stones) and engine.position.to_play == -1


def test_genmove_plays_legal_moves_that_replay_to_the_engine_position(engine):
    position = Position.initial(9, 7.5)
    for turn in range(40):
        color = 1 if turn % 2 == 0 else -1
        move = from_gtp(ok(engine, f"genmove {'b' if color == 1 else 'w'}"), 9)
        assert position.is_legal(move, color)
        position = position.play(move, color)
    assert engine.position == position and len(engine.moves) == 40


def test_genmove_out_of_turn_plays_for_the_colour_asked(engine):
    ok(engine, "play b E5")
    move = from_gtp(ok(engine, "genmove b"), 9)
    assert engine.moves[-1] == (1, move) and engine.position.stones.ravel()[move] == 1
    assert engine.position.to_play == -1 and engine.position.passes == 0


def test_genmove_answers_resign_for_the_resign_sentinel_and_leaves_the_board():
    engine = GtpEngine(ResigningAgent())
    ok(engine, "play b D4")
    assert engine.handle("9 genmove w") == "=9 resign\n\n"
    assert len(engine.moves) == 1


def test_undo_restores_the_previous_position_and_refuses_with_no_moves(engine):
    seen = [engine.position]
    for line in ("play b C3", "play w G7", "genmove b"):
        ok(engine, line)
        seen.append(engine.position)
    for expected in reversed(seen[:-1]):
        ok(engine, "undo")
        assert engine.position == expected
    assert refused(engine, "undo") == "cannot undo"


def test_boardsize_and_clear_board_start_an_empty_board(engine):
    ok(engine, "play b D4")
    ok(engine, "boardsize 19")
    assert engine.position.size == 19 and engine.moves == ()
    ok(engine, "play b Q16")
    ok(engine, "clear_board")
    assert engine.position == Position.initial(19) and engine.komi == 7.5


def test_only_the_given_sizes_are_acceptable():
    engine = GtpEngine(RandomAgent(seed=0), sizes={9})
    assert refused(engine, "boardsize 13") == "unacceptable size"
    ok(engine, "boardsize 9")
    with pytest.raises(ValueError):
        GtpEngine(RandomAgent(), sizes={9}, size=13)
    with pytest.raises(ValueError):
        GtpEngine(RandomAgent(), sizes={3})


def test_a_factory_is_asked_again_when_size_or_komi_change():
    built: list[tuple[int, float]] = []

    def factory(size: int, komi: float) -> RandomAgent:
        built.append((size, komi))
        return RandomAgent(seed=len(built))

    engine = GtpEngine(factory)
    ok(engine, "genmove b")
    ok(engine, "genmove w")
    ok(engine, "boardsize 13")
    ok(engine, "komi 6.5")
    ok(engine, "genmove b")
    assert built == [(9, 7.5), (13, 7.5), (13, 6.5)]  # boardsize builds at once, komi at the next genmove


def test_a_size_the_factory_refuses_is_a_gtp_error_and_the_game_goes_on():
    from gocore.play.gtp_protocol import GtpFailure

    def factory(size: int, komi: float) -> RandomAgent:
        if size == 19:  # as `gozero gtp` without a model: no champion of that size
            raise GtpFailure("no champion for 19x19: none registered")
        return RandomAgent(seed=size)

    engine = GtpEngine(factory)
    ok(engine, "play b E5")
    assert refused(engine, "boardsize 19") == "no champion for 19x19: none registered"
    assert engine.size == 9 and engine.moves == ((1, from_gtp("E5", 9)),)
    ok(engine, "boardsize 13")
    assert engine.size == 13 and from_gtp(ok(engine, "genmove w"), 13) in range(13 * 13 + 1)


# --- showing and scoring -------------------------------------------------------------------------

def test_showboard_draws_the_board_with_gtp_coordinates(engine):
    ok(engine, "play b D4")
    ok(engine, "play w J9")
    text = ok(engine, "showboard")
    lines = text.split("\n")
    assert lines[0] == "" and lines[1].split() == list("ABCDEFGHJ") == lines[-2].split()
    rows = {line.split()[0]: line.split()[1:-1] for line in lines[2:11]}
    assert rows["4"][3] == "X" and rows["9"][8] == "O" and sum(r.count(".") for r in rows.values()) == 79
    assert lines[-1] == "black to play, komi 7.5, move 2, last J9"


def test_final_score_is_the_tromp_taylor_score_of_the_board(engine):
    ok(engine, "komi 6.5")
    position = play_diagram(engine, """
        . . X O . . . . .
        . X X O . . . . .
        X X . X O . O . .
        . X X O O O . . .
        X . X X O . . . .
        . X . X O . . . .
        X X X O . O . . .
        . . X O . . . . .
        . . X O . . . . .""")
    assert ok(engine, "final_score") == result_text(position.score()) == position.result()
    ok(engine, "komi 0")  # komi applies to the game already on the board
    assert ok(engine, "final_score") == result_text(position.score() + 6.5)


def test_final_status_list_counts_every_stone_alive(engine):
    position = play_diagram(engine, """
        X X . . . . . . .
        X . . . . . . O .
        . . . . . . . . .
        . . . . . . . . .
        . . . . O O . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . X""")
    alive = [sorted(line.split()) for line in ok(engine, "final_status_list alive").split("\n")]
    assert sorted(alive) == sorted([["A8", "A9", "B9"], ["H8"], ["E5", "F5"], ["J1"]])
    assert ok(engine, "final_status_list dead") == "" and ok(engine, "final_status_list seki") == ""
    assert sum(len(chain) for chain in chains(position.stones)) == 7


# --- time ----------------------------------------------------------------------------------------

def expected_budget(share: float) -> float:
    return max(MIN_MOVE_SECONDS, TIME_SAFETY * share - LAG_SECONDS)


def test_time_settings_and_time_left_reach_the_agent_as_its_budget():
    agent = BudgetRecordingAgent()
    engine = GtpEngine(agent)
    ok(engine, "genmove b")  # no time settings: no limit
    ok(engine, "time_settings 300 0 0")  # absolute: 300 s for the game
    ok(engine, "clear_board")
    ok(engine, "genmove b")
    ok(engine, "time_left w 60 0")
    ok(engine, "genmove w")
    ok(engine, "time_left b 30 5")  # byo-yomi: 30 s for 5 stones
    ok(engine, "genmove b")
    ok(engine, "time_settings 0 1 0")  # GTP's "no time limit"
    ok(engine, "genmove w")
    assert agent.budgets[0] is None and agent.budgets[-1] is None
    assert agent.budgets[1] == pytest.approx(expected_budget(300 / 40.5))  # 81 points: ~40 moves each
    assert agent.budgets[2] == pytest.approx(expected_budget(60 / 40))
    assert agent.budgets[3] == pytest.approx(expected_budget(30 / 5))


def test_a_clock_moves_from_main_time_into_byo_yomi_periods():
    settings = TimeSettings(main_time=10, byo_yomi_time=30, byo_yomi_stones=2)
    clock = Clock.start(settings)
    assert clock.budget(settings, 20) == pytest.approx(expected_budget(10 / 20 + 15))
    clock.spend(settings, 12)  # main time runs out during this move
    assert (clock.remaining, clock.stones) == (28, 2)
    clock.spend(settings, 5)
    assert (clock.remaining, clock.stones) == (23, 1)
    clock.spend(settings, 5)  # the period's last stone: a fresh period
    assert (clock.remaining, clock.stones) == (30, 2)
    assert Clock.start(TimeSettings(0, 30, 2)) == Clock(30, 2)
    assert TimeSettings().is_unlimited and not TimeSettings(60, 0, 0).is_unlimited


def test_the_engine_charges_its_own_clock_between_time_left_commands():
    agent = BudgetRecordingAgent(think_seconds=0.05)
    engine = GtpEngine(agent)
    ok(engine, "time_settings 100 0 0")
    ok(engine, "genmove b")  # black's clock is charged at least 0.05 s
    ok(engine, "play w E5")
    ok(engine, "genmove b")
    ok(engine, "undo")
    ok(engine, "time_left b 100 0")  # the same move with a full clock
    ok(engine, "genmove b")
    charged, full = agent.budgets[1], agent.budgets[2]
    assert full - charged >= TIME_SAFETY * 0.05 / 39.5  # 81 points, 2 moves played: 39.5 of ours to come


# --- cleanup -------------------------------------------------------------------------------------

def test_kgs_genmove_cleanup_prefers_a_capture_to_the_agents_pass():
    engine = GtpEngine(PassingAgent(), seed=1)
    play_diagram(engine, """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . X . . . .
        . . . X O X . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .""")
    assert ok(engine, "genmove b") == "pass"
    ok(engine, "undo")
    assert ok(engine, "kgs-genmove_cleanup b") == "E4"


def test_kgs_genmove_cleanup_never_passes_while_a_sensible_move_remains():
    engine = GtpEngine(PassingAgent(), size=5, seed=3)
    passes_in_a_row, color = 0, 1
    for _ in range(400):
        position = engine.position
        sensible = position.legal_moves(color) & ~own_eye_mask(position, color)
        answer = ok(engine, f"kgs-genmove_cleanup {'b' if color == 1 else 'w'}")
        assert (answer == "pass") == (not sensible[:-1].any())
        passes_in_a_row = passes_in_a_row + 1 if answer == "pass" else 0
        if passes_in_a_row == 2:
            break
        color = -color
    assert passes_in_a_row == 2 and len(engine.moves) > 10


def test_kgs_genmove_cleanup_replaces_a_resignation_too():
    engine = GtpEngine(ResigningAgent())
    assert ok(engine, "kgs-genmove_cleanup w") not in ("resign", "pass")


# --- loadsgf -------------------------------------------------------------------------------------

@pytest.fixture
def sgf_game(tmp_path):
    """(path, record) of a 7x7 game with setup stones, written with gocore.rules.sgf.write."""
    start = Position.from_setup(7, [from_gtp("C3", 7), from_gtp("E5", 7)], [], to_play=-1, komi=0.5)
    position, moves, rng = start, [], np.random.default_rng(5)
    for _ in range(30):
        move = int(rng.choice(np.flatnonzero(position.legal_moves()[:-1])))
        moves.append((position.to_play, move))
        position = position.play(move)
    record = sgf.GameRecord(size=7, komi=0.5, handicap=2, setup_black=[from_gtp("C3", 7), from_gtp("E5", 7)],
                            moves=moves, result="W+R")
    path = tmp_path / "game.sgf"
    path.write_text(sgf.write(record))
    return path, record


def test_loadsgf_sets_size_komi_setup_and_all_moves(engine, sgf_game):
    path, record = sgf_game
    assert ok(engine, f"loadsgf {path}") == ""
    final = sgf.replay(record)[-1]
    assert engine.position == final and engine.position.size == 7 and engine.komi == 0.5
    assert engine.moves == tuple(record.moves)
    assert ok(engine, "final_score") == result_text(final.score() - 2)  # white's 2 points for 2 handicap stones


def test_loadsgf_with_a_move_number_stops_before_that_move(engine, sgf_game):
    path, record = sgf_game
    positions = sgf.replay(record)
    ok(engine, f"loadsgf {path} 11")
    assert engine.position == positions[10] and len(engine.moves) == 10
    ok(engine, f"loadsgf {path} 1")
    assert engine.position == positions[0] and engine.position.to_play == -1  # white after handicap
    assert refused(engine, "undo") == "cannot undo"  # setup stones are not moves
    ok(engine, f"loadsgf {path} 999")
    assert engine.position == positions[-1]
    ok(engine, "undo")
    assert engine.position == positions[-2]


def test_loadsgf_refuses_missing_and_broken_files(engine, tmp_path):
    assert refused(engine, f"loadsgf {tmp_path / 'missing.sgf'}").startswith("cannot load file")
    (tmp_path / "bad.sgf").write_text("(;GM[1]SZ[9];B[ee];W[ee])")
    assert refused(engine, f"loadsgf {tmp_path / 'bad.sgf'}").startswith("cannot load file")
    ok(engine, f"loadsgf {tmp_path / 'bad.sgf'} 2")  # the illegal second move is never reached
    assert refused(engine, f"loadsgf {tmp_path / 'bad.sgf'} 0") == "syntax error: move numbers start at 1"
    narrow = GtpEngine(RandomAgent(), sizes={9})
    (tmp_path / "small.sgf").write_text("(;GM[1]SZ[7];B[dd])")
    assert "board size 7" in refused(narrow, f"loadsgf {tmp_path / 'small.sgf'}")


def test_loadsgf_then_genmove_continues_the_game(engine, tmp_path):
    moves, final = random_game(9, np.random.default_rng(2), max_moves=20)
    record = sgf.GameRecord(size=9, komi=7.5, moves=[(1 if i % 2 == 0 else -1, m) for i, m in enumerate(moves)])
    (tmp_path / "g.sgf").write_text(sgf.write(record))
    ok(engine, f"loadsgf {tmp_path / 'g.sgf'}")
    move = from_gtp(ok(engine, "genmove b"), 9)
    assert final.is_legal(move, 1)


# --- the session loop ----------------------------------------------------------------------------

class FlushCountingStream(io.StringIO):
    """A text stream that counts flushes."""

    flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        super().flush()


def test_serve_answers_each_command_flushes_and_stops_at_quit():
    stdin = io.StringIO("1 name\n# comment\n\nplay x A1\r\nplay b E5\n2 quit\nname\n")
    stdout = FlushCountingStream()
    engine = GtpEngine(RandomAgent(seed=0))
    engine.serve(stdin, stdout)
    assert stdout.getvalue() == "=1 gozero\n\n? syntax error: invalid color 'x'\n\n= \n\n=2 \n\n"
    assert stdout.flushes == 4 and not engine.is_running
    assert stdin.readline() == "name\n"  # nothing after quit was read


def test_serve_stops_at_end_of_input():
    stdout = io.StringIO()
    GtpEngine(RandomAgent(seed=0)).serve(io.StringIO("protocol_version"), stdout)
    assert stdout.getvalue() == "= 2\n\n"
