"""Differential tests of our rules engine (`gocore.rules.board`) against GNU Go as the referee, over GTP.

GNU Go runs with Chinese (area) rules and positional superko, as ours does. After every move of
random games, the points where the side to move may play and the stones on the board must agree;
on played-out games (only one-point eyes left) our Tromp-Taylor result must equal GNU Go's
`final_score`, whose dead-stone estimate has nothing left to decide there.

Oracle facts relied on (GNU Go 3.8; checked by `test_superko_refusals_agree_in_long_5x5_games`
and `test_gnugo_is_legal_and_all_legal_agree_on_every_point`): `all_legal` and `is_legal` both go
through GNU Go's `is_allowed_move` (occupied, simple ko, suicide, positional superko), so one
`all_legal` call stands in for N*N `is_legal` calls. GTP komi must be sent before `final_score`,
which GNU Go caches. Queries are pipelined (`send_many`): round trips, not GNU Go, cost here.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from gocore.play.gtp_client import GtpClient, color_letter, gnugo_command, parse_score, parse_vertices
from gocore.rules.board import IllegalMove, Position, replay_moves, result_text
from gocore.rules.coords import pass_move, to_gtp
from tests.helpers import position_from_ascii, random_game

pytestmark = pytest.mark.gnugo

NEIGHBOURS = ((1, 0), (-1, 0), (0, 1), (0, -1))
DIAGONALS = ((1, 1), (1, -1), (-1, 1), (-1, -1))


@pytest.fixture
def open_gnugo(gnugo_path: str):
    """Factory: a level-0 GNU Go on a board of the given size, closed after the test."""
    engines: list[GtpClient] = []

    def start(size: int) -> GtpClient:
        engine = GtpClient(gnugo_command(level=0, size=size, path=gnugo_path), name=f"gnugo-{size}")
        engine.boardsize(size)
        engines.append(engine)
        return engine

    yield start
    for engine in engines:
        engine.close()


def new_game(engine: GtpClient, komi: float = 7.5) -> None:
    """An empty board and a fresh move history (superko) on the engine, komi sent explicitly."""
    engine.clear_board()
    engine.komi(komi)


def points_of(position: Position, color: int) -> list[int]:
    """Sorted points holding `color`'s stones (+1 black, -1 white, 0 empty)."""
    return np.flatnonzero(position.stones.ravel() == color).tolist()


def gtp_list(points: list[int] | set[int], size: int) -> str:
    """Points as GTP vertices, for failure messages."""
    return " ".join(to_gtp(point, size) for point in sorted(points)) or "-"


def describe(position: Position, moves: list[int]) -> str:
    """Failure context: the board, side to move, ko point and the game so far in GTP."""
    size = position.size
    ko = "none" if position.ko is None else to_gtp(position.ko, size)
    game = " ".join(to_gtp(move, size) for move in moves)
    return f"{position!r}\nko: {ko}\nmoves: {game}"


def our_legal_points(position: Position) -> list[int]:
    """Points (pass excluded) legal for the side to move; `legal_moves` and `is_legal` must agree."""
    size = position.size
    points = np.flatnonzero(position.legal_moves()[:-1]).tolist()
    one_by_one = [point for point in range(size * size) if position.is_legal(point)]
    assert points == one_by_one, f"legal_moves and is_legal disagree:\n{position!r}"
    return points


def gnugo_view(engine: GtpClient, color: int, size: int,
               first: list[str]) -> tuple[list[int], list[int], list[int]]:
    """GNU Go's (black stones, white stones, legal points for `color`) after the `first` commands.

    One pipelined round trip per position: on a loaded machine the wake-ups, not GNU Go, cost.
    """
    queries = ["list_stones black", "list_stones white", f"all_legal {color_letter(color)}"]
    texts = engine.send_many([*first, *queries])
    black, white, legal = (parse_vertices(text, size) for text in texts[-3:])
    return black, white, legal


def assert_agrees_with_gnugo(engine: GtpClient, position: Position, moves: list[int],
                             first: list[str] | None = None) -> None:
    """Same stones, and the same legal points for the side to move, as GNU Go (after `first`)."""
    size = position.size
    black, white, legal = gnugo_view(engine, position.to_play, size, first or [])
    for name, theirs, color in (("black", black, 1), ("white", white, -1)):
        assert theirs == points_of(position, color), (
            f"{name} stones differ: GNU Go has {gtp_list(theirs, size)}\n" + describe(position, moves))
    ours, theirs = set(our_legal_points(position)), set(legal)
    assert ours == theirs, (
        f"legal points differ: only ours {gtp_list(ours - theirs, size)}, "
        f"only GNU Go's {gtp_list(theirs - ours, size)}\n" + describe(position, moves))


def refusal_reasons(position: Position) -> dict[int, str]:
    """Why each empty point is illegal for the side to move (ko, suicide, superko)."""
    reasons = {}
    for point in points_of(position, 0):
        if not position.is_legal(point):
            try:
                position.play(point)
            except IllegalMove as refusal:
                reasons[point] = refusal.reason
    return reasons


def replay_against_gnugo(engine: GtpClient, moves: list[int], size: int) -> Iterator[Position]:
    """Replay a game on both engines, comparing after every move; yields each position (the
    engine is at that position while the caller looks at it), the final one included."""
    new_game(engine)
    boards, _ = replay_moves(Position.initial(size), moves)
    position, last_play = Position.initial(size), []
    for index, move in enumerate(moves):
        assert_agrees_with_gnugo(engine, position, moves[:index], first=last_play)
        assert np.array_equal(boards[index], position.stones), "replay_moves and Position.play disagree"
        yield position
        last_play = [f"play {color_letter(position.to_play)} {to_gtp(move, size)}"]
        position = position.play(move)
    assert_agrees_with_gnugo(engine, position, moves, first=last_play)
    yield position


def is_own_eye(position: Position, point: int, color: int) -> bool:
    """A one-point eye `color` should never fill: the rule of `gocore.rules.batch.is_eye`, on `stones`."""
    stones, size = position.stones, position.size
    row, col = divmod(point, size)
    if stones[row, col] != 0:
        return False
    for dr, dc in NEIGHBOURS:
        r, c = row + dr, col + dc
        if 0 <= r < size and 0 <= c < size and stones[r, c] != color:
            return False
    on_board = [(row + dr, col + dc) for dr, dc in DIAGONALS
                if 0 <= row + dr < size and 0 <= col + dc < size]
    edge = 1 if len(on_board) < 4 else 0
    enemies = sum(1 for r, c in on_board if stones[r, c] == -color)
    return enemies + edge < 2


def played_out_game(size: int, rng: np.random.Generator, komi: float) -> tuple[list[int], Position]:
    """Random legal moves that never fill the mover's own eyes, until two passes."""
    position = Position.initial(size, komi)
    moves: list[int] = []
    while not position.is_game_over():
        assert len(moves) < 10 * size * size, "a random game did not end: " + describe(position, moves)
        legal = [point for point in np.flatnonzero(position.legal_moves()[:-1])
                 if not is_own_eye(position, int(point), position.to_play)]
        move = int(rng.choice(legal)) if legal else pass_move(size)
        position = position.play(move)
        moves.append(move)
    return moves, position


def has_only_one_point_eyes(position: Position) -> bool:
    """True if every empty point's neighbours are all one colour: nothing left to dispute."""
    stones, size = position.stones, position.size
    for point in points_of(position, 0):
        row, col = divmod(point, size)
        colors = {int(stones[row + dr, col + dc]) for dr, dc in NEIGHBOURS
                  if 0 <= row + dr < size and 0 <= col + dc < size}
        if len(colors) != 1 or 0 in colors:
            return False
    return True


@pytest.mark.parametrize(("size", "games"), [(9, 100), (13, 8)])
def test_legal_points_and_stones_agree_in_random_games(open_gnugo, size: int, games: int):
    engine = open_gnugo(size)
    rng = np.random.default_rng(20240 + size)
    positions = kos = 0
    for _ in range(games):
        moves, _ = random_game(size, rng)
        for position in replay_against_gnugo(engine, moves, size):
            positions += 1
            kos += position.ko is not None
    assert positions >= games * size * size  # random games run to the 2*N*N move cap or near it
    assert kos > 0, "no ko arose: the games did not exercise the ko rule"


def test_superko_refusals_agree_in_long_5x5_games(open_gnugo):
    size = 5
    engine = open_gnugo(size)
    rng = np.random.default_rng(55)
    superko_positions = 0
    for _ in range(150):
        moves, _ = random_game(size, rng, max_moves=150)
        for position in replay_against_gnugo(engine, moves, size):
            reasons = refusal_reasons(position)
            if "superko" not in reasons.values():
                continue
            superko_positions += 1
            # is_legal must refuse what all_legal leaves out, superko included.
            engine_says = {point: engine.is_legal(position.to_play, point, size) for point in reasons}
            assert not any(engine_says.values()), describe(position, moves)
    assert superko_positions >= 10, "too few superko refusals to test the rule"


def test_gnugo_is_legal_and_all_legal_agree_on_every_point(open_gnugo):
    size = 9
    engine = open_gnugo(size)
    new_game(engine)
    moves, _ = random_game(size, np.random.default_rng(9), max_moves=120)
    position = Position.initial(size)
    for move in moves:
        if position.move_number % 20 == 0:
            one_by_one = [p for p in range(size * size) if engine.is_legal(position.to_play, p, size)]
            assert one_by_one == engine.all_legal(position.to_play, size)
        engine.play(position.to_play, move, size)
        position = position.play(move)


@pytest.mark.parametrize(("size", "games"), [(9, 100), (5, 100), (13, 10)])
def test_played_out_results_agree_with_gnugo_final_score(open_gnugo, size: int, games: int):
    engine = open_gnugo(size)
    rng = np.random.default_rng(900 + size)
    for game in range(games):
        komi = (7.5, 7.0, 0.5)[game % 3]  # integer komi lets jigo ("0") happen on odd boards
        moves, position = played_out_game(size, rng, komi)
        assert has_only_one_point_eyes(position), describe(position, moves)
        new_game(engine, komi)
        plays = [f"play {color_letter(1 if index % 2 == 0 else -1)} {to_gtp(move, size)}"
                 for index, move in enumerate(moves)]
        theirs = engine.send_many([*plays, "final_score"])[-1]  # the whole game in one round trip
        assert (parse_score(theirs), result_text(parse_score(theirs))) == (position.score(), position.result()), (
            f"game {game}: ours {position.result()}, GNU Go {theirs} "
            f"(dead: {engine.send('final_status_list dead') or '-'}, "
            f"seki: {engine.send('final_status_list seki') or '-'})\n" + describe(position, moves))


KO_DIAGRAM = """
    . . . . .
    . X O . .
    X O . O .
    . X O . .
    . . . . .
"""
KO_CAPTURE, KO_POINT = 12, 11  # black C3 takes the white stone on B3, which becomes the ko point


def set_up_on_both(engine: GtpClient, diagram: str) -> Position:
    """Our position for an ASCII board, and the same stones played onto GNU Go's empty board."""
    position = position_from_ascii(diagram)
    new_game(engine)
    for color in (1, -1):
        for point in points_of(position, color):
            engine.play(color, point, position.size)
    return position


def play_on_both(engine: GtpClient, position: Position, move: int) -> Position:
    """Play the side to move's `move` on GNU Go's board and ours."""
    engine.play(position.to_play, move, position.size)
    return position.play(move)


def test_ko_is_retaken_only_after_an_exchange_elsewhere(open_gnugo):
    engine = open_gnugo(5)
    position = play_on_both(engine, set_up_on_both(engine, KO_DIAGRAM), KO_CAPTURE)
    assert position.ko == KO_POINT
    assert not position.is_legal(KO_POINT) and not engine.is_legal(-1, KO_POINT, 5)
    position = play_on_both(engine, position, 24)  # white E1: a ko threat
    position = play_on_both(engine, position, 20)  # black A1 answers it
    assert position.is_legal(KO_POINT) and engine.is_legal(-1, KO_POINT, 5)
    retaken = play_on_both(engine, position, KO_POINT)
    assert retaken.stones.ravel()[KO_CAPTURE] == 0
    assert engine.list_stones(1, 5) == points_of(retaken, 1)


def test_the_capturer_may_fill_its_own_ko_point_out_of_turn(open_gnugo):
    engine = open_gnugo(5)
    position = set_up_on_both(engine, KO_DIAGRAM).play(KO_CAPTURE)
    engine.play(1, KO_CAPTURE, 5)
    assert position.ko == KO_POINT and not engine.is_legal(-1, KO_POINT, 5)
    assert engine.is_legal(1, KO_POINT, 5)  # black filling B3 makes a new position
    assert position.is_legal(KO_POINT, color=1)
