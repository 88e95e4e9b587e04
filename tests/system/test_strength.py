"""benchmarks/strength.py --quick end to end on 5x5: two loops stopped by their budget (B warm
started), every champion on the shared ladder, B against A, the curve; a rerun plays nothing new."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from benchmarks import strength
from gocore.nn.features import get_encoder
from gocore.nn.nets import build_net, preset
from storage import layout, loops, matches, registry
from storage.checkpoints import save_model
from tasks.app.models import load_net


def test_loop_changes_are_typed_and_unknown_options_refused():
    assert strength.loop_changes("aux_heads=true, sims=32,warm_start=none,lr=0.5") == {
        "aux_heads": True, "sims": 32, "warm_start": None, "lr": 0.5}
    assert strength.loop_changes("") == {}
    assert strength.loop_changes("search=gumbel,playout_cap=true") == {"search": "gumbel", "playout_cap": True}
    with pytest.raises(ValueError, match="'alphabeta=true' is not name=value with a field of LoopSettings: .*aux_heads"):
        strength.loop_changes("alphabeta=true")
    with pytest.raises(ValueError, match="sims must be a int, not 'many'"):
        strength.loop_changes("sims=many")


def test_quick_run_rates_both_loops_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys,
                                                prefect_harness, gnugo_path):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    torch.manual_seed(7)
    config = preset("tiny", 5, get_encoder("agz17").num_planes, encoder="agz17")
    warm = save_model(tmp_path / "sl", build_net(config), config.to_dict())
    data = tmp_path / "data"
    argv = ["--quick", "--minutes", "0.01", "--games", "4", "--rating-games", "1", "--anchor-games", "2",
            "--anchors", "random,gnugo-0",
            "--a", "games=4", "--b", f"games=4,warm_start={warm}", "--data-dir", str(data), "--png", str(tmp_path / "curve.png")]
    strength.main(argv)
    out = capsys.readouterr().out
    for loop in strength.LOOPS:  # the budget (0.01 minutes) stopped each loop after its first generation
        assert {int(r["generation"]) for r in loops.read_steps(data, loop)} == {1}
    first_b = registry.describe("gozero-5x5", 3, data)
    assert first_b.tags["loop"] == "strength-b" and first_b.tags["promotion_reason"] == "warm-start"
    assert torch.equal(load_net(warm).state_dict()["stem.0.weight"],
                       load_net("models:/gozero-5x5/3", data).state_dict()["stem.0.weight"])
    head = matches.read_summary(layout.match_dir(data, "ladder-5x5-gozero-5x5-4-vs-gozero-5x5-2"))
    assert head["games"] == 4
    assert f"B (gozero-5x5/4) won {head['a_wins']} of 4 against A (gozero-5x5/2)" in out
    assert "warm start" in out and "not in the budget" in out and "CPU min" in out
    curve = [line.split() for line in out.splitlines() if line.startswith("strength-")]
    assert [(row[0], row[1], row[2]) for row in curve] == [
        ("strength-a", "0", "gozero-5x5/1"), ("strength-a", "1", "gozero-5x5/2"),
        ("strength-b", "0", "gozero-5x5/3"), ("strength-b", "1", "gozero-5x5/4")]
    assert (tmp_path / "curve.png").read_bytes().startswith(b"\x89PNG")
    played = sorted(p.stat().st_mtime_ns for p in (data / "matches").rglob("*.sgf"))
    strength.main(argv)  # a rerun: no loop step, no game, no model version again
    assert sorted(p.stat().st_mtime_ns for p in (data / "matches").rglob("*.sgf")) == played
    assert len(registry.list_versions("gozero-5x5", data)) == 4
    assert capsys.readouterr().out.count("won") == 1
