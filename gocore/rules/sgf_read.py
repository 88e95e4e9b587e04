"""Reading SGF: files and collections of games into `GameRecord`s, or the `SgfError` refusing each.

Start at `read_games_lenient` (a file may hold a collection of games); `read_games` is its strict
form. The record itself, writing and replay are in `gocore.rules.sgf`; property values (points,
SZ, KM, charsets) in `gocore.rules.sgf_values`.

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

from sgfmill import sgf_grammar

from gocore.rules import sgf_values
from gocore.rules.coords import to_gtp
from gocore.rules.sgf import GameRecord, SgfError, winner_from_result

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
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


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
    sgf_values.check_game_type(root)
    size = sgf_values.board_size(root)
    charsets = ("utf-8",) if is_decoded else sgf_values.charsets(sgf_values.first_value(root, "CA"))

    def text(identifier: str) -> str | None:
        value = sgf_values.first_value(root, identifier)
        if value is not None and _TEXT_SPECIAL.search(value):  # else simpletext_value is a no-op
            value = sgf_grammar.simpletext_value(value)
        return None if value is None else sgf_values.decode_text(value, charsets)

    result = text("RE")
    record = GameRecord(
        size=size, komi=sgf_values.komi_points(root), rules=text("RU"),
        handicap=sgf_values.handicap_stones(root),
        winner=winner_from_result(result), result=result,
        player_black=text("PB"), player_white=text("PW"), rank_black=text("BR"),
        rank_white=text("WR"), date=text("DT"), declared_to_play=sgf_values.declared_to_play(root))
    _read_main_line(nodes, record, charsets)
    if move_nodes:  # b";B[cd]\n;W[]...": no whitespace inside a value, so drop it all
        moves, table = move_nodes.translate(None, _WHITESPACE).split(b";")[1:], sgf_values.move_table(size)
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
    table = sgf_values.point_table(size)
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
            move = sgf_values.point(values, size, f"move {len(moves) + 1}")
        if "C" in props:
            comment = sgf_grammar.text_value(props["C"][0])
            record.comments[len(moves)] = sgf_values.decode_text(comment, charsets)
        moves.append((color, move))


def _apply_setup(props: dict, record: GameRecord) -> None:
    """Add AB/AW stones and remove AE points, in file order without duplicates."""
    size = record.size
    for identifier, stones in (("AB", record.setup_black), ("AW", record.setup_white)):
        for point in sgf_values.point_list(props.get(identifier, ()), size, identifier):
            if point not in stones:
                stones.append(point)
    erased = set(sgf_values.point_list(props.get("AE", ()), size, "AE"))
    if erased:
        record.setup_black[:] = [p for p in record.setup_black if p not in erased]
        record.setup_white[:] = [p for p in record.setup_white if p not in erased]

