"""SGF property values: points, point lists, SZ, KM, HA, PL, GM and text charsets, for `sgf_read`.

Each function turns the raw bytes sgfmill's grammar (or `sgf_read`'s fast path) keeps for one
property into a Python value, or raises `SgfError` with the reason a user can act on. The reading
decisions these implement (komi in zi, charset supersets, ``tt`` passes) are listed in
`gocore.rules.sgf_read`'s docstring. Start at `board_size` and `point`.
"""

from __future__ import annotations

import codecs
from functools import lru_cache

from sgfmill import sgf_properties

from gocore.rules.board import MAX_SIZE, MIN_SIZE
from gocore.rules.coords import CoordinateError, from_sgf, pass_move, to_rowcol, to_sgf
from gocore.rules.sgf import SgfError

_SUPERSETS = {"gb2312": "gb18030", "gbk": "gb18030", "euc_kr": "cp949", "shift_jis": "cp932"}


def point_list(values, size: int, identifier: str) -> list[int]:
    """Points of a (maybe compressed ``aa:cc``) point list; empty values are skipped."""
    points = []
    for value in values:
        first, is_rectangle, second = value.partition(b":")
        if not value.strip():
            continue
        corners = [point([first], size, identifier)]
        if is_rectangle:
            corners.append(point([second], size, identifier))
        if pass_move(size) in corners:
            raise SgfError("bad-property", f"{identifier}[{value.decode('ascii', 'replace')}] is a pass, "
                           "not a point")
        (row_a, col_a), (row_b, col_b) = to_rowcol(corners[0], size), to_rowcol(corners[-1], size)
        points += [r * size + c for r in range(min(row_a, row_b), max(row_a, row_b) + 1)
                   for c in range(min(col_a, col_b), max(col_a, col_b) + 1)]
    return points


def point(values: list[bytes], size: int, what: str) -> int:
    """The move named by a single-value point property; bad-property otherwise."""
    text = b"][".join(values).decode("ascii", "replace")
    if len(values) != 1:
        raise SgfError("bad-property", f"{what}: [{text}] holds {len(values)} values, not one point")
    try:
        return from_sgf(text, size)
    except CoordinateError as exc:
        raise SgfError("bad-property", f"{what}: {exc}") from exc


@lru_cache(maxsize=None)
def point_table(size: int) -> dict[bytes, int]:
    """Raw SGF point -> move, built from coords (``""`` and ``tt`` are pass for sizes <= 19)."""
    table = {to_sgf(move, size).encode("ascii"): move for move in range(size * size + 1)}
    table[b"tt"] = pass_move(size)
    return table


@lru_cache(maxsize=None)
def move_table(size: int) -> dict[bytes, tuple[int, int]]:
    """Move node without its ';' (``B[cd]``) -> (colour, move), from `point_table`."""
    return {b"%s[%s]" % (letter, point): (color, move) for point, move in point_table(size).items()
            for letter, color in ((b"B", 1), (b"W", -1))}


def first_value(props: dict, identifier: str) -> bytes | None:
    values = props.get(identifier)
    return None if values is None else values[0]


def _ascii(value: bytes) -> str:
    return value.decode("ascii", "replace").strip()


def check_game_type(root: dict) -> None:
    game = first_value(root, "GM")
    if game is not None and _ascii(game) != "1":
        raise SgfError("not-go", f"GM[{_ascii(game)}] is not a Go record (Go is GM[1])")


def board_size(root: dict) -> int:
    value = first_value(root, "SZ")
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


def komi_points(root: dict) -> float:
    value = first_value(root, "KM")
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


def handicap_stones(root: dict) -> int:
    value = first_value(root, "HA")
    text = "0" if value is None else _ascii(value)
    if not text.isdigit():
        raise SgfError("bad-property", f"HA[{text}] is not a number of stones")
    return int(text)


def declared_to_play(root: dict) -> int | None:
    value = first_value(root, "PL")
    color = None if value is None else {"B": 1, "W": -1}.get(_ascii(value).upper()[:1], 0)
    if color == 0:
        raise SgfError("bad-property", f"PL[{_ascii(value)}] is neither B nor W")
    return color


@lru_cache(maxsize=64)
def charsets(declared: bytes | None) -> tuple[str, ...]:
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


def decode_text(value: bytes, charsets: tuple[str, ...]) -> str:
    if value.isascii():
        return value.decode("ascii")
    for codec in charsets[:-1]:
        try:
            return value.decode(codec)
        except UnicodeDecodeError:
            pass
    return value.decode(charsets[-1], errors="replace")

