"""`gocore.search.review`: every position of a game searched, each move's loss, the annotated record."""

from __future__ import annotations

import numpy as np
import pytest

from gocore.rules import sgf
from gocore.rules.board import Position
from gocore.rules.sgf_read import read_games
from gocore.search.review import PLAYED_SHARE, ReviewSettings, annotate, biggest_mistakes, review_game
from tests.helpers import AreaEvaluator, random_game

SIZE = 5
SETTINGS = ReviewSettings(visits=48, blunder=0.10, batch=4)


@pytest.fixture(scope="module")
def game() -> tuple[sgf.GameRecord, list[Position]]:
    moves, _ = random_game(SIZE, np.random.default_rng(3), max_moves=24)
    record = sgf.GameRecord(size=SIZE, komi=0.5, moves=[(1 if i % 2 == 0 else -1, m) for i, m in enumerate(moves)],
                            comments={2: "a comment of the player"})
    return record, sgf.replay(record)


@pytest.fixture(scope="module")
def reviews(game):
    record, positions = game
    seen = []
    result = review_game(AreaEvaluator(), positions, record.moves, SETTINGS, lambda done, total: seen.append((done, total)))
    assert seen[-1] == (len(positions), len(positions)) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    return result


def test_every_move_is_judged_from_the_movers_view_by_searches_of_both_positions(game, reviews):
    record, positions = game
    assert [(r.number, r.color, r.move) for r in reviews] == [(i + 1, c, m) for i, (c, m) in enumerate(record.moves)]
    for review, before, after in zip(reviews, positions, positions[1:]):
        assert review.before.position == before and review.after.position == after
        assert review.before.visits == SETTINGS.visits
        best, played = review.best, review.before.of(review.move)
        assert 0.0 <= review.loss <= 1.0
        if best.move == review.move:
            assert review.loss == 0.0  # the search's own choice loses nothing, however the next search reads it
        elif played is not None and played.visits >= PLAYED_SHARE * best.visits and played.visits > 0:
            assert review.loss == pytest.approx(max(0.0, best.winrate - played.winrate))
        else:
            assert review.loss == pytest.approx(max(0.0, best.winrate - (1 - review.after.winrate)))
        black = review.winrate_after if review.color == 1 else 1 - review.winrate_after
        assert review.black_winrate == pytest.approx(black)
    assert all(a.after is b.before for a, b in zip(reviews, reviews[1:]))  # one search per position
    agreed = [r for r in reviews if r.best.move == r.move]
    assert agreed and any(r.winrate_before - r.winrate_after > 0 for r in agreed)  # the old measure called these losses


def test_a_finished_game_is_scored_by_the_rules_not_searched():
    position = Position.initial(SIZE, komi=0.5)
    moves = [(1, SIZE * SIZE), (-1, SIZE * SIZE)]  # two passes: white wins by komi
    positions = [position, position.play(SIZE * SIZE), position.play(SIZE * SIZE).play(SIZE * SIZE)]
    last = review_game(AreaEvaluator(), positions, moves, SETTINGS)[-1]
    assert last.after.visits == 0 and last.after.moves == ()
    assert last.winrate_after == 1.0 and last.black_winrate == 0.0  # white passed into a won game


def test_two_moves_of_one_colour_are_judged_from_that_colours_view():
    start = Position.initial(SIZE, komi=0.5)
    moves = [(1, 6), (1, 12)]  # black twice: a handicap placed by moves
    positions = [start, start.play(6, 1), start.play(6, 1).play(12, 1)]
    first, second = review_game(AreaEvaluator(), positions, moves, SETTINGS)
    assert second.before.position.to_play == 1  # searched after a white pass
    assert first.winrate_after == pytest.approx(second.winrate_before)


def test_annotate_comments_marks_and_branches_where_the_search_disagrees(game, reviews):
    record, _ = game
    annotated = annotate(record, reviews, SETTINGS)
    assert set(annotated.comments) == set(range(len(record.moves)))
    assert annotated.comments[2].startswith("a comment of the player\n\n")
    for index, review in enumerate(reviews):
        assert "loss" in annotated.comments[index]
        expected = ({"BM": "2"} if review.loss >= 0.2 else {"BM": "1"} if review.loss >= 0.1
                    else {"TE": "1"} if review.is_only_move(0.1) else None)
        assert annotated.marks.get(index) == expected
        branches = annotated.variations.get(index, [])
        if review.best.move == review.move:
            assert branches == []
        else:
            (variation,) = branches
            assert [m for _, m in variation.moves] == list(review.best.pv)
            assert [c for c, _ in variation.moves][:2] == [review.color, -review.color][:len(variation.moves)]
    assert any("BM" in marks for marks in annotated.marks.values())  # random moves: some are blunders
    (again,) = read_games(sgf.write(annotated))
    assert again.moves == record.moves
    mistakes = biggest_mistakes(reviews, 3)
    assert [m.loss for m in mistakes] == sorted((r.loss for r in reviews), reverse=True)[:3]
