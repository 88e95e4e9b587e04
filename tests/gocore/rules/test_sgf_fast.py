"""gocore.rules.sgf_read's fast path (`_FAST_GAME`): `read_games_lenient` gives exactly what sgfmill's path gives.

Every test reads its inputs twice, with `sgf_read._FAST` off and on, and compares records field by field,
errors by (type, reason, detail, message, game_index), and exceptions raised by the whole call.
"""

from __future__ import annotations

import dataclasses
import random
import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sgfmill import sgf_grammar

from gocore.play.match import play_game
from gocore.rules import sgf_read
from gocore.rules.sgf import GameRecord, write
from gocore.rules.sgf_read import read_games_lenient
from gocore.search.agents import RandomAgent


def outcome(data: str | bytes, source: str | None) -> str:
    """Everything read_games_lenient says about `data`, as text (repr: komi may be NaN)."""
    try:
        games = read_games_lenient(data, source)
    except Exception as exc:  # noqa: BLE001 - the exception itself is the outcome to compare
        return repr(("raised", type(exc).__name__, getattr(exc, "reason", None), str(exc)))
    return repr([dataclasses.asdict(game) if isinstance(game, GameRecord)
                 else (type(game).__name__, game.reason, game.detail, str(game), game.game_index)
                 for game in games])


def assert_same(monkeypatch, data: str | bytes, source: str | None = "f.sgf") -> str:
    monkeypatch.setattr(sgf_read, "_FAST", False)
    slow = outcome(data, source)
    monkeypatch.setattr(sgf_read, "_FAST", True)
    fast = outcome(data, source)
    assert fast == slow, data
    return fast


def random_game_texts() -> list[str]:
    """`sgf.write` texts of random games: sizes 5..19, setup, comments, odd names, ``[]``/``[tt]`` passes."""
    rng = random.Random(7)
    texts = []
    for number in range(24):
        size = (5, 9, 13, 19)[number % 4]
        game = play_game(RandomAgent(number), RandomAgent(100 + number), size=size,
                         max_moves=rng.choice([0, 1, 12, 60, 3 * size * size]))
        points = rng.sample(range(size * size), rng.choice([0, 0, 2, 4, 9]))
        black, white = (points, []) if number % 3 else (points[::2], points[1::2])
        moves = game.moves
        record = GameRecord(
            size=size, komi=rng.choice([7.5, 6.5, 0.0, -2.5, 375.0]), rules=rng.choice([None, "Chinese"]),
            handicap=len(black) if black and not white else 0, setup_black=black, setup_white=white,
            moves=moves, winner=game.winner, result=rng.choice([game.result, None, "Void"]),
            player_black=rng.choice([None, "rand", "Zoë", "柯洁", "a]b\\c", "two\nlines"]),
            player_white=rng.choice([None, "W", ""]), rank_black=rng.choice([None, "3d"]),
            date=rng.choice([None, "2024-05-01"]), declared_to_play=rng.choice([None, None, 1, -1]),
            comments={i: "nice (move); [x]" for i in range(len(moves)) if number % 5 == 0 and i % 7 == 3})
        text = write(record)
        if number % 2:  # passes written the FF[3] way
            text = re.sub(r"(?<![A-Z])([BW])\[\]", r"\1[tt]", text)
        texts.append(text)
    return texts


GAMES = random_game_texts()

EDGE_CASES = [
    "(;FF[4]SZ[9];B[ee];W[cc])",
    "( ;\n FF [4]\tSZ[9] [x]\r\n; B [ee]\n;\nW\n[cc]\x0b\x0c)", "(;SZ[9];\tB\r[ee]\x0c;\x0bW\t[cc]\r)",
    "(;SZ[9]\x1c;B[ee])", "(;SZ[9];B[ee]\x1c;W[cc])",  # \x1c is not whitespace to sgfmill
    "(;GaMe[1]SZ[9];Black[ee];W[cc])", "(;SZ[9];b[ee])", "(;sz[9];B[ee])",
    "(;SZ[9]PB[a\\]b]C[x\\\\];B[ee])", "(;SZ[9];B[ee]C[a\\]b])", "(;SZ[9]PB[\\\n];B[ee])",
    "(;SZ[9]PB[a[b]PW[(;)]RE[W+R];B[ee])", "(;SZ[9]PB[a\tb\r\nc]DT[\x0b];B[ee])",
    "(;SZ[9];B[ee](;W[cc])(;W[dd]))", "(;SZ[9](;B[ee])(;B[cc]))", "(;SZ[9];B[ee]())", "(;SZ[9]()",
    "junk (;SZ[9];B[ee]) more ) ] junk ((;SZ[5];W[aa])) (;FF[4] x) (;SZ[9];B[ii])\n(;SZ[7])",
    "(;SZ[9];B[ee];W[cc]", "(;SZ[9];B[ee];W[cc", "(;SZ[9]PB[abc", "(;SZ[9];B[ee]) (;SZ[9];W[",
    "(;SZ[9];B[jj])", "(;SZ[5];B[ff];W[ee])", "(;SZ[19];B[tt];W[zz])", "(;SZ[9];B[a])",
    "(;SZ[9];B[abc])", "(;SZ[9];B[AA])", "(;SZ[9];B[aa][bb])", "(;SZ[9];B[aa]B[bb])",
    "(;SZ[9];B[ee]W[cc])", "(;SZ[9]B[ee];W[cc])", "(;SZ[9]B[ee]W[cc])", "(;SZ[9]C[root]B[ee];W[cc])",
    "(;SZ[9]AB[aa][bb]AW[cc];W[ee])", "(;SZ[9]AB[aa:cc]AW[bb];B[ee])", "(;SZ[9]AE[aa]AB[aa];W[ee])",
    "(;SZ[9]AB[tt];W[ee])", "(;SZ[9]AB[];W[ee])", "(;SZ[9]AB[zz];W[ee])", "(;SZ[9]HA[2]AB[cc][gg])",
    "(;SZ[9]AB[aa]PB[x]AB[bb];W[ee])", "(;PB[x]PB[y]SZ[9])", "(;SZ[9];B[aa];AB[bb])",
    "(;SZ[9];B[];W[tt];B[ ])", "(;SZ[19];B[tt])", "(;SZ[5];W[tt];B[])", "(;SZ[9];B[aa];C[x];W[bb])",
    "(;SZ[9])", "(;)", "(;;)", "(;SZ[9];)", "(;;B[aa])", "(;SZ[9];TE[1])",
    "(;GM[2];B[aa])", "(;SZ[30];B[aa])", "(;SZ[4])", "(;SZ[9:10])", "(;SZ[x])", "(;SZ[9]KM[abc])",
    "(;SZ[9]KM[6,5])", "(;SZ[9]KM[nan])", "(;SZ[9]HA[x])", "(;SZ[9]PL[X])", "(;SZ[9]PL[w];W[aa])",
    "(;" + "A" * 64 + "[x];B[aa])", "(;" + "A" * 65 + "[x];B[aa])", "(;SZ;B[aa])", "(;SZ[9]KM;B[aa])",
    "(;SZ[9];B[aa])extra)", "(;SZ[9];B[aa]))", "(;SZ[9];B[aa]);", "", "no game", "(;SZ[9] ;B[aa])",
    "(;SZ[9];B[aa]) trailing (", "(\n;SZ[9]\n)\n(;SZ[9])", "(;CA[x]SZ[9]PB[\x80])",
]
EDGE_BYTES = [
    "(;CA[GB2312]SZ[19]PB[柯洁]PW[朱镕基];B[pd])".encode("gbk"),
    "(;CA[GB2312]SZ[19]PB[柯洁]PW[朱镕基];B[pd])".encode(),
    "(;CA[Shift_JIS]SZ[9]PB[本因坊];B[ee])".encode("cp932"),
    "(;CA[UTF-16]SZ[9]PB[Zoë];B[ee])".encode(), "(;SZ[9]PB[Zoë];B[ee])".encode("latin-1"),
    b"\xef\xbb\xbf" + "(;CA[latin-1]SZ[9]PB[Zoë];B[ee])".encode(),
    "(;SZ[9]PB[Zoë];B[ee])".encode("utf-16"), "(;SZ[9];B[ee])".encode("utf-32"),
    "(;SZ[9];B[ee])".encode("utf-16-le"), b"\xff\xfe\x00", b"(;SZ[9]PB[\x00];B[ee])",
]


@pytest.mark.parametrize("data", EDGE_CASES + EDGE_BYTES)
def test_hand_written_edge_cases_read_the_same(monkeypatch, data):
    assert_same(monkeypatch, data)
    assert_same(monkeypatch, data, source=None)
    if isinstance(data, str):
        assert_same(monkeypatch, data.encode("utf-8"))


def test_written_random_games_read_the_same_alone_and_as_a_collection(monkeypatch):
    for text in GAMES:
        assert_same(monkeypatch, text)
        assert_same(monkeypatch, text.encode("utf-8"), source=None)
    collection = "\n) junk ]\n".join(GAMES + EDGE_CASES)
    assert "GameRecord" not in assert_same(monkeypatch, collection)  # (a repr of asdict dicts)
    assert assert_same(monkeypatch, collection.encode("utf-8")).count("'size':") > len(GAMES)


def test_mutated_games_read_the_same():
    rng = random.Random(2024)
    alphabet = "()[];\\ BWabcdefghijklmnopqrstuvwxyz\nA\t"
    plain = [text for text in GAMES if sgf_read._FAST_GAME.match(text.encode("utf-8"))]
    bases = plain + GAMES[:3] + EDGE_CASES[:4] + ["(;SZ[9];B[ee];W[cc]) (;SZ[5]AB[aa];W[bb])"]
    with pytest.MonkeyPatch.context() as monkeypatch:
        for _ in range(800):
            text = list(rng.choice(bases))
            for _ in range(rng.choice([1, 1, 2, 3, 6])):
                where, kind = rng.randrange(len(text) + 1), rng.choice("dir")
                if kind == "d" and where < len(text):
                    del text[where]
                elif kind == "i":
                    text.insert(where, rng.choice(alphabet))
                elif where < len(text):
                    text[where] = rng.choice(alphabet)
            assert_same(monkeypatch, "".join(text), source=rng.choice(["f.sgf", None]))


def test_plain_games_take_the_fast_path_and_others_sgfmill(monkeypatch):
    calls = {"tree": 0, "match": 0}

    def counted(name, function):
        def wrapper(*args):
            calls[name] += 1
            return function(*args)
        return wrapper

    monkeypatch.setattr(sgf_read, "_record_from_tree", counted("tree", sgf_read._record_from_tree))
    monkeypatch.setattr(sgf_read, "_record_from_match", counted("match", sgf_read._record_from_match))
    plain = [text for text in GAMES if "C[" not in text and "\\" not in text]
    assert len(plain) >= 10
    games = read_games_lenient("\n".join(plain + ["(;SZ[9];B[ee]C[slow])", "(;HA[2]AB[aa][bb];W[cc])"]))
    assert all(isinstance(game, GameRecord) for game in games)
    assert calls == {"tree": 1, "match": len(plain) + 1}


@pytest.mark.parametrize("data", [
    b"(;" + b" " * 10**6, b"(;" + b"A" * 10**6, b"(;" + b"AB[aa] " * 150_000 + b"\\",
    b"(;SZ[9]" + b";B[aa] \n" * 120_000 + b";B[aa", b"(;SZ[" + b"[" * 10**6, b"(;" + b"(;" * 500_000,
    b"(;" + b"A [a] [" * 150_000, b"(;" + b"; " * 500_000 + b"B[aaa])",
])
def test_pathological_megabyte_inputs_fail_the_fast_regex_quickly(data):
    started = time.perf_counter()
    assert sgf_read._FAST_GAME.match(data) is None
    assert time.perf_counter() - started < 0.5


def test_a_megabyte_game_is_read_the_same_by_both_paths(monkeypatch):
    data = "(;SZ[9]PB[x]" + "".join(f";B[{chr(97 + i % 9)}a]\n" for i in range(100_000)) + ")"
    started = time.perf_counter()
    fast = assert_same(monkeypatch, data)
    assert fast.count("(1, ") == 100_000 and time.perf_counter() - started < 30


@given(st.binary(max_size=30) | st.lists(st.sampled_from(list(b" \t\n\r\x0b\x0c\\a\xe9\x00")), max_size=8)
       .map(bytes))
def test_text_values_skip_simpletext_value_only_when_it_would_change_nothing(value):
    if not sgf_read._TEXT_SPECIAL.search(value):  # the shortcut of `_record`'s text(), on both paths
        assert sgf_grammar.simpletext_value(value) == value
