"""Players: the resign sentinel, policy-only play, AlphaGo Zero search with tree reuse and
resignation, and two end-to-end checks on 7x7 that briefly trained tiny nets plus search beat
the random player.

Why 7x7: a 9x9 game is about twice as long and each search costs more, so 20 games at 100
simulations would take minutes on one CPU thread; 5x5 is so small that the capture race and
life and death the nets must learn hardly occur. On 7x7 the module takes about 25 s on one core.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

import numpy as np
import pytest
import torch

from gocore.nn import features
from gocore.nn.inference import NetEvaluator, UniformEvaluator
from gocore.nn.nets import GoNet, build_net, preset
from gocore.nn.training import TrainConfig, train
from gocore.play.match import play_game
from gocore.rules.board import Position, random_playouts, replay_moves
from gocore.search import mcts
from gocore.search.agents import RESIGN, AlphaGoAgent, AlphaZeroAgent, PolicyAgent, RandomAgent

SIZE = 7


class FixedPriorsEvaluator:
    """The same priors (masked to the legal moves) for every position, value 0."""

    def __init__(self, priors: np.ndarray):
        self.priors = priors

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        legal = np.stack([p.legal_moves() for p in positions])
        priors = np.where(legal, self.priors, 0.0)
        return (priors / priors.sum(axis=1, keepdims=True)).astype(np.float32), np.zeros(len(positions), np.float32)


class BlackWinsEvaluator:
    """Uniform priors; value +1 if black is to move, -1 if white."""

    def evaluate(self, positions: Sequence[Position]) -> tuple[np.ndarray, np.ndarray]:
        priors, _ = UniformEvaluator().evaluate(positions)
        return priors, np.array([float(p.to_play) for p in positions], np.float32)


def test_resign_is_minus_one_and_names_say_what_plays():
    assert RESIGN == -1
    assert AlphaZeroAgent(UniformEvaluator(), mcts.FAST).name == "alphazero-64"
    assert AlphaGoAgent(UniformEvaluator(), mcts.ALPHAGO.replace(sims=50)).name == "alphago-50"
    assert PolicyAgent(UniformEvaluator(), greedy=False).name == "policy-sample"


def test_alphago_agent_needs_rollouts_in_its_leaf_value():
    with pytest.raises(ValueError, match="rollout_lambda"):
        AlphaGoAgent(UniformEvaluator(), mcts.FAST)


def test_policy_agent_plays_the_most_probable_legal_move_or_samples_legal_ones():
    position = Position.initial(5).play(12)
    priors = np.full(26, 0.01)
    priors[12], priors[7] = 10.0, 5.0  # the best prior is on an occupied point
    assert PolicyAgent(FixedPriorsEvaluator(priors)).select_move(position) == 7
    sampler = PolicyAgent(FixedPriorsEvaluator(priors), greedy=False, seed=0)
    assert all(position.is_legal(sampler.select_move(position)) for _ in range(30))


def test_alphazero_agent_keeps_its_tree_between_moves_of_one_game():
    agent = AlphaZeroAgent(UniformEvaluator(), mcts.FAST.replace(sims=48), seed=0)
    start = Position.initial(5)
    move = agent.select_move(start)
    after_own = agent._search.roots[0]
    reply = max(after_own.children, key=lambda m: after_own.children[m].visits)  # an explored reply
    kept = after_own.children[reply]
    visits = kept.visits
    agent.select_move(start.play(move).play(reply))
    assert kept.visits == visits + 48
    agent.select_move(Position.initial(5).play(0))  # another game: a fresh tree
    assert agent.last_result.visits.sum() == 48 - 1


def test_alphazero_agent_passes_in_a_finished_game_so_a_cleanup_phase_can_end():
    """GNU Go passed a third time in a match's cleanup phase and the search refused the finished
    position ("game 0 is over"): the net's side forfeited a game it had won on the board."""
    passed_out = Position.initial(9, 7.5).play(40).play(81).play(81)  # a stone, then both pass: over
    assert passed_out.is_game_over()
    agent = AlphaZeroAgent(UniformEvaluator(), mcts.MATCH.replace(sims=8), seed=0)
    assert agent.select_move(passed_out) == 81
    game = play_game(agent, RandomAgent(1), max_moves=30)  # and it still searches a live game after
    assert game.reason in ("two-passes", "move-cap") and game.moves[0][1] != 81


def test_alphazero_agent_resigns_after_two_hopeless_searches():
    agent = AlphaZeroAgent(BlackWinsEvaluator(), mcts.MATCH.replace(sims=16), seed=0)
    position = Position.initial(5).play(12)
    first = agent.select_move(position)
    assert first != RESIGN and agent.last_result.root_value < -0.9
    assert agent.select_move(position.play(first).play(6)) == RESIGN


# ---------------------------------------------------------------- trained tiny nets vs random
@dataclasses.dataclass(frozen=True)
class Rows:
    """A batch in the shape `gocore.nn.training.train` reads."""

    planes: np.ndarray  # (B, 17, N, N) float32
    move: np.ndarray  # (B,) int64
    value: np.ndarray  # (B,) float32, side to move's view
    pi: np.ndarray | None = None


@pytest.fixture(scope="module")
def random_game_rows() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(planes (R, 17, 7, 7) uint8, moves (R,), values (R,)) from 300 random games.

    A position's value target is the mean result of 8 random playouts from it (side to move's
    view): the same expectation as the game's outcome z, with less noise, so a few hundred
    steps train a usable value head.
    """
    rng = np.random.default_rng(0)
    stones_list, movers_list, moves_list, values_list = [], [], [], []
    for g in range(300):
        game = play_game(RandomAgent(seed=2 * g), RandomAgent(seed=2 * g + 1), size=SIZE)
        moves = [move for _, move in game.moves]
        stones, movers = replay_moves(Position.initial(SIZE), moves)
        positions = [Position.initial(SIZE)]
        for move in moves[:-1]:
            positions.append(positions[-1].play(move))
        values = [np.sign(random_playouts(p, 8, int(rng.integers(1 << 62)))).mean() * p.to_play for p in positions]
        stones_list.append(stones), movers_list.append(movers)
        moves_list.append(moves), values_list.append(values)
    planes = features.encode_games(stones_list, movers_list, "agz17")
    return planes, np.concatenate(moves_list).astype(np.int64), np.concatenate(values_list).astype(np.float32)


def trained(family: str, rows: tuple[np.ndarray, np.ndarray, np.ndarray], steps: int) -> GoNet:
    """A one-block version of the tiny preset, trained `steps` AdamW steps on the rows."""
    torch.manual_seed(0)
    config = dataclasses.replace(preset("tiny", SIZE, 17, family=family, encoder="agz17"), blocks=1)
    net = build_net(config)
    planes, moves, values = rows

    def stream(split: str, skip_batches: int) -> Iterator[Rows]:
        rng = np.random.default_rng(skip_batches)
        while True:
            pick = rng.integers(len(moves), size=128)
            yield Rows(planes[pick].astype(np.float32), moves[pick], values[pick])

    objective = {"dual": "dual", "policy": "policy", "value": "value"}[family]
    train(net, stream, TrainConfig(objective=objective, steps=steps, batch_size=128, optimizer="adamw",
                                   lr=3e-3, lr_steps=(0.8,), checkpoint_every=0, val_every=0, log_every=steps,
                                   device="cpu"))
    return net.eval()


def wins_against_random(agent: object, games: int) -> int:
    """Games won by `agent` against RandomAgent on 7x7, colours alternating (agent black first)."""
    wins = 0
    for g in range(games):
        opponent = RandomAgent(seed=1000 + g)
        color = 1 if g % 2 == 0 else -1
        black, white = (agent, opponent) if color == 1 else (opponent, agent)
        wins += play_game(black, white, size=SIZE).winner == color
    return wins


@pytest.mark.slow  # trains a net (~20 CPU s), then 20 searched games: the test-system tier
def test_alphazero_search_with_a_briefly_trained_tiny_net_beats_random(random_game_rows):
    evaluator = NetEvaluator(trained("dual", random_game_rows, steps=500), device="cpu")
    agent = AlphaZeroAgent(evaluator, mcts.FAST.replace(sims=100), seed=0)
    assert wins_against_random(agent, 20) >= 18


@pytest.mark.slow  # trains two nets, then 6 games with rollouts: the test-system tier
def test_alphago_search_with_policy_value_and_rollouts_beats_random(random_game_rows):
    evaluator = NetEvaluator(trained("policy", random_game_rows, steps=200),
                             trained("value", random_game_rows, steps=200), device="cpu")
    agent = AlphaGoAgent(evaluator, mcts.ALPHAGO.replace(sims=64), seed=0)
    assert wins_against_random(agent, 6) >= 5  # a 200-step net and random rollouts: one loss is noise


def test_a_time_budget_cuts_the_search_short_but_still_gives_a_legal_move():
    import time

    from gocore.nn.inference import UniformEvaluator
    from gocore.rules.board import Position
    from gocore.search import mcts
    from gocore.search.agents import AlphaZeroAgent

    agent = AlphaZeroAgent(UniformEvaluator(), mcts.MATCH.replace(sims=1_000_000), seed=1)
    agent.set_time_budget(0.2)
    position = Position.initial(7)
    start = time.monotonic()
    move = agent.select_move(position)
    elapsed = time.monotonic() - start
    assert position.is_legal(move) and elapsed < 5
    assert 0 < agent.last_result.visits.sum() < 1_000_000


class _PointValues:
    """Values that make black's stone on point 12 the best move: after it, the opponent's value is -1."""

    def evaluate(self, positions):
        values = np.array([-1.0 if p.stones.flat[12] == 1 else 0.0 for p in positions], np.float32)
        return np.zeros((len(positions), positions[0].size ** 2 + 1), np.float32), values


def test_the_value_greedy_player_moves_where_the_opponent_is_worst_off():
    from gocore.search.agents import ValueGreedyAgent

    assert ValueGreedyAgent(_PointValues()).select_move(Position.initial(5)) == 12
    sampled = {ValueGreedyAgent(_PointValues(), seed=s, sampled_moves=1, margin=2.0).select_move(Position.initial(5))
               for s in range(6)}
    assert len(sampled) > 1  # its opening moves are sampled among the nearly best
