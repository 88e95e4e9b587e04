"""Our Baghchal rules against the PyPI `baghchal` library's, game by game, ply by ply.

Games are played by a mix of players so that every ending occurs: uniform random (Tiger wins
almost all of those), a careful Goat that keeps its goats out of jumps and corners tigers (Goat
wins, repetitions), and a greedy Tiger that captures when it can. The library has no ply cap, so
ours is off here (`LIBRARY_RULES`). `make test-system` runs the 10,000-game version (slow).
"""

from __future__ import annotations

import numpy as np
import pytest

from gocore.rules.baghchal.notation import read_record, write_record
from gocore.rules.baghchal.position import GOAT, LIBRARY_RULES, Position
from tests.gocore.rules.baghchal.library import Agreement, compare_game, library


def _capturable(position: Position) -> int:
    """Jumps the side to move (a tiger) has now."""
    return int(position.legal_moves()[137:].sum())


def chooser(rng: np.random.Generator, goat_style: str, tiger_style: str):
    """A player for both sides: `goat_style` random or careful, `tiger_style` random, greedy
    (captures when it can) or smother (leaves Goat the fewest moves once all goats are placed)."""

    def choose(position: Position) -> int:
        legal = np.flatnonzero(position.legal_moves())
        if position.to_play == GOAT and goat_style == "careful" and rng.random() < 0.9:
            scores = []
            for action in legal:
                after = position.play(int(action))
                mobility = int(after.legal_moves().sum()) if not after.is_game_over() else -100
                scores.append((_capturable(after), mobility))
            best = min(scores)
            legal = legal[[score == best for score in scores]]
        elif position.to_play != GOAT and tiger_style == "greedy" and legal.max() >= 137 and rng.random() < 0.8:
            legal = legal[legal >= 137]
        elif position.to_play != GOAT and tiger_style == "smother" and not position.is_placement:
            mobility = [int(position.play(int(action)).legal_moves().sum()) for action in legal]
            legal = legal[np.asarray(mobility) == min(mobility)]
        return int(rng.choice(legal))

    return choose


def differential(games: int, seed: int) -> Agreement:
    agreement = Agreement()
    rng = np.random.default_rng(seed)
    styles = [("random", "random"), ("careful", "random"), ("careful", "greedy"), ("random", "greedy"),
              ("random", "smother")]
    for game in range(games):
        goat, tiger = styles[game % len(styles)]
        actions = compare_game(chooser(rng, goat, tiger), game, agreement)
        if game % 50 == 0:  # the record round trip, now and then
            assert read_record(write_record(actions, LIBRARY_RULES), LIBRARY_RULES)[0] == actions
    return agreement


def test_rules_agree_with_the_library_on_a_few_hundred_games() -> None:
    agreement = differential(200, seed=1)
    assert agreement.count == 0, agreement.disagreements
    assert {"captures", "tigers-trapped", "repetition"} <= set(agreement.outcomes), agreement.outcomes


# Goat trapped is rare in play (5 of 100,000 random games): one found by a tiger that mostly steps.
GOATS_TRAPPED = ("1. G41 B5545 2. G31 B1112 3. G44 B4535 4. G32 B3525 5. G43 B2535 6. G55 B1222 7. G53 B3525 "
                 "8. G34 B2233 9. G52 B1514 10. G11 B2515 11. G12 B1525 12. G45 B3323 13. G42 B1415 14. G54 B2324 "
                 "15. G35 B1514 16. G33 B2415 17. G22 B1424 18. G21 B1514 19. G13 B2515 20. G23 B1525# 0-1")


def test_a_trapped_goat_loses_in_both_rules() -> None:
    actions, final = read_record(GOATS_TRAPPED, LIBRARY_RULES)
    assert final.reason == "goats-trapped"
    agreement = Agreement()
    replay = iter(actions)
    compare_game(lambda position: next(replay), 0, agreement)
    assert agreement.count == 0, agreement.disagreements
    assert agreement.outcomes == {"goats-trapped": 1}


@pytest.mark.slow
def test_rules_agree_with_the_library_on_ten_thousand_games() -> None:
    agreement = differential(10_000, seed=2)
    print(f"\n{agreement.games} games, {agreement.plies} plies, outcomes {agreement.outcomes}, "
          f"{agreement.count} disagreements")
    assert agreement.count == 0, agreement.disagreements
    assert agreement.games == 10_000


def test_the_library_reads_our_records_to_the_same_position() -> None:
    env = library()
    actions = compare_game(chooser(np.random.default_rng(3), "careful", "greedy"), 0, Agreement())
    record = write_record(actions, LIBRARY_RULES)
    board = env.Board(record)
    final = read_record(record, LIBRARY_RULES)[1]
    assert board.pgn.strip() == record and board.is_game_over() == final.is_game_over()


def test_games_our_search_plays_agree_with_the_library() -> None:
    from gocore.nn.baghchal_net import UniformBaghchalEvaluator
    from gocore.search.baghchal_selfplay import SELFPLAY, BaghchalSelfPlayConfig, play_games

    config = BaghchalSelfPlayConfig(search=SELFPLAY.replace(sims=8), rules=LIBRARY_RULES)
    agreement = Agreement()
    for game, played in enumerate(play_games(UniformBaghchalEvaluator(), config, 4, seed=11)):
        replay = iter(played.actions)
        compare_game(lambda position, replay=replay: next(replay), game, agreement)
    assert agreement.count == 0, agreement.disagreements
    assert agreement.games == 4
