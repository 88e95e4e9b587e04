"""A slow, independent reading of `gocore.rules.tactics`' rows, in plain Python over `Position`.

Chains and liberties by flood fill on `Position.stones`; legality from `Position.legal_moves`
(the rules engine); what a move does by playing it with `Position.play` and comparing boards;
ladders read by playing them out with `Position.play` under GNU Go's `simple_ladder` rules
(attacker: one of the two liberties; defender: extend, or capture an adjacent attacker in atari;
3+ liberties escape, 1 is caught, 2 recurse). Nothing here shares code with the numba kernels.
"""

from __future__ import annotations

import numpy as np

from gocore.rules import tactics
from gocore.rules.board import IllegalMove, Position

DIAGONALS = ((1, 1), (1, -1), (-1, 1), (-1, -1))


def neighbours(point: int, size: int) -> list[int]:
    """The on-board orthogonal neighbours of a point."""
    row, col = divmod(point, size)
    return [r * size + c for r, c in ((row - 1, col), (row + 1, col), (row, col - 1), (row, col + 1))
            if 0 <= r < size and 0 <= c < size]


def chain_at(stones: np.ndarray, point: int) -> tuple[set[int], set[int]]:
    """(stones, liberties) of the chain on `point` of an (N, N) board."""
    size, flat = stones.shape[0], stones.reshape(-1)
    colour, members, liberties, todo = flat[point], {point}, set(), [point]
    while todo:
        for q in neighbours(todo.pop(), size):
            if flat[q] == 0:
                liberties.add(q)
            elif flat[q] == colour and q not in members:
                members.add(q)
                todo.append(q)
    return members, liberties


def is_own_eye(stones: np.ndarray, point: int, colour: int) -> bool:
    """The one-point eye rule of `gocore.rules.batch.is_eye`, on (N, N) stones."""
    size, flat = stones.shape[0], stones.reshape(-1)
    if flat[point] != 0 or any(flat[q] != colour for q in neighbours(point, size)):
        return False
    row, col = divmod(point, size)
    corners = [(row + dr, col + dc) for dr, dc in DIAGONALS if 0 <= row + dr < size and 0 <= col + dc < size]
    enemies = sum(1 for r, c in corners if stones[r, c] == -colour)
    return enemies + (len(corners) < 4) < 2


def is_caught(position: Position, target: int, attacker_to_move: bool) -> bool:
    """True if the chain on `target` is caught in a ladder (2 liberties if the attacker is to move,
    1 if the defender is)."""
    stones = position.stones
    defender, size = int(stones.reshape(-1)[target]), position.size
    members, liberties = chain_at(stones, target)
    if attacker_to_move:
        options, mover = sorted(liberties), -defender
    else:
        captures: set[int] = set()  # the last liberty of every adjacent attacking chain in atari
        for x in members:
            for q in neighbours(x, size):
                if stones.reshape(-1)[q] == -defender and len(attacker := chain_at(stones, q)[1]) == 1:
                    captures |= attacker
        options, mover = sorted(liberties | captures), defender
    for move in options:
        try:
            after = position.play(move, mover)
        except IllegalMove:
            continue
        left = len(chain_at(after.stones, target)[1])
        if attacker_to_move and left == 1 and is_caught(after, target, False):
            return True
        if not attacker_to_move and (left >= 3 or (left == 2 and not is_caught(after, target, True))):
            return False
    return not attacker_to_move


def escapes_here(position: Position, after: Position, move: int) -> bool:
    """True if `move` (played: `after`) is a ladder defence that saves an own chain in atari."""
    stones, size, mover = position.stones, position.size, position.to_play
    flat = stones.reshape(-1)
    in_atari = [q for q in neighbours(move, size) if flat[q] == mover and len(chain_at(stones, q)[1]) == 1]
    for q in neighbours(move, size):
        members, liberties = chain_at(stones, q) if flat[q] == -mover else (set(), set())
        if len(liberties) == 1:  # the move captures it: own chains in atari around it are defended
            in_atari += [y for x in members for y in neighbours(x, size)
                         if flat[y] == mover and len(chain_at(stones, y)[1]) == 1]
    for x in in_atari:
        left = len(chain_at(after.stones, x)[1])
        if left >= 3 or (left == 2 and not is_caught(after, x, True)):
            return True
    return False


def reference_rows(position: Position, ladders: bool = True) -> np.ndarray:
    """(tactics.ROWS, N*N) int16: what `tactics.analyse_positions` must give for `position`."""
    stones, size, mover = position.stones, position.size, position.to_play
    flat, legal = stones.reshape(-1), position.legal_moves()
    rows = np.zeros((tactics.ROWS, size * size), np.int16)
    for point in range(size * size):
        if flat[point] != 0:
            rows[tactics.LIBERTIES, point] = min(len(chain_at(stones, point)[1]), tactics.LIBERTY_CAP)
            continue
        rows[tactics.EYE, point] = is_own_eye(stones, point, mover)
        if not legal[point]:
            continue
        after = position.play(point)
        members, liberties = chain_at(after.stones, point)
        rows[tactics.LEGAL, point] = 1
        rows[tactics.CAPTURES, point] = np.sum(flat == -mover) - np.sum(after.stones == -mover)
        rows[tactics.LIBERTIES_AFTER, point] = min(len(liberties), tactics.LIBERTY_CAP)
        rows[tactics.SELF_ATARI, point] = len(members) if len(liberties) == 1 else 0
        if ladders:
            rows[tactics.LADDER_CAPTURE, point] = any(
                flat[q] == -mover and len(chain_at(stones, q)[1]) == 2
                and len(chain_at(after.stones, q)[1]) == 1 and is_caught(after, q, False)
                for q in neighbours(point, size))
            rows[tactics.LADDER_ESCAPE, point] = escapes_here(position, after, point)
    return rows
