"""Games between two players and the games of a match, scored by Tromp-Taylor area.

`play_game` is the loop every match, self-play run and demo uses: alternate `select_move`,
refuse nothing silently. A player loses the game, with the reason recorded, when it plays an
illegal move, resigns (returns `RESIGN`), raises, or (an external engine) times out or dies.

Agents may implement two optional hooks, which `play_game` calls on each side's own object:
``start_game(size, komi, color)`` before the first move and ``observe(color, move)`` after every
move of either side. `GtpAgent` uses them to mirror the game into an external GTP engine.

`play_match_game` plays game `index` of a match between players A and B (A is black in even
games: colours alternate) and asks an external engine for its own count of a finished game;
`MatchGame` becomes an SGF record and a results row (the Parquet schema is storage/schemas.py's).

    reason        result       how the game ended
    two-passes    B+3.5, 0     both passed: counted by Tromp-Taylor area
    cleanup       B+3.5        both passed, but an engine counted otherwise: play went on until
                               both passed again (engines capture dead stones with
                               kgs-genmove_cleanup), then counted; detail gives both first counts
    move-cap      W+0.5        the move cap: counted as it stands
    resign        W+R          a player returned RESIGN (or an engine said ``resign``)
    illegal-move  W+F          forfeit: the move is refused by our rules (detail says why)
    timeout       W+T          an engine did not answer within its timeout
    crash         W+F          an engine died (exit code and stderr in the detail)
    error         W+F          an agent raised (or an engine refused a command)
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gocore.play.gtp_client import GtpClient, GtpEngineDied, GtpTimeout, parse_score
from gocore.play.openings import ScriptedOpening, pair_opening
from gocore.rules.board import IllegalMove, Position
from gocore.rules.sgf import GameRecord
from gocore.search.agents import RESIGN, Agent

RULES = "Chinese"  # area scoring, positional superko: what we play and write as SGF RU
DETAIL_CHARS = 500  # a failure's detail (engine stderr, tracebacks' last line) is cut here
_RESULT_CODE = {"resign": "R", "timeout": "T"}  # every other forfeit is "F"


@dataclass(frozen=True)
class GameResult:
    """How a game went: moves (colour, move), final position, winner and the reason it ended."""

    moves: list[tuple[int, int]]
    final: Position
    winner: int  # +1 black, -1 white, 0 jigo
    result: str  # SGF RE text: "B+3.5", "0", "W+R", "B+F", "W+T"
    reason: str  # see the module docstring: two-passes, move-cap, resign, illegal-move, ...
    detail: str = ""  # what went wrong, for a game lost without counting

    @property
    def is_counted(self) -> bool:
        """True if the result is the Tromp-Taylor count (two passes, cleanup or the move cap)."""
        return self.reason in ("two-passes", "cleanup", "move-cap")


class _Forfeit(Exception):
    """The player of `color` lost the game without counting."""

    def __init__(self, color: int, reason: str, detail: str = ""):
        super().__init__(detail)
        self.color, self.reason, self.detail = color, reason, detail[:DETAIL_CHARS]
        self.position: Position | None = None  # the board when it happened


def _forfeit_for(error: Exception, color: int) -> _Forfeit:
    """Name a player's failure: an engine's timeout or death, else an error."""
    reason = "timeout" if isinstance(error, GtpTimeout) else "crash" if isinstance(error, GtpEngineDied) else "error"
    return _Forfeit(color, reason, f"{type(error).__name__}: {error}")


def _call(agent: Any, color: int, method: str, *args: Any) -> Any:
    """`agent.method(*args)`; any exception becomes a forfeit of `color` (the match goes on)."""
    try:
        return getattr(agent, method)(*args)
    except Exception as error:  # a player's failure loses its game, never the whole match
        raise _forfeit_for(error, color) from error


def _next_position(position: Position, color: int, move: Any) -> tuple[Position, int]:
    """(position after `move`, the move as an int); a resignation or illegal move is a forfeit."""
    try:
        move = int(move)  # numpy integers are moves too
    except (TypeError, ValueError):
        raise _Forfeit(color, "illegal-move", f"{move!r} is not a move") from None
    if move == RESIGN:
        raise _Forfeit(color, "resign")
    try:
        return position.play(move), move
    except IllegalMove as error:
        raise _Forfeit(color, "illegal-move", str(error)) from None


def play_game(black: Agent, white: Agent, size: int = 9, komi: float = 7.5, max_moves: int | None = None,
              on_move: Callable[[Position, int], None] | None = None) -> GameResult:
    """Play one game (one agent object per side); `on_move(position_after, move)` after every move."""
    position = Position.initial(size, komi)
    cap = 3 * size * size if max_moves is None else max_moves
    players = {1: black, -1: white}
    moves: list[tuple[int, int]] = []
    try:
        for color, agent in players.items():
            if hasattr(agent, "start_game"):
                _call(agent, color, "start_game", size, komi, color)
        position = _play_moves(position, players, moves, cap, on_move)
    except _Forfeit as forfeit:
        return _forfeited(forfeit, moves, forfeit.position or position)
    return _counted(position, moves, "two-passes")


def play_cleanup(game: GameResult, black: Agent, white: Agent, max_moves: int | None = None,
                 on_move: Callable[[Position, int], None] | None = None) -> GameResult:
    """Go on with a game both sides passed out until both pass again, as servers do when the
    players' counts disagree: engines capture the stones they see as dead (``kgs-genmove_cleanup``,
    where they have it), ours play on, and the cleaned board is counted by Tromp-Taylor (reason
    ``cleanup``). Dead stones left on the board would otherwise count as alive."""
    size = game.final.size
    cap = len(game.moves) + (3 * size * size if max_moves is None else max_moves)
    players = {1: black, -1: white}
    moves = list(game.moves)
    for agent in players.values():
        if hasattr(agent, "set_cleanup"):
            agent.set_cleanup(True)
    try:
        position = _play_moves(game.final, players, moves, cap, on_move)
    except _Forfeit as forfeit:
        return _forfeited(forfeit, moves, forfeit.position or game.final)
    finally:
        for agent in players.values():
            if hasattr(agent, "set_cleanup"):
                agent.set_cleanup(False)
    return _counted(position, moves, "cleanup")


def _play_moves(position: Position, players: dict[int, Agent], moves: list[tuple[int, int]], cap: int,
                on_move: Callable[[Position, int], None] | None) -> Position:
    """Alternate `players` from `position` until two passes in a row (counted from here) or `cap`
    moves in `moves`; appends to `moves` and returns the last position (a forfeit carries it)."""
    passes = 0
    while passes < 2 and len(moves) < cap:
        color = position.to_play
        try:
            chosen = _call(players[color], color, "select_move", position)
            position, move = _next_position(position, color, chosen)
            moves.append((color, move))
            passes = passes + 1 if move == position.size ** 2 else 0
            for observer, agent in players.items():
                if hasattr(agent, "observe"):
                    _call(agent, observer, "observe", color, move)
        except _Forfeit as forfeit:
            forfeit.position = position
            raise
        if on_move is not None:
            on_move(position, move)
    return position


def _counted(position: Position, moves: list[tuple[int, int]], ended_by: str) -> GameResult:
    """A game counted by Tromp-Taylor: ended by two passes (`ended_by`) or at the move cap."""
    score = position.score()
    winner = 1 if score > 0 else -1 if score < 0 else 0
    over = len(moves) >= 2 and moves[-1][1] == moves[-2][1] == position.size ** 2
    return GameResult(moves, position, winner, position.result(), ended_by if over else "move-cap")


def _forfeited(forfeit: _Forfeit, moves: list[tuple[int, int]], position: Position) -> GameResult:
    winner = -forfeit.color
    result = f"{'B' if winner == 1 else 'W'}+{_RESULT_CODE.get(forfeit.reason, 'F')}"
    return GameResult(moves, position, winner, result, forfeit.reason, forfeit.detail)


class GtpAgent:
    """An external GTP engine as a player: each game is mirrored into it, a dead engine restarted.

    `start_game` sends boardsize, clear_board and komi (starting the engine if it is not running),
    `observe` plays every move the engine did not generate itself on the engine's board (the
    opponent's, and its own where a subclass chose them, as an opening), `select_move` is
    ``genmove`` (its ``resign`` is `RESIGN`). `timeout` (seconds) bounds every command.
    """

    def __init__(self, command: list[str], name: str | None = None, timeout: float = 30.0):
        if isinstance(command, str) or not command:
            raise ValueError("the engine command must be a non-empty list of arguments")
        self.command, self.timeout = [str(part) for part in command], timeout
        self.name = name or Path(self.command[0]).name
        self.starts = 0  # engine processes started: 1, plus one per restart after a crash
        self._client: GtpClient | None = None
        self._size, self._color = 0, 0
        self._cleanup = False  # in a cleanup phase: capture dead stones instead of passing
        self._has_cleanup: bool | None = None  # does the engine know kgs-genmove_cleanup?
        self._generated: int | None = None  # the move genmove just played on the engine's board
        self._seed: int | None = None  # the next game's random seed (`reseeded`)
        self._has_seed: bool | None = None  # does the engine know set_random_seed?

    def reseeded(self, seed: int) -> GtpAgent:
        """This engine, told to seed its next game with `seed` (``set_random_seed``, where it has
        it): one engine process then plays distinct games against a deterministic player (one GNU Go
        without it repeated 60 games as 29)."""
        self._seed = seed
        return self

    def start_game(self, size: int, komi: float, color: int) -> None:
        """Set up a new game in which the engine plays `color`."""
        if self._client is None or not self._client.is_running():
            self.close()
            self._client = GtpClient(self.command, timeout=self.timeout, name=self.name)
            self.starts += 1
            self._has_cleanup = self._has_seed = None
        self._size, self._color, self._generated = size, color, None
        self._client.send_many([f"boardsize {size}", "clear_board", f"komi {komi:g}"])
        if self._seed is not None:
            if self._has_seed is None:
                self._has_seed = self._client.known_command("set_random_seed")
            if self._has_seed:
                self._client.send(f"set_random_seed {self._seed}")

    def observe(self, color: int, move: int) -> None:
        """Mirror a move the engine did not generate (it already played its own in `genmove`)."""
        generated, self._generated = self._generated, None
        if color != self._color or move != generated:
            self._engine().play(color, move, self._size)

    def select_move(self, position: Position) -> int:
        """The engine's ``genmove`` for the side to move (``kgs-genmove_cleanup`` in a cleanup
        phase, if the engine has it); RESIGN if it resigns."""
        command = "kgs-genmove_cleanup" if self._cleanup and self._knows_cleanup() else "genmove"
        move = self._engine().genmove(position.to_play, position.size, command)
        self._generated = move
        return RESIGN if move is None else move

    def set_cleanup(self, on: bool) -> None:
        """Enter (True) or leave a cleanup phase: see `play_cleanup`."""
        self._cleanup = on

    def _knows_cleanup(self) -> bool:
        if self._has_cleanup is None:
            self._has_cleanup = self._engine().known_command("kgs-genmove_cleanup")
        return self._has_cleanup

    def final_score(self) -> str:
        """The engine's own result of the game on its board, e.g. ``"B+3.5"``."""
        return self._engine().final_score()

    def close(self) -> None:
        """Stop the engine (a later `start_game` starts a new one)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def _engine(self) -> GtpClient:
        if self._client is None:
            raise RuntimeError(f"{self.name}: no game started (play it through play_game)")
        return self._client

    def __enter__(self) -> GtpAgent:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@dataclass(frozen=True)
class MatchConfig:
    """Rules and limits shared by every game of a match."""

    __pydantic_config__ = {"use_attribute_docstrings": True}  # each docstring below: its field in a Prefect Run form

    size: int = 9
    """Board size N."""
    komi: float = 7.5
    """Komi for white (area scoring)."""
    max_moves: int | None = None
    """Moves before a game is counted as it stands; default 3*N*N."""
    seed: int = 0
    """Base seed; game i's players are seeded from (seed, i) so a resumed match replays nothing."""
    opening: int = 2
    """Random moves played before the players take over (`openings.pair_opening`): games 2i and
    2i + 1 share opening i, one with each colour, so deterministic players meet many positions."""


def player_a_color(index: int) -> int:
    """Player A's colour in game `index`: black (+1) in even games, white (-1) in odd ones."""
    return 1 if index % 2 == 0 else -1


@dataclass(frozen=True)
class MatchGame:
    """Game `index` of a match: who played which colour, how it went, an engine's own count."""

    index: int
    black: str  # label of the player with black
    white: str
    a_color: int  # +1 if player A had black
    game: GameResult
    seconds: float
    external_score: str | None = None  # an external engine's final_score, for two-pass games
    disagreement: bool | None = None  # True if that score differs from ours; None if not asked
    opening: tuple[int, ...] = ()  # the match's random opening moves this game began with

    @property
    def digest(self) -> str:
        """A fingerprint of the game's moves: equal digests are the same game played again."""
        moves = " ".join(str(move) for _, move in self.game.moves)
        return hashlib.sha1(moves.encode()).hexdigest()[:16]

    @property
    def a_score(self) -> float:
        """Player A's points from this game: 1 win, 0.5 jigo, 0 loss."""
        return 0.5 if self.game.winner == 0 else float(self.game.winner == self.a_color)

    def record(self, rules: str = RULES) -> GameRecord:
        """The game as an SGF record: result, komi, rules, player names; the failure as a comment."""
        final, comments = self.game.final, {}
        if self.opening and len(self.game.moves) >= len(self.opening):
            comments[len(self.opening) - 1] = f"moves 1-{len(self.opening)}: the match's random opening"
        if self.game.detail and self.game.moves:  # SGF comments sit on moves: the last one played
            last = len(self.game.moves) - 1
            comments[last] = "\n".join(filter(None, (comments.get(last), f"{self.game.reason}: {self.game.detail}")))
        return GameRecord(size=final.size, komi=final.komi, rules=rules, moves=list(self.game.moves),
                          winner=self.game.winner, result=self.game.result, player_black=self.black,
                          player_white=self.white, comments=comments)

    def row(self) -> dict[str, Any]:
        """The game as one row of a match's results table (storage.schemas.RESULTS_SCHEMA)."""
        return {"game": self.index, "black": self.black, "white": self.white, "a_color": self.a_color,
                "winner": self.game.winner, "a_score": self.a_score, "result": self.game.result,
                "moves": len(self.game.moves), "reason": self.game.reason, "detail": self.game.detail,
                "score": self.game.final.score(), "seconds": self.seconds,
                "external_score": self.external_score, "disagreement": self.disagreement,
                "opening": " ".join(map(str, self.opening)), "digest": self.digest}


def external_count(game: GameResult, players: Iterable[Any]) -> tuple[str | None, bool | None]:
    """(an external engine's final_score, whether its score differs from ours) for a two-pass game.

    Only games both sides passed out are compared: after a resignation, forfeit or the move cap
    an engine's count is an estimate of an unfinished game. The first engine among `players`
    (black's, if both are engines) is asked; (None, None) without one.
    """
    if game.reason not in ("two-passes", "cleanup"):
        return None, None
    for agent in players:
        if hasattr(agent, "final_score"):
            try:
                theirs = str(agent.final_score())
            except Exception:  # a failing referee costs the comparison, not the game
                return None, None
            try:
                return theirs, parse_score(theirs) != game.final.score()
            except ValueError:  # an unreadable count is kept for people, not compared
                return theirs, None
    return None, None


def play_match_game(index: int, player_a: Agent, player_b: Agent, config: MatchConfig,
                    names: tuple[str, str] | None = None,
                    on_move: Callable[[Position, int], None] | None = None) -> MatchGame:
    """Play game `index` of a match (A is black when `index` is even); `names` label A and B. With
    `config.opening`, the pair's random opening is played first (`openings.pair_opening`)."""
    label_a, label_b = names or (player_a.name, player_b.name)
    opening = pair_opening(config.size, config.opening, config.seed, index, config.komi)
    if opening:
        player_a, player_b = ScriptedOpening(player_a, dict(enumerate(opening))), ScriptedOpening(
            player_b, dict(enumerate(opening)))
    a_color = player_a_color(index)
    black, white = (player_a, player_b) if a_color == 1 else (player_b, player_a)
    black_name, white_name = (label_a, label_b) if a_color == 1 else (label_b, label_a)
    start = time.perf_counter()
    game = play_game(black, white, config.size, config.komi, config.max_moves, on_move)
    external, disagreement = external_count(game, (black, white))
    if disagreement:  # dead stones on the board: play them out, as servers do, then count again
        counts = f"after two passes the counts disagreed: ours {game.result}, the engine's {external}"
        game = play_cleanup(game, black, white, config.max_moves, on_move)
        if game.reason == "cleanup":
            external, disagreement = external_count(game, (black, white))
            game = dataclasses.replace(game, detail=counts)
    seconds = time.perf_counter() - start
    return MatchGame(index, black_name, white_name, a_color, game, seconds, external, disagreement, tuple(opening))


def play_match(make_a: Callable[[int], Agent], make_b: Callable[[int], Agent], indices: Iterable[int],
               config: MatchConfig, names: tuple[str, str]) -> Iterator[MatchGame]:
    """Play the games `indices`, yielding each as it ends; `make_x(seed)` gives a player per game."""
    for index in indices:
        seed_a, seed_b = game_seeds(config.seed, index)
        yield play_match_game(index, make_a(seed_a), make_b(seed_b), config, names)


def game_seeds(seed: int, index: int) -> tuple[int, int]:
    """Seeds of players A and B in game `index`: fixed by the match seed and the index alone."""
    return (seed * 1_000_003 + 2 * index) % 2**32, (seed * 1_000_003 + 2 * index + 1) % 2**32
