"""GTP v2 client: drive an external engine (GNU Go, KataGo, our own `gozero gtp`) over pipes.

Owns the engine subprocess, one command/response exchange at a time with a deadline, and the
conversion between our move ints (`gocore.rules.coords`) and GTP vertices at this edge. Start reading
at `GtpClient.send`; the convenience methods below it are one command each.

Responses are read from the stdout pipe with a selector and a deadline (POSIX pipes), so a silent
engine never blocks us past the timeout: a timed-out engine is killed, and every later `send`
raises `GtpEngineDied`. A daemon thread drains stderr into a bounded buffer, so a chatty engine
never blocks on a full pipe, and its last lines explain a crash.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import subprocess
import threading
import time
import weakref
from collections import deque
from pathlib import Path
from typing import IO

from gocore.children import die_with_parent_preexec
from gocore.errors import GozeroError
from gocore.rules.coords import from_gtp, to_gtp

GNUGO_FALLBACK = "/usr/games/gnugo"  # Debian installs it here, off PATH
STDERR_LINES = 200  # the engine's most recent stderr lines kept for error messages
STDERR_LINE_CHARS = 2000  # longer stderr lines are read and kept in pieces of this size
CLOSE_GRACE = 2.0  # seconds an engine gets to exit after `quit` before it is killed
READ_CHUNK = 65536  # bytes per read of the stdout pipe
# GNU Go passes with dead stones still on the board; Tromp-Taylor would count them as alive
# (a random player then "beats" GNU Go). Capturing them first makes both counts agree.
GNUGO_TROMP_TAYLOR = ("--capture-all-dead",)
_RESPONSE_START = re.compile(r"^([=?])(\d*)(?:\s(.*))?$")


class GtpError(GozeroError, RuntimeError):
    """The engine refused a command (``? message``); keeps `command` and `message`."""

    def __init__(self, command: str, message: str):
        self.command, self.message = command, message
        super().__init__(f"GTP {command!r} failed: {message}")


class GtpEngineDied(GtpError):
    """The engine exited or closed its pipes; keeps `returncode` and the last stderr lines."""

    def __init__(self, command: str, returncode: int | None, stderr_tail: str):
        self.returncode, self.stderr_tail = returncode, stderr_tail
        detail = f"engine exited with code {returncode}" if returncode is not None else "engine is gone"
        if stderr_tail:  # the message shows the last few lines; the attribute keeps them all
            detail += "; stderr ends:\n" + "\n".join(stderr_tail.splitlines()[-10:])
        super().__init__(command, detail)


class GtpTimeout(GtpError):
    """No complete response within `timeout` seconds; the engine has been killed."""

    def __init__(self, command: str, timeout: float):
        self.timeout = timeout
        super().__init__(command, f"no response within {timeout:g} s (engine killed)")


def _pump_stderr(pipe: IO[bytes], tail: deque) -> None:
    """Reader thread: keep the last stderr lines; draining them keeps the engine unblocked."""
    try:
        for raw in iter(lambda: pipe.readline(STDERR_LINE_CHARS), b""):
            tail.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
    except (OSError, ValueError):
        pass


def _kill(process: subprocess.Popen) -> None:
    """Kill and reap the engine if it is still running (also the garbage-collection finalizer)."""
    if process.poll() is None:
        process.kill()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _checked_line(command: str) -> str:
    """The command stripped; refuses empty and multi-line commands (they would desync the stream)."""
    line = command.strip()
    if not line or "\n" in line or "\r" in line:
        raise ValueError(f"a GTP command is one non-empty line, not {command!r}")
    return line


def color_letter(color: int) -> str:
    """GTP colour for +1 (black) / -1 (white)."""
    if color not in (1, -1):
        raise ValueError(f"colour must be +1 (black) or -1 (white), not {color!r}")
    return "B" if color == 1 else "W"


def parse_vertices(text: str, size: int) -> list[int]:
    """Sorted move ints for a whitespace-separated list of GTP vertices (``list_stones`` etc.)."""
    return sorted(from_gtp(vertex, size) for vertex in text.split())


def parse_score(text: str) -> float:
    """Score from black's side for a GTP/SGF result: ``"B+3.5"`` -> 3.5, ``"W+2"`` -> -2, ``"0"``."""
    result = text.strip().upper()
    if result in ("0", "DRAW", "JIGO"):
        return 0.0
    if len(result) > 2 and result[0] in "BW" and result[1] == "+":
        value = float(result[2:])
        return value if result[0] == "B" else -value
    raise ValueError(f"{text!r} is not a numeric result like 'B+3.5', 'W+2' or '0'")


class GtpClient:
    """One GTP engine subprocess; `send` a command, get the response text or a typed error."""

    def __init__(self, command: list[str], timeout: float = 30.0, name: str | None = None):
        if isinstance(command, str) or not command:
            raise ValueError("the engine command must be a non-empty list of arguments")
        self.command = [str(part) for part in command]
        self.timeout = timeout
        self.label = name or Path(self.command[0]).name
        # Dies with this process even if SIGKILLed mid-move (else it ends only at its next read).
        self._process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, preexec_fn=die_with_parent_preexec())
        self._stdout_fd = self._process.stdout.fileno()
        self._pending = b""  # stdout bytes read but not yet consumed as lines
        self._selector = selectors.DefaultSelector()  # waits on the stdout pipe with a deadline
        self._selector.register(self._stdout_fd, selectors.EVENT_READ)
        self._stderr: deque = deque(maxlen=STDERR_LINES)
        self._stderr_reader = threading.Thread(
            target=_pump_stderr, args=(self._process.stderr, self._stderr), daemon=True)
        self._stderr_reader.start()
        self._closed = False
        # A client dropped without close() must not leave an engine running.
        self._finalizer = weakref.finalize(self, _kill, self._process)

    @property
    def pid(self) -> int:
        """Process id of the engine."""
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The engine's exit code once it has exited, else None."""
        return self._process.poll()

    def is_running(self) -> bool:
        """True while the engine process has not exited."""
        return self._process.poll() is None

    def stderr_tail(self) -> str:
        """The engine's most recent stderr lines (at most STDERR_LINES)."""
        return "\n".join(self._stderr)

    def send(self, command: str, timeout: float | None = None) -> str:
        """Send one command line; return the response text without ``=``/id; raise GtpError on ``?``."""
        return self.send_many([command], timeout)[0]

    def send_many(self, commands: list[str], timeout: float | None = None) -> list[str]:
        """Send a few short commands in one write and read their responses in order (pipelining).

        One round trip instead of one per command: what a loaded machine charges is the wake-up.
        All responses are read before the first refusal is raised as GtpError, so the stream
        stays in step. `timeout` (default: the client's) covers the whole batch.
        """
        lines = [_checked_line(command) for command in commands]
        if not lines:
            return []
        if self._closed:
            raise GtpEngineDied(lines[0], self.returncode, self.stderr_tail())
        try:
            self._process.stdin.write("".join(line + "\n" for line in lines).encode())
            self._process.stdin.flush()
        except (OSError, ValueError):  # BrokenPipeError: the engine is gone
            raise self._died(lines[0]) from None
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        texts, refusal = [], None
        for line in lines:
            status, response_id, text = self._read_response(line, deadline, limit)
            sent_id = line.split(None, 1)[0] if line[0].isdigit() else ""
            if sent_id and response_id != sent_id:
                raise GtpError(line, f"response id {response_id!r} does not match {sent_id!r}")
            if status == "?" and refusal is None:
                refusal = GtpError(line, text)
            texts.append(text)
        if refusal is not None:
            raise refusal
        return texts

    def _read_response(self, command: str, deadline: float, limit: float) -> tuple[str, str, str]:
        """(status ``=``/``?``, id, text) of the next response, read until its blank line."""
        status, response_id, body = "", "", []
        while True:
            line = self._next_line(command, deadline, limit).replace("\r", "").replace("\t", " ")
            if not status:
                match = _RESPONSE_START.match(line)
                if match is None:
                    continue  # blank lines or stray output before a response are not ours
                status, response_id = match.group(1), match.group(2)
                body.append(match.group(3) or "")
            elif line.strip() == "":
                return status, response_id, "\n".join(body).strip()
            else:
                body.append(line)

    def _next_line(self, command: str, deadline: float, limit: float) -> str:
        """The next stdout line before `deadline`; kills the engine on timeout or EOF."""
        while (end := self._pending.find(b"\n")) < 0:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                self._shutdown(kill=True)
                raise GtpTimeout(command, limit)
            chunk = os.read(self._stdout_fd, READ_CHUNK)
            if not chunk:
                raise self._died(command)
            self._pending += chunk
        line, self._pending = self._pending[:end], self._pending[end + 1:]
        return line.decode("utf-8", errors="replace")

    def _died(self, command: str) -> GtpEngineDied:
        """The error for an engine whose pipe closed, after reaping it and its stderr."""
        try:
            self._process.wait(timeout=CLOSE_GRACE)
        except subprocess.TimeoutExpired:
            pass
        self._stderr_reader.join(timeout=1.0)  # let the last stderr lines arrive
        self._shutdown(kill=True)
        return GtpEngineDied(command, self._process.returncode, self.stderr_tail())

    def _shutdown(self, kill: bool) -> None:
        """Stop the engine (killing it if `kill` or if it ignores stdin closing) and reap it."""
        self._closed = True
        self._selector.close()
        try:
            self._process.stdin.close()  # EOF on stdin also ends most engines
        except (OSError, ValueError):
            pass
        if not kill:
            try:
                self._process.wait(timeout=CLOSE_GRACE)
            except subprocess.TimeoutExpired:
                pass
        self._finalizer()  # kill if still running and reap; runs at most once
        self._process.stdout.close()
        self._stderr_reader.join(timeout=1.0)
        if not self._stderr_reader.is_alive():  # closing under a blocked readline would block us
            self._process.stderr.close()

    def close(self) -> None:
        """Send ``quit``, give the engine a moment to exit, then kill it; safe to call twice."""
        if self._closed:
            return
        if self.is_running():
            try:
                self.send("quit", timeout=CLOSE_GRACE)
            except GtpError:
                pass  # a dying or slow engine is killed below all the same
        self._shutdown(kill=False)

    def __enter__(self) -> GtpClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self.is_running() else f"exited {self._process.returncode}"
        return f"GtpClient({self.label!r}, pid {self.pid}, {state})"

    # Convenience commands: our types in, our types out.

    def name(self) -> str:
        """The engine's name."""
        return self.send("name")

    def version(self) -> str:
        """The engine's version string."""
        return self.send("version")

    def known_command(self, command: str) -> bool:
        """True if the engine implements `command`."""
        return self.send(f"known_command {command}") == "true"

    def boardsize(self, size: int) -> None:
        """Set the board size (the board is cleared)."""
        self.send(f"boardsize {size}")

    def clear_board(self) -> None:
        """Empty the board and the move history."""
        self.send("clear_board")

    def komi(self, komi: float) -> None:
        """Set komi (points for white)."""
        self.send(f"komi {komi:g}")

    def play(self, color: int, move: int, size: int) -> None:
        """Play `move` (pass = size*size) for `color` (+1 black, -1 white); GtpError if refused."""
        self.send(f"play {color_letter(color)} {to_gtp(move, size)}")

    def genmove(self, color: int, size: int, command: str = "genmove") -> int | None:
        """The engine's move for `color`, played on its board; pass = size*size, None = resign.
        `command` may be a variant with the same answer, e.g. ``kgs-genmove_cleanup``."""
        vertex = self.send(f"{command} {color_letter(color)}")
        if vertex.lower() == "resign":
            return None
        return from_gtp(vertex, size)

    def is_legal(self, color: int, move: int, size: int) -> bool:
        """The engine's verdict on whether `color` may play `move` now."""
        return self.send(f"is_legal {color_letter(color)} {to_gtp(move, size)}") == "1"

    def list_stones(self, color: int, size: int) -> list[int]:
        """Sorted points holding `color`'s stones."""
        return parse_vertices(self.send(f"list_stones {color_letter(color)}"), size)

    def all_legal(self, color: int, size: int) -> list[int]:
        """Sorted points where `color` may play now, pass excluded (GNU Go extension)."""
        return parse_vertices(self.send(f"all_legal {color_letter(color)}"), size)

    def final_score(self) -> str:
        """The engine's result, e.g. ``"B+3.5"`` (GNU Go: after its own dead-stone estimate)."""
        return self.send("final_score")


def gnugo_command(level: int = 0, size: int = 9, komi: float = 7.5, path: str | None = None) -> list[str]:
    """Command line for GNU Go in GTP mode: Chinese (area) rules, positional superko."""
    binary = path or shutil.which("gnugo") or (GNUGO_FALLBACK if Path(GNUGO_FALLBACK).exists() else None)
    if binary is None:
        raise FileNotFoundError("GNU Go not found on PATH or at /usr/games/gnugo (apt-get install -y gnugo)")
    return [binary, "--mode", "gtp", "--boardsize", str(size), "--level", str(level),
            "--chinese-rules", "--positional-superko", "--komi", f"{komi:g}"]
