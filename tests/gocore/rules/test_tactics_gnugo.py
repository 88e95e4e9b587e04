"""`gocore.rules.tactics` on positions of real games against independent readings of the same
positions: liberties against `sgfmill` boards, legality against our rules engine, ladders against
GNU Go's own ladder reader (`ladder_attack`, its `simple_ladder`) over GTP.

Games: GNU Go self-play on 9x9 (levels 0 and 1, several openings: `tests.corpus`) and one 19x19
GNU Go game, where ladders across the board happen.

GNU Go answers one question: is a chain with exactly two liberties caught in a ladder with the
attacker to move (``ladder_attack``: ``1 <move>`` caught, ``0`` not, ``2``/``3`` only through a
ko, which these positions then leave out). Our per-point planes are put to it one ply above:
- a move at p is a ladder capture iff for some opponent chain of 2 liberties next to p, after p
  the chain is in atari and every defence (extend, or capture an adjacent attacker in atari)
  leaves it caught: 1 liberty, or 2 and GNU Go's ``ladder_attack`` succeeds;
- a move at p is a ladder escape iff it is such a defence of an own chain in atari after which
  the chain has 3+ liberties, or 2 and GNU Go's ``ladder_attack`` fails.
The defences and liberty counts come from the `tests.gocore.rules.tactics_reference` flood fill
(itself checked against sgfmill here).
"""

from __future__ import annotations

import numpy as np
import pytest
from sgfmill import boards

from gocore.play.gtp_client import GtpClient, color_letter, gnugo_command
from gocore.rules import tactics
from gocore.rules.board import Position, replay_moves
from gocore.rules.coords import from_rowcol, pass_move, to_gtp
from gocore.rules.sgf import GameRecord
from gocore.rules.tactics import analyse_games
from tests.corpus import gnugo_game
from tests.gocore.rules.tactics_reference import chain_at, neighbours

pytestmark = pytest.mark.gnugo


class KoDependent(Exception):
    """GNU Go says the ladder turns on a ko: not a yes/no question for a plane."""


@pytest.fixture(scope="module")
def real_games(gnugo_path: str) -> list[GameRecord]:
    """Six 9x9 GNU Go games (distinct openings, levels 0 and 1) and one 19x19 game of 110 moves."""
    openings = [from_rowcol(r, c, 9) for r, c in ((4, 4), (2, 6), (6, 2), (2, 2), (6, 6), (3, 5))]
    games = [gnugo_game(gnugo_path, opening, level=i % 2) for i, opening in enumerate(openings)]
    return games + [gnugo_opening(gnugo_path, 19, moves=110)]


def gnugo_opening(gnugo_path: str, size: int, moves: int) -> GameRecord:
    """The first `moves` moves of a GNU Go level-0 self-play game (no result: scoring an unfinished
    19x19 game costs GNU Go more than playing it)."""
    played: list[tuple[int, int]] = []
    with GtpClient(gnugo_command(level=0, size=size, path=gnugo_path) + ["--seed", "19"]) as engine:
        engine.boardsize(size)
        engine.clear_board()
        engine.komi(7.5)
        for k in range(moves):
            colour = 1 if k % 2 == 0 else -1
            move = engine.genmove(colour, size)
            if move is None or move == pass_move(size):
                break
            played.append((colour, move))
    return GameRecord(size=size, komi=7.5, moves=played, result=None, winner=None)


def positions_of(record: GameRecord) -> list[Position]:
    """The position before every move of a game."""
    position, positions = Position.initial(record.size, record.komi), []
    for colour, move in record.moves:
        positions.append(position)
        position = position.play(move, colour)
    return positions


def caught_by_gnugo(engine: GtpClient, stones: np.ndarray, target: int, size: int, commands: list[str]) -> bool:
    """After `commands`, is the chain on `target` (whose liberties on `stones` are counted by
    flood fill) caught with its attacker to move? 3+ liberties: no; 1 or 0: yes; 2: GNU Go."""
    left = len(chain_at(stones, target)[1])
    if left != 2:
        return left < 2
    answer = engine.send_many([*commands, f"ladder_attack {to_gtp(target, size)}",
                               *["undo"] * len(commands)])[len(commands)]
    if answer.split()[0] not in ("0", "1"):
        raise KoDependent(answer)
    return answer.startswith("1")


def defences(position: Position, target: int) -> list[int]:
    """The defender's ladder moves for the chain on `target` (in atari) that are legal now."""
    stones, size = position.stones, position.size
    flat, (members, liberties) = stones.reshape(-1), chain_at(stones, target)
    moves = set(liberties)
    for x in members:
        for q in neighbours(x, size):
            if flat[q] == -flat[target] and len(attacker := chain_at(stones, q)[1]) == 1:
                moves |= attacker
    return [move for move in sorted(moves) if position.is_legal(move, int(flat[target]))]


def gnugo_ladder_planes(engine: GtpClient, position: Position) -> tuple[np.ndarray, np.ndarray]:
    """(ladder capture, ladder escape) (N*N,) bool of the side to move, by GNU Go's reading."""
    size, mover, stones = position.size, position.to_play, position.stones
    flat = stones.reshape(-1)
    capture, escape = np.zeros(size * size, bool), np.zeros(size * size, bool)
    play = f"play {color_letter(mover)} "
    for point in np.flatnonzero(position.legal_moves()[:-1]):
        after = position.play(int(point))
        for y in neighbours(int(point), size):
            if flat[y] == -mover and len(chain_at(stones, y)[1]) == 2 and len(chain_at(after.stones, y)[1]) == 1:
                capture[point] |= all(
                    caught_by_gnugo(engine, after.play(d, -mover).stones, y, size,
                                    [play + to_gtp(int(point), size), f"play {color_letter(-mover)} {to_gtp(d, size)}"])
                    for d in defences(after, y))
        for x in {int(x) for x in np.flatnonzero(flat == mover) if len(chain_at(stones, int(x))[1]) == 1}:
            if int(point) in defences(position, x):
                escape[point] |= not caught_by_gnugo(engine, after.stones, x, size, [play + to_gtp(int(point), size)])
    return capture, escape


def test_liberties_agree_with_sgfmill_boards(real_games):
    for record in real_games:
        size = record.size
        board, positions = boards.Board(size), positions_of(record)
        rows = tactics.analyse_positions(positions, ladders=False)  # (T, ROWS, N*N)
        for t, (colour, move) in enumerate(record.moves):
            for point in range(size * size):
                row, col = divmod(point, size)
                if board.get(size - 1 - row, col) is None:
                    assert rows[t, tactics.LIBERTIES, point] == 0
                    continue
                assert rows[t, tactics.LIBERTIES, point] == min(sgfmill_liberties(board, row, col), tactics.LIBERTY_CAP)
            if move != pass_move(size):
                board.play(size - 1 - move // size, move % size, "b" if colour == 1 else "w")


def sgfmill_liberties(board: boards.Board, row: int, col: int) -> int:
    """Liberties of the chain at our (row, col) on an sgfmill board (its rows count from the bottom)."""
    size = board.side
    colour, chain, todo, liberties = board.get(size - 1 - row, col), {(row, col)}, [(row, col)], set()
    while todo:
        r, c = todo.pop()
        for q in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= q[0] < size and 0 <= q[1] < size:
                there = board.get(size - 1 - q[0], q[1])
                if there is None:
                    liberties.add(q)
                elif there == colour and q not in chain:
                    chain.add(q)
                    todo.append(q)
    return len(liberties)


def test_legal_points_of_replayed_games_agree_with_the_rules_engine(real_games):
    for record in real_games:
        start = Position.initial(record.size, record.komi)
        stones, movers = replay_moves(start, [m for _, m in record.moves], [c for _, c in record.moves])
        rows = analyse_games(stones[:-1].reshape(len(movers), -1), movers, np.array([0, len(movers)]), record.size,
                             ladders=False)
        for t, position in enumerate(positions_of(record)):
            np.testing.assert_array_equal(rows[t, tactics.LEGAL].astype(bool), position.legal_moves()[:-1])


def test_ladder_planes_agree_with_gnugo_reading(real_games, gnugo_path):
    compared = ko_dependent = captures = escapes = 0
    for record in real_games:
        size = record.size
        with GtpClient(gnugo_command(level=0, size=size, path=gnugo_path)) as engine:
            engine.boardsize(size)
            engine.clear_board()
            for position, (colour, move) in zip(positions_of(record), record.moves):
                ours = tactics.analyse_positions([position])[0]
                try:
                    capture, escape = gnugo_ladder_planes(engine, position)
                except KoDependent:
                    ko_dependent += 1
                else:
                    compared += 1
                    where = f"\n{position!r}\nmoves so far: {len(position.history)}"
                    np.testing.assert_array_equal(ours[tactics.LADDER_CAPTURE].astype(bool), capture, err_msg=where)
                    np.testing.assert_array_equal(ours[tactics.LADDER_ESCAPE].astype(bool), escape, err_msg=where)
                    captures, escapes = captures + capture.sum(), escapes + escape.sum()
                engine.play(colour, move, size)
    assert compared > 300 and ko_dependent < compared / 20
    assert captures >= 20 and escapes >= 20  # the games did read ladders both ways
