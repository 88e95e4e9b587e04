"""Feature encoders: agz17/oneplane by hand, the batch paths against the reference, packing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gocore.nn import features
from gocore.nn.packed import encode_games_packed, encode_rows_packed
from gocore.rules import symmetry
from gocore.rules.board import Position, replay_moves
from gocore.rules.coords import from_rowcol
from tests.helpers import position_from_ascii, random_game

START = """
. . . . .
. X . . .
. . . . .
. . . O .
. . . . .
"""
B_CENTRE, W_CORNER, B_LAST = from_rowcol(2, 2, 5), from_rowcol(0, 0, 5), from_rowcol(4, 4, 5)
SETUP_BLACK, SETUP_WHITE = from_rowcol(1, 1, 5), from_rowcol(3, 3, 5)


def points(plane: np.ndarray) -> set[int]:
    """The moves where a (N, N) plane is 1."""
    return set(np.flatnonzero(plane.reshape(-1)).tolist())


def replayed_positions(start: Position, moves: list[int]) -> list[Position]:
    """The position before each move, by Position.play (so .history is filled the slow way)."""
    positions = [start]
    for move in moves[:-1]:
        positions.append(positions[-1].play(move))
    return positions


@pytest.fixture(scope="module")
def random_games() -> list[tuple[Position, list[int]]]:
    """(start, moves) of random legal games: 9x9 and 13x13, one from a setup position."""
    rng = np.random.default_rng(2017)
    games = [(Position.initial(9), random_game(9, rng)[0]) for _ in range(3)]
    games += [(Position.initial(13), random_game(13, rng, max_moves=150)[0]) for _ in range(2)]
    return games


def replays(games):
    """(stones_list, movers_list, moves (R,)) of `replay_moves` over the games."""
    replayed = [replay_moves(start, moves) for start, moves in games]
    return [r[0] for r in replayed], [r[1] for r in replayed], np.concatenate([m for _, m in games])


# ---------------------------------------------------------------- registry
def test_registry_derives_plane_counts_from_plane_lists():
    assert features.get_encoder("agz17").num_planes == 17
    assert features.get_encoder("oneplane").num_planes == 2
    for name, encoder in features.ENCODERS.items():
        assert encoder.name == name and encoder.num_planes == len(encoder.planes) == len(encoder.plane_names)
        assert encoder.description and "\n" not in encoder.description


def test_agz17_plane_order_is_the_papers():
    names = features.get_encoder("agz17").plane_names
    assert names[:4] == ("own[t]", "opponent[t]", "own[t-1]", "opponent[t-1]")
    assert names[14:] == ("own[t-7]", "opponent[t-7]", "black_to_play")


def test_unknown_encoder_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown encoder 'agz18'.*agz17.*oneplane"):
        features.get_encoder("agz18")


def test_unknown_plane_kind_is_refused():
    with pytest.raises(ValueError, match="unknown plane kind"):
        features.Plane("atari")


# ---------------------------------------------------------------- agz17 and oneplane by hand
def test_agz17_after_two_moves_black_to_play():
    start = position_from_ascii(START)
    position = start.play(B_CENTRE).play(W_CORNER)
    planes = features.encode_position(position, "agz17")
    assert planes.shape == (17, 5, 5) and planes.dtype == np.uint8
    assert points(planes[0]) == {SETUP_BLACK, B_CENTRE}  # X_t: black, the side to move
    assert points(planes[1]) == {SETUP_WHITE, W_CORNER}  # Y_t
    assert points(planes[2]) == {SETUP_BLACK, B_CENTRE}  # X_t-1: before white's corner move
    assert points(planes[3]) == {SETUP_WHITE}
    assert points(planes[4]) == {SETUP_BLACK} and points(planes[5]) == {SETUP_WHITE}  # the setup
    assert not planes[6:16].any()  # before the setup position: empty history
    assert planes[16].all()  # C: black to move


def test_agz17_history_is_relative_to_the_side_to_move_now():
    position = position_from_ascii(START).play(B_CENTRE).play(W_CORNER).play(B_LAST)
    planes = features.encode_position(position, "agz17")
    assert points(planes[0]) == {SETUP_WHITE, W_CORNER}  # white to move: X is white
    assert points(planes[1]) == {SETUP_BLACK, B_CENTRE, B_LAST}
    assert points(planes[2]) == {SETUP_WHITE, W_CORNER}  # X_t-1 is still white's stones
    assert points(planes[3]) == {SETUP_BLACK, B_CENTRE}
    assert points(planes[4]) == {SETUP_WHITE} and points(planes[5]) == {SETUP_BLACK, B_CENTRE}
    assert points(planes[6]) == {SETUP_WHITE} and points(planes[7]) == {SETUP_BLACK}
    assert not planes[8:16].any()
    assert not planes[16].any()  # C: white to move


def test_agz17_history_keeps_captured_stones():
    position = position_from_ascii("""
        . X . . .
        X O X . .
        . . . . .
        . . . . .
        . . . . .
    """)
    after = position.play(from_rowcol(2, 1, 5))  # black captures the white stone
    planes = features.encode_position(after, "agz17")
    assert points(planes[0]) == set()  # white to move, no white stone left
    assert points(planes[2]) == {from_rowcol(1, 1, 5)}  # but it was there a move ago


def test_oneplane_is_own_then_opponent_and_to_signed_is_relative_stones():
    position = position_from_ascii(START).play(B_CENTRE)  # white to move
    planes = features.encode_position(position, "oneplane")
    assert points(planes[0]) == {SETUP_WHITE} and points(planes[1]) == {SETUP_BLACK, B_CENTRE}
    signed = features.to_signed(planes[None])  # (1, 1, N, N)
    assert signed.shape == (1, 1, 5, 5) and signed.dtype == np.int8
    np.testing.assert_array_equal(signed[0, 0], position.stones * position.to_play)


# ---------------------------------------------------------------- batch path = reference
@pytest.mark.parametrize("encoder", sorted(features.ENCODERS))
def test_encode_games_equals_encode_position_at_every_position(random_games, encoder):
    games = random_games + [(position_from_ascii(START, to_play=-1), [B_CENTRE, W_CORNER, 25, B_LAST])]
    for size in (9, 13, 5):
        sized = [(start, moves) for start, moves in games if start.size == size]
        stones_list, movers_list, _ = replays(sized)
        planes = features.encode_games(stones_list, movers_list, encoder)
        expected = [features.encode_position(p, encoder) for start, moves in sized
                    for p in replayed_positions(start, moves)]
        np.testing.assert_array_equal(planes, np.stack(expected))


def test_encode_games_follows_movers_that_do_not_alternate():
    start = position_from_ascii(START)
    stones, movers = replay_moves(start, [B_CENTRE, B_LAST, W_CORNER], colors=[1, 1, -1])
    planes = features.encode_games([stones], [movers], "agz17")  # (3, 17, 5, 5)
    assert points(planes[1, 0]) == {SETUP_BLACK, B_CENTRE}  # black moves again: X is black
    assert points(planes[1, 2]) == {SETUP_BLACK} and planes[1, 16].all()
    assert points(planes[2, 0]) == {SETUP_WHITE}  # then white
    assert points(planes[2, 1]) == {SETUP_BLACK, B_CENTRE, B_LAST}
    assert points(planes[2, 3]) == {SETUP_BLACK, B_CENTRE} and not planes[2, 16].any()


@pytest.mark.parametrize("encoder", ["agz17", "tactical", "alphago48"])
def test_encode_games_keeps_games_apart_and_allows_empty_games(random_games, encoder):
    start, moves = random_games[0]
    stones, movers = replay_moves(start, moves)
    empty_stones, empty_movers = replay_moves(start, [])
    both = features.encode_games([stones, empty_stones, stones], [movers, empty_movers, movers], encoder)
    alone = features.encode_games([stones], [movers], encoder)
    np.testing.assert_array_equal(both, np.concatenate([alone, alone]))  # no history leaks across games


def test_encode_games_refuses_mismatched_inputs(random_games):
    start, moves = random_games[0]
    stones, movers = replay_moves(start, moves)
    with pytest.raises(ValueError, match="do not match"):
        features.encode_games([stones[:-1]], [movers], "agz17")
    with pytest.raises(ValueError, match="mover arrays"):
        features.encode_games([stones], [], "agz17")


# ---------------------------------------------------------------- packing
@settings(max_examples=30, deadline=None)
@given(rows=st.integers(0, 5), planes=st.integers(1, 20), size=st.integers(5, 19),
       seed=st.integers(0, 2**32 - 1))
def test_pack_unpack_round_trip_and_rows_are_numpy_packbits(rows, planes, size, seed):
    bits = np.random.default_rng(seed).integers(0, 2, size=(rows, planes, size, size), dtype=np.uint8)
    packed = features.pack_planes(bits)
    assert packed.shape == (rows, features.packed_nbytes(planes, size)) and packed.dtype == np.uint8
    for r in range(rows):
        np.testing.assert_array_equal(packed[r], np.packbits(bits[r]))
    np.testing.assert_array_equal(features.unpack_planes(packed, planes, size), bits)
    np.testing.assert_array_equal(features.pack_planes(bits.reshape(rows, planes * size * size)), packed)


def test_packed_row_sizes():
    assert features.packed_nbytes(17, 9) == 173
    assert features.packed_nbytes(17, 19) == 768
    assert features.packed_nbytes(2, 5) == 7


def test_unpack_refuses_rows_of_the_wrong_width():
    with pytest.raises(ValueError, match="do not hold"):
        features.unpack_planes(np.zeros((2, 172), np.uint8), 17, 9)


# ---------------------------------------------------------------- augmentation
def test_augment_equals_symmetry_apply_on_unpacked_planes(random_games):
    stones_list, movers_list, moves = replays(random_games[:1])
    planes = features.encode_games(stones_list, movers_list, "agz17")  # (R, 17, 9, 9)
    packed = features.pack_planes(planes)
    order = (0, 5, 3, 7, 1, 2, 4, 6)
    augmented, new_moves = features.augment(features.unpack_planes(packed, 17, 9), moves, order, 9)
    assert augmented.shape == (len(moves) * 8, 17, 9, 9)
    for r in range(len(moves)):
        for j, k in enumerate(order):
            np.testing.assert_array_equal(augmented[r * 8 + j], symmetry.apply(planes[r], k))
            assert new_moves[r * 8 + j] == symmetry.apply_to_move(int(moves[r]), k, 9)
    flat, flat_moves = features.augment(planes.reshape(len(moves), -1), moves, order, 9)
    np.testing.assert_array_equal(flat, augmented.reshape(len(flat), -1))
    np.testing.assert_array_equal(flat_moves, new_moves)


def test_transform_rows_applies_each_rows_own_symmetry(random_games):
    stones_list, movers_list, moves = replays(random_games[:1])
    planes = features.encode_games(stones_list, movers_list, "agz17")
    ks = np.random.default_rng(0).integers(0, 8, size=len(moves))
    out, new_moves = features.transform_rows(planes, moves, ks, 9)
    for r, k in enumerate(ks):
        np.testing.assert_array_equal(out[r], symmetry.apply(planes[r], int(k)))
        assert new_moves[r] == symmetry.apply_to_move(int(moves[r]), int(k), 9)


def test_augmented_move_lands_where_the_next_position_has_the_new_stone(random_games):
    stones_list, movers_list, moves = replays(random_games[:1])
    planes = features.encode_games(stones_list, movers_list, "oneplane")
    augmented, new_moves = features.augment(planes, moves, symmetry.SYMMETRIES, 9)
    for r in range(len(moves) - 1):
        if moves[r] == 81:
            continue
        for j in range(8):  # the mover's stone is an opponent stone for the next side to move
            assert augmented[(r + 1) * 8 + j, 1].reshape(-1)[new_moves[r * 8 + j]] == 1


# ---------------------------------------------------------------- the packed hot path
@pytest.mark.parametrize("encoder", sorted(features.ENCODERS))
@pytest.mark.parametrize("order", [symmetry.SYMMETRIES, (0,), (6, 1, 6)])
def test_encode_games_packed_equals_encode_augment_pack(random_games, encoder, order):
    for size in (9, 13):
        stones_list, movers_list, moves = replays([g for g in random_games if g[0].size == size])
        planes = features.encode_games(stones_list, movers_list, encoder)
        expected = features.pack_planes(features.augment(planes, moves, order, size)[0])
        np.testing.assert_array_equal(encode_games_packed(stones_list, movers_list, encoder, order),
                                      expected)


@pytest.mark.parametrize("encoder", ["agz17", "tactical", "alphago48"])
def test_encode_games_packed_on_19x19_from_a_setup_with_passes_and_empty_games(encoder):
    rng = np.random.default_rng(19)
    start = Position.from_setup(19, black=[60, 72, 288], white=[300, 30])
    position, moves = start, []
    for _ in range(40):  # a short random game from the setup position, with a pass in it
        legal = np.flatnonzero(position.legal_moves()[:-1])
        move = 361 if len(moves) == 7 else int(rng.choice(legal))
        position, moves = position.play(move), moves + [move]
    stones_list, movers_list, all_moves = replays([(start, moves), (start, []), (start, moves[:5])])
    planes = features.encode_games(stones_list, movers_list, encoder)
    expected = features.pack_planes(features.augment(planes, all_moves, symmetry.SYMMETRIES, 19)[0])
    packed = encode_games_packed(stones_list, movers_list, encoder, symmetry.SYMMETRIES)
    nbytes = features.packed_nbytes(features.get_encoder(encoder).num_planes, 19)
    assert packed.shape == (45 * 8, nbytes) and packed.flags.c_contiguous
    np.testing.assert_array_equal(packed, expected)


@pytest.mark.parametrize("bad", [[-1], [8], []])
def test_symmetry_ids_outside_0_to_7_are_refused(random_games, bad):
    stones_list, movers_list, moves = replays(random_games[:1])
    with pytest.raises(ValueError, match="0..7"):
        encode_games_packed(stones_list, movers_list, "agz17", bad)
    with pytest.raises(ValueError, match="0..7"):
        features.augment_moves(moves, bad, 9)


def test_augmentation_of_no_rows_gives_no_rows():
    planes, moves = np.zeros((0, 17 * 81), np.uint8), np.zeros(0, np.int64)
    augmented, new_moves = features.augment(planes, moves, symmetry.SYMMETRIES, 9)
    assert augmented.shape == (0, 17 * 81) and new_moves.shape == (0,)
    transformed, moved = features.transform_rows(planes, moves, np.zeros(0, np.int64), 9)
    assert transformed.shape == (0, 17 * 81) and moved.shape == (0,)


@pytest.mark.parametrize("encoder", sorted(features.ENCODERS))
def test_encode_rows_packed_with_a_symmetry_per_row_equals_transform_rows_then_pack(random_games, encoder):
    stones_list, movers_list, moves = replays([g for g in random_games if g[0].size == 9])
    ks = np.random.default_rng(1).integers(0, 8, size=len(moves))
    rows = np.arange(len(moves))
    planes = features.encode_games(stones_list, movers_list, encoder)
    expected = features.pack_planes(features.transform_rows(planes, moves, ks, 9)[0])
    np.testing.assert_array_equal(encode_rows_packed(stones_list, movers_list, encoder, rows, ks), expected)
    with pytest.raises(ValueError, match="row symmetries"):
        encode_rows_packed(stones_list, movers_list, encoder, rows, ks[1:])


@pytest.mark.parametrize("encoder", sorted(features.ENCODERS))
def test_encode_positions_equals_encode_position_for_each(encoder):
    rng = np.random.default_rng(5)
    positions = []
    for size in (5, 9):
        position = Position.initial(size)
        for _ in range(40):
            legal = np.flatnonzero(position.legal_moves())
            position = position.play(int(rng.choice(legal)))
            positions.append(position)
    for size in (5, 9):
        batch = [p for p in positions if p.size == size]
        expected = np.stack([features.encode_position(p, encoder) for p in batch])
        assert np.array_equal(features.encode_positions(batch, encoder), expected)
