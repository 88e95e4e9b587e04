"""KataGo's JSON analysis engine, served: queries read from stdin, searched, answered on stdout.

`AnalysisServer.serve` is what ``gozero analysis`` runs (flows/cli/analysis.py) and what KaTrain
talks to in place of ``katago analysis``. `gocore.play.analysis_engine` parses and formats; this
module owns the order of work:

- A reader thread queues stdin's lines and the search looks at them between chunks of `CHUNK`
  simulations (a few tens of milliseconds on a CPU), so input is acted on while a search runs:
  ``terminate`` / ``terminate_all`` halt the named turns being searched (each answered at once with
  what it has, ``isDuringSearch: false``, as KataGo does) and drop the pending ones (``noResults``);
  ``query_version`` and ``clear_cache`` (we keep no cache) are answered at once; new queries wait
  in the queue. Every action is answered by echoing it, as KataGo does.
- Pending turns go highest ``priority`` first, then in arrival order. Turns that share the first
  one's priority, visits and time limit are searched together (one `BatchedSearch`, G roots in
  lockstep, one net call per round for all of them), up to `batch` at a time and never more than
  `max_visits` visits in all.
- Memory: a query's ``maxVisits`` above `max_visits` is searched to `max_visits` with a warning
  (KaTrain ponders with 10,000,000); the tree of a finished batch is freed; at most
  `MAX_PENDING` turns wait, a query beyond that gets an error.
- Search is the MATCH preset (no noise) for ``maxVisits`` simulations: the root ends with maxVisits
  visits, its own evaluation among them, as KataGo counts them; ``maxTime`` stops it after the
  chunk that passes it. With ``reportDuringSearchEvery`` it answers with ``isDuringSearch: true``
  whenever that many seconds have passed. With a net that has the aux heads every evaluation also
  records score and ownership (`gocore.search.tree_averages`), so answers carry their search averages.
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
from gocore.search.analysis import PositionAnalysis, analyse
from gocore.search.tree_averages import HeadRecorder, TreeAverages

if TYPE_CHECKING:
    from gocore.nn.inference import Evaluator

BATCH = 8  # turns searched together at most
MAX_PENDING = 10_000  # turns waiting at most (each holds its position)
WARM_SECONDS = 0.5  # the search averages are brought up to date this often (`_Reader.keep_warm`)
LEAVES = 8  # leaves per turn and round: analysis wants visits per second (a ponder runs for minutes),
# where a match's one leaf a round (mcts.MATCH) buys depth per visit at batch 1
class AnalysisServer:
    """Answers analysis queries for one net's board size with PUCT search on `evaluator`.
    `max_visits`: the most visits one turn (and one batch) may search, None: no limit."""

    def __init__(self, evaluator: Evaluator, size: int, default_visits: int, name: str, stdout: TextIO,
                 batch: int = BATCH, max_visits: int | None = None):
        self.evaluator, self.size, self.default_visits, self.name = evaluator, size, default_visits, name
        self.batch, self.max_visits = batch, max_visits
        self._pending: list[tuple[int, int, TurnRequest]] = []  # (-priority, arrival, turn)
        self._arrival = itertools.count()
        self._stdout = stdout  # every answer goes here, one JSON line each
        self._lines: queue.Queue[str | None] = queue.Queue()  # stdin's lines, None at its end
        self._is_open = True  # stdin has not ended
        self._running: list[TurnRequest] = []  # the turns being searched
        self._halted: set[int] = set()  # indices into _running that a terminate stopped

    def serve(self, stdin: TextIO) -> None:
        """Answer the queries of `stdin` until the input ends and nothing is pending."""
        threading.Thread(target=_read_lines, args=(stdin, self._lines), daemon=True, name="analysis-stdin").start()
        while self._is_open or self._pending:
            self._take_lines(wait=not self._pending)
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
            turns, warnings = parse_query(query, self.size, self.default_visits, self.max_visits)
            if len(self._pending) + len(turns) > MAX_PENDING:
                raise QueryError(f"{len(self._pending)} turns are waiting already (at most {MAX_PENDING}): "
                                 "wait for their answers or terminate some")
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
            return self._write(version_response(query, self.name))
        if action == "clear_cache":  # nothing cached between queries
            return self._write(query)
        if action not in ("terminate", "terminate_all"):
            raise QueryError(f"unknown action {action!r}", "action")
        target = query.get("terminateId") if action == "terminate" else None
        if action == "terminate" and not isinstance(target, str):
            raise QueryError("terminate needs a terminateId", "terminateId")
        turns = query.get("turnNumbers")
        if turns is not None and not (isinstance(turns, list) and all(isinstance(t, int) for t in turns)):
            raise QueryError("turnNumbers must be a list of integers", "turnNumbers")
        self._write(query)
        self._terminate(target, turns)

    def _terminate(self, target: str | None, turns: list[int] | None) -> None:
        """Halt the running turns and drop the pending turns of query `target` (None: every query),
        only `turns` if given; the search answers the halted ones, the dropped get ``noResults``."""
        def is_named(turn: TurnRequest) -> bool:
            return (target is None or turn.id == target) and (turns is None or turn.turn in turns)

        self._halted |= {index for index, turn in enumerate(self._running) if is_named(turn)}
        dropped = [item for item in self._pending if is_named(item[2])]
        self._pending = [item for item in self._pending if not is_named(item[2])]
        for _, _, turn in sorted(dropped):
            self._write(no_results_response(turn.id, turn.turn))

    def _take_lines(self, wait: bool) -> None:
        """Handle every line already read (waiting for one first if `wait` and the input is open)."""
        try:
            line = self._lines.get(block=wait and self._is_open)
            while True:
                if line is None:
                    self._is_open = False
                    return
                self.handle(line)
                line = self._lines.get_nowait()
        except queue.Empty:
            return

    def _next_batch(self) -> list[TurnRequest]:
        """The first pending turn and those that can be searched with it, taken off the queue."""
        self._pending.sort()
        first = self._pending[0][2]

        def key(turn: TurnRequest) -> tuple:
            return turn.priority, turn.visits, turn.max_time, turn.report_every

        room = self.batch if self.max_visits is None else max(1, min(self.batch, self.max_visits // first.visits))
        chosen = [item for item in self._pending if key(item[2]) == key(first)][:room]
        self._pending = [item for item in self._pending if item not in chosen]
        return [item[2] for item in chosen]

    def _search(self, turns: list[TurnRequest]) -> None:
        """Search `turns` together and write one final response each (and partial ones if asked for),
        reading input between chunks: a halted turn is answered at once and leaves the search."""
        first = turns[0]
        recorder = (HeadRecorder(self.evaluator, any(t.include_ownership or t.include_moves_ownership for t in turns))
                    if getattr(self.evaluator, "has_score", False) else None)
        search = mcts.BatchedSearch(recorder or self.evaluator, mcts.MATCH.replace(sims=first.visits, leaves_per_game=LEAVES),
                                    [t.position for t in turns], seed=0)
        reader = _Reader(search.roots, recorder)
        self._running, self._halted = turns, set()
        live = [g for g, root in enumerate(search.roots) if root.terminal_value is None]
        now = time.monotonic()
        deadline = None if first.max_time is None else now + first.max_time
        report = None if first.report_every is None else now + first.report_every
        while live and (todo := first.visits - round(search.roots[live[0]].visits)) > 0:
            search.search(live, deadline=deadline, sims=min(CHUNK, todo))
            self._take_lines(wait=False)
            self._answer(turns, reader, sorted(self._halted & set(live)), is_during_search=False)
            live = [g for g in live if g not in self._halted]
            if deadline is not None and time.monotonic() >= deadline or not live:
                break
            left = first.visits - round(search.roots[live[0]].visits)
            if left >= todo:  # no progress (cannot happen with a working search): answer what there is
                break
            if report is not None and left > 0 and time.monotonic() >= report:
                self._answer(turns, reader, live, is_during_search=True)
                report = time.monotonic() + first.report_every
            reader.keep_warm(live)
        self._answer(turns, reader, [g for g in range(len(turns)) if g not in self._halted], is_during_search=False)
        self._running, self._halted = [], set()

    def _answer(self, turns: list[TurnRequest], reader: _Reader, games: list[int], is_during_search: bool) -> None:
        for g in games:
            self._write(format_response(turns[g], reader.analysis(g, self.evaluator),
                                        root_policy(reader.roots[g].prior, reader.roots[g].illegal), is_during_search))

    def _write(self, response: dict[str, Any]) -> None:
        self._stdout.write(json.dumps(response, separators=(",", ":")) + "\n")
        self._stdout.flush()


class _Reader:
    """Reads the roots of one batch's search, with the search averages when the heads were recorded."""

    def __init__(self, roots: list[mcts.Node], recorder: HeadRecorder | None):
        self.roots = roots
        self._averages = None if recorder is None else TreeAverages(recorder)
        self._warmed = time.monotonic()

    def keep_warm(self, games: list[int]) -> None:
        """Bring the averages up to date every `WARM_SECONDS`: the answer to a terminate then reads only
        what was searched since, not the whole tree (21,552 visits read at once: 0.96 s on 9x9)."""
        if self._averages is not None and time.monotonic() >= self._warmed + WARM_SECONDS:
            for game in games:
                self._averages.sums(self.roots[game])
            self._warmed = time.monotonic()

    def analysis(self, game: int, evaluator: Evaluator) -> PositionAnalysis:
        return analyse(self.roots[game], evaluator, averages=self._averages)


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
