"""KataGo's JSON analysis engine, served: queries read from stdin, searched, answered on stdout.

`AnalysisServer.serve` is what ``gozero analysis`` runs (flows/cli_analysis.py) and what KaTrain
talks to in place of ``katago analysis``. `gocore.play.analysis_engine` parses and formats; this
module owns the order of work:

- A reader thread queues stdin's lines, so actions sent while a search runs are seen before the
  next one starts: ``terminate`` / ``terminate_all`` drop the pending turns they name (each answered
  with ``noResults``, as KataGo does) and are acknowledged; ``query_version`` and ``clear_cache``
  (we keep no cache) are answered at once. A turn already being searched finishes and is answered.
- Pending turns go highest ``priority`` first, then in arrival order. Turns that share the first
  one's priority, visits and time limit are searched together (one `BatchedSearch`, G roots in
  lockstep, one net call per round for all of them), up to `batch` at a time.
- Search is the MATCH preset (no noise) for ``maxVisits`` simulations: the root ends with maxVisits
  visits, its own evaluation among them, as KataGo counts them; ``maxTime`` stops it after the
  round that passes it. With ``reportDuringSearchEvery`` it runs in chunks of `CHUNK` simulations
  (GTP analysis's) and answers with ``isDuringSearch: true`` whenever that many seconds have passed.
- At the end of input the pending turns are still answered, then `serve` returns.

Every line written is one JSON object and is flushed at once; a line that is not a query gets an
error response and the engine reads on.
"""

from __future__ import annotations

import itertools
import json
import queue
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO

from gocore.play.analysis_engine import (
    QueryError,
    TurnRequest,
    error_response,
    format_response,
    no_results_response,
    parse_line,
    parse_query,
    root_policy,
    version_response,
)
from gocore.play.gtp_analysis import CHUNK
from gocore.search import mcts
from gocore.search.analysis import analyse

if TYPE_CHECKING:
    from gocore.nn.inference import Evaluator

BATCH = 8  # turns searched together at most


class AnalysisServer:
    """Answers analysis queries for one net's board size with PUCT search on `evaluator`."""

    def __init__(self, evaluator: Evaluator, size: int, default_visits: int, name: str, stdout: TextIO,
                 batch: int = BATCH):
        self.evaluator, self.size, self.default_visits, self.name = evaluator, size, default_visits, name
        self.batch = batch
        self._pending: list[tuple[int, int, TurnRequest]] = []  # (-priority, arrival, turn)
        self._arrival = itertools.count()
        self._stdout = stdout  # every answer goes here, one JSON line each

    def serve(self, stdin: TextIO) -> None:
        """Answer the queries of `stdin` until the input ends and nothing is pending."""
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_read_lines, args=(stdin, lines), daemon=True, name="analysis-stdin").start()
        is_open = True
        while is_open or self._pending:
            is_open = self._take_lines(lines, wait=not self._pending) and is_open
            self.step()

    def step(self) -> bool:
        """Search the next batch of pending turns and answer them; False if nothing was pending."""
        if not self._pending:
            return False
        self._search(self._next_batch())
        return True

    def handle(self, line: str) -> None:
        """Act on one input line: queue its turns, or answer it (actions, errors, warnings)."""
        if not line.strip():
            return
        try:
            query = parse_line(line)
        except QueryError as error:
            return self._write(error_response(None, str(error)))
        query_id = query.get("id") if isinstance(query.get("id"), str) else None
        try:
            if "action" in query:
                return self._act(query, query_id)
            turns, warnings = parse_query(query, self.size, self.default_visits)
        except QueryError as error:
            return self._write(error_response(query_id, str(error), error.field))
        for warning in warnings:
            self._write(warning)
        self._pending.extend((-turn.priority, next(self._arrival), turn) for turn in turns)

    def _act(self, query: dict[str, Any], query_id: str | None) -> None:
        action = query["action"]
        if query_id is None:
            raise QueryError(f"action {action!r} needs a string id", "id")
        if action == "query_version":
            return self._write(version_response(query_id, self.name))
        if action == "clear_cache":  # nothing cached between queries
            return self._write({"id": query_id, "action": "clear_cache"})
        if action not in ("terminate", "terminate_all"):
            raise QueryError(f"unknown action {action!r}", "action")
        target = query.get("terminateId") if action == "terminate" else None
        if action == "terminate" and not isinstance(target, str):
            raise QueryError("terminate needs a terminateId", "terminateId")
        turns = query.get("turnNumbers")
        if turns is not None and not (isinstance(turns, list) and all(isinstance(t, int) for t in turns)):
            raise QueryError("turnNumbers must be a list of integers", "turnNumbers")
        self._terminate(target, turns)
        extra = {} if target is None else {"terminateId": target}
        self._write({"id": query_id, "action": action, **extra, **({} if turns is None else {"turnNumbers": turns})})

    def _terminate(self, target: str | None, turns: list[int] | None) -> None:
        """Drop the pending turns of query `target` (None: every query), only `turns` if given."""
        def is_named(turn: TurnRequest) -> bool:
            return (target is None or turn.id == target) and (turns is None or turn.turn in turns)

        dropped = [item for item in self._pending if is_named(item[2])]
        self._pending = [item for item in self._pending if not is_named(item[2])]
        for _, _, turn in sorted(dropped):
            self._write(no_results_response(turn.id, turn.turn))

    def _take_lines(self, lines: queue.Queue[str | None], wait: bool) -> bool:
        """Handle every line already read (waiting for one if `wait`); False once the input ended."""
        try:
            line = lines.get(block=wait)
            while True:
                if line is None:
                    return False
                self.handle(line)
                line = lines.get_nowait()
        except queue.Empty:
            return True

    def _next_batch(self) -> list[TurnRequest]:
        """The first pending turn and those that can be searched with it, taken off the queue."""
        self._pending.sort()
        first = self._pending[0][2]
        def key(turn: TurnRequest) -> tuple:
            return turn.priority, turn.visits, turn.max_time, turn.report_every

        chosen = [item for item in self._pending if key(item[2]) == key(first)]
        chosen = chosen[:self.batch]
        self._pending = [item for item in self._pending if item not in chosen]
        return [item[2] for item in chosen]

    def _search(self, turns: list[TurnRequest]) -> None:
        """Search `turns` together and write one response each (and partial ones if asked for)."""
        first = turns[0]
        search = mcts.BatchedSearch(self.evaluator, mcts.MATCH.replace(simulations=first.visits),
                                    [t.position for t in turns], seed=0)
        games = [g for g, root in enumerate(search.roots) if root.terminal_value is None]
        now = time.monotonic()
        deadline = None if first.max_time is None else now + first.max_time
        report = None if first.report_every is None else now + first.report_every
        while games and (todo := first.visits - round(search.roots[games[0]].visits)) > 0:
            search.search(games, deadline=deadline, simulations=todo if report is None else min(CHUNK, todo))
            if deadline is not None and time.monotonic() >= deadline:
                break
            left = first.visits - round(search.roots[games[0]].visits)
            if left >= todo:  # no progress (cannot happen with a working search): answer what there is
                break
            is_done = left <= 0
            if report is not None and not is_done and time.monotonic() >= report:
                self._answer(turns, search.roots, is_during_search=True)
                report = time.monotonic() + first.report_every
        self._answer(turns, search.roots, is_during_search=False)

    def _answer(self, turns: list[TurnRequest], roots: list[mcts.Node], is_during_search: bool) -> None:
        for turn, root in zip(turns, roots):
            analysis = analyse(root, self.evaluator)
            self._write(format_response(turn, analysis, root_policy(root.prior, root.illegal), is_during_search))

    def _write(self, response: dict[str, Any]) -> None:
        self._stdout.write(json.dumps(response, separators=(",", ":")) + "\n")
        self._stdout.flush()


def _read_lines(stdin: TextIO, lines: queue.Queue[str | None]) -> None:
    """Queue `stdin`'s lines, then None at its end."""
    try:
        for line in _lines(stdin):
            lines.put(line)
    finally:
        lines.put(None)


def _lines(stdin: TextIO) -> Iterable[str]:
    try:
        yield from iter(stdin.readline, "")
    except (OSError, ValueError):  # stdin closed under us at exit
        return
