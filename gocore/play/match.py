"""Go games between two players and the games of a match, scored by Tromp-Taylor area.

The loop, forfeits and a match's pairing are the shared match core's (`gocore.play.game_match`,
which Baghchal's matches use too); this module is what only Go has on top of it: passes and the
Tromp-Taylor count (at two passes or the move cap), GTP engines as players (`GtpAgent`), a cleanup
phase when an engine counts otherwise (`play_cleanup`, `external_count`), SGF records and the
results row. `play_game` is the loop every Go match, demo and test game uses. A player loses the
game, with the reason recorded, when it plays an illegal move, resigns (returns `RESIGN`), raises,
or (an external engine) times out or dies.

Agents may implement two optional hooks, which `play_game` calls on each side's own object:
``start_game(size, komi, color)`` before the first move and ``observe(color, move)`` after every
move of either side. `GtpAgent` uses them to mirror the game into an external GTP engine.

`play_match_game` plays game `index` of a match between players A and B (A is black in even
games: colours alternate; games 2i and 2i + 1 share random opening i) and asks an external engine
for its own count of a finished game; `MatchGame` becomes an SGF record and a results row (the
Parquet schema is storage/schemas.py's).

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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from gocore.play import game_match
from gocore.play.game_match import DETAIL_CHARS, Forfeit, Hooks, a_score, game_seeds, seated
from gocore.play.game_match import player_a_side as player_a_color
from gocore.play.gtp_client import GtpClient, GtpEngineDied, GtpTimeout, parse_score
from gocore.play.openings import pair_opening
from gocore.rules.board import IllegalMove, Position
from gocore.rules.game import Game, GoGame
from gocore.rules.sgf import GameRecord
from gocore.search.agents import RESIGN, Agent

RULES = "Chinese"  # area scoring, positional superko: what we play and write as SGF RU
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


def _start_args(game: Game, color: int) -> tuple[int, float, int]:
    return game.board_size, game.komi, color  # start_game(size, komi, color)


def _observe_args(before: Position, color: int, move: int) -> tuple[int, int]:
    return color, move  # observe(color, move)


def _illegal_detail(color: int, move: Any, error: Exception) -> str:
    return str(error) if isinstance(error, IllegalMove) else f"{move!r} is not a move"


def _failure_reason(error: Exception) -> str:
    """Name a player's failure: an engine's timeout or death, else an error."""
    return "timeout" if isinstance(error, GtpTimeout) else "crash" if isinstance(error, GtpEngineDied) else "error"


HOOKS = Hooks(_start_args, _observe_args, _illegal_detail, _failure_reason)  # Go's hooks, GTP's failures


def _after(on_move: Callable[[Position, int], None] | None) -> Callable[[Position, int, Position], None] | None:
    """Go's `on_move(position_after, move)` as the shared loop's `on_move(before, move, after)`."""
    return None if on_move is None else lambda before, move, after: on_move(after, move)


def play_game(black: Agent, white: Agent, size: int = 9, komi: float = 7.5, max_moves: int | None = None,
              on_move: Callable[[Position, int], None] | None = None, opening: Sequence[int] = ()) -> GameResult:
    """Play one game (one agent object per side), `opening` moves first (`game_match.play_game`);
    `on_move(position_after, move)` after every move."""
    cap = 3 * size * size if max_moves is None else max_moves
    played = game_match.play_game(GoGame(size, komi), black, white, HOOKS, cap, opening, _after(on_move))
    return _result(played, "two-passes")


def play_cleanup(game: GameResult, black: Agent, white: Agent, max_moves: int | None = None,
                 on_move: Callable[[Position, int], None] | None = None) -> GameResult:
    """Go on with a game both sides passed out until both pass again, as servers do when the
    players' counts disagree: engines capture the stones they see as dead (``kgs-genmove_cleanup``,
    where they have it), ours play on, and the cleaned board is counted by Tromp-Taylor (reason
    ``cleanup``). Dead stones left on the board would otherwise count as alive."""
    final = game.final
    cap = len(game.moves) + (3 * final.size * final.size if max_moves is None else max_moves)
    players = {1: black, -1: white}
    moves = list(game.moves)
    resumed = final.move_number

    def passed_again(position: Position) -> bool:  # two passes counted from here
        return position.passes >= 2 and position.move_number >= resumed + 2

    for agent in players.values():
        if hasattr(agent, "set_cleanup"):
            agent.set_cleanup(True)
    try:
        position = game_match.play_moves(GoGame(final.size, final.komi), final, players, HOOKS, moves, cap,
                                         is_over=passed_again, on_move=_after(on_move))
    except Forfeit as forfeit:
        return _result(game_match.Played(moves, forfeit.position, forfeit), "cleanup")
    finally:
        for agent in players.values():
            if hasattr(agent, "set_cleanup"):
                agent.set_cleanup(False)
    return _result(game_match.Played(moves, position), "cleanup")


def _result(played: game_match.Played, ended_by: str) -> GameResult:
    """A game's `GameResult`: forfeited, or counted by Tromp-Taylor (ended by two passes, as
    `ended_by` names it, or at the move cap)."""
    moves, position, forfeit = played.moves, played.final, played.forfeit
    if forfeit is not None:
        result = f"{'B' if played.winner == 1 else 'W'}+{_RESULT_CODE.get(forfeit.reason, 'F')}"
        return GameResult(moves, position, played.winner, result, forfeit.reason, forfeit.detail)
    score = position.score()
    winner = 1 if score > 0 else -1 if score < 0 else 0
    over = len(moves) >= 2 and moves[-1][1] == moves[-2][1] == position.size ** 2
    return GameResult(moves, position, winner, position.result(), ended_by if over else "move-cap")


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
        return a_score(self.game.winner, self.a_color)

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
    opening = pair_opening(config.size, config.opening, config.seed, index, config.komi)
    black, white = seated(index, player_a, player_b)
    black_name, white_name = seated(index, *(names or (player_a.name, player_b.name)))
    start = time.perf_counter()
    game = play_game(black, white, config.size, config.komi, config.max_moves, on_move, opening)
    external, disagreement = external_count(game, (black, white))
    if disagreement:  # dead stones on the board: play them out, as servers do, then count again
        counts = f"after two passes the counts disagreed: ours {game.result}, the engine's {external}"
        game = play_cleanup(game, black, white, config.max_moves, on_move)
        if game.reason == "cleanup":
            external, disagreement = external_count(game, (black, white))
            game = dataclasses.replace(game, detail=counts)
    seconds = time.perf_counter() - start
    return MatchGame(index, black_name, white_name, player_a_color(index), game, seconds, external, disagreement,
                     tuple(opening))


def play_match(make_a: Callable[[int], Agent], make_b: Callable[[int], Agent], indices: Iterable[int],
               config: MatchConfig, names: tuple[str, str]) -> Iterator[MatchGame]:
    """Play the games `indices`, yielding each as it ends; `make_x(seed)` gives a player per game
    (`game_match.play_match`: seeded by `game_seeds`)."""
    return game_match.play_match(make_a, make_b, indices, config.seed,
                                 partial(play_match_game, config=config, names=names))


__all__ = ["DETAIL_CHARS", "RESIGN", "RULES", "GameResult", "GtpAgent", "MatchConfig", "MatchGame", "external_count",
           "game_seeds", "play_cleanup", "play_game", "play_match", "play_match_game", "player_a_color"]
