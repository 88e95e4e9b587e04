"""GTP v2 engine: our agents behind the Go Text Protocol, for GUIs (Sabaki, GoGui, KaTrain) and GNU Go.

Owns the engine side of GTP: command ids, the command table, the engine's own game (positions for
undo, moves with colours), and the conversion between move ints and GTP vertices at this edge
(through `gocore.rules.coords`). Line parsing and responses are `gocore.play.gtp_protocol`, clocks
`gocore.play.gtp_clock`, the dead-stone and cleanup logic `gocore.play.gtp_board`; the client side
is `gocore.play.gtp_client`. Start reading at `GtpEngine.handle`; `GtpEngine.serve` is the loop.

Commands: the eleven GTP v2 requires (protocol_version, name, version, known_command,
list_commands, quit, boardsize, clear_board, komi, play, genmove), and undo, showboard,
final_score, final_status_list, time_settings, time_left, kgs-genmove_cleanup, loadsgf, the
handicap and rules commands fixed_handicap, place_free_handicap, set_free_handicap, kgs-rules,
kata-set-rules, kata-get-rules (`gocore.play.gtp_setup`), gogui-analyze_commands
(`gocore.play.gtp_gogui`); with an agent that searches a tree (``analyse``), the analysis commands
lz-analyze, kata-analyze, lz-genmove_analyze and kata-genmove_analyze (`gocore.play.gtp_analysis`)
and GoGui's gfx commands. list_commands and known_command name exactly the commands it answers.

Decisions:
- The rules are `gocore.rules.board`'s: no suicide, positional superko, Tromp-Taylor area scoring, and
  white gets a point per handicap stone (Chinese rules, as GNU Go --chinese-rules counts; AGA's N-1 or
  none after kgs-rules / kata-set-rules). So `final_score` scores the board as it stands, every stone
  counts as alive: `final_status_list alive` lists them all (a chain a line), `dead` and `seki` none. Under
  area scoring a stone is dead only once captured, which is what `kgs-genmove_cleanup` is for: a
  genmove that never passes (nor resigns) while a legal move that fills no own eye remains; it
  keeps the agent's move unless that is a pass, and otherwise prefers captures, then contact moves.
- GTP allows playing out of turn (two blacks in a row): `play` takes the colour it is given. Our
  positions carry the side to move, so for a `genmove` of the colour not to move the agent sees the
  position after a pass by the other colour; that pass never enters the game.
- `genmove` answers ``resign`` when the agent returns `gocore.search.agents.RESIGN`; the board is unchanged.
- Time: Canadian byo-yomi, per GTP: byo-yomi time 0 is absolute time, byo-yomi time > 0 with
  0 stones is no limit (the default). Each colour has a clock, charged with our own thinking time
  and overwritten by `time_left`. Before a genmove, an agent with ``set_time_budget(seconds)`` is
  told its share for this move (`Clock.budget`), or None when there is no limit.
- `komi` replays the game with the new komi (a position carries its komi). `boardsize` and
  `clear_board` start an empty board. `loadsgf FILE [N]` takes size, komi, setup stones and the
  moves before move N (GNU Go's reading: N is the next move to play) from `gocore.rules.sgf_read`.
- Analysis streams: ``=`` at once, then info lines while the search runs, then the blank line
  when the next input line (any line) arrives; `serve` reads stdin on a thread only when asked
  (`gtp_analysis.LineReader`), so it can search between looks. A ponder rests once the root has
  `ponder_limit` visits (default: `gtp_analysis.ponder_limit`, the same memory on every board) and waits.
- The agent is one fixed agent for every size the engine accepts, or ``factory(size, komi)``'s, built
  again at `boardsize` (a GtpFailure refuses the size) or when the komi has changed at the next genmove.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import TextIO

import numpy as np

from gocore.play import gtp_gogui, gtp_setup
from gocore.play.game_rules import CHINESE, GameRules, effective_komi
from gocore.play.gtp_analysis import (
    ANALYSE_COMMANDS,
    GENMOVE_COMMANDS,
    AnalysisRequest,
    LineReader,
    parse_request,
    ponder_limit,
    stream_analysis,
)
from gocore.play.gtp_board import board_diagram, cleanup_move, final_status_list
from gocore.play.gtp_clock import Clock, TimeSettings
from gocore.play.gtp_protocol import (
    PROTOCOL_VERSION,
    GtpFailure,
    expect_args,
    format_response,
    parse_color,
    parse_number,
    preprocess,
)
from gocore.rules.board import MAX_SIZE, MIN_SIZE, IllegalMove, Position
from gocore.rules.coords import CoordinateError, from_gtp, is_pass, pass_move, to_gtp
from gocore.search.agents import RESIGN, Agent, AlphaZeroAgent

log = logging.getLogger(__name__)

DEFAULT_SIZE = 9
MIN_MOVES_LEFT = 10  # our moves assumed still to come, however late in the game
_EMPTY_SETUP: gtp_setup.Setup = ((), (), 1)
AgentFactory = Callable[[int, float], Agent]


class GtpEngine:
    """A GTP v2 engine around one agent: `handle` answers a line, `serve` runs a session."""

    def __init__(self, agent: Agent | AgentFactory, name: str = "gozero", version: str = "",
                 sizes: set[int] | None = None, *, size: int | None = None, komi: float = 7.5,
                 seed: int | None = None, ponder_limit: int | None = None):
        self.name, self.version = name, version
        self.sizes = frozenset(range(MIN_SIZE, MAX_SIZE + 1) if sizes is None else sizes)
        if not self.sizes or not self.sizes <= set(range(MIN_SIZE, MAX_SIZE + 1)):
            raise ValueError(f"board sizes must lie in {MIN_SIZE}..{MAX_SIZE}, not {sorted(self.sizes)}")
        start = size if size is not None else DEFAULT_SIZE if DEFAULT_SIZE in self.sizes else min(self.sizes)
        if start not in self.sizes:
            raise ValueError(f"board size {start} is not among the engine's sizes {sorted(self.sizes)}")
        self._factory: AgentFactory = (lambda _size, _komi: agent) if hasattr(agent, "select_move") else agent
        self._agent: Agent | None = None
        self._agent_key: tuple[int, float] | None = None  # (size, komi) the agent was built for
        self._rng = np.random.default_rng(seed)
        self._time, self._clocks = TimeSettings(), {}
        self.is_running, self.ponder_limit, self.rules = True, ponder_limit, CHINESE
        self._start(start, komi)
        # analysis needs a search tree: offered (and listed) only for an agent that can show one
        has_tree = hasattr(self._current_agent(), "analyse")
        self._streams: dict[str, str] = {**ANALYSE_COMMANDS, **GENMOVE_COMMANDS} if has_tree else {}
        self._handlers: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": lambda args: PROTOCOL_VERSION,
            "name": lambda args: self.name,
            "version": lambda args: self.version,
            "known_command": self._known_command,
            "list_commands": lambda args: "\n".join(self.commands),
            "quit": self._quit,
            "boardsize": self._boardsize,
            "clear_board": self._clear_board,
            "komi": self._komi,
            "play": self._play,
            "genmove": lambda args: self._genmove(args, cleanup=False),
            "undo": self._undo,
            "showboard": self._showboard,
            "final_score": lambda args: self.position.result(),
            "final_status_list": lambda args: final_status_list(args, self.position),
            "time_settings": self._time_settings,
            "time_left": self._time_left,
            "kgs-genmove_cleanup": lambda args: self._genmove(args, cleanup=True),
            "loadsgf": self._loadsgf,
            "fixed_handicap": lambda args: self._handicap(gtp_setup.fixed_points(args, self.size)),
            "place_free_handicap": lambda args: self._handicap(gtp_setup.free_points(args, self.size)),
            "set_free_handicap": lambda args: self._handicap(gtp_setup.given_points(args, self.size)) and "",
            "kgs-rules": lambda args: self._set_rules(gtp_setup.playable_rules(args, "kgs-rules")),
            "kata-set-rules": lambda args: self._set_rules(gtp_setup.playable_rules(args, "kata-set-rules")),
            "kata-get-rules": lambda args: gtp_setup.rules_json(self.rules),
            "gogui-analyze_commands": lambda args: gtp_gogui.analyze_commands(
                has_tree, has_tree and bool(getattr(self._current_agent().evaluator, "has_ownership", False))),
            **(self._gfx_handlers() if has_tree else {}),
        }

    @property
    def commands(self) -> tuple[str, ...]:
        """The command names this engine implements (what `list_commands` answers)."""
        return (*self._handlers, *self._streams)

    @property
    def position(self) -> Position:
        """The current position."""
        return self._positions[-1]

    @property
    def moves(self) -> tuple[tuple[int, int], ...]:
        """The game's moves as (colour, move), after any setup stones."""
        return tuple(self._moves)

    # --- the protocol ------------------------------------------------------------------------

    def handle(self, line: str) -> str | None:
        """The response to one input line, blank line included; None for empty and comment lines.
        An analysis command stops at once here, since no next line can come: `serve` streams it."""
        pieces = list(self.respond(line, lambda seconds: True))
        return "".join(pieces) if pieces else None

    def respond(self, line: str, has_input: Callable[[float], bool]) -> Iterator[str]:
        """The response to one input line, in pieces to write as they come: one piece, or for an
        analysis command its ``=`` line, its info lines and its end, pondering until `has_input`."""
        words = preprocess(line).split()
        if not words:
            return
        command_id = words.pop(0) if words[0].isascii() and words[0].isdigit() else ""
        if not words:
            yield format_response("?", command_id, "syntax error: an id but no command")
        elif words[0] in self._streams:
            yield from self._analyse(command_id, words, has_input)
        elif words[0] not in self._handlers:
            log.warning("unknown command %r", words[0])
            yield format_response("?", command_id, "unknown command")
        else:
            try:
                yield format_response("=", command_id, self._handlers[words[0]](words[1:]))
            except GtpFailure as failure:
                yield _refusal(command_id, words, failure)
            except Exception as error:  # a bug must not end a game a GUI is showing: answer, log, go on
                log.exception("command %r failed", " ".join(words))
                yield format_response("?", command_id, " ".join(f"internal error: {type(error).__name__}: {error}".split()))

    def serve(self, stdin: TextIO, stdout: TextIO, lines: LineReader | None = None) -> None:
        """Answer commands from `stdin` on `stdout`, flushing each piece, until quit or end of input.
        stdin is read ahead (`LineReader`; `lines`: one already reading it), so that analysis
        searches until the next line comes."""
        lines = lines or LineReader(stdin)
        while self.is_running:
            line = lines.next_line()
            if line is None:
                return
            for piece in self.respond(line, lines.has_input):
                stdout.write(piece)
                stdout.flush()

    # --- the game ------------------------------------------------------------------------------

    def _start(self, size: int, komi: float, setup: gtp_setup.Setup = _EMPTY_SETUP,
               moves: list[tuple[int, int]] | tuple = ()) -> None:
        """Begin a game from `setup` and replay `moves` on it, scored with white's handicap
        compensation under the rules."""
        black, white, first = setup
        positions = [Position.from_setup(size, list(black), list(white), first,
                                         effective_komi(komi, self.rules, black, white))]
        for color, move in moves:
            positions.append(positions[-1].play(move, color))
        self.size, self.komi, self._setup = size, float(komi), setup
        self._positions, self._moves = positions, list(moves)

    def _push(self, color: int, move: int) -> None:
        """Play `move` for `color` on the current position; raises IllegalMove."""
        self._positions.append(self.position.play(move, color))
        self._moves.append((color, move))

    def _vertex(self, text: str) -> int:
        try:
            return from_gtp(text, self.size)
        except CoordinateError as error:
            raise GtpFailure(f"syntax error: invalid vertex {text!r}") from error

    def _current_agent(self) -> Agent:
        """The agent for the current size and komi, built by the factory if they changed."""
        key = (self.size, self.position.komi)  # with white's handicap compensation
        if self._agent is None or self._agent_key != key:
            self._agent, self._agent_key = self._factory(*key), key
        return self._agent

    # --- commands ------------------------------------------------------------------------------

    def _known_command(self, args: list[str]) -> str:
        (name,) = expect_args(args, 1, "known_command COMMAND")
        return "true" if name in self.commands else "false"

    def _quit(self, args: list[str]) -> str:
        self.is_running = False
        return ""

    def _boardsize(self, args: list[str]) -> str:
        (text,) = expect_args(args, 1, "boardsize SIZE")
        size = int(parse_number(text, "the board size", integer=True))
        if size not in self.sizes:
            raise GtpFailure("unacceptable size")
        before = (self.size, self.komi, self._setup, self._moves)
        self._start(size, self.komi)
        try:
            self._current_agent()
        except GtpFailure:  # the factory has no agent for this size
            self._start(*before)
            raise
        return ""

    def _clear_board(self, args: list[str]) -> str:
        self._start(self.size, self.komi)
        self._reset_clocks()
        return ""

    def _komi(self, args: list[str]) -> str:
        (text,) = expect_args(args, 1, "komi KOMI")
        self._start(self.size, parse_number(text, "komi", signed=True), self._setup, self._moves)
        return ""

    def _play(self, args: list[str]) -> str:
        color_text, vertex = expect_args(args, 2, "play COLOR VERTEX")
        color, move = parse_color(color_text), self._vertex(vertex)
        try:
            self._push(color, move)
        except IllegalMove as error:
            raise GtpFailure("illegal move") from error
        return ""

    def _genmove(self, args: list[str], cleanup: bool) -> str:
        (color_text,) = expect_args(args, 1, "genmove COLOR")
        color, started = parse_color(color_text), time.monotonic()
        agent, position = self._prepare_move(color)
        return self._play_chosen(color, int(agent.select_move(position)), cleanup, started)

    def _play_chosen(self, color: int, move: int, cleanup: bool, started: float) -> str:
        """Play the agent's `move` for `color` (kgs cleanup rules first), charge the clock, and
        answer its vertex or ``resign``."""
        if cleanup and (move == RESIGN or is_pass(move, self.size)):
            move = cleanup_move(self.position, color, move, self._rng)
        if color in self._clocks:
            self._clocks[color].spend(self._time, time.monotonic() - started)
        if move == RESIGN:
            return "resign"
        try:
            self._push(color, move)
        except IllegalMove as error:
            raise GtpFailure(f"the agent chose an illegal move: {error}") from None
        return to_gtp(move, self.size)

    def _prepare_move(self, color: int) -> tuple[Agent, Position]:
        """The agent to move for `color`, told its time budget if it heeds one, and the position it sees."""
        agent, position = self._current_agent(), self.position
        if hasattr(agent, "set_time_budget"):
            clock = self._clocks.get(color)
            moves_left = max(MIN_MOVES_LEFT, (self.size ** 2 - position.move_number) / 2)
            agent.set_time_budget(None if clock is None else clock.budget(self._time, moves_left))
        if position.to_play != color:  # out of turn: the other colour passes first, in the agent's view
            position = position.play(pass_move(self.size), -color)
        return agent, position

    def _analyse(self, command_id: str, words: list[str], has_input: Callable[[float], bool]) -> Iterator[str]:
        """lz-/kata-analyze (ponder until the next line) and lz-/kata-genmove_analyze (search, play)."""
        is_genmove, kind = words[0] in GENMOVE_COMMANDS, self._streams[words[0]]
        try:
            request = parse_request(kind, words[1:])
            if is_genmove and request.color is None:
                raise GtpFailure(f"syntax error: usage: {words[0]} COLOR [INTERVAL] [KEY VALUE]...")
            started, color = time.monotonic(), request.color or self.position.to_play
            agent, position = self._prepare_move(color)
        except GtpFailure as failure:
            yield _refusal(command_id, words, failure)
            return
        yield f"={command_id}\n"
        try:
            if is_genmove:
                yield from self._genmove_analyze(agent, position, color, request, started, words)
            else:
                limit = self.ponder_limit or ponder_limit(self.size)  # by default the same memory on every board
                yield from stream_analysis(agent, position, request, limit, has_input)
                yield "\n"
        except Exception:  # the "=" is out: a bug must still end the response, and not the session
            log.exception("command %r failed", " ".join(words))
            yield "\n"

    def _genmove_analyze(self, agent: AlphaZeroAgent, position: Position, color: int, request: AnalysisRequest, started: float,
                         words: list[str]) -> Iterator[str]:
        """The search of a genmove, with info lines, then ``play VERTEX`` and the end of the response."""
        budget = agent.time_budget
        yield from stream_analysis(agent, position, request, agent.config.sims,
                                   deadline=None if budget is None else started + budget)
        try:
            vertex = self._play_chosen(color, agent.select_searched_move(position), False, started)
        except GtpFailure as failure:  # the "=" is out already: log the failure, give up the game
            log.warning("%s: %s", " ".join(words), failure)
            vertex = "resign"
        yield f"play {vertex}\n\n"

    def _handicap(self, points: list[int]) -> str:
        """Set `points` up as black handicap stones on the empty board, white to move; their vertices."""
        if self._moves or self.position.stones.any():
            raise GtpFailure("board not empty")
        self._start(self.size, self.komi, (tuple(points), (), -1))
        return " ".join(to_gtp(point, self.size) for point in points)

    def _set_rules(self, rules: GameRules) -> str:
        self.rules = rules
        self._start(self.size, self.komi, self._setup, self._moves)  # rescored with their handicap bonus
        return ""

    def _gfx_handlers(self) -> dict[str, Callable[[list[str]], str]]:
        """GoGui's analysis commands, each drawn for the position the side to move faces."""
        draw = {gtp_gogui.SEARCH: gtp_gogui.search_gfx, gtp_gogui.POLICY: gtp_gogui.policy_gfx}
        if getattr(self._current_agent().evaluator, "has_ownership", False):
            draw[gtp_gogui.OWNERSHIP] = gtp_gogui.ownership_gfx
        return {name: (lambda args, gfx=gfx: gfx(self._current_agent(), self.position)) for name, gfx in draw.items()}

    def _undo(self, args: list[str]) -> str:
        if not self._moves:
            raise GtpFailure("cannot undo")
        self._moves.pop()
        self._positions.pop()
        return ""

    def _showboard(self, args: list[str]) -> str:
        return board_diagram(self.position, self._moves, self.komi)

    def _time_settings(self, args: list[str]) -> str:
        main, byo_yomi, stones = expect_args(args, 3, "time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES")
        self._time = TimeSettings(parse_number(main, "main time"), parse_number(byo_yomi, "byo-yomi time"),
                                  int(parse_number(stones, "byo-yomi stones", integer=True)))
        self._reset_clocks()
        return ""

    def _reset_clocks(self) -> None:
        self._clocks = {} if self._time.is_unlimited else {c: Clock.start(self._time) for c in (1, -1)}

    def _time_left(self, args: list[str]) -> str:
        color, seconds, stones = expect_args(args, 3, "time_left COLOR TIME STONES")
        self._clocks[parse_color(color)] = Clock(parse_number(seconds, "time"),
                                                 int(parse_number(stones, "stones", integer=True)))
        return ""

    def _loadsgf(self, args: list[str]) -> str:
        size, komi, setup, moves = gtp_setup.load_game(args, self.sizes)
        self._start(size, komi, setup, moves)
        return ""


def _refusal(command_id: str, words: list[str], failure: GtpFailure) -> str:
    """The ``?`` response to a refused command, logged with its cause."""
    cause = f" ({failure.__cause__})" if failure.__cause__ else ""
    log.warning("refused %r: %s%s", " ".join(words), failure, cause)
    return format_response("?", command_id, " ".join(str(failure).split()))
