"""The tactical encoders (`alphago48`, `alphago49`, `tactical`): their plane lists, planes by hand,
and symmetry: the planes of a transformed game are the transformed planes.

The three paths agreeing (reference, encode_games, the packed kernel, encode_positions) is tested
for every encoder in test_features.py; the readings under them in tests/gocore/rules.
"""

from __future__ import annotations

import numpy as np
import pytest

from gocore.nn import features
from gocore.nn.packed import encode_games_packed
from gocore.rules import symmetry
from gocore.rules.board import Position, replay_moves
from gocore.rules.coords import from_rowcol
from tests.helpers import position_from_ascii, random_game


def plane(planes: np.ndarray, encoder: str, name: str) -> np.ndarray:
    """The (N, N) plane called `name` of (C, N, N) planes."""
    return planes[features.get_encoder(encoder).plane_names.index(name)]


def points(plane_: np.ndarray) -> set[int]:
    return set(np.flatnonzero(plane_.reshape(-1)).tolist())


# ---------------------------------------------------------------- plane lists
def test_alphago48_has_the_papers_feature_groups_in_order():
    names = features.get_encoder("alphago48").plane_names
    assert len(names) == 48
    groups = [("own[t]", 1), ("opponent[t]", 1), ("empty[t]", 1), ("ones", 1), ("turns_since", 8),
              ("liberties", 8), ("capture_size", 8), ("self_atari_size", 8), ("liberties_after", 8),
              ("ladder_capture", 1), ("ladder_escape", 1), ("sensible", 1), ("zeros", 1)]
    at = 0
    for prefix, count in groups:
        assert all(name.startswith(prefix) for name in names[at:at + count]), names[at:at + count]
        at += count
    assert names[4:12] == tuple(f"turns_since={k}" for k in range(1, 8)) + ("turns_since>=8",)
    assert names[20:28] == tuple(f"capture_size={k}" for k in range(7)) + ("capture_size>=7",)


def test_alphago49_adds_the_player_colour_and_tactical_starts_with_agz17():
    assert features.get_encoder("alphago49").plane_names == features.get_encoder("alphago48").plane_names + (
        "black_to_play",)
    tactical = features.get_encoder("tactical")
    assert tactical.num_planes == 32
    assert tactical.plane_names[:17] == features.get_encoder("agz17").plane_names
    assert "own_liberties>=4" in tactical.plane_names and "passed" in tactical.plane_names


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"kind": "ones", "lag": 1}, "cannot have lag"),
    ({"kind": "liberties", "low": 0, "high": 0}, "not within 1..99"),
    ({"kind": "capture_size", "low": 3, "high": 2}, "not within"),
    ({"kind": "ladder_capture", "low": 2}, "takes no value range"),
])
def test_impossible_planes_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        features.Plane(**kwargs)


def test_overlapping_ranges_of_one_kind_are_refused():
    with pytest.raises(ValueError, match="liberties planes' ranges overlap"):
        features.Encoder("bad", (features.Plane("liberties", low=1, high=2), features.Plane("liberties", low=2)), "x")


# ---------------------------------------------------------------- by hand
def test_alphago48_planes_of_a_small_fight():
    start = position_from_ascii("""
        . . . . .
        . X O . .
        . O X . .
        . . . . .
        . . . . .
    """, to_play=1)
    position = start.play(from_rowcol(3, 1, 5)).play(from_rowcol(0, 2, 5))  # black then white
    planes = features.encode_position(position, "alphago48")  # black to move
    assert points(plane(planes, "alphago48", "turns_since=1")) == {from_rowcol(0, 2, 5)}
    assert points(plane(planes, "alphago48", "turns_since=2")) == {from_rowcol(3, 1, 5)}
    assert points(plane(planes, "alphago48", "turns_since=3")) == {6, 7, 11, 12}  # the setup stones
    # white's (2,1) has one liberty, (2,0); black's (1,1) two; white's (0,2)-(1,2) three
    assert points(plane(planes, "alphago48", "liberties=1")) == {from_rowcol(2, 1, 5)}
    assert from_rowcol(1, 1, 5) in points(plane(planes, "alphago48", "liberties=2"))
    assert {from_rowcol(0, 2, 5), from_rowcol(1, 2, 5)} <= points(plane(planes, "alphago48", "liberties=3"))
    take = from_rowcol(2, 0, 5)
    assert points(plane(planes, "alphago48", "capture_size=1")) == {take}
    legal = position.legal_moves()[:-1].reshape(5, 5)
    assert points(plane(planes, "alphago48", "capture_size=0")) == points(legal) - {take}
    assert plane(planes, "alphago48", "ones").all() and not plane(planes, "alphago48", "zeros").any()
    assert points(plane(planes, "alphago48", "sensible")) == points(legal)  # no eyes yet


def test_sensible_leaves_out_own_eyes_and_self_atari_names_the_stones_at_risk():
    position = position_from_ascii("""
        . X . . .
        X X . . .
        . . . . .
        . . . O O
        . . . O .
    """, to_play=-1)
    planes = features.encode_position(position, "alphago48")
    corner, white_eye = 0, from_rowcol(4, 4, 5)
    assert corner not in points(plane(planes, "alphago48", "sensible"))  # black's eye, illegal for white
    assert white_eye not in points(plane(planes, "alphago48", "sensible"))  # white's own eye: legal, not sensible
    assert white_eye in points(position.legal_moves()[:-1])
    # white at (0, 2) would have 2 liberties: no self-atari; at (2, 0) next to black: 2 liberties too
    assert not plane(planes, "alphago48", "self_atari_size=1").reshape(-1)[from_rowcol(0, 2, 5)]


def test_passed_is_set_after_a_pass_and_never_at_the_first_move():
    position = Position.initial(5)
    assert not plane(features.encode_position(position, "tactical"), "tactical", "passed").any()
    after_pass = position.play(25)
    assert plane(features.encode_position(after_pass, "tactical"), "tactical", "passed").all()
    stones, movers = replay_moves(position, [25, 12, 25])
    planes = features.encode_games([stones], [movers], "tactical")
    assert [plane(p, "tactical", "passed").all() for p in planes] == [False, True, False]


def test_own_and_opponent_liberties_follow_the_side_to_move():
    position = position_from_ascii("""
        . . . . .
        . X O . .
        . . . . .
        . . . . .
        . . . . .
    """, to_play=-1)
    planes = features.encode_position(position, "tactical")
    assert points(plane(planes, "tactical", "own_liberties=3")) == {from_rowcol(1, 2, 5)}  # white's stone
    assert points(plane(planes, "tactical", "opponent_liberties=3")) == {from_rowcol(1, 1, 5)}


# ---------------------------------------------------------------- symmetry
@pytest.mark.parametrize("encoder", ["tactical", "alphago48"])
def test_planes_of_a_transformed_game_are_the_transformed_planes(encoder):
    rng = np.random.default_rng(8)
    moves, _ = random_game(9, rng, max_moves=70)
    original = replay_moves(Position.initial(9), moves)
    expected = features.encode_games([original[0]], [original[1]], encoder)  # (T, C, 9, 9)
    for k in symmetry.SYMMETRIES:
        moved = [symmetry.apply_to_move(move, k, 9) for move in moves]
        stones, movers = replay_moves(Position.initial(9), moved)
        planes = features.encode_games([stones], [movers], encoder)
        np.testing.assert_array_equal(planes, symmetry.apply(expected, k))
        packed = encode_games_packed([original[0]], [original[1]], encoder, (k,))
        np.testing.assert_array_equal(packed, features.pack_planes(planes))


def test_games_read_in_chunks_give_the_rows_of_one_read(monkeypatch):
    rng = np.random.default_rng(12)
    games = [random_game(9, rng, max_moves=n)[0] for n in (30, 0, 45, 20, 60)]  # an empty game in between
    replays = [replay_moves(Position.initial(9), moves) for moves in games]
    stones, movers = [r[0] for r in replays], [r[1] for r in replays]
    whole = features.encode_games(stones, movers, "alphago48")
    monkeypatch.setattr("gocore.nn.tactical.CHUNK_ROWS", 25)
    np.testing.assert_array_equal(features.encode_games(stones, movers, "alphago48"), whole)
    np.testing.assert_array_equal(encode_games_packed(stones, movers, "alphago48"), features.pack_planes(whole))
