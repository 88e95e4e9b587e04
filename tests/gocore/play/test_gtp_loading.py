"""`gocore.play.gtp_loading`: name and protocol_version answered while the engine loads, in order."""

from __future__ import annotations

import io
import threading

import pytest

from gocore.play.gtp_analysis import LineReader
from gocore.play.gtp_loading import early_answer, load_answering


class Lines(io.StringIO):
    """stdin whose reads after the given text block until `release`: the GUI waits for answers."""

    def __init__(self, text: str):
        super().__init__(text)
        self.release = threading.Event()

    def readline(self, *args) -> str:  # type: ignore[override]
        line = super().readline(*args)
        if not line:
            self.release.wait(10)
        return line


def test_early_answers_are_name_and_protocol_version_only():
    assert early_answer("name\n", "gozero") == "= gozero\n\n"
    assert early_answer("7 protocol_version\n", "gozero") == "=7 2\n\n"
    assert early_answer("  \n", "gozero") == "" and early_answer("# a comment\n", "gozero") == ""
    for other in ("version\n", "boardsize 9\n", "name extra\n", "quit\n", "lz-analyze 10\n"):
        assert early_answer(other, "gozero") is None


def test_name_is_answered_while_loading_and_the_rest_waits_for_the_engine_in_order():
    stdin, stdout = Lines("1 name\n2 protocol_version\n3 boardsize 9\n4 name\n"), io.StringIO()
    lines, answered = LineReader(stdin), threading.Event()

    def load() -> str:
        assert answered.wait(10), "name was not answered while loading"
        return "engine"

    def watch() -> None:
        while "=2 2" not in stdout.getvalue():
            threading.Event().wait(0.01)
        answered.set()

    threading.Thread(target=watch, daemon=True).start()
    assert load_answering(load, lines, stdout, "gozero") == "engine"
    assert stdout.getvalue() == "=1 gozero\n\n=2 2\n\n"
    assert [lines.next_line(), lines.next_line()] == ["3 boardsize 9\n", "4 name\n"]  # left for the engine
    stdin.release.set()


def test_a_failed_load_raises_in_the_caller_and_the_end_of_input_is_kept():
    stdin = Lines("")
    stdin.release.set()
    lines = LineReader(stdin)

    def load() -> str:
        raise RuntimeError("no such model")

    with pytest.raises(RuntimeError, match="no such model"):
        load_answering(load, lines, io.StringIO(), "gozero")
    assert lines.next_line() is None
