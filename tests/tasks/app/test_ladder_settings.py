"""Ladder settings: a ladder without a size takes the rated player's (a promotion's trigger names
only the player), and the weekly evaluation's games are ladder games with no opponents to choose."""

from __future__ import annotations

import pytest

from tasks.app.ladder_settings import ChampionSettings, LadderSettings
from tasks.app.sizes import SizeError


@pytest.mark.parametrize(("size", "player", "resolved"), [
    (None, "models:/gozero-5x5/2", 5), (None, None, 9), (None, "uct-10", 9), (13, None, 13), (7, "models:/gozero-7x7/1", 7),
])
def test_a_ladder_without_a_size_takes_the_size_its_player_names(size, player, resolved):
    assert LadderSettings(size=size, sims=7).sized_for(player) == LadderSettings(size=resolved, sims=7)


def test_a_size_the_player_contradicts_is_refused():
    with pytest.raises(SizeError, match="models:/gozero-5x5/2"):
        LadderSettings(size=9).sized_for("models:/gozero-5x5/2")


def test_the_champions_yardsticks_are_ladder_games_with_no_opponents_to_choose():
    settings = ChampionSettings(size=5, gnugo_levels=(1,), anchors=("uct-5",), games_per_opponent=4, sims=3, komi=6.5)
    assert settings.ladder() == LadderSettings(size=5, games_per_opponent=4, opponents=0, sims=3, komi=6.5,
                                               anchors=("uct-5",))
