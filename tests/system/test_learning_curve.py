"""benchmarks.learning_curve: which generations a long loop rates."""

from benchmarks.learning_curve import rated_generations


def test_every_kth_promoting_generation_is_rated_with_the_first_and_the_last():
    assert rated_generations([0, 1, 2, 3, 4], 1) == [0, 1, 2, 3, 4]
    assert rated_generations(list(range(12)), 5) == [0, 5, 10, 11]
    assert rated_generations(list(range(11)), 5) == [0, 5, 10]
    assert rated_generations([0, 2, 3, 7], 5) == [0, 7]  # a gated loop: its newest champion is rated
    assert rated_generations([0], 3) == [0]
