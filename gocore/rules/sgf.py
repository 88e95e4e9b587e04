"""SGF game records: `GameRecord`, read from and written to SGF with sgfmill; typed `SgfError`s.

Start at `read_games` (a file may hold a collection of games), `write` and `replay`.

Parsing is sgfmill's: `sgf_grammar` tokenises each game of a collection exactly once into a coarse
tree of raw property maps, and we read raw values from its main line (the first child at every
branch; other variations are ignored). We skip sgfmill's `Sgf_game` node objects and
`get_move()` (rows counted from the bottom): raw points go through one lookup table built with
`gocore.rules.coords`, which is both faster and keeps row 0 at the top. Legality is not checked while
reading; `replay` (or the encoder's batch replay) does that.

Fast path: most games are a root of upper-case properties with unescaped values, then only
``;B[xy]``/``;W[xy]`` nodes. One regex match (`_FAST_GAME`) recognises such a game without sgfmill's
per-token tokeniser; its root becomes the property map sgfmill would build and goes through the
same code (root properties, setup, even a move in the root), and each move is one lookup of
``B[xy]`` in a table (a miss replays the moves through `_read_main_line`, for the same error).
Any other game is parsed by sgfmill as before; both paths give identical results, which
tests/gocore/rules/test_sgf_fast.py checks.

Decisions, for real-world files:
- FF[1..4] are all read; ``tt`` is a pass on boards up to 19x19 (also in FF[4]); lower-case
  property names of old files (``AddBlack``) are reduced to capitals by sgfmill.
- Missing SZ is 19 and missing GM is Go (SGF defaults); missing KM is 0.0 (sgfmill's convention).
- KM: ``6,5`` (decimal comma) is read as 6.5. Integers with ``|KM| >= 100`` and ``KM % 50 == 25``
  (``375``, ``275``) are Chinese komi in zi x 100 and become KM / 50 points (375 -> 7.5): no real
  komi is that large, and the other reading (points x 100) would give a quarter point, which no
  ruleset uses. Other large values (``650``: 6.5 or 13?) are ambiguous and kept as written.
- Charsets: text properties are decoded with the CA charset (GB2312/GBK as GB18030, EUC-KR as CP949,
  Shift_JIS as CP932, the supersets their writers actually emit), then UTF-8, then the CA charset
  with U+FFFD replacements: a badly encoded player name never costs a game. Without CA (or with an
  unknown or non-ASCII-compatible one) UTF-8 is tried before the spec's default Latin-1. A `str`
  input is already decoded, and a UTF-8 byte-order mark means UTF-8: CA is then ignored. `encoding` is raised only when the input as a
  whole can't be read: no game found but NUL bytes (UTF-16/32 without a byte-order mark), a
  UTF-16/32 byte-order mark on undecodable text, or a `str` that is not valid Unicode. Multi-byte
  charsets whose trail bytes can be ``\\`` or ``]`` (Shift_JIS, Big5, GBK) are tokenised byte-wise
  by sgfmill and may break a value: a known limit.
- Setup (AB/AW/AE) is accepted in any node before the first move; setup after a move is refused
  (`setup-conflict`), as are overlapping AB/AW points. Duplicate points of one colour are merged.
- Comments: ``C`` on a move's node goes to `GameRecord.comments[move index]`; other comments are
  dropped.
- Games read with ``source="f.sgf"`` get ``source == "f.sgf#i"``, i the 0-based index of the game
  in the file (its place in `read_games_lenient`'s list, and `SgfError.game_index`).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from functools import lru_cache

from sgfmill import sgf_grammar, sgf_properties

from gocore.errors import GozeroError
from gocore.rules.board import MAX_SIZE, MIN_SIZE, IllegalMove, Position
from gocore.rules.coords import CoordinateError, from_sgf, pass_move, to_gtp, to_rowcol, to_sgf

_GAME_START = re.compile(rb"\(\s*;")
_FAST = True  # False: every game through sgfmill (tests compare both paths)
# A whole game of the common shape (see the module docstring); possessive repeats keep it linear.
# Whitespace may stand wherever sgfmill's tokeniser skips it: before every token.
_FAST_GAME = re.compile(rb"\(\s*+;((?:\s*+[A-Z]{1,64}+(?:\s*+\[[^\\\]]*+\])++)*+)"
                        rb"((?:\s*+;\s*+[BW]\s*+\[[a-z]{0,2}+\])*+)\s*+\)")
_FAST_VALUE = re.compile(rb"([A-Z]*)\s*\[([^\]]*)\]")  # identifier ("" if repeated) and value
_WHITESPACE = b" \t\n\r\f\v"  # what \s matches in a bytes pattern
_TEXT_SPECIAL = re.compile(rb"[\\\t\n\r\f\v]")  # what sgfmill's simpletext_value changes
# Tolerant scan of a broken game: values (maybe unterminated) and parentheses, nothing else.
_SCAN = re.compile(rb"\[[^\\\]]*(?:\\.[^\\\]]*)*\]?|[()]", re.DOTALL)
_RESULT_WINNER = re.compile(r"\s*(B|W)(?:LACK|HITE)?\s*\+", re.IGNORECASE)
_DRAWS = frozenset({"0", "draw", "jigo"})
_SUPERSETS = {"gb2312": "gb18030", "gbk": "gb18030", "euc_kr": "cp949", "shift_jis": "cp932"}
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_COLOR_LETTER = {1: "B", -1: "W"}


class SgfError(GozeroError, ValueError):
    """An SGF game we refuse; `reason` is machine-readable (``syntax``, ``illegal-move@37``, ...)."""

    def __init__(self, reason: str, detail: str, game_index: int | None = None, where: str | None = None):
        self.reason, self.detail, self.game_index = reason, detail, game_index
        super().__init__(f"{where}: {detail}" if where else detail)

    def located(self, game_index: int, where: str) -> SgfError:
        """The same error, naming the game it comes from."""
        return SgfError(self.reason, self.detail, game_index, where)


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


# --- reading -----------------------------------------------------------------------------------

def read_games(data: str | bytes, source: str | None = None) -> list[GameRecord]:
    """Every game of an SGF file or collection, in order; raises the first game's SgfError."""
    games = read_games_lenient(data, source)
    errors = [game for game in games if isinstance(game, SgfError)]
    if errors:
        raise errors[0]
    return games  # type: ignore[return-value]


def read_games_lenient(data: str | bytes, source: str | None = None) -> list[GameRecord | SgfError]:
    """One entry per game in file order: its GameRecord, or the SgfError that refuses it.

    Raises SgfError only when the input as a whole is unreadable (`empty`, `encoding`).
    """
    raw, is_decoded = _as_bytes(data, source or "SGF")
    trees = _split_games(raw)
    if not trees and b"\x00" in raw:
        raise SgfError("encoding", "no game, and NUL bytes: probably UTF-16/32 without a "
                       "byte-order mark; save the file as UTF-8", where=source)
    if not trees:
        raise SgfError("empty", "no SGF game found (a game starts with '(;')", where=source)
    games: list[GameRecord | SgfError] = []
    for index, tree in enumerate(trees):
        where = f"{source}#{index}" if source is not None else f"game {index}"
        try:
            if isinstance(tree, SgfError):
                raise tree
            if isinstance(tree, re.Match):
                record = _record_from_match(tree, is_decoded)
            else:
                record = _record_from_tree(tree, is_decoded)
            record.source = f"{source}#{index}" if source is not None else None
            games.append(record)
        except SgfError as error:
            games.append(error.located(index, where))
    return games


def _as_bytes(data: str | bytes, where: str) -> tuple[bytes, bool]:
    """(bytes for sgfmill's byte-wise grammar, True if they are known UTF-8 whatever CA says)."""
    if isinstance(data, str):
        try:
            return data.encode("utf-8"), True
        except UnicodeEncodeError as exc:
            raise SgfError("encoding", f"text is not valid Unicode ({exc.reason}); read the file "
                           "as bytes instead", where=where) from exc
    data = bytes(data)
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return _as_bytes(data.decode(codec), where)
            except UnicodeDecodeError as exc:
                raise SgfError("encoding", f"starts with a {codec} byte-order mark but does not "
                               f"decode as {codec}: {exc.reason}", where=where) from exc
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8):], True
    return data, False


def _split_games(data: bytes) -> list[sgf_grammar.Coarse_game_tree | re.Match | SgfError]:
    """Each game of a collection parsed once (a `_FAST_GAME` match if it has the common shape);
    a broken game becomes an SgfError in its place."""
    games: list[sgf_grammar.Coarse_game_tree | re.Match | SgfError] = []
    position = 0
    while True:
        start = _GAME_START.search(data, position) if _FAST else None
        fast = start and _FAST_GAME.match(data, start.start())
        if fast:  # ends, like sgfmill's game, after the ')' that closes it
            games.append(fast)
            position = fast.end()
            continue
        try:
            # The private half of parse_sgf_collection: it also returns where the game ended,
            # which lets us go on past a broken game instead of losing the rest of the file.
            tree, position = sgf_grammar._parse_sgf_game(data, position)
        except ValueError as exc:
            start = _GAME_START.search(data, position).start()
            games.append(SgfError("syntax", f"SGF syntax error in the game at byte {start}: {exc}"))
            position = _end_of_broken_game(data, start)
            continue
        if tree is None:
            return games
        games.append(tree)


def _end_of_broken_game(data: bytes, start: int) -> int:
    """Offset after the ')' that balances the '(' at `start` (end of data if none does)."""
    depth = 0
    for match in _SCAN.finditer(data, start):
        token = match.group()
        if token == b"(":
            depth += 1
        elif token == b")":
            depth -= 1
            if depth == 0:
                return match.end()
    return len(data)


def _record_from_tree(tree: sgf_grammar.Coarse_game_tree, is_decoded: bool) -> GameRecord:
    """A GameRecord from the root properties and the main line of one parsed game."""
    return _record(tree.sequence[0], sgf_grammar.main_sequence_iter(tree), b"", is_decoded)


def _record_from_match(match: re.Match, is_decoded: bool) -> GameRecord:
    """`_record_from_tree` of a `_FAST_GAME` match: sgfmill's root property map, then its moves."""
    root: dict[str, list[bytes]] = {}
    values: list[bytes] = []
    for identifier, value in _FAST_VALUE.findall(match.group(1)):
        if identifier:  # a repeated identifier adds its values, as in sgfmill
            values = root.setdefault(identifier.decode("ascii"), [])
        values.append(value)
    return _record(root, [root], match.group(2), is_decoded)


def _record(root: dict, nodes, move_nodes: bytes, is_decoded: bool) -> GameRecord:
    """A GameRecord from the root, the main line's `nodes` and then `_FAST_GAME`'s move nodes."""
    _check_game_type(root)
    size = _board_size(root)
    charsets = ("utf-8",) if is_decoded else _charsets(_first(root, "CA"))

    def text(identifier: str) -> str | None:
        value = _first(root, identifier)
        if value is not None and _TEXT_SPECIAL.search(value):  # else simpletext_value is a no-op
            value = sgf_grammar.simpletext_value(value)
        return None if value is None else _decode(value, charsets)

    result = text("RE")
    record = GameRecord(
        size=size, komi=_komi(root), rules=text("RU"), handicap=_handicap(root),
        winner=winner_from_result(result), result=result,
        player_black=text("PB"), player_white=text("PW"), rank_black=text("BR"),
        rank_white=text("WR"), date=text("DT"), declared_to_play=_declared_to_play(root))
    _read_main_line(nodes, record, charsets)
    if move_nodes:  # b";B[cd]\n;W[]...": no whitespace inside a value, so drop it all
        moves, table = move_nodes.translate(None, _WHITESPACE).split(b";")[1:], _move_table(size)
        try:
            record.moves += [table[move] for move in moves]
        except KeyError:  # e.g. a point off the board: the slow loop raises its error
            _read_main_line(({move[:1].decode(): [move[2:-1]]} for move in moves), record, charsets)
    overlap = set(record.setup_black) & set(record.setup_white)
    if overlap:
        points = ", ".join(sorted(to_gtp(p, size) for p in overlap))
        raise SgfError("setup-conflict", f"AB and AW both place a stone on {points}")
    return record


def _read_main_line(nodes, record: GameRecord, charsets: tuple[str, ...]) -> None:
    """Fill setup, moves and move comments from the main line's property maps."""
    size, moves = record.size, record.moves
    table = _point_table(size)
    for props in nodes:
        if "AB" in props or "AW" in props or "AE" in props:
            if moves:
                raise SgfError("setup-conflict", f"setup stones (AB/AW/AE) after move {len(moves)}: "
                               "positions edited mid-game are not supported")
            _apply_setup(props, record)
        black, white = props.get("B"), props.get("W")
        if black is None and white is None:
            continue
        if black is not None and white is not None:
            raise SgfError("bad-property", f"one node holds both B and W (move {len(moves) + 1})")
        color, values = (1, black) if black is not None else (-1, white)
        move = table.get(values[0]) if len(values) == 1 else None
        if move is None:
            move = _point(values, size, f"move {len(moves) + 1}")
        if "C" in props:
            record.comments[len(moves)] = _decode(sgf_grammar.text_value(props["C"][0]), charsets)
        moves.append((color, move))


def _apply_setup(props: dict, record: GameRecord) -> None:
    """Add AB/AW stones and remove AE points, in file order without duplicates."""
    size = record.size
    for identifier, stones in (("AB", record.setup_black), ("AW", record.setup_white)):
        for point in _point_list(props.get(identifier, ()), size, identifier):
            if point not in stones:
                stones.append(point)
    erased = set(_point_list(props.get("AE", ()), size, "AE"))
    if erased:
        record.setup_black[:] = [p for p in record.setup_black if p not in erased]
        record.setup_white[:] = [p for p in record.setup_white if p not in erased]


def _point_list(values, size: int, identifier: str) -> list[int]:
    """Points of a (maybe compressed ``aa:cc``) point list; empty values are skipped."""
    points = []
    for value in values:
        first, is_rectangle, second = value.partition(b":")
        if not value.strip():
            continue
        corners = [_point([first], size, identifier)]
        if is_rectangle:
            corners.append(_point([second], size, identifier))
        if pass_move(size) in corners:
            raise SgfError("bad-property", f"{identifier}[{value.decode('ascii', 'replace')}] is a pass, "
                           "not a point")
        (row_a, col_a), (row_b, col_b) = to_rowcol(corners[0], size), to_rowcol(corners[-1], size)
        points += [r * size + c for r in range(min(row_a, row_b), max(row_a, row_b) + 1)
                   for c in range(min(col_a, col_b), max(col_a, col_b) + 1)]
    return points


def _point(values: list[bytes], size: int, what: str) -> int:
    """The move named by a single-value point property; bad-property otherwise."""
    text = b"][".join(values).decode("ascii", "replace")
    if len(values) != 1:
        raise SgfError("bad-property", f"{what}: [{text}] holds {len(values)} values, not one point")
    try:
        return from_sgf(text, size)
    except CoordinateError as exc:
        raise SgfError("bad-property", f"{what}: {exc}") from exc


@lru_cache(maxsize=None)
def _point_table(size: int) -> dict[bytes, int]:
    """Raw SGF point -> move, built from coords (``""`` and ``tt`` are pass for sizes <= 19)."""
    table = {to_sgf(move, size).encode("ascii"): move for move in range(size * size + 1)}
    table[b"tt"] = pass_move(size)
    return table


@lru_cache(maxsize=None)
def _move_table(size: int) -> dict[bytes, tuple[int, int]]:
    """Move node without its ';' (``B[cd]``) -> (colour, move), from `_point_table`."""
    return {b"%s[%s]" % (letter, point): (color, move) for point, move in _point_table(size).items()
            for letter, color in ((b"B", 1), (b"W", -1))}


def _first(props: dict, identifier: str) -> bytes | None:
    values = props.get(identifier)
    return None if values is None else values[0]


def _ascii(value: bytes) -> str:
    return value.decode("ascii", "replace").strip()


def _check_game_type(root: dict) -> None:
    game = _first(root, "GM")
    if game is not None and _ascii(game) != "1":
        raise SgfError("not-go", f"GM[{_ascii(game)}] is not a Go record (Go is GM[1])")


def _board_size(root: dict) -> int:
    value = _first(root, "SZ")
    if value is None:
        return 19  # the SGF default for Go
    columns, _, rows = _ascii(value).partition(":")
    try:
        size, height = int(columns), int(rows or columns)
    except ValueError:
        raise SgfError("bad-property", f"SZ[{_ascii(value)}] is not a board size") from None
    if size != height:
        raise SgfError("board-size", f"SZ[{_ascii(value)}]: only square boards are supported")
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise SgfError("board-size", f"SZ[{size}]: board sizes {MIN_SIZE}..{MAX_SIZE} are supported")
    return size


def _komi(root: dict) -> float:
    value = _first(root, "KM")
    text = "" if value is None else _ascii(value).replace(",", ".")
    if not text:
        return 0.0
    try:
        komi = sgf_properties.interpret_real(text.encode("ascii"))
    except ValueError:
        raise SgfError("bad-property", f"KM[{text}] is not a number") from None
    if abs(komi) >= 100 and komi == int(komi) and int(komi) % 50 == 25:
        return komi / 50  # zi x 100 (Chinese komi): 375 -> 3.75 zi = 7.5 points
    return komi


def _handicap(root: dict) -> int:
    value = _first(root, "HA")
    text = "0" if value is None else _ascii(value)
    if not text.isdigit():
        raise SgfError("bad-property", f"HA[{text}] is not a number of stones")
    return int(text)


def _declared_to_play(root: dict) -> int | None:
    value = _first(root, "PL")
    color = None if value is None else {"B": 1, "W": -1}.get(_ascii(value).upper()[:1], 0)
    if color == 0:
        raise SgfError("bad-property", f"PL[{_ascii(value)}] is neither B nor W")
    return color


@lru_cache(maxsize=64)
def _charsets(declared: bytes | None) -> tuple[str, ...]:
    """Codecs to try for text properties, in order; the last one decodes with replacements."""
    fallback = ("utf-8", "latin-1")
    if declared is None:
        return fallback
    try:
        codec = codecs.lookup(_ascii(declared)).name
    except (LookupError, ValueError):  # unknown names, or NUL bytes in the name
        return fallback
    codec = _SUPERSETS.get(codec, codec)
    try:
        is_ascii_compatible = "(;[]\\".encode(codec) == b"(;[]\\"
    except (LookupError, UnicodeError):  # "hex" and friends are codecs but not text encodings
        is_ascii_compatible = False
    if not is_ascii_compatible:
        return fallback  # e.g. CA[UTF-16] on a file that parsed byte-wise: the label is wrong
    return ("utf-8", "latin-1") if codec == "utf-8" else (codec, "utf-8", codec)


def _decode(value: bytes, charsets: tuple[str, ...]) -> str:
    if value.isascii():
        return value.decode("ascii")
    for codec in charsets[:-1]:
        try:
            return value.decode(codec)
        except UnicodeDecodeError:
            pass
    return value.decode(charsets[-1], errors="replace")


# --- writing and replaying -----------------------------------------------------------------------

def write(record: GameRecord) -> str:
    """The record as a UTF-8 FF[4] SGF game (main line only); `read_games` gives it back."""
    size = record.size
    unplaced = set(record.comments) - set(range(len(record.moves)))
    if unplaced:
        raise ValueError(f"comments on moves {sorted(unplaced)} that the record does not have")
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
    tree = sgf_grammar.Coarse_game_tree()
    tree.sequence = [root] + [_move_node(record, index) for index in range(len(record.moves))]
    return sgf_grammar.serialise_game_tree(tree).decode("utf-8")


def _move_node(record: GameRecord, index: int) -> dict[str, list[bytes]]:
    color, move = record.moves[index]
    node = {_COLOR_LETTER[color]: [to_sgf(move, record.size).encode("ascii")]}
    if index in record.comments:
        node["C"] = [_escape(record.comments[index])]
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
