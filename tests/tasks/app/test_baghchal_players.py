"""tasks.app.baghchal_players: the library's engine specs, its numba port and its own code."""

from __future__ import annotations

import pytest

from tasks.app.baghchal_players import PlayerSpecError, library_engine, make_player, player_label


def test_library_specs_give_the_depth_and_whether_the_librarys_own_code_runs() -> None:
    assert library_engine("library") == (2, False)
    assert library_engine("library:4") == (4, False)
    assert library_engine("library-slow") == (2, True)
    assert library_engine("library-slow:3") == (3, True)
    assert library_engine("random") is None


@pytest.mark.parametrize("spec", ["library:0", "library:x", "library-slow:", "library-slow:-1"])
def test_a_library_depth_that_is_no_whole_number_from_1_is_refused(spec: str) -> None:
    with pytest.raises(PlayerSpecError, match="whole number >= 1"):
        library_engine(spec)


def test_the_port_and_the_librarys_own_engine_play_under_one_label() -> None:
    fast, slow = make_player("library:1"), make_player("library-slow:1")
    assert (fast.agent.slow, slow.agent.slow) == (False, True)
    assert fast.label == slow.label == player_label("library-slow:1") == "library-d1"
