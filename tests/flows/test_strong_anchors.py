"""The recipe's anchor matches: every generation on the recipe's seed (so generations pair game by
game), and a match begun by earlier code on seed + generation resumes on its own starts."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from flows.strong import _anchor_seed
from gocore.play.match import MatchConfig
from storage import layout, matches
from storage.matches import MatchError
from tasks.app.evaluate import MatchSettings
from tasks.app.strong import StrongSettings


def test_an_anchor_match_begun_on_the_old_seed_resumes_on_it_and_new_ones_take_the_recipes(tmp_path: Path):
    settings = StrongSettings(name="strong-5x5", size=5, expert=("gnugo-5x5:level=0,games=12",), seed=1)
    begun = "strong-5x5-gen3-vs-gnugo-1"
    old = MatchSettings("models:/gozero-5x5/4", "gnugo-1", 2, 4, MatchConfig(5, settings.komi, seed=settings.seed + 3))
    matches.begin(layout.match_dir(tmp_path, begun), old.to_dict())

    with pytest.raises(MatchError, match="other settings"):  # what the recipe's seed alone would meet
        matches.begin(layout.match_dir(tmp_path, begun), replace(old, config=MatchConfig(5, settings.komi, seed=1)).to_dict())
    assert _anchor_seed(settings, tmp_path, begun) == 4
    resumed = replace(old, config=MatchConfig(5, settings.komi, seed=_anchor_seed(settings, tmp_path, begun)))
    matches.begin(layout.match_dir(tmp_path, begun), resumed.to_dict())  # no refusal
    assert _anchor_seed(settings, tmp_path, "strong-5x5-gen4-vs-gnugo-1") == 1
    assert _anchor_seed(settings, tmp_path, "strong-5x5-gen0-vs-gnugo-1") == 1
