"""Board helpers behind GTP's end-of-game commands: chains for `final_status_list`, the
`kgs-genmove_cleanup` move that captures instead of passing, and the `showboard` diagram.

Under area scoring (Tromp-Taylor) every stone on the board is alive, so `final_status_list alive`
lists `chains` and a stone is dead only once captured: `cleanup_move` keeps playing captures, then
contact moves, while a legal move that fills no own eye remains. Start reading at `cleanup_move`.
"""

from __future__ import annotations

import numpy as np

from gocore.play.gtp_protocol import GtpFailure, expect_args
from gocore.rules.board import Position, own_eye_mask
from gocore.rules.coords import from_rowcol, to_gtp, to_rowcol


def chains(stones: np.ndarray) -> list[list[int]]:
    """The points of each chain of stones (N, N) int8, each chain sorted, chains by first point."""
    size = len(stones)
    seen: set[int] = set()
    found = []
    for start in np.flatnonzero(stones.ravel()):
        if int(start) in seen:
            continue
        chain, frontier = [], [int(start)]
        seen.add(int(start))
        while frontier:
            point = frontier.pop()
            chain.append(point)
            row, col = to_rowcol(point, size)
            for r, c in ((row - 1, col), (row + 1, col), (row, col - 1), (row, col + 1)):
                if not (0 <= r < size and 0 <= c < size and stones[r, c] == stones[row, col]):
                    continue
                if (neighbour := from_rowcol(r, c, size)) not in seen:
                    seen.add(neighbour)
                    frontier.append(neighbour)
        found.append(sorted(chain))
    return found


STATUSES = ("alive", "dead", "seki")


def final_status_list(args: list[str], position: Position) -> str:
    """``final_status_list alive|dead|seki``: every chain is alive (one per line), none dead or in seki."""
    (status,) = expect_args(args, 1, "final_status_list alive|dead|seki")
    if status not in STATUSES:
        raise GtpFailure(f"syntax error: status must be alive, dead or seki, not {status!r}")
    if status != "alive":
        return ""  # Tromp-Taylor: a stone on the board is alive; only captures remove stones
    return "\n".join(" ".join(to_gtp(m, position.size) for m in chain) for chain in chains(position.stones))


def _captures(position: Position, color: int, move: int) -> int:
    """Opponent stones that `color` playing the legal `move` would capture."""
    opponent = -color
    return int((position.stones == opponent).sum() - (position.play(move, color).stones == opponent).sum())


def cleanup_move(position: Position, color: int, move: int, rng: np.random.Generator) -> int:
    """Instead of `move` (a pass or resignation): a capture, else a contact move, while a sensible
    move remains (a legal move that fills no own eye); ties are broken with `rng`."""
    candidates = np.flatnonzero((position.legal_moves(color) & ~own_eye_mask(position, color))[:-1])
    if len(candidates) == 0:
        return move
    opponent = np.pad(position.stones == -color, 1).astype(np.int8)  # (N+2, N+2)
    contacts = (opponent[:-2, 1:-1] + opponent[2:, 1:-1] + opponent[1:-1, :-2] + opponent[1:-1, 2:]).ravel()
    keys = [(_captures(position, color, int(m)) if contacts[m] else 0, int(contacts[m])) for m in candidates]
    best = max(keys)
    return int(rng.choice([m for m, key in zip(candidates, keys) if key == best]))


def board_diagram(position: Position, moves: list[tuple[int, int]] | tuple, komi: float) -> str:
    """`showboard`'s text: the board with GTP coordinates around it, then side to move, komi and last move."""
    size = position.size
    columns = " ".join(to_gtp(from_rowcol(0, col, size), size)[0] for col in range(size))
    lines = [f"   {columns}"]
    for row, stones in enumerate(position.to_ascii().splitlines()):
        label = to_gtp(from_rowcol(row, 0, size), size)[1:]
        lines.append(f"{label:>2} {stones} {label}")
    lines.append(f"   {columns}")
    side = "black" if position.to_play == 1 else "white"
    last = "" if not moves else f", last {to_gtp(moves[-1][1], size)}"
    lines.append(f"{side} to play, komi {komi:g}, move {len(moves)}{last}")
    return "\n" + "\n".join(lines)
