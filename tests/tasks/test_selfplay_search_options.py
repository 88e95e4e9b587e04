"""KataGo's playout cap and forced playouts from the loop's settings down to a self-play batch:
LoopSettings -> the selfplay flow's keywords -> SelfPlaySettings -> MCTSConfig; rows only for full
searches; older loops and sidecars, recorded before the options, still match."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from flows.selfplay import selfplay
from storage.selfplay import sidecar_path
from tasks.selfplay import SelfPlayError, SelfPlaySettings, selfplay_games
from tasks.zero import LoopSettings, loop_record, selfplay_search

TINY = {"size": 5, "komi": 2.5, "max_moves": 30, "resign_threshold": None}


def test_loop_settings_map_to_the_selfplay_flows_search_keywords():
    assert selfplay_search(LoopSettings()) == {}
    options = selfplay_search(LoopSettings(sims=32, playout_cap=True, forced_playouts=True))
    assert options == {"full_search_prob": 0.25, "fast_sims": 8, "forced_playouts": True}
    assert set(options) <= set(inspect.signature(selfplay.fn).parameters)
    assert selfplay_search(LoopSettings(sims=2, playout_cap=True, fast_sims_fraction=0.1))["fast_sims"] == 1
    with pytest.raises(ValueError, match="full_search_prob"):
        LoopSettings(playout_cap=True, full_search_prob=0.0)


def test_loop_records_keep_the_options_only_when_on():
    plain = loop_record(LoopSettings())
    assert not {"playout_cap", "full_search_prob", "fast_sims_fraction", "forced_playouts"} & set(plain)
    capped = loop_record(LoopSettings(playout_cap=True, forced_playouts=True))
    assert capped["playout_cap"] and capped["full_search_prob"] == 0.25 and capped["forced_playouts"]


def test_a_capped_batch_records_only_full_searches_and_its_options(data_dir: Path):
    capped = SelfPlaySettings("uniform", 8, full_search_prob=0.25, fast_sims=2, forced_playouts=True, **TINY)
    result = selfplay_games.fn(capped, 3, 1, 5, str(data_dir))
    sidecar = json.loads(sidecar_path(data_dir, 1, 5).read_text())
    assert 0 < result.rows == sidecar["full_searches"] < result.counts.positions
    assert sidecar["settings"]["full_search_prob"] == 0.25 and sidecar["settings"]["forced_playouts"]
    assert "full_search_prob" not in SelfPlaySettings("uniform", 8, **TINY).recorded(3)
    with pytest.raises(SelfPlayError, match="other settings"):
        selfplay_games.fn(SelfPlaySettings("uniform", 8, **TINY), 3, 1, 5, str(data_dir))
