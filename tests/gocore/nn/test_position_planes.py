"""The search's batch paths against the per-position ones: planes (`position_planes.encode_batch` vs
`features.encode_positions`), legal moves (`board.legal_masks` vs `Position.legal_moves`) and the
search's candidates (`board.candidate_masks` vs `board.candidate_moves`), on positions of random games
with captures, kos, passes and setup stones, and whole self-play searches on either path."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from gocore.nn import features, position_planes
from gocore.nn.inference import UniformEvaluator
from gocore.rules.board import IllegalMove, Position, candidate_masks, candidate_moves, legal_masks
from gocore.search.gumbel import GumbelConfig, GumbelSearch, search_factory
from gocore.search.mcts import SELFPLAY, BatchedSearch
from gocore.search.selfplay import play_games
from tests.helpers import position_from_ascii

LENGTHS = {5: 60, 9: 120, 19: 260}
KO_SHAPE = """
    . X O . .
    X O . O .
    . X O . .
    . . . . .
    . . . . .
    """
TAKES_KO = 7  # black's C4 takes the white stone at B4: a ko


def ko_positions() -> list[Position]:
    """A ko just taken, and the same after a pass (the retake is legal again for white)."""
    taken = position_from_ascii(KO_SHAPE).play(TAKES_KO)
    return [taken, taken.play(25), taken.play(25).play(25)]


def random_positions(size: int, games: int, seed: int) -> list[Position]:
    """Every position of `games` random legal games (a pass 1 move in 12), one starting from setup
    stones, shuffled across games and move numbers."""
    rng = np.random.default_rng(seed)
    positions = []
    for game in range(games):
        position = (Position.from_setup(size, [0, size + 1], [size * size - 1], to_play=-1) if game == 0
                    else Position.initial(size))
        for _ in range(LENGTHS[size]):
            positions.append(position)
            legal = np.flatnonzero(position.legal_moves()[:-1])
            is_pass = not len(legal) or rng.random() < 1 / 12
            position = position.play(size * size if is_pass else int(rng.choice(legal)))
            if position.is_game_over():
                break
        positions.append(position)
    positions += ko_positions() if size == 5 else []
    return [positions[i] for i in rng.permutation(len(positions))]


@pytest.fixture(scope="module", params=[5, 9, 19])
def positions(request: pytest.FixtureRequest) -> list[Position]:
    size = request.param
    found = random_positions(size, {5: 12, 9: 4, 19: 2}[size], seed=size)
    stones = np.array([np.abs(p.stones).sum() for p in found])
    assert size != 5 or any(p.ko is not None for p in found), "no ko among the positions"
    assert any(p.last_move == size * size for p in found), "no pass among the positions"
    assert any(len(p.history) and np.abs(p.history[0]).sum() > s for p, s in zip(found, stones)), "no capture"
    return found


@pytest.mark.parametrize("encoder", sorted(features.ENCODERS))
def test_encode_batch_equals_the_per_position_encoding(positions: list[Position], encoder: str) -> None:
    for start in range(0, len(positions), 97):  # batches of mixed games and move numbers
        batch = positions[start:start + 97]
        expected = features.encode_positions(batch, encoder)
        planes = position_planes.encode_batch(batch, encoder)
        assert planes.dtype == expected.dtype == np.uint8
        np.testing.assert_array_equal(planes, expected)


def test_encode_batch_of_one_position_equals_encode_position() -> None:
    position = position_from_ascii(KO_SHAPE).play(TAKES_KO).play(24)  # two boards of history, a capture in them
    for encoder in features.ENCODERS:
        np.testing.assert_array_equal(position_planes.encode_batch([position], encoder)[0],
                                      features.encode_position(position, encoder))


def test_legal_masks_equal_legal_moves(positions: list[Position]) -> None:
    expected = np.stack([p.legal_moves() for p in positions])
    np.testing.assert_array_equal(legal_masks(positions), expected)
    np.testing.assert_array_equal(legal_masks(positions[::-1]), expected[::-1])  # kept masks, asked again


def test_ko_retake_is_illegal_in_the_batch_mask() -> None:
    position = position_from_ascii(KO_SHAPE).play(TAKES_KO)
    assert position.ko is not None
    assert not legal_masks([position])[0][position.ko]  # white may not retake at once
    assert legal_masks([position.play(24).play(20)])[0][position.ko]  # after an exchange elsewhere it may


@pytest.mark.parametrize("sensible", [True, False])
@pytest.mark.parametrize("pass_when_settled", [True, False])
def test_candidate_masks_equal_candidate_moves(positions: list[Position], sensible: bool, pass_when_settled: bool) -> None:
    expected = np.stack([candidate_moves(p, sensible, pass_when_settled) for p in positions])
    np.testing.assert_array_equal(candidate_masks(positions, sensible, pass_when_settled), expected)


class PerPositionSearch(BatchedSearch):
    """The search as it chose its leaves' candidates before the batch path: one position at a time."""

    def _candidates(self, positions):
        return np.stack([candidate_moves(p, self.config.sensible_moves, self.config.pass_when_settled) for p in positions])


class PerPositionGumbel(GumbelSearch):
    _candidates = PerPositionSearch._candidates


@pytest.mark.parametrize("gumbel", [None, GumbelConfig(k=4)])
def test_selfplay_plays_the_same_games_on_either_path(gumbel: GumbelConfig | None) -> None:
    config = SELFPLAY.replace(sims=12, max_moves=30)
    batch = play_games(UniformEvaluator(), config, 3, size=5, seed=7, new_search=search_factory(gumbel))
    per_position = PerPositionSearch if gumbel is None else functools.partial(PerPositionGumbel, gumbel=gumbel)
    baseline = play_games(UniformEvaluator(), config, 3, size=5, seed=7, new_search=per_position)
    assert [g.moves for g in batch] == [g.moves for g in baseline]
    assert all(np.array_equal(a, b) for x, y in zip(batch, baseline) for a, b in zip(x.pis, y.pis))


def test_superko_refusals_are_illegal_in_the_batch_mask() -> None:
    both_passed = position_from_ascii(KO_SHAPE).play(TAKES_KO).play(25).play(25)
    start = position_from_ascii("""
        . X O . . . X O .
        X O . O . X O . O
        . X O . . . X O .
        . . . . . . . . .
        . O X . . . . . .
        O X . X . . . . .
        . O X . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        """)
    cycle = start
    for move in (11, 47, 16, 10, 46):  # C8 C4 H8 B8 B4: a triple ko, each retake a legal simple-ko capture
        cycle = cycle.play(move)
    assert not both_passed.is_legal(6) and not cycle.is_legal(15)  # white's retakes: B4, G8 (superko)
    masks = legal_masks([both_passed])[0], legal_masks([cycle])[0]
    assert not masks[0][6] and not masks[1][15]
    np.testing.assert_array_equal(masks[1], cycle.legal_moves())
    leaf = position_from_ascii(KO_SHAPE).play(TAKES_KO).play(25).play_leaf(25)  # both passed, masks kept
    assert not leaf.is_legal(6) and not legal_masks([leaf])[0][6]


def test_play_leaf_is_play_with_the_leafs_board_and_masks(positions: list[Position]) -> None:
    size = positions[0].size
    for position in positions[:40]:
        for move in np.flatnonzero(position.legal_moves()):
            leaf, child = position.play_leaf(int(move)), position.play(int(move))
            assert leaf == child and leaf.last_move == child.last_move == move
            assert len(leaf.history) == len(child.history)
            assert all(np.array_equal(a, b) for a, b in zip(leaf.history, child.history))
            np.testing.assert_array_equal(leaf._seen, child._seen)
            np.testing.assert_array_equal(leaf.stones, child.stones)
            np.testing.assert_array_equal(legal_masks([leaf])[0], child.legal_moves())
            np.testing.assert_array_equal(candidate_masks([leaf])[0], candidate_moves(child))
        occupied = np.flatnonzero(position.stones.reshape(-1))
        for move in occupied[:1]:
            with pytest.raises(IllegalMove, match="occupied"):
                position.play_leaf(int(move))
    with pytest.raises(IllegalMove, match="off-board"):
        positions[0].play_leaf(size * size + 1)
