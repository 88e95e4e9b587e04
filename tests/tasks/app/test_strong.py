"""The strength recipe's settings and spend, without running it."""

from __future__ import annotations

import pytest

from storage.gnugo_source import GnugoSourceError
from tasks.app.loop_settings import LoopSettings, loop_record
from tasks.app.strong import StrongSettings, recipe_spend


def test_the_recipe_sets_up_a_conservative_warm_started_loop():
    settings = StrongSettings()
    loop = settings.loop_settings("models:/gozero-9x9/1")
    assert (loop.warm_start, loop.expert, loop.gate, loop.lr_schedule) == ("models:/gozero-9x9/1", "strong-9x9-expert",
                                                                          "sprt", "cosine")
    assert loop.aux_heads and loop.search == "gumbel" and loop.gumbel_scale == 0.1 and loop.lr < 0.01
    config = settings.sl_config()
    assert config.objective == "dual" and config.value_weight == 0.25 and config.lr_schedule == "cosine"


@pytest.mark.parametrize("changes, error", [({"expert": ("gnugo-13x13:level=1,games=10",)}, ValueError),
                                            ({"expert": ("gnugo-9x9:level=99,games=10",)}, GnugoSourceError),
                                            ({"expert": ()}, ValueError), ({"budget_cpu_hours": 0}, ValueError),
                                            ({"expert_share": 1.0}, ValueError), ({"encoder": "agz99"}, ValueError)])
def test_a_recipe_that_cannot_run_is_refused_before_it_starts(changes, error):
    with pytest.raises(error):
        StrongSettings(**changes)


def test_spend_counts_learning_and_keeps_measuring_apart():
    records = [{"step": "expert", "generation": 0, "cpu_seconds": 3600.0},
               {"step": "anchors", "generation": 0, "cpu_seconds": 720.0},
               {"step": "selfplay", "generation": 1, "cpu_seconds": 1800.0},
               {"step": "ladder", "generation": 1, "cpu_seconds": 360.0},
               {"step": "start", "generation": 1}]  # a record from before CPU was measured counts 0
    spent = recipe_spend(records)
    assert (spent.learning, spent.measuring) == (1.5, 0.3)


def test_new_loop_settings_are_recorded_only_when_used():
    plain = loop_record(LoopSettings(aux_heads=True, playout_cap=False, forced_playouts=False, search="gumbel"))
    assert not {"encoder", "gumbel_scale", "expert", "expert_share", "lr_schedule"} & set(plain)
    used = loop_record(LoopSettings(aux_heads=True, playout_cap=False, forced_playouts=False, search="gumbel",
                                    gumbel_scale=0.1, expert="e", expert_share=0.4, lr_schedule="cosine"))
    assert (used["gumbel_scale"], used["expert"], used["expert_share"], used["lr_schedule"]) == (0.1, "e", 0.4, "cosine")


def test_the_curve_plot_draws_each_series_and_the_levels(tmp_path):
    from storage.ratings import CurvePoint, plot_strength_curve

    recipe = [CurvePoint("gen 0", 0.5, -90.0, 40.0), CurvePoint("gen 3", 1.5, 20.0, 35.0)]
    plain = [CurvePoint("plain gen 4", 0.2, -600.0, 120.0)]
    png = plot_strength_curve({"recipe": recipe, "plain": plain}, {"gnugo-1": 0.0, "gnugo-5": 180.0},
                              tmp_path / "curve.png", "gnugo-1", "test")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_pass_when_settled_reaches_self_play_and_older_records_stay_valid():
    from tasks.app.loop_settings import selfplay_search
    from tasks.app.selfplay_settings import SelfPlaySettings

    loop = StrongSettings().loop_settings("models:/gozero-9x9/1")
    assert selfplay_search(loop)["pass_when_settled"] is True
    assert SelfPlaySettings("uniform", pass_when_settled=True).recorded(4)["pass_when_settled"] is True
    assert "pass_when_settled" not in SelfPlaySettings("uniform").recorded(4)
    assert "pass_when_settled" not in StrongSettings(pass_when_settled=False).record()  # as runs before it were


def test_the_recipes_loop_trains_continually_and_a_rerun_may_change_it():
    """Measured 2026-11-28: restarted from the champion, generations 2 and 3 failed their gates;
    trained continually, the next candidate won 65 of 100 against the supervised net."""
    from tasks.app.strong import RESUMABLE, StrongSettings

    settings = StrongSettings()
    assert settings.train_from == "latest" and settings.loop_settings("models:/x/1").train_from == "latest"
    assert "train_from" in RESUMABLE  # recipes recorded before it resume, switching to continual training


def test_a_gate_line_reads_as_the_candidates_score_not_as_its_threshold():
    from flows.cli.loop import new_lines

    gate = {"step": "gate", "generation": 3, "rule": "threshold", "win_rate": 0.47, "games": 100, "passed": False,
            "seconds": 60, "cpu_seconds": 90}
    assert new_lines([gate], set()) == ["gen 3 gate: 47.0% of 100 games (threshold rule): failed"]


def test_a_rerun_may_start_the_expert_share_falling_but_not_change_the_share_itself(tmp_path):
    """A copy of a run's data dir after its supervised step trains the same net on with another
    schedule (the expert-share A/B from one start): the recipe and its loop take the schedule on a rerun."""
    import pytest

    from storage import loops
    from tasks.app import loop_settings
    from tasks.app.strong import RESUMABLE, StrongSettings

    base, falling = StrongSettings(), StrongSettings(expert_share_final=0.1, expert_share_generations=4)
    loops.claim(tmp_path, base.recipe, base.record(), RESUMABLE)
    loops.claim(tmp_path, falling.recipe, falling.record(), RESUMABLE)
    assert loops.read_settings(tmp_path, base.recipe)["expert_share_final"] == 0.1
    loop, falling_loop = base.loop_settings("models:/g/1"), falling.loop_settings("models:/g/1")
    loops.claim(tmp_path, base.name, loop_settings.loop_record(loop), loop_settings.RESUMABLE)
    loops.claim(tmp_path, base.name, loop_settings.loop_record(falling_loop), loop_settings.RESUMABLE)
    assert [loop_settings.expert_share_at(falling_loop, g) for g in (1, 4, 9)] == [0.5, 0.1, 0.1]
    with pytest.raises(loops.LoopError, match="expert_share"):
        loops.claim(tmp_path, base.recipe, StrongSettings(expert_share=0.3).record(), RESUMABLE)


def test_a_rerun_may_change_self_plays_search_and_games_only_between_generations(tmp_path):
    """A copy of a run's data dir goes on with more simulations or games per generation (the lever's
    A/B from one champion); while a generation of its loop is under way the change is refused."""
    import pytest

    from flows.strong import claim_recipe
    from storage import loops
    from tasks.app.loop_view import STEPS
    from tasks.app.strong import StrongSettings

    base = StrongSettings()
    claim_recipe(base, tmp_path)
    loops.record_step(tmp_path, base.name, 1, "start", {})  # generation 1 of the recipe's loop begun
    more = StrongSettings(sims=128, games=400, reanalyse=200, resign_disabled_fraction=1.0)
    with pytest.raises(loops.LoopError, match="may change games, reanalyse, reanalyse_expert, resign_disabled_fraction, "
                                              "sims only between generations: generation 1 is under way"):
        claim_recipe(more, tmp_path)
    assert loops.read_settings(tmp_path, base.recipe)["sims"] == 64  # the record unchanged
    claim_recipe(StrongSettings(budget_cpu_hours=8), tmp_path)  # a budget may change mid-generation
    for step in STEPS[1:]:
        loops.record_step(tmp_path, base.name, 1, step, {})
    claim_recipe(more, tmp_path)
    assert {k: loops.read_settings(tmp_path, base.recipe)[k] for k in ("sims", "games", "reanalyse")} == \
        {"sims": 128, "games": 400, "reanalyse": 200}
    assert loops.read_settings(tmp_path, base.recipe)["resign_disabled_fraction"] == 1.0
    assert more.loop_settings("models:/g/1").resign_disabled_fraction == 1.0
    assert "resign_disabled_fraction" not in base.record()  # runs recorded before it resume unchanged
    with pytest.raises(loops.LoopError, match="runs with other lr"):
        claim_recipe(StrongSettings(sims=128, games=400, reanalyse=200, lr=0.01), tmp_path)
