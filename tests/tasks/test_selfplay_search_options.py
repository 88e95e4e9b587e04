"""KataGo's playout cap and forced playouts from the loop's settings down to a self-play batch:
LoopSettings -> SelfPlaySettings (the selfplay flow's parameter) -> MCTSConfig; rows only for full
searches; older loops and sidecars, recorded before the options, still match."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storage import loops
from storage.loops import LoopError
from storage.selfplay import sidecar_path
from tasks.app.loop_settings import (
    RESUMABLE,
    TECHNIQUE_DEFAULTS,
    TECHNIQUES_OFF,
    LoopSettings,
    loop_record,
    selfplay_search,
)
from tasks.app.selfplay_settings import SelfPlaySettings
from tasks.selfplay import SelfPlayError, selfplay_games

TINY = {"size": 5, "komi": 2.5, "max_moves": 30, "resign_threshold": None}


def test_loop_settings_map_to_selfplay_settings_keywords():
    assert selfplay_search(LoopSettings(search="puct").resolved(None)) == {}  # every option off: no keywords
    assert selfplay_search(LoopSettings().resolved(None)) == {"search": "gumbel"}  # a new loop: Gumbel won its A/B
    with pytest.raises(ValueError, match="aux_heads, playout_cap, forced_playouts, search unset"):
        selfplay_search(LoopSettings())  # an undecided technique never plays as "off"
    options = selfplay_search(LoopSettings(sims=32, playout_cap=True, forced_playouts=True, search="puct").resolved(None))
    assert options == {"full_search_prob": 0.25, "fast_sims": 8, "forced_playouts": True}
    assert SelfPlaySettings("uniform", 32, **options).fast_sims == 8  # SelfPlaySettings' own names
    gumbel = selfplay_search(LoopSettings(search="gumbel").resolved(None))  # the loop's self-play searches as it says
    assert gumbel == {"search": "gumbel"} and SelfPlaySettings("uniform", **gumbel).search == "gumbel"
    assert selfplay_search(LoopSettings(sims=2, playout_cap=True, fast_sims_fraction=0.1).resolved(None))["fast_sims"] == 1
    with pytest.raises(ValueError, match="full_search_prob"):
        LoopSettings(playout_cap=True, full_search_prob=0.0)


def test_loop_records_keep_the_options_only_when_on():
    plain = loop_record(LoopSettings().resolved(None))
    assert not {"playout_cap", "full_search_prob", "fast_sims_fraction", "forced_playouts"} & set(plain)
    capped = loop_record(LoopSettings(playout_cap=True, forced_playouts=True, search="puct").resolved(None))
    assert capped["playout_cap"] and capped["full_search_prob"] == 0.25 and capped["forced_playouts"]
    with pytest.raises(ValueError, match="playout_cap"):  # undecided techniques are never recorded
        loop_record(LoopSettings(aux_heads=False, forced_playouts=False, search="puct"))


def test_forced_playouts_ask_for_puct_and_never_ride_along_silently_with_gumbel(tmp_path: Path):
    """Gumbel's sequential halving never gives forced visits: with it the option would be recorded
    and do nothing."""
    with pytest.raises(ValueError, match="add --search puct"):
        LoopSettings(forced_playouts=True, search="gumbel")
    with pytest.raises(LoopError, match="gumbel, the default for new loops"):
        LoopSettings(forced_playouts=True).resolved(None)
    with pytest.raises(ValueError, match="add --search puct"):
        SelfPlaySettings("uniform", 8, forced_playouts=True, search="gumbel")
    gumbel = LoopSettings(loop="g", **{**TECHNIQUES_OFF, "search": "gumbel"}).resolved(None)
    loops.claim(tmp_path, "g", loop_record(gumbel), RESUMABLE)
    with pytest.raises(LoopError, match="as it began"):  # a rerun asking for them on a Gumbel loop
        LoopSettings(loop="g", forced_playouts=True).resolved(loops.read_settings(tmp_path, "g"))
    assert LoopSettings(forced_playouts=True, search="puct").resolved(None).forced_playouts


def test_unset_techniques_follow_the_loop_else_the_defaults_so_a_default_can_change(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    old = LoopSettings(loop="old", **TECHNIQUES_OFF).resolved(None)  # begun with every technique off
    loops.claim(tmp_path, "old", loop_record(old), RESUMABLE)
    assert "playout_cap" not in loops.read_settings(tmp_path, "old")  # as loops always recorded an off option
    monkeypatch.setitem(TECHNIQUE_DEFAULTS, "playout_cap", True)  # a later release turns it on by default
    rerun = LoopSettings(loop="old", generations=9).resolved(loops.read_settings(tmp_path, "old"))
    assert rerun.playout_cap is False and rerun.search == "puct" and rerun.aux_heads is False
    loops.claim(tmp_path, "old", loop_record(rerun), RESUMABLE)  # not refused as "other settings"
    new = LoopSettings(loop="new").resolved(loops.read_settings(tmp_path, "new"))
    assert new.playout_cap is True and loop_record(new)["playout_cap"] is True
    chosen = LoopSettings(loop="old", playout_cap=True).resolved(loops.read_settings(tmp_path, "old"))
    assert chosen.playout_cap is True  # a choice on the command line wins, and a changed one is refused
    with pytest.raises(LoopError, match="playout_cap"):
        loops.claim(tmp_path, "old", loop_record(chosen), RESUMABLE)


def test_a_capped_batch_records_only_full_searches_and_its_options(data_dir: Path):
    capped = SelfPlaySettings("uniform", 8, full_search_prob=0.25, fast_sims=2, forced_playouts=True, **TINY)
    result = selfplay_games.fn(capped, 3, 1, 5, str(data_dir))
    sidecar = json.loads(sidecar_path(data_dir, 1, 5).read_text())
    assert 0 < result.rows == sidecar["full_searches"] < result.counts.positions
    assert sidecar["settings"]["full_search_prob"] == 0.25 and sidecar["settings"]["forced_playouts"]
    assert "full_search_prob" not in SelfPlaySettings("uniform", 8, **TINY).recorded(3)
    with pytest.raises(SelfPlayError, match="other settings"):
        selfplay_games.fn(SelfPlaySettings("uniform", 8, **TINY), 3, 1, 5, str(data_dir))


def test_a_rerun_takes_the_recorded_playout_cap_with_its_shares(tmp_path: Path):
    capped = LoopSettings(loop="capped", playout_cap=True, full_search_prob=0.5, fast_sims_fraction=0.125)
    loops.claim(tmp_path, "capped", loop_record(capped.resolved(None)), RESUMABLE)
    rerun = LoopSettings(loop="capped", generations=9).resolved(loops.read_settings(tmp_path, "capped"))
    assert (rerun.playout_cap, rerun.full_search_prob, rerun.fast_sims_fraction) == (True, 0.5, 0.125)
    loops.claim(tmp_path, "capped", loop_record(rerun), RESUMABLE)  # the same loop: not refused
    asked = LoopSettings(loop="capped", playout_cap=True).resolved(loops.read_settings(tmp_path, "capped"))
    assert (asked.full_search_prob, asked.fast_sims_fraction) == (0.5, 0.125)  # the cap asked for again: the same
    uncapped = LoopSettings(loop="capped", playout_cap=False).resolved(loops.read_settings(tmp_path, "capped"))
    assert uncapped.full_search_prob == 0.25  # a cap switched off on the command line takes nothing from the record
    other = LoopSettings(loop="capped", full_search_prob=0.75).resolved(loops.read_settings(tmp_path, "capped"))
    assert (other.full_search_prob, other.fast_sims_fraction) == (0.75, 0.125)  # a share set otherwise is kept ...
    with pytest.raises(LoopError, match="full_search_prob"):
        loops.claim(tmp_path, "capped", loop_record(other), RESUMABLE)  # ... and refused as another loop


def test_games_played_out_without_resigning_reach_the_batch_and_its_record(data_dir: Path):
    """`resign_disabled_fraction` 1: no game resigns, even where every position reads lost (a uniform
    net's value 0 under a threshold of 0.5); loops recorded before the option resume unchanged."""
    eager = {**TINY, "resign_threshold": 0.5}
    resigning = selfplay_games.fn(SelfPlaySettings("uniform", 4, **eager), 6, 1, 7, str(data_dir))
    played_out = selfplay_games.fn(SelfPlaySettings("uniform", 4, resign_disabled_fraction=1.0, **eager),
                                   6, 2, 7, str(data_dir))
    assert resigning.counts.resignations > 0 and played_out.counts.resignations == 0
    assert played_out.counts.no_resign_games == 6 and played_out.counts.would_resign == 6
    assert json.loads(sidecar_path(data_dir, 2, 7).read_text())["settings"]["resign_disabled_fraction"] == 1.0
    assert "resign_disabled_fraction" not in SelfPlaySettings("uniform", 4, **eager).recorded(6)
    loop = LoopSettings(resign_disabled_fraction=1.0).resolved(None)
    assert selfplay_search(loop)["resign_disabled_fraction"] == 1.0
    assert loop_record(loop)["resign_disabled_fraction"] == 1.0
    assert "resign_disabled_fraction" not in loop_record(LoopSettings().resolved(None))
    assert "resign_disabled_fraction" not in selfplay_search(LoopSettings().resolved(None))
    with pytest.raises(ValueError, match="resign_disabled_fraction"):
        LoopSettings(resign_disabled_fraction=1.5)
