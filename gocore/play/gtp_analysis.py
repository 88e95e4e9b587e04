"""GTP analysis, engine side: ``lz-analyze`` / ``kata-analyze`` requests, their ``info`` lines, the
search that streams them, and stdin read ahead so that search runs until the next command.

`GtpEngine` (`gocore.play.gtp`) parses a request with `parse_request`, answers ``=`` and then
the lines of `stream_analysis`; the numbers come from `gocore.search.analysis`, which reads the
tree. Formats (Leela Zero's and KataGo's, as Sabaki and Lizzie parse them; KataGo's
docs/GTP_Extensions.md describes both), one line per update, every candidate move on it:

    lz:    info move E5 visits 31 winrate 5234 prior 1712 lcb 5010 order 0 pv E5 D4 ...
    kata:  info move E5 visits 31 utility 0.046800 winrate 0.523400 prior 0.171200 lcb 0.501000
           utilityLcb 0.002000 order 0 pv E5 D4 ...  [ownership v1 ... vN*N]

lz numbers are 10000ths (integers); kata's are floats written with a decimal point always
(Sabaki tells the two formats apart by that point). kata adds ``scoreMean`` / ``scoreLead``
only when the net has a score head, and ``ownership`` (row-major from the top-left, the side
to move's view) only when asked and the net has an ownership head: without one, ``ownership
true`` is accepted and ignored. Everything is from the side to move's view.

Request words: ``[COLOR] [INTERVAL] [interval CS] [minmoves N] [maxmoves N] [ownership true|false]``;
the interval is in centiseconds, and without one the engine searches without printing.
"""

from __future__ import annotations

import collections
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from gocore.play.gtp_protocol import GtpFailure, parse_color, parse_number
from gocore.rules.board import Position
from gocore.rules.coords import to_gtp
from gocore.search.analysis import MoveAnalysis, PositionAnalysis, analyse

if TYPE_CHECKING:
    from gocore.search.agents import AlphaZeroAgent

KINDS = ("lz", "kata")
CHUNK = 16  # simulations between looks at stdin: a few tens of milliseconds on a CPU
ANALYSE_COMMANDS = {"lz-analyze": "lz", "kata-analyze": "kata"}
GENMOVE_COMMANDS = {"lz-genmove_analyze": "lz", "kata-genmove_analyze": "kata"}
# Tree memory per root visit, ownership recorded, every node expanded (`python -m benchmarks.tree_memory`:
# tracemalloc, tiny aux nets pondering the empty board, 3,000 visits): 10.8 KB on 9x9, 35.4 KB on
# 19x19, so about 3.7 KB + 88 B per point (rounded up). A bound: a leaf makes its rules state and
# its own visit counts only when searched again, so a tree holds less (a random net's wide tree
# 4.0-4.3 KB on 9x9 and 14.0-22.9 KB on 19x19), and how much less depends on the net.
TREE_BYTES_BASE, TREE_BYTES_PER_POINT = 3_700, 88
PONDER_LIMIT = 20_000
"""Root visits at which analysis rests on 9x9 (at most about 217 MB of tree); `ponder_limit` gives
other boards the same memory: 6,105 visits on 19x19."""


def tree_bytes_per_visit(size: int) -> int:
    """Bytes of search tree one root visit holds on a `size` board (the model above)."""
    return TREE_BYTES_BASE + TREE_BYTES_PER_POINT * size * size


def visits_for_memory(megabytes: float, size: int) -> int:
    """The root visits whose search tree fits in `megabytes` on a `size` board (at least 1)."""
    return max(1, int(megabytes * 1e6 / tree_bytes_per_visit(size)))


def ponder_limit(size: int) -> int:
    """The default visits at which a ponder rests on a `size` board: the memory of PONDER_LIMIT on 9x9."""
    return PONDER_LIMIT * tree_bytes_per_visit(9) // tree_bytes_per_visit(size)


@dataclass(frozen=True)
class AnalysisRequest:
    """What an analysis command asks for."""

    kind: str  # "lz" or "kata": the line format
    color: int | None = None  # whose move to analyse; None: the side to move
    interval: float = 0.0  # seconds between info lines; 0: none
    min_moves: int = 0  # report at least this many moves (unvisited ones by prior)
    max_moves: int | None = None  # report at most this many moves
    ownership: bool = False  # kata: append ownership (if the net has the head)


def parse_request(kind: str, args: list[str]) -> AnalysisRequest:
    """The request of ``lz-analyze`` / ``kata-analyze`` (and their genmove forms) from its words."""
    words, values = list(args), {"kind": kind}
    if words and words[0].lower() in ("b", "w", "black", "white"):
        values["color"] = parse_color(words.pop(0))
    if words and words[0].replace(".", "", 1).isdigit():
        values["interval"] = parse_number(words.pop(0), "the interval") / 100
    while words:
        key = words.pop(0)
        if not words:
            raise GtpFailure(f"syntax error: {key!r} needs a value")
        value = words.pop(0)
        if key == "interval":
            values["interval"] = parse_number(value, "the interval") / 100
        elif key in ("minmoves", "maxmoves"):
            values["min_moves" if key == "minmoves" else "max_moves"] = int(parse_number(value, key, integer=True))
        elif key == "ownership" and value in ("true", "false"):
            values["ownership"] = value == "true"
        else:
            raise GtpFailure(f"syntax error: unsupported analysis option {key} {value}")
    return AnalysisRequest(**values)


def format_line(analysis: PositionAnalysis, request: AnalysisRequest) -> str:
    """One update of `analysis` as an ``info ...`` line in the request's format (newline included)."""
    size = analysis.position.size
    infos = [_lz_info(m, size) if request.kind == "lz" else _kata_info(m, size) for m in analysis.moves]
    line = " ".join(infos)
    if request.kind == "kata" and request.ownership and analysis.ownership is not None:
        line += " ownership " + " ".join(f"{v:.6f}" for v in analysis.ownership)
    return line + "\n"


def _lz_info(move: MoveAnalysis, size: int) -> str:
    return (f"info move {to_gtp(move.move, size)} visits {move.visits} winrate {_ten_thousandths(move.winrate)} "
            f"prior {_ten_thousandths(move.prior)} lcb {_ten_thousandths(move.lcb)} order {move.order} "
            f"pv {_pv(move.pv, size)}")


def _kata_info(move: MoveAnalysis, size: int) -> str:
    score = "" if move.score_lead is None else f"scoreMean {move.score_lead:.6f} scoreLead {move.score_lead:.6f} "
    return (f"info move {to_gtp(move.move, size)} visits {move.visits} utility {2 * move.winrate - 1:.6f} "
            f"winrate {move.winrate:.6f} {score}prior {move.prior:.6f} lcb {move.lcb:.6f} "
            f"utilityLcb {2 * move.lcb - 1:.6f} order {move.order} pv {_pv(move.pv, size)}")


def _ten_thousandths(fraction: float) -> int:
    return min(10000, max(0, round(fraction * 10000)))


def _pv(moves: tuple[int, ...], size: int) -> str:
    return " ".join(to_gtp(m, size) for m in moves)


def stream_analysis(agent: AlphaZeroAgent, position: Position, request: AnalysisRequest, limit: int,
                    has_input: Callable[[float], bool] | None = None, deadline: float | None = None) -> Iterator[str]:
    """Search `position` with `agent` (an `AlphaZeroAgent`) in chunks, yielding an info line every
    interval. Pondering (`has_input` given): until `has_input(seconds)` says the next line has come,
    resting once the root has `limit` visits (a kept tree counts: memory stays bounded however
    often a GUI asks). Otherwise: `limit` more simulations, or until the `deadline`."""
    next_line, searched, fresh = _next(request.interval), 0, True  # fresh: the tree has news for a line
    root = agent.analyse(position, 0) if has_input is not None else None  # the kept tree, unsearched
    while (root.visits < limit if has_input is not None else searched < limit) and (
            deadline is None or searched == 0 or time.monotonic() < deadline):
        if has_input is not None and searched > 0 and has_input(0.0):
            break  # one chunk first: a command already waiting (sent while the net loaded) still gets a line
        root = agent.analyse(position, CHUNK if has_input is not None else min(CHUNK, limit - searched))
        searched, fresh = searched + CHUNK, True
        if root.terminal_value is not None:
            break
        if time.monotonic() >= next_line:
            yield format_line(analyse(root, agent.evaluator, request.min_moves, request.max_moves), request)
            next_line, fresh = _next(request.interval), False
    if fresh and request.interval and root is not None and root.prior is not None:
        yield format_line(analyse(root, agent.evaluator, request.min_moves, request.max_moves), request)
    while has_input is not None and not has_input(1.0):
        pass  # the search is at its limit: nothing changes until the next command


def _next(interval: float) -> float:
    return time.monotonic() + interval if interval > 0 else math.inf


class LineReader:
    """Lines of `stdin`, read by a daemon thread when asked for: `has_input` lets the engine search
    while it waits for the next line. It reads one line per request, so nothing after ``quit`` is read."""

    def __init__(self, stdin: TextIO):
        self._lines: collections.deque[str | None] = collections.deque()
        self._is_wanted = False  # the engine waits for a line that is not read yet
        self._ready = threading.Condition()
        threading.Thread(target=self._read, args=(stdin,), daemon=True, name="gtp-stdin").start()

    def _read(self, stdin: TextIO) -> None:
        line: str | None = ""
        while line is not None:
            with self._ready:
                self._ready.wait_for(lambda: self._is_wanted and not self._lines)
                self._is_wanted = False
            try:
                line = stdin.readline() or None
            except (OSError, ValueError):  # stdin closed or detached under us at exit
                line = None
            with self._ready:
                self._lines.append(line)
                self._ready.notify_all()

    def next_line(self) -> str | None:
        """The next line, waiting for it; None at the end of input."""
        with self._ready:
            self._want()
            self._ready.wait_for(lambda: self._lines)
            self._is_wanted = False  # a request made meanwhile was for this line
            return self._lines.popleft()

    def push_front(self, line: str | None) -> None:
        """Put a line taken with `next_line` back: it is the next one again."""
        with self._ready:
            self._lines.appendleft(line)
            self._ready.notify_all()

    def has_input(self, timeout: float = 0.0) -> bool:
        """True once the next line (or the end of input) has come, waiting up to `timeout` seconds."""
        with self._ready:
            self._want()
            return self._ready.wait_for(lambda: bool(self._lines), timeout)

    def _want(self) -> None:
        if not self._lines:
            self._is_wanted = True
            self._ready.notify_all()
