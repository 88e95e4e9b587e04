"""Baghchal text: the `baghchal` library's move text, its PGN-like records and FEN-like positions,
and a text board (for people and for tests' hand-drawn positions).

    move text   G33 (place a goat on row 3, column 3), G3334 (move a goat), B1122 (move a tiger),
                Bx1133 (a tiger jumps from 11 over 22 to 33, capturing); rows and columns 1..5
    record      1. G33 B1122 2. G44 Bx2244# 0-1  (the library writes "# 1-0" Goat won, "# 0-1"
                Tiger won, "# 1/2-1/2" a draw after the last move of a finished game)
    FEN         B3B/5/5/5/B3B G 0  (rows from the top, B tiger, G goat, digits empty points; the
                side to move; the goat moves made so far, placements and steps)

Records always start from the initial position (the library has no set-up). A record that is
not Baghchal (SGF, chess, another board) is refused with the reason, never misread; an illegal
move names its ply and why (`RecordError`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gocore.errors import GozeroError
from gocore.rules.baghchal.geometry import (
    ACTION_FROM,
    ACTION_OF,
    ACTION_TO,
    FIRST_JUMP,
    FIRST_STEP,
    POINTS,
    SIZE,
    point_of_text,
    point_text,
)
from gocore.rules.baghchal.kernels import GOATS
from gocore.rules.baghchal.position import (
    DEFAULT_RULES,
    GOAT,
    TIGER,
    BaghchalRules,
    IllegalAction,
    Position,
)

RESULT_TEXT = {GOAT: "1-0", TIGER: "0-1", 0: "1/2-1/2"}
_MOVE = re.compile(r"(?P<piece>[GB])(?P<capture>x?)(?P<points>[0-9]{2}|[0-9]{4})")
_NUMBER = re.compile(r"(?P<number>[0-9]+)\.")


class RecordError(GozeroError, ValueError):
    """A Baghchal record, move or position that cannot be read as one; the message says where and why."""


# -------------------------------------------------------------- moves
def move_text(position: Position, action: int) -> str:
    """The library's text of `action` played by the side to move in `position` (G33, G3334, B1122, Bx1133)."""
    piece = "G" if position.to_play == GOAT else "B"
    if action < FIRST_STEP:
        return f"G{point_text(action)}"
    capture = "x" if action >= FIRST_JUMP else ""
    return f"{piece}{capture}{point_text(int(ACTION_FROM[action]))}{point_text(int(ACTION_TO[action]))}"


def action_of_text(position: Position, text: str) -> int:
    """The action a move text names for the side to move in `position` (not yet checked legal:
    `Position.play` does that); RecordError if the text is no Baghchal move or not this side's."""
    found = _MOVE.fullmatch(text.strip())
    if found is None:
        raise RecordError(f"{text!r} is not a Baghchal move (G33, G3334, B1122 or Bx1133)")
    piece, is_capture, digits = found["piece"], bool(found["capture"]), found["points"]
    points = [_point(digits[i:i + 2], text) for i in range(0, len(digits), 2)]
    mover = "G" if position.to_play == GOAT else "B"
    if piece != mover:
        raise RecordError(f"{text}: it is {'Goat' if mover == 'G' else 'Tiger'}'s turn")
    if len(points) == 1:
        if piece == "B" or is_capture:
            raise RecordError(f"{text}: only goats are placed (G and one point)")
        return points[0]
    if piece == "G" and is_capture:
        raise RecordError(f"{text}: goats cannot capture")
    action = int(ACTION_OF[points[0], points[1]])
    if action < 0:
        raise RecordError(f"{text}: no line joins {digits[:2]} to {digits[2:]} in one step or one jump")
    if is_capture and action < FIRST_JUMP:
        raise RecordError(f"{text}: {digits[:2]} to {digits[2:]} is a step, not a capture: write {piece}{digits}")
    if not is_capture and action >= FIRST_JUMP:
        raise RecordError(f"{text}: {digits[:2]} to {digits[2:]} is a jump: a capture is written {piece}x{digits}")
    return action


def _point(digits: str, text: str) -> int:
    try:
        return point_of_text(digits)
    except ValueError:
        raise RecordError(f"{text}: point {digits} is off the 5x5 board (rows and columns 1-5)") from None


# -------------------------------------------------------------- records
def write_record(actions: Sequence[int], rules: BaghchalRules = DEFAULT_RULES) -> str:
    """The library's record of a game from the initial position: ``1. G33 B1122 2. G44 ...``, and
    ``# 1-0``, ``# 0-1`` or ``# 1/2-1/2`` after the last move once the game is over."""
    position, parts = Position.initial(rules), []
    for ply, action in enumerate(actions):
        text = move_text(position, action)
        parts.append(f"{ply // 2 + 1}. {text}" if ply % 2 == 0 else text)
        position = _played(position, int(action), ply, text)
    record = " ".join(parts)
    if position.is_game_over():
        record += f"# {RESULT_TEXT[position.winner]}"
    return record


def read_record(text: str, rules: BaghchalRules = DEFAULT_RULES) -> tuple[list[int], Position]:
    """(the actions, the final position) of a record in the library's notation; RecordError for
    anything else: another game's record, a wrong move number, an illegal move (its ply and why),
    or a result the moves do not reach."""
    body = text.strip()
    if not body:
        return [], Position.initial(rules)
    _refuse_other_games(body)
    position, actions, claimed = Position.initial(rules), [], None
    tokens = re.findall(r"[0-9]+\.|#|1/2-1/2|1-0|0-1|\*|[^\s#.]+\.?", body)
    for token in tokens:
        if claimed is not None and token not in ("#",):
            raise RecordError(f"{token!r} after the result {claimed}: a record ends with its result")
        if number := _NUMBER.fullmatch(token):
            _check_number(int(number["number"]), len(actions))
        elif token in RESULT_TEXT.values() or token == "*":
            claimed = token
        elif token != "#":
            action = _action_at(position, token, len(actions))
            position = _played(position, action, len(actions), token)
            actions.append(action)
    _check_result(claimed, position)
    return actions, position


def _refuse_other_games(body: str) -> None:
    """RecordError for text that is plainly another game's record."""
    if body.startswith("(;") or "GM[" in body[:200] or "SZ[" in body[:200]:
        raise RecordError("this is an SGF record (Go), not a Baghchal record (1. G33 B1122 ...)")
    if body.startswith("["):
        raise RecordError("this record has PGN tag pairs ([Event ...]): a chess record? Baghchal records "
                          "are moves only (1. G33 B1122 ...)")


def _check_number(number: int, ply: int) -> None:
    """RecordError unless move number `number` may stand before ply `ply` (0-based): Goat's."""
    if ply % 2:
        raise RecordError(f"move number {number}. after ply {ply}: Tiger's reply to Goat's move {ply // 2 + 1} "
                          "comes first")
    if number != ply // 2 + 1:
        raise RecordError(f"move number {number}. after ply {ply}: expected {ply // 2 + 1}.")


def _action_at(position: Position, token: str, ply: int) -> int:
    """The action of move text `token` at `ply` (0-based), with the ply in any error."""
    try:
        return action_of_text(position, token)
    except RecordError as error:
        raise RecordError(f"ply {ply + 1} ({_label(ply, token)}): {error}") from None


def _played(position: Position, action: int, ply: int, text: str) -> Position:
    try:
        return position.play(action)
    except IllegalAction as error:
        raise RecordError(f"ply {ply + 1} ({_label(ply, text)}) is illegal: {error}") from None


def _label(ply: int, text: str) -> str:
    return f"{ply // 2 + 1}. {text}" if ply % 2 == 0 else f"{ply // 2 + 1}... {text}"


def _check_result(claimed: str | None, position: Position) -> None:
    if claimed is None or claimed == "*":
        return
    if not position.is_game_over():
        raise RecordError(f"the record ends with {claimed}, but the game is not over after ply {position.ply}")
    if RESULT_TEXT[position.winner] != claimed:
        raise RecordError(f"the record ends with {claimed}, but by the rules it is {RESULT_TEXT[position.winner]} "
                          f"({position.reason})")


# -------------------------------------------------------------- FEN
def write_fen(position: Position) -> str:
    """The library's FEN of a position: rows from the top, the side to move, goat moves made."""
    board, rows = position.board(), []
    for row in board:
        text, empty = "", 0
        for cell in row:
            if cell == 0:
                empty += 1
                continue
            text += (str(empty) if empty else "") + ("G" if cell == GOAT else "B")
            empty = 0
        rows.append(text + (str(empty) if empty else ""))
    side = "G" if position.to_play == GOAT else "B"
    return f"{'/'.join(rows)} {side} {(position.ply + 1) // 2}"


def read_fen(text: str, rules: BaghchalRules = DEFAULT_RULES) -> Position:
    """The position of a FEN as the library writes it (repetitions before it unknown: the current
    arrangement counts once); RecordError for another board or an impossible position."""
    fields = text.split()
    if len(fields) != 3:
        raise RecordError(f"{text!r}: a Baghchal FEN has 3 fields (B3B/5/5/5/B3B G 0), not {len(fields)}")
    ranks, side, count = fields
    rows = ranks.split("/")
    if len(rows) != SIZE:
        raise RecordError(f"{text!r}: {len(rows)} rows, a Baghchal board has {SIZE}")
    goats = tigers = 0
    for row_index, row in enumerate(rows):
        col = 0
        for char in row:
            if char.isdigit() and char != "0":
                col += int(char)
                continue
            if char not in "BG" or col >= SIZE:
                raise RecordError(f"{text!r}: row {row_index + 1} ({row!r}) is not 5 points of B, G and digits 1-5")
            bit = 1 << (row_index * SIZE + col)
            goats, tigers = (goats | bit, tigers) if char == "G" else (goats, tigers | bit)
            col += 1
        if col != SIZE:
            raise RecordError(f"{text!r}: row {row_index + 1} ({row!r}) has {col} points, not {SIZE}")
    return _fen_position(text, goats, tigers, side, count, rules)


def _fen_position(text: str, goats: int, tigers: int, side: str, count: str, rules: BaghchalRules) -> Position:
    """The position of a FEN's parsed fields, checked for what the rules allow."""
    if side not in ("G", "B"):
        raise RecordError(f"{text!r}: the side to move is G or B, not {side!r}")
    if not count.isdigit():
        raise RecordError(f"{text!r}: the goat moves made is a number, not {count!r}")
    goat_moves, on_board = int(count), bin(goats).count("1")
    placed = min(goat_moves, GOATS)
    problems = [message for is_bad, message in (
        (bin(tigers).count("1") != 4, f"{bin(tigers).count('1')} tigers, the game has 4"),
        (on_board > placed, f"{on_board} goats on the board but only {placed} placed"),
        (placed - on_board > rules.captures_to_win, f"{placed - on_board} goats captured"),
        (side == "B" and goat_moves == 0, "Tiger to move before Goat's first move"),
    ) if is_bad]
    if problems:
        raise RecordError(f"{text!r}: " + "; ".join(problems))
    to_play = GOAT if side == "G" else TIGER
    ply = 2 * goat_moves if to_play == GOAT else 2 * goat_moves - 1
    seen = (goats | (tigers << POINTS),) if placed >= GOATS else ()
    return Position(goats, tigers, placed, placed - on_board, to_play, ply, seen, rules)


# -------------------------------------------------------------- text board
_DIAGONALS = ("  | \\ | / | \\ | / |", "  | / | \\ | / | \\ |")


def board_text(position: Position) -> str:
    """The board with its lines, rows and columns numbered as in the move text, and a status line."""
    lines = ["  1   2   3   4   5"]
    for row, cells in enumerate(position.board()):
        symbols = ["G" if cell == GOAT else "B" if cell == TIGER else "." for cell in cells]
        lines.append(f"{row + 1} " + "---".join(symbols))
        if row < SIZE - 1:
            lines.append(_DIAGONALS[row % 2])
    return "\n".join(lines) + "\n" + status_text(position)


def status_text(position: Position) -> str:
    """One line: whose turn (or the result), goats placed and captured."""
    counts = f"goats placed {position.placed}/{GOATS}, captured {position.captured}"
    if position.is_game_over():
        verdict = {GOAT: "Goat wins", TIGER: "Tiger wins", 0: "a draw"}[position.winner]
        return f"game over: {verdict} ({position.reason}); {counts}"
    return f"{'Goat' if position.to_play == GOAT else 'Tiger'} to move; {counts}"


def position_from_text(diagram: str, to_play: int = GOAT, placed: int | None = None,
                       rules: BaghchalRules = DEFAULT_RULES) -> Position:
    """A position from a drawn board (tests): rows of B (tiger), G (goat) and . (empty), with or
    without `board_text`'s numbers and lines. `placed` defaults to the goats drawn (none
    captured); the ply is the smallest that fits the goats placed and the side to move."""
    rows = []
    for line in diagram.strip("\n").splitlines():
        kept = "".join(ch for ch in line if ch not in " -|\\/")
        if len(kept) == SIZE + 1 and kept[0].isdigit():
            kept = kept[1:]
        if kept and set(kept) <= set("BG.") and len(kept) == SIZE:
            rows.append(kept)
        elif kept and not set(kept) <= set("12345"):
            raise RecordError(f"{line!r} is not a row of 5 points (B, G or .)")
    if len(rows) != SIZE:
        raise RecordError(f"a board has {SIZE} rows of points, this drawing has {len(rows)}")
    goats = sum(1 << (r * SIZE + c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch == "G")
    tigers = sum(1 << (r * SIZE + c) for r, row in enumerate(rows) for c, ch in enumerate(row) if ch == "B")
    placed = bin(goats).count("1") if placed is None else placed
    ply = 2 * placed if to_play == GOAT else 2 * placed - 1
    seen = (goats | (tigers << POINTS),) if placed >= GOATS else ()
    return Position(goats, tigers, placed, placed - bin(goats).count("1"), to_play, max(ply, 0), seen, rules)
