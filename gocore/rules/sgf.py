"""SGF game records: `GameRecord`, its typed `SgfError`s, writing it as SGF and replaying it.

Start at `GameRecord`, then `write` (a UTF-8 FF[4] game: the main line, with the record's
`Variation`s branching off it) and `replay` (the positions, with legality checked). Reading SGF files and collections is `gocore.rules.sgf_read`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sgfmill import sgf_grammar, sgf_properties

from gocore.errors import GozeroError
from gocore.rules.board import MAX_SIZE, MIN_SIZE, IllegalMove, Position
from gocore.rules.coords import to_gtp, to_sgf

_RESULT_WINNER = re.compile(r"\s*(B|W)(?:LACK|HITE)?\s*\+", re.IGNORECASE)
_DRAWS = frozenset({"0", "draw", "jigo"})
_RESULT_MARGIN = re.compile(r"\s*(B|W)(?:LACK|HITE)?\s*\+\s*(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)
_COLOR_LETTER = {1: "B", -1: "W"}


class SgfError(GozeroError, ValueError):
    """An SGF game we refuse; `reason` is machine-readable (``syntax``, ``illegal-move@37``, ...)."""

    def __init__(self, reason: str, detail: str, game_index: int | None = None, where: str | None = None):
        self.reason, self.detail, self.game_index = reason, detail, game_index
        super().__init__(f"{where}: {detail}" if where else detail)

    def located(self, game_index: int, where: str) -> SgfError:
        """The same error, naming the game it comes from."""
        return SgfError(self.reason, self.detail, game_index, where)


@dataclass(frozen=True)
class Variation:
    """Moves played instead of a main-line move, from the position before it; a comment on its first."""

    moves: tuple[tuple[int, int], ...]  # (colour, move); pass = size*size
    comment: str | None = None

    def __post_init__(self) -> None:
        if not self.moves:
            raise ValueError("a variation needs at least one move")


@dataclass
class GameRecord:
    """One game: board, rules, setup, moves and metadata. Colours: +1 black, -1 white."""

    size: int
    komi: float = 7.5
    rules: str | None = None
    handicap: int = 0
    setup_black: list[int] = field(default_factory=list)  # AB points (move ints)
    setup_white: list[int] = field(default_factory=list)  # AW points
    moves: list[tuple[int, int]] = field(default_factory=list)  # (colour, move); pass = size*size
    winner: int | None = None  # +1 black, -1 white, 0 draw, None unknown or void
    result: str | None = None  # RE as written
    player_black: str | None = None
    player_white: str | None = None
    rank_black: str | None = None
    rank_white: str | None = None
    date: str | None = None
    source: str | None = None  # free text, e.g. "file.sgf#3"
    comments: dict[int, str] = field(default_factory=dict)  # move index -> comment on that move
    declared_to_play: int | None = None  # PL of the root: who moves first, if the file says
    variations: dict[int, list[Variation]] = field(default_factory=dict)  # move index -> alternatives to it
    marks: dict[int, dict[str, str]] = field(default_factory=dict)  # move index -> SGF properties, e.g. {"BM": "1"}

    @property
    def first_to_play(self) -> int:
        """Colour of the first move; else PL; else white after handicap stones; else black."""
        if self.moves:
            return self.moves[0][0]
        if self.declared_to_play is not None:
            return self.declared_to_play
        return -1 if self.handicap >= 2 and self.setup_black else 1


def winner_from_result(result: str | None) -> int | None:
    """+1 / -1 / 0 (draw) from an RE text like ``B+R``, ``w + 3.5``, ``Jigo``; None if void/unknown."""
    if result is None:
        return None
    match = _RESULT_WINNER.match(result)
    if match:
        return 1 if match.group(1).upper() == "B" else -1
    return 0 if result.strip().lower() in _DRAWS else None


def result_margin(result: str | None) -> float | None:
    """Black's lead in points from an RE text with a count (``B+3.5`` -> 3.5, ``W+2`` -> -2.0, a
    draw -> 0.0); None for a resignation, time, forfeit or unknown result."""
    if result is None:
        return None
    match = _RESULT_MARGIN.match(result)
    if match:
        return float(match.group(2)) * (1 if match.group(1).upper() == "B" else -1)
    return 0.0 if result.strip().lower() in _DRAWS else None


def write(record: GameRecord) -> str:
    """The record as a UTF-8 FF[4] SGF game; `sgf_read.read_games` gives its main line back."""
    size = record.size
    unplaced = (set(record.comments) | set(record.variations) | set(record.marks)) - set(range(len(record.moves)))
    if unplaced:
        raise ValueError(f"comments, variations or marks on moves {sorted(unplaced)} that the record does not have")
    root: dict[str, list[bytes]] = {
        "FF": [b"4"], "GM": [b"1"], "CA": [b"UTF-8"], "SZ": [str(size).encode("ascii")],
        "KM": [sgf_properties.serialise_real(record.komi)]}
    for identifier, value in (("RU", record.rules), ("PB", record.player_black),
                              ("PW", record.player_white), ("BR", record.rank_black),
                              ("WR", record.rank_white), ("DT", record.date), ("RE", _result_of(record))):
        if value is not None:
            root[identifier] = [_escape(value)]
    if record.handicap:
        root["HA"] = [str(record.handicap).encode("ascii")]
    if record.declared_to_play is not None:
        root["PL"] = [_COLOR_LETTER[record.declared_to_play].encode("ascii")]
    for identifier, points in (("AB", record.setup_black), ("AW", record.setup_white)):
        if points:
            root[identifier] = [to_sgf(point, size).encode("ascii") for point in points]
    return sgf_grammar.serialise_game_tree(_game_tree(record, root)).decode("utf-8")


def _game_tree(record: GameRecord, root: dict[str, list[bytes]]) -> sgf_grammar.Coarse_game_tree:
    """The main line as node sequences split before each move with variations, built from the end
    (no recursion: a long game with a variation at every move nests hundreds deep)."""
    splits = sorted(index for index, found in record.variations.items() if found)
    below = None
    segments = list(zip([0, *splits], [*splits, len(record.moves)]))  # the first may hold the root alone
    for number, (start, end) in reversed(list(enumerate(segments))):
        tree = sgf_grammar.Coarse_game_tree()
        tree.sequence = ([root] if number == 0 else []) + [_move_node(record, i) for i in range(start, end)]
        if below is not None:
            tree.children = [below, *(_variation_tree(record, v) for v in record.variations[end])]
        below = tree
    return below


def _variation_tree(record: GameRecord, variation: Variation) -> sgf_grammar.Coarse_game_tree:
    tree = sgf_grammar.Coarse_game_tree()
    tree.sequence = [{_COLOR_LETTER[color]: [to_sgf(move, record.size).encode("ascii")]}
                     for color, move in variation.moves]
    if variation.comment is not None:
        tree.sequence[0]["C"] = [_escape(variation.comment)]
    return tree


def _move_node(record: GameRecord, index: int) -> dict[str, list[bytes]]:
    color, move = record.moves[index]
    node = {_COLOR_LETTER[color]: [to_sgf(move, record.size).encode("ascii")]}
    if index in record.comments:
        node["C"] = [_escape(record.comments[index])]
    for identifier, value in record.marks.get(index, {}).items():
        node[identifier] = [_escape(value)]
    return node


def _result_of(record: GameRecord) -> str | None:
    """RE to write: the text as read, else one made from the winner (B+, W+, 0)."""
    if record.result is not None:
        return record.result
    return {1: "B+", -1: "W+", 0: "0"}.get(record.winner)  # type: ignore[arg-type]


def _escape(text: str) -> bytes:
    return sgf_grammar.escape_text(text.encode("utf-8"))


def replay(record: GameRecord) -> list[Position]:
    """The position before each move and after the last (len = moves + 1); raises SgfError."""
    where = record.source or "SGF"
    if not MIN_SIZE <= record.size <= MAX_SIZE:
        raise SgfError("board-size", f"board size {record.size} is outside {MIN_SIZE}..{MAX_SIZE}",
                       where=where)
    try:
        position = Position.from_setup(record.size, record.setup_black, record.setup_white,
                                       to_play=record.first_to_play, komi=record.komi)
    except ValueError as exc:
        raise SgfError("setup-conflict", f"setup stones: {exc}", where=where) from exc
    positions = [position]
    for number, (color, move) in enumerate(record.moves, start=1):
        try:
            position = position.play(move, color)
        except IllegalMove as exc:
            vertex = to_gtp(move, record.size) if 0 <= move <= record.size ** 2 else str(move)
            raise SgfError(f"illegal-move@{number}", f"move {number} ({_COLOR_LETTER.get(color, color)} "
                           f"{vertex}) is illegal: {exc.reason}", where=where) from exc
        positions.append(position)
    return positions
