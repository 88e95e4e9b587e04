"""PUCT and Gumbel search, self-play and its rows, through the game boundary with Baghchal."""

from __future__ import annotations

import numpy as np
import pytest

from gocore.nn.baghchal_net import UniformBaghchalEvaluator
from gocore.rules.baghchal.game import BAGHCHAL, BaghchalGame
from gocore.rules.baghchal.notation import action_of_text, position_from_text, read_record
from gocore.rules.baghchal.position import GOAT, TIGER, BaghchalRules
from gocore.rules.board import Position as GoPosition
from gocore.rules.game import GO, game_named
from gocore.search.baghchal_agents import ZeroAgent
from gocore.search.baghchal_selfplay import (
    MATCH,
    SELFPLAY,
    BaghchalSelfPlayConfig,
    play_games,
    record_text,
    summarize,
    training_rows,
)
from gocore.search.gumbel import GumbelConfig
from gocore.search.mcts import BatchedSearch, terminal_value
from gocore.search.rows import symmetric_policies

FIFTH_CAPTURE = """
    B G . . B
    . . . . .
    . . G . .
    . . . . .
    B . . . B
"""


@pytest.mark.parametrize("gumbel", [None, GumbelConfig(k=32)])  # k: every legal action
def test_search_finds_the_winning_fifth_capture(gumbel: GumbelConfig | None) -> None:
    position = position_from_text(FIFTH_CAPTURE, to_play=TIGER, placed=6)  # four captured
    agent = ZeroAgent(UniformBaghchalEvaluator(), MATCH.replace(sims=48), seed=0, gumbel=gumbel)
    assert agent.select_move(position) == action_of_text(position, "Bx1113")
    assert agent.last_result.root_value > 0 if gumbel else agent.last_result.root_value > 0.5  # halving spreads visits


def test_goat_search_traps_the_tigers_when_it_can() -> None:
    position = position_from_text("""
        B G G G B
        G G G G G
        G G . G G
        G G G G G
        B G G G B
    """, to_play=GOAT, placed=20)
    agent = ZeroAgent(UniformBaghchalEvaluator(), MATCH.replace(sims=64), seed=0)
    assert position.play(agent.select_move(position)).reason == "tigers-trapped"


def test_a_draw_is_worth_zero_to_the_search() -> None:
    drawn = read_record("1. G33 B1112", BaghchalRules(max_plies=2))[1]
    assert drawn.reason == "move-cap" and BAGHCHAL.terminal_value(drawn, None) == 0.0
    assert BAGHCHAL.terminal_value(read_record("1. G33 B1112")[1], max_moves=2) == 0.0  # a search's own cap
    search = BatchedSearch(UniformBaghchalEvaluator(), MATCH.replace(sims=16),
                           [read_record("1. G33", BaghchalRules(max_plies=2))[1]], game=BAGHCHAL)
    result = search.search()[0]
    assert result.root_value == 0.0  # every reply ends the game at the cap: a draw


def test_the_go_adapter_answers_as_the_search_did_before_the_boundary() -> None:
    position = GoPosition.initial(5)
    for move in (0, 25, 25):
        position = position.play(move)
    assert GO.terminal_value(position, None) == terminal_value(position, 75)
    assert game_named("go", 9) is GO and game_named("baghchal") is BAGHCHAL
    with pytest.raises(ValueError, match="unknown game"):
        game_named("chess")


def test_self_play_games_end_by_the_rules_and_make_rows_in_all_eight_symmetries() -> None:
    config = BaghchalSelfPlayConfig(search=SELFPLAY.replace(sims=8), rules=BaghchalRules(max_plies=60))
    games = play_games(UniformBaghchalEvaluator(), config, 3, seed=5)
    assert all(game.final.is_game_over() for game in games)
    ids = [f"g{i}" for i in range(3)]
    rows = training_rows(games, ids, generation=1, model_version="uniform")
    positions = sum(len(game.actions) for game in games)
    assert len(rows["z"]) == 8 * positions
    assert np.allclose(rows["pi"].sum(axis=1), 1, atol=1e-5)
    first = rows["symmetry"] == 0
    for k in range(8):
        mask = rows["symmetry"] == k
        assert np.allclose(rows["pi"][mask], symmetric_policies(BAGHCHAL, rows["pi"][first], k))
        assert np.array_equal(rows["z"][mask], rows["z"][first])
    z_by_game = {g: set(rows["z"][first][rows["game_id"][first] == g] * rows["to_play"][first][rows["game_id"][first] == g])
                 for g in ids}
    assert all(len(values) == 1 for values in z_by_game.values())  # z * mover = the game's winner
    for game in games:
        assert read_record(record_text(game, config.rules), config.rules)[0] == game.actions
    counts = summarize(games)
    assert counts["games"] == 3 and counts["goat_wins"] + counts["tiger_wins"] + counts["draws"] == 3


def test_self_play_replays_by_seed_with_gumbel_too() -> None:
    config = BaghchalSelfPlayConfig(search=SELFPLAY.replace(sims=8), gumbel=GumbelConfig(k=4),
                                    rules=BaghchalRules(max_plies=40))
    first = play_games(UniformBaghchalEvaluator(), config, 2, seed=3)
    again = play_games(UniformBaghchalEvaluator(), config, 2, seed=3)
    assert [g.actions for g in first] == [g.actions for g in again]


def test_the_zero_agent_keeps_its_tree_between_moves() -> None:
    agent = ZeroAgent(UniformBaghchalEvaluator(), MATCH.replace(sims=32), seed=0)
    position = BaghchalGame().initial()
    action = agent.select_move(position)
    root = agent._search.roots[0]  # the node of our move, its subtree kept
    reply = max(root.children, key=lambda move: root.children[move].visits)
    kept = root.children[reply].visits
    agent.select_move(position.play(action).play(reply))
    assert kept >= 1 and agent.last_result.visits.sum() == round(kept) - 1 + 32


def test_a_search_cap_of_its_own_ends_self_play_games_as_draws() -> None:
    config = BaghchalSelfPlayConfig(search=SELFPLAY.replace(sims=4, max_moves=6))
    games = play_games(UniformBaghchalEvaluator(), config, 2, seed=0)
    assert all(len(game.actions) == 6 and game.winner == 0 and game.reason == "move-cap" for game in games)
    assert summarize(games)["draws"] == 2
