"""GtpClient against real GNU Go, and against tiny scripted engines for timeouts and crashes."""

from __future__ import annotations

import gc
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gocore.play.gtp_client import (
    GtpClient,
    GtpEngineDied,
    GtpError,
    GtpTimeout,
    color_letter,
    gnugo_command,
    parse_score,
)
from gocore.rules.coords import from_gtp, from_rowcol, pass_move

# A scripted engine: argv[1] picks how it misbehaves on `genmove` (or `quit`).
FAKE_ENGINE = textwrap.dedent('''
    import sys, time
    mode = sys.argv[1]
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        gtp_id = words.pop(0) if words[0].isdigit() else ""
        def reply(text, ok=True):
            sys.stdout.write(("=" if ok else "?") + gtp_id + " " + text + "\\n\\n")
            sys.stdout.flush()
        command = words[0]
        if command == "quit":
            reply("")
            break
        elif command == "genmove" and mode == "sleep":
            time.sleep(600)
        elif command == "genmove" and mode == "crash":
            sys.stderr.write("boom: the engine fell over\\n")
            sys.stderr.flush()
            sys.exit(3)
        elif command == "genmove":
            reply("resign")
        elif command == "chatter":
            sys.stderr.write("x" * 1000000 + "\\n")
            sys.stderr.flush()
            reply("done")
        elif command == "list_commands":
            reply("name\\ngenmove\\nquit")
        elif command == "name":
            reply("fake")
        else:
            reply("unknown command", ok=False)
    if mode == "stubborn":
        time.sleep(600)
''')


@pytest.fixture
def fake_engine(tmp_path: Path):
    """Factory: a GtpClient on the scripted engine in `mode`, closed after the test."""
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    clients: list[GtpClient] = []

    def start(mode: str, timeout: float = 10.0) -> GtpClient:
        client = GtpClient([sys.executable, str(script), mode], timeout=timeout, name=f"fake-{mode}")
        clients.append(client)
        return client

    yield start
    for client in clients:
        client.close()


@pytest.fixture
def gnugo(gnugo_path: str):
    """A level-0 GNU Go on an empty 9x9 board with komi 7.5."""
    with GtpClient(gnugo_command(level=0, size=9, komi=7.5, path=gnugo_path), name="gnugo") as engine:
        engine.boardsize(9)
        engine.clear_board()
        engine.komi(7.5)
        yield engine


def assert_process_gone(client: GtpClient) -> None:
    """The engine has exited and been reaped (no zombie, no leak)."""
    assert not client.is_running()
    with pytest.raises(ProcessLookupError):
        os.kill(client.pid, 0)


@pytest.mark.gnugo
def test_gnugo_name_and_version(gnugo: GtpClient):
    assert gnugo.name() == "GNU Go"
    assert gnugo.version().startswith("3.")


@pytest.mark.gnugo
def test_numeric_id_is_stripped_from_the_response(gnugo: GtpClient):
    assert gnugo.send("17 protocol_version") == "2"


@pytest.mark.gnugo
def test_known_command_tells_extensions_apart(gnugo: GtpClient):
    assert gnugo.known_command("all_legal")
    assert not gnugo.known_command("no_such_command")


@pytest.mark.gnugo
def test_play_and_genmove_round_trip(gnugo: GtpClient):
    center = from_gtp("E5", 9)
    gnugo.play(1, center, 9)
    reply = gnugo.genmove(-1, 9)
    assert reply is not None and 0 <= reply < pass_move(9) and reply != center
    assert gnugo.list_stones(1, 9) == [center]
    assert gnugo.list_stones(-1, 9) == [reply]
    assert not gnugo.is_legal(1, center, 9)
    assert gnugo.is_legal(1, from_gtp("A1", 9), 9)
    assert center not in gnugo.all_legal(1, 9) and reply not in gnugo.all_legal(1, 9)


@pytest.mark.gnugo
def test_pass_is_played_as_pass(gnugo: GtpClient):
    gnugo.play(1, pass_move(9), 9)
    assert gnugo.send("last_move") == "black PASS"


@pytest.mark.gnugo
def test_playing_on_an_occupied_point_raises_gtp_error(gnugo: GtpClient):
    gnugo.play(1, from_gtp("C3", 9), 9)
    with pytest.raises(GtpError) as caught:
        gnugo.play(-1, from_gtp("C3", 9), 9)
    assert caught.value.command == "play W C3"
    assert caught.value.message == "illegal move"
    assert gnugo.list_stones(-1, 9) == []  # the engine is still usable after a refusal


@pytest.mark.gnugo
def test_unknown_command_raises_gtp_error(gnugo: GtpClient):
    with pytest.raises(GtpError, match="unknown command") as caught:
        gnugo.send("fly_to_the_moon")
    assert not isinstance(caught.value, GtpEngineDied)
    assert gnugo.name() == "GNU Go"


@pytest.mark.gnugo
def test_final_score_counts_area_with_komi(gnugo: GtpClient):
    for row in range(9):  # black owns columns A-E, white F-J: 45 - 36 - 7.5
        gnugo.play(1, from_rowcol(row, 4, 9), 9)
        gnugo.play(-1, from_rowcol(row, 5, 9), 9)
    assert gnugo.final_score() == "B+1.5"
    assert parse_score(gnugo.final_score()) == 1.5


@pytest.mark.gnugo
def test_send_many_pipelines_commands_in_order(gnugo: GtpClient):
    assert gnugo.send_many(["play B E5", "play W C3", "list_stones black", "list_stones white"]) == [
        "", "", "E5", "C3"]
    assert gnugo.send_many([]) == []


@pytest.mark.gnugo
def test_send_many_raises_the_first_refusal_and_stays_in_step(gnugo: GtpClient):
    with pytest.raises(GtpError) as caught:
        gnugo.send_many(["play B E5", "play W E5", "fly_to_the_moon", "play W D5"])
    assert (caught.value.command, caught.value.message) == ("play W E5", "illegal move")
    assert gnugo.list_stones(-1, 9) == [from_gtp("D5", 9)]  # later commands still ran
    assert gnugo.name() == "GNU Go"


@pytest.mark.gnugo
def test_close_sends_quit_and_the_engine_exits_cleanly(gnugo_path: str):
    client = GtpClient(gnugo_command(path=gnugo_path))
    client.close()
    assert client.returncode == 0
    assert_process_gone(client)
    with pytest.raises(GtpEngineDied):
        client.name()
    client.close()  # a second close is harmless


def test_gnugo_command_uses_area_rules_and_positional_superko(gnugo_path: str):
    command = gnugo_command(level=3, size=13, komi=6.5, path=gnugo_path)
    assert command[0] == gnugo_path
    assert command[1:] == ["--mode", "gtp", "--boardsize", "13", "--level", "3",
                           "--chinese-rules", "--positional-superko", "--komi", "6.5"]


def test_resign_is_returned_as_none(fake_engine):
    assert fake_engine("resign").genmove(1, 9) is None


def test_multi_line_responses_are_joined(fake_engine):
    assert fake_engine("resign").send("list_commands").splitlines() == ["name", "genmove", "quit"]


def test_heavy_stderr_output_does_not_block_the_engine(fake_engine):
    client = fake_engine("resign")
    assert client.send("chatter", timeout=10) == "done"
    deadline = time.monotonic() + 5
    while len(client.stderr_tail()) < 100_000 and time.monotonic() < deadline:
        time.sleep(0.01)  # the stderr reader runs in its own thread
    assert set(client.stderr_tail()) == {"x", "\n"}
    assert len(client.stderr_tail()) < 500_000  # the buffer is bounded, not the whole megabyte


def test_timeout_raises_and_kills_the_engine(fake_engine):
    client = fake_engine("sleep", timeout=0.5)
    assert client.name() == "fake"
    started = time.monotonic()
    with pytest.raises(GtpTimeout) as caught:
        client.genmove(1, 9)
    assert time.monotonic() - started < 5
    assert caught.value.command == "genmove B"
    assert_process_gone(client)
    with pytest.raises(GtpEngineDied):
        client.name()


def test_per_command_timeout_overrides_the_default(fake_engine):
    client = fake_engine("sleep", timeout=60)
    with pytest.raises(GtpTimeout, match="0.3 s"):
        client.send("genmove b", timeout=0.3)
    assert_process_gone(client)


def test_crashing_engine_raises_engine_died_with_its_stderr(fake_engine):
    client = fake_engine("crash")
    with pytest.raises(GtpEngineDied) as caught:
        client.genmove(-1, 9)
    assert caught.value.returncode == 3
    assert "boom: the engine fell over" in caught.value.stderr_tail
    assert "boom" in str(caught.value)
    assert_process_gone(client)


def test_engine_that_ignores_quit_is_killed_on_close(fake_engine):
    client = fake_engine("stubborn")
    started = time.monotonic()
    client.close()
    assert time.monotonic() - started < 10
    assert_process_gone(client)


def test_context_manager_closes_the_engine(tmp_path: Path):
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    with GtpClient([sys.executable, str(script), "resign"]) as client:
        assert client.name() == "fake"
    assert_process_gone(client)


def test_a_dropped_client_does_not_leak_its_engine(tmp_path: Path):
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    client = GtpClient([sys.executable, str(script), "stubborn"])
    pid = client.pid
    del client
    gc.collect()
    with pytest.raises(ProcessLookupError):  # killed and reaped by the finalizer
        os.kill(pid, 0)


def test_multi_line_commands_are_refused(fake_engine):
    with pytest.raises(ValueError):
        fake_engine("resign").send("name\nquit")


def test_a_shell_string_is_refused():
    with pytest.raises(ValueError):
        GtpClient("gnugo --mode gtp")  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "score"), [("B+3.5", 3.5), ("W+2", -2.0), ("W+7.0", -7.0), ("0", 0.0)])
def test_parse_score_reads_results_from_blacks_side(text: str, score: float):
    assert parse_score(text) == score


def test_colors_are_gtp_letters():
    assert (color_letter(1), color_letter(-1)) == ("B", "W")
    with pytest.raises(ValueError):
        color_letter(0)
