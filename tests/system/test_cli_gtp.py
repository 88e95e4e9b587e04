"""`gozero gtp` as a subprocess, driven by `gocore.play.gtp_client.GtpClient`: against GNU Go and with models."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from gocore.play.gtp_client import GtpClient, GtpError, gnugo_command, parse_score
from gocore.rules.board import Position
from gocore.rules.coords import from_gtp

# The command as a script runs it; `gozero gtp` (flows/cli/root.py) mounts this same function.
GTP = [sys.executable, "-m", "flows.cli", "gtp"]
SIZE, KOMI = 9, 7.5
MAX_MOVES = 600  # far beyond any real 9x9 game: a safety stop, not a rule


def play_out(engines: dict[int, GtpClient], start: Position) -> tuple[list[tuple[int, int]], Position]:
    """Alternate genmove/play until two passes in a row; every move must be legal for both engines."""
    moves, passes, position = [], 0, start
    while passes < 2 and len(moves) < MAX_MOVES:
        color = position.to_play
        move = engines[color].genmove(color, SIZE)
        assert move is not None, f"{engines[color].label} resigned"
        engines[-color].play(color, move, SIZE)  # GtpError if the other engine refuses it
        position = position.play(move, color)  # and our rules agree
        moves.append((color, move))
        passes = passes + 1 if move == SIZE * SIZE else 0
    assert passes == 2, "the game did not end within the move cap"
    return moves, position


# The even game ends with our random player captured to the last stone (GNU Go level 0 is much
# stronger), so its scores agree on a one-colour board; nine handicap stones leave both colours
# on the final board, where the two ways of scoring could really differ.
@pytest.mark.gnugo
@pytest.mark.parametrize("our_color, handicap, seed", [
    (-1, [], 11),
    (1, ["C3", "E3", "G3", "C5", "E5", "G5", "C7", "E7", "G7"], 3),
], ids=["even-game-ours-white", "nine-stones-ours-black"])
def test_a_full_game_against_gnugo_is_legal_and_both_agree_on_the_score(gnugo_path, our_color, handicap, seed):
    # --capture-all-dead: GNU Go removes every stone it thinks dead before it passes, and our
    # random agent passes only when no legal move outside its own eyes is left. So when both have
    # passed, no stone on the board is dead, and GNU Go's Chinese count (after its dead-stone
    # estimate) and our Tromp-Taylor area score count the same board. A game stopped earlier can
    # disagree: GNU Go would take off stones it judges dead that area scoring still counts.
    ours = GtpClient(GTP + ["--agent", "random", "--seed", str(seed)], timeout=30, name="gozero")
    gnugo = GtpClient(gnugo_command(level=0, size=SIZE, komi=KOMI, path=gnugo_path)
                      + ["--capture-all-dead", "--never-resign", "--seed", "1"], timeout=30)
    start = Position.from_setup(SIZE, [from_gtp(v, SIZE) for v in handicap], [], to_play=-1 if handicap else 1,
                                komi=KOMI)
    with ours, gnugo:
        for engine in (ours, gnugo):
            engine.boardsize(SIZE)
            engine.clear_board()
            engine.komi(KOMI)
            for vertex in handicap:  # consecutive black stones: GTP's free handicap by `play`
                engine.play(1, from_gtp(vertex, SIZE), SIZE)
        moves, final = play_out({our_color: ours, -our_color: gnugo}, start)
        assert len(moves) > 20
        assert parse_score(ours.final_score()) == parse_score(gnugo.final_score()) == final.score()
    if handicap:
        assert (final.stones == 1).any() and (final.stones == -1).any(), "pick a seed that leaves both colours"


def test_stdout_carries_only_gtp():
    session = subprocess.run(GTP + ["--agent", "random"], input="name\n2 protocol_version\nquit\n",
                             capture_output=True, text=True, timeout=60)
    assert session.returncode == 0
    assert session.stdout == "= gozero\n\n=2 2\n\n= \n\n"


def test_a_bad_agent_spec_is_one_line_on_stderr_and_exit_1():
    session = subprocess.run(GTP + ["--agent", "alphabeta"], input="name\n", capture_output=True, text=True,
                             timeout=60)
    assert session.returncode == 1 and session.stdout == ""
    assert session.stderr.startswith("error: unknown player 'alphabeta'") and session.stderr.count("\n") == 1


@pytest.mark.parametrize("uri", ["models:/not a model uri", "no/such/model-dir"])
def test_a_model_that_cannot_be_loaded_is_one_line_on_stderr_and_exit_1(uri, data_dir):
    session = subprocess.run(GTP + ["--model", uri], input="name\n", capture_output=True, text=True,
                             timeout=120, cwd=data_dir)
    assert session.returncode == 1 and session.stdout in ("", "= gozero\n\n")  # name may be answered while loading
    assert session.stderr.startswith("error: ") and session.stderr.count("\n") == 1, session.stderr


def test_a_model_directory_plays_its_board_size_only(tmp_path):
    from gocore.nn.nets import NetConfig, build_net
    from storage.checkpoints import save_model

    config = NetConfig(board_size=SIZE, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16)
    model_dir = save_model(tmp_path / "tiny", build_net(config), dataclasses.asdict(config))
    with GtpClient(GTP + ["--model", str(model_dir), "--sims", "8"], timeout=60, name="gozero") as ours:
        assert str(model_dir) in ours.version()
        with pytest.raises(GtpError, match="unacceptable size"):
            ours.boardsize(13)
        ours.komi(KOMI)
        first = ours.genmove(1, SIZE)
        second = ours.genmove(-1, SIZE)
        assert first is not None and second is not None
        assert Position.initial(SIZE, KOMI).play(first).is_legal(second)


def test_alphago_plays_its_search_over_a_policy_and_a_value_net(tmp_path):
    from gocore.nn.nets import NetConfig, build_net
    from storage.checkpoints import save_model

    nets = []
    for family in ("policy", "value"):
        config = NetConfig(board_size=5, in_planes=17, encoder="agz17", family=family, blocks=1, filters=8)
        nets.append(str(save_model(tmp_path / family, build_net(config), dataclasses.asdict(config))))
    command = GTP + ["--agent", "alphago", "--model", ",".join(nets), "--sims", "8"]
    with GtpClient(command, timeout=60, name="gozero") as ours:
        assert f"alphago:{nets[0]},{nets[1]}" in ours.version()
        with pytest.raises(GtpError, match="unacceptable size"):
            ours.boardsize(9)  # the nets' size, learned from the policy net
        first = ours.genmove(1, 5)
        assert first is not None and Position.initial(5).is_legal(first)


def test_a_net_at_its_own_simulations_plays_its_own_size(tmp_path):
    from gocore.nn.nets import NetConfig, build_net
    from storage.checkpoints import save_model

    config = NetConfig(board_size=5, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16)
    net = str(save_model(tmp_path / "tiny", build_net(config), dataclasses.asdict(config)))
    with GtpClient(GTP + ["--agent", f"alphazero-16:{net}"], timeout=60, name="gozero") as ours:
        assert f"alphazero-16:{net}" in ours.version()
        with pytest.raises(GtpError, match="unacceptable size"):
            ours.boardsize(9)  # the net's size, learned before the player was built (no --size given)
        first = ours.genmove(1, 5)
        assert first is not None and Position.initial(5).is_legal(first)


def test_analysis_commands_sent_while_the_model_loads_still_get_info_lines(tmp_path):
    from gocore.nn.nets import NetConfig, build_net
    from storage.checkpoints import save_model

    config = NetConfig(board_size=SIZE, in_planes=17, encoder="agz17", blocks=1, filters=8, value_hidden=16)
    model_dir = save_model(tmp_path / "tiny", build_net(config), dataclasses.asdict(config))
    # written before the net has loaded: each analysis finds the next command already waiting
    session = subprocess.run(GTP + ["--model", str(model_dir), "--sims", "8"],
                             input="lz-analyze 10\nplay b E5\nkata-analyze 10\nname\nquit\n",
                             capture_output=True, text=True, timeout=120)
    responses = session.stdout.split("\n\n")
    lz, play, kata, name = responses[:4]
    assert lz.startswith("=\ninfo move ") and kata.startswith("=\ninfo move ") and " utility " in kata
    assert play == "= " and name == "= gozero" and session.returncode == 0


def test_a_failed_load_with_stdin_still_open_exits_1_not_aborting(tmp_path):
    # A GUI keeps stdin open: the reader thread is blocked in a read when the load fails.
    process = subprocess.Popen(GTP + ["--model", str(tmp_path / "no-such-model")], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        process.stdin.write("name\n")
        process.stdin.flush()
        status = process.wait(timeout=120)
        assert status == 1, process.stderr.read()
        assert process.stdout.read() in ("", "= gozero\n\n")
        stderr = process.stderr.read()
        assert stderr.startswith("error: ") and "Fatal Python error" not in stderr, stderr
    finally:
        process.kill()


def test_ctrl_c_while_serving_exits_130_with_one_line():
    import signal

    process = subprocess.Popen(GTP + ["--agent", "random"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        process.stdin.write("name\n")
        process.stdin.flush()
        assert process.stdout.readline() == "= gozero\n"  # serving, its reader waiting for the next line
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
        assert process.stderr.read().strip() == "gozero gtp: interrupted"
    finally:
        process.kill()


def test_without_a_model_boardsize_loads_the_champion_of_that_size(data_dir, monkeypatch):
    import os

    from tests.helpers import register_tiny_nets

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the registry of this data dir
    register_tiny_nets(data_dir, 1, size=5)
    register_tiny_nets(data_dir, 1, size=7)
    env = {key: value for key, value in os.environ.items() if key != "MLFLOW_TRACKING_URI"}
    command = GTP + ["--size", "5", "--sims", "4", "--data-dir", str(data_dir)]
    session = subprocess.run(command, input="boardsize 7\ngenmove b\nboardsize 9\nshowboard\ngenmove w\nquit\n",
                             capture_output=True, text=True, timeout=120, env=env)
    assert session.returncode == 0, session.stderr
    answers = session.stdout.split("\n\n")
    assert answers[0] == "= " and answers[1].startswith("= ")  # 7x7: gozero-7x7's champion plays
    assert Position.initial(7).is_legal(from_gtp(answers[1][2:], 7))
    assert answers[2].startswith("? no champion for 9x9: ") and "\n" not in answers[2]
    assert answers[3].splitlines()[1].split() == list("ABCDEFG")  # refused: the 7x7 game goes on
    assert Position.initial(7).play(from_gtp(answers[1][2:], 7)).is_legal(from_gtp(answers[4][2:], 7))
