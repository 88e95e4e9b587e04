"""GTP's handicap and rules commands, engine side: arguments checked and read into stones and rules.

`GtpEngine` (`gocore.play.gtp`) answers ``fixed_handicap N``, ``place_free_handicap N`` and
``set_free_handicap V...`` with the points these functions give (`gocore.play.handicap` places
them), sets them up as black stones with white to move, and scores the game with white's
handicap compensation under its rules (`gocore.play.game_rules`: Chinese, GNU Go
--chinese-rules's scoring, unless ``kgs-rules`` / ``kata-set-rules`` said otherwise). Rules gozero
cannot play (territory scoring, stone scoring, a button) are refused with the reason and the
names it can play. Failures are GTP's: ``invalid handicap`` / ``invalid number of stones``,
``board not empty``, ``bad vertex list``, as GNU Go answers them. `load_game` reads ``loadsgf``'s
file (GNU Go's reading: ``loadsgf FILE N`` keeps the moves before move N).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from gocore.play.game_rules import PLAYABLE, GameRules, RulesError, parse_rules
from gocore.play.gtp_protocol import GtpFailure, expect_args, parse_number
from gocore.play.handicap import fixed_placement, free_placement
from gocore.rules import sgf, sgf_read
from gocore.rules.coords import CoordinateError, from_gtp, is_pass

Setup = tuple[tuple[int, ...], tuple[int, ...], int]  # black stones, white stones, first to play


def fixed_points(args: list[str], size: int) -> list[int]:
    """The points of ``fixed_handicap N``: the GTP table's placement of N stones on this board."""
    (text,) = expect_args(args, 1, "fixed_handicap NUMBER_OF_STONES")
    points = fixed_placement(size, int(parse_number(text, "the number of stones", integer=True)))
    if points is None:
        raise GtpFailure("invalid handicap")
    return points


def free_points(args: list[str], size: int) -> list[int]:
    """The points of ``place_free_handicap N``: the engine's own placement of N stones."""
    (text,) = expect_args(args, 1, "place_free_handicap NUMBER_OF_STONES")
    count = int(parse_number(text, "the number of stones", integer=True))
    if not 2 <= count < size * size:
        raise GtpFailure("invalid number of stones")
    return free_placement(size, count)


def given_points(args: list[str], size: int) -> list[int]:
    """The points of ``set_free_handicap V...``: two or more distinct vertices, no pass, not all."""
    try:
        points = [from_gtp(vertex, size) for vertex in args]
    except CoordinateError as error:
        raise GtpFailure(f"bad vertex list: {error}") from None
    if len(points) < 2 or len(points) >= size * size or len(set(points)) < len(points) or \
            any(is_pass(point, size) for point in points):
        raise GtpFailure("bad vertex list: 2 or more distinct points, no pass, fewer than the board's")
    return points


def playable_rules(args: list[str], command: str) -> GameRules:
    """The rules of ``kgs-rules NAME`` / ``kata-set-rules RULES`` (a name or KataGo's JSON), if
    gozero can play them; a GtpFailure naming why not and what it can play otherwise."""
    if not args:
        raise GtpFailure(f"syntax error: usage: {command} RULES")
    text = " ".join(args)
    try:
        rules = parse_rules(text)
    except RulesError as error:
        raise GtpFailure(f"{error}; gozero plays area scoring: {PLAYABLE}") from None
    if rules.problem is not None:
        raise GtpFailure(f"cannot play rules {text}: {rules.problem}; it plays {PLAYABLE}")
    return rules


def rules_json(rules: GameRules) -> str:
    """``kata-get-rules``: the rules gozero plays (`gocore.rules.board`), with these handicap bonus."""
    return json.dumps({"hasButton": False, "ko": "POSITIONAL", "scoring": "AREA", "suicide": False,
                       "tax": "NONE", "whiteHandicapBonus": rules.handicap_bonus}, sort_keys=True)


def load_game(args: list[str], sizes: frozenset[int]) -> tuple[int, float, Setup, list[tuple[int, int]]]:
    """``loadsgf FILE [N]``: the file's first game as (size, komi, setup, moves before move N),
    its moves checked to be legal; a GtpFailure if it cannot be read or played here."""
    (path,) = expect_args(args, 1, "loadsgf FILE [MOVE_NUMBER]")
    number = int(parse_number(args[1], "the move number", integer=True)) if len(args) > 1 else None
    if number == 0:
        raise GtpFailure("syntax error: move numbers start at 1")
    try:
        record = sgf_read.read_games(Path(path).read_bytes(), source=path)[0]
        if record.size not in sizes:
            raise GtpFailure(f"cannot load file: board size {record.size} is not supported here")
        setup = (tuple(record.setup_black), tuple(record.setup_white), record.first_to_play)
        kept = list(record.moves if number is None else record.moves[:number - 1])
        sgf.replay(dataclasses.replace(record, moves=kept, declared_to_play=setup[2]))  # the kept moves only
    except (OSError, sgf.SgfError) as error:
        raise GtpFailure(f"cannot load file: {error}") from None
    return record.size, record.komi, setup, kept
