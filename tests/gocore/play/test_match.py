"""play_game's forfeits and hooks, match games and their records, GtpAgent against real GNU Go and
against tiny scripted engines that crash, hang, resign or cheat."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from gocore.nn.inference import UniformEvaluator
from gocore.play.gtp_client import gnugo_command
from gocore.play.match import (
    RESIGN,
    GtpAgent,
    MatchConfig,
    MatchGame,
    play_cleanup,
    play_game,
    play_match,
    play_match_game,
    player_a_color,
)
from gocore.rules import sgf, sgf_read
from gocore.rules.board import Position
from gocore.rules.coords import from_gtp
from gocore.search import mcts
from gocore.search.agents import AlphaZeroAgent, RandomAgent


class Scripted:
    """Plays its moves in order, then passes; a move may be an exception to raise."""

    def __init__(self, moves: list, name: str = "scripted"):
        self.name, self._moves = name, list(moves)

    def select_move(self, position: Position):
        if not self._moves:
            return position.size ** 2
        move = self._moves.pop(0)
        if isinstance(move, Exception):
            raise move
        return move


class Recording(RandomAgent):
    """A random player that records the hooks play_game calls."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.calls: list[tuple] = []

    def start_game(self, size: int, komi: float, color: int) -> None:
        self.calls.append(("start", size, komi, color))

    def observe(self, color: int, move: int) -> None:
        self.calls.append(("observe", color, move))


def d(vertex: str, size: int = 9) -> int:
    return from_gtp(vertex, size)


def test_an_illegal_move_loses_the_game_with_its_reason():
    game = play_game(Scripted([d("E5"), d("C3")]), Scripted([d("E5")]))
    assert (game.winner, game.result, game.reason) == (1, "B+F", "illegal-move")
    assert "E5" in game.detail and "occupied" in game.detail
    assert game.moves == [(1, d("E5"))]  # the refused move is not part of the game


def test_an_off_board_or_non_move_answer_is_an_illegal_move():
    assert play_game(Scripted([82]), Scripted([])).reason == "illegal-move"
    game = play_game(Scripted([d("E5")]), Scripted(["D4"]))
    assert (game.result, game.reason) == ("B+F", "illegal-move") and "'D4'" in game.detail


def test_an_agent_that_raises_loses_and_the_error_is_recorded():
    game = play_game(Scripted([d("E5"), RuntimeError("out of memory")]), Scripted([d("C3")]))
    assert (game.winner, game.result, game.reason) == (-1, "W+F", "error")
    assert game.detail == "RuntimeError: out of memory"
    assert len(game.moves) == 2


def test_resign_sentinel_ends_the_game_for_the_resigner():
    game = play_game(Scripted([d("E5")]), Scripted([RESIGN]))
    assert (game.winner, game.result, game.reason, game.detail) == (1, "B+R", "resign", "")
    assert not game.is_counted


def test_a_finished_game_is_counted_by_tromp_taylor():
    game = play_game(RandomAgent(1), RandomAgent(2), size=5)
    assert game.reason == "two-passes" and game.is_counted
    assert game.result == game.final.result()
    assert game.winner == (game.final.score() > 0) - (game.final.score() < 0)


def test_the_move_cap_counts_the_board_as_it_stands():
    game = play_game(RandomAgent(1), RandomAgent(2), max_moves=7)
    assert (game.reason, len(game.moves)) == ("move-cap", 7)


def test_hooks_see_the_start_and_every_move_of_both_sides():
    black, white = Recording(1), Recording(2)
    game = play_game(black, white, size=5, komi=0.5)
    assert black.calls[0] == ("start", 5, 0.5, 1) and white.calls[0] == ("start", 5, 0.5, -1)
    expected = [("observe", color, move) for color, move in game.moves]
    assert black.calls[1:] == expected and white.calls[1:] == expected


def test_colours_alternate_and_a_scores_from_a_s_side():
    config = MatchConfig(size=5, seed=3)
    games = list(play_match(lambda seed: RandomAgent(seed), lambda seed: Scripted([RESIGN], "quitter"),
                            range(4), config, ("A", "B")))
    assert [g.a_color for g in games] == [1, -1, 1, -1] == [player_a_color(i) for i in range(4)]
    assert [(g.black, g.white) for g in games] == [("A", "B"), ("B", "A")] * 2
    assert all(g.a_score == 1.0 and g.game.reason == "resign" for g in games)


def test_a_match_game_writes_a_complete_sgf_record():
    game = play_match_game(1, RandomAgent(5), RandomAgent(6), MatchConfig(size=7, komi=6.5), ("alpha", "beta"))
    record = sgf_read.read_games(sgf.write(game.record()))[0]
    assert (record.player_black, record.player_white, record.komi, record.rules) == ("beta", "alpha", 6.5, "Chinese")
    assert record.result == game.game.result and record.moves == game.game.moves
    assert sgf.replay(record)[-1] == game.game.final  # every move legal by our rules
    row = game.row()
    assert row["game"] == 1 and row["a_color"] == -1 and row["moves"] == len(game.game.moves)
    assert row["external_score"] is None and row["disagreement"] is None  # no engine, nothing asked


def test_a_forfeit_is_explained_in_the_sgf_comment():
    game = play_match_game(0, Scripted([d("E5"), d("E5")]), Scripted([d("C3")]), MatchConfig(opening=0))
    record = sgf_read.read_games(sgf.write(game.record()))[0]
    assert record.result == "W+F" and record.comments[1].startswith("illegal-move: illegal move E5")


# --- real GNU Go -----------------------------------------------------------------------------------

def gnugo(path: str, *extra: str, level: int = 0) -> GtpAgent:
    return GtpAgent(gnugo_command(level=level, path=path) + list(extra), name=f"gnugo-{level}")


@pytest.mark.gnugo
def test_random_vs_gnugo_match_is_legal_and_counts_agree(gnugo_path: str, tmp_path: Path):
    """With --capture-all-dead GNU Go clears dead stones before passing: its count is ours."""
    with gnugo(gnugo_path, "--capture-all-dead") as engine:
        games = list(play_match(RandomAgent, lambda seed: engine, range(2), MatchConfig(), ("random", "gnugo")))
        assert engine.starts == 1  # one engine process for the whole match
    for game in games:
        assert game.game.reason == "two-passes", game.game.reason
        record = game.record()
        (tmp_path / f"{game.index}.sgf").write_text(sgf.write(record))
        assert sgf.replay(record)[-1] == game.game.final
        assert game.external_score == game.game.result and game.disagreement is False
        assert game.a_score == 0.0  # random never beats GNU Go


@pytest.mark.gnugo
def test_dead_stones_gnugo_leaves_are_played_out_and_the_counts_then_agree(gnugo_path: str):
    """Plain GNU Go passes with dead stones on the board, which Tromp-Taylor would count alive
    (ours W+3.5 against its W+88.5): the game goes on, GNU Go captures them with
    kgs-genmove_cleanup, and the cleaned board's count is GNU Go's."""
    with gnugo(gnugo_path) as engine:
        game = play_match_game(0, RandomAgent(0), engine, MatchConfig(), ("random", "gnugo"))
    assert game.game.reason == "cleanup", (game.game.reason, game.game.detail)
    assert "the engine's W+88.5" in game.game.detail
    assert game.external_score == game.game.result and game.disagreement is False
    assert game.a_score == 0.0
    assert sgf.replay(game.record())[-1] == game.game.final  # the cleanup moves are in the record


def test_a_net_asked_to_move_in_a_passed_out_game_ends_the_cleanup_instead_of_forfeiting():
    """In a cleanup phase the side to move faces a finished game (GNU Go's third pass did it in a
    match): the net's search passes, the cleanup ends by two passes and the board is counted."""
    over = play_game(Scripted([d("E5")]), Scripted([]), max_moves=20)
    assert over.reason == "two-passes" and over.final.to_play == -1
    net = AlphaZeroAgent(UniformEvaluator(), mcts.MATCH.replace(sims=8), seed=0)
    cleaned = play_cleanup(over, Scripted([]), net)
    assert cleaned.reason == "cleanup" and cleaned.winner == over.winner == 1, (cleaned.reason, cleaned.detail)
    assert [move for _, move in cleaned.moves[len(over.moves):]] == [81, 81]


@pytest.mark.gnugo
def test_an_engine_that_counts_by_other_rules_still_disagrees_after_cleanup(gnugo_path: str):
    """Japanese (territory) counting differs from area counting whatever is captured: the
    disagreement stays on the record for the summary to report."""
    command = [gnugo_path, "--mode", "gtp", "--level", "0", "--japanese-rules"]
    with GtpAgent(command, name="gnugo-japanese") as engine:
        games = [play_match_game(i, RandomAgent(i), engine, MatchConfig(size=9), ("random", "gnugo"))
                 for i in range(2)]
    compared = [g for g in games if g.disagreement is not None]
    assert compared and any(g.disagreement for g in compared)


@pytest.mark.gnugo
def test_an_unfinished_game_is_not_compared(gnugo_path: str):
    with gnugo(gnugo_path, "--capture-all-dead") as engine:
        game = play_match_game(0, RandomAgent(0), engine, MatchConfig(max_moves=10))
    assert game.game.reason == "move-cap" and (game.external_score, game.disagreement) == (None, None)


# --- scripted engines ----------------------------------------------------------------------------------

ENGINE = textwrap.dedent('''
    import sys, time
    mode = sys.argv[1]
    if mode == "dead-on-arrival":
        sys.exit(7)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        def reply(text=""):
            sys.stdout.write("= " + text + "\\n\\n")
            sys.stdout.flush()
        if words[0] == "quit":
            reply()
            break
        if words[0] != "genmove":
            reply()
        elif mode == "crash":
            sys.stderr.write("segmentation fault (pretend)\\n")
            sys.exit(11)
        elif mode == "hang":
            time.sleep(600)
        elif mode == "resign":
            reply("resign")
        else:  # "cheat": always the same point, illegal from the second time on
            reply("A1")
''')


@pytest.fixture
def scripted_engine(tmp_path: Path):
    """Factory: a GtpAgent over the scripted engine in `mode`, closed after the test."""
    script = tmp_path / "engine.py"
    script.write_text(ENGINE)
    agents: list[GtpAgent] = []

    def start(mode: str, timeout: float = 10.0) -> GtpAgent:
        agents.append(GtpAgent([sys.executable, str(script), mode], name=mode, timeout=timeout))
        return agents[-1]

    yield start
    for agent in agents:
        agent.close()


def play_two(engine: GtpAgent) -> list[MatchGame]:
    return list(play_match(RandomAgent, lambda seed: engine, range(2), MatchConfig(size=5), ("random", engine.name)))


def test_a_crashing_engine_loses_each_game_and_is_restarted(scripted_engine):
    engine = scripted_engine("crash")
    games = play_two(engine)
    assert [(g.game.reason, g.a_score) for g in games] == [("crash", 1.0), ("crash", 1.0)]
    assert [g.game.result for g in games] == ["B+F", "W+F"]
    assert "code 11" in games[0].game.detail and "segmentation fault" in games[0].game.detail
    assert engine.starts == 2


def test_a_hanging_engine_times_out_and_the_match_goes_on(scripted_engine):
    engine = scripted_engine("hang", timeout=0.5)
    games = play_two(engine)
    assert [(g.game.reason, g.game.result) for g in games] == [("timeout", "B+T"), ("timeout", "W+T")]
    assert engine.starts == 2


def test_an_engine_that_cannot_start_loses_before_the_first_move(scripted_engine):
    games = play_two(scripted_engine("dead-on-arrival"))
    assert all(g.game.reason == "crash" and g.game.moves == [] and g.a_score == 1.0 for g in games)


def test_an_engine_resigning_or_playing_illegally_loses(scripted_engine):
    resigned = play_two(scripted_engine("resign"))
    assert [(g.game.reason, g.game.result) for g in resigned] == [("resign", "B+R"), ("resign", "W+R")]
    cheated = play_two(scripted_engine("cheat"))
    assert all(g.game.reason == "illegal-move" and g.a_score == 1.0 for g in cheated)
    assert "A1" in cheated[0].game.detail
