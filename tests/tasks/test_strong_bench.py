"""benchmarks/strong.py's choice of the plain loop's champions to rate along its CPU hours."""

from __future__ import annotations

import pytest

from benchmarks.strong import parse_args, plain_champions


def records(cpu_minutes: list[float], promoted: list[bool]) -> list[dict]:
    """Step records of a loop: per generation a self-play step of `cpu_minutes`, a ladder step of
    an hour (measuring only: never counted) and its promote step."""
    out, version = [], 0
    for generation, (minutes, is_promoted) in enumerate(zip(cpu_minutes, promoted), start=1):
        version += is_promoted
        out += [{"generation": generation, "step": "selfplay", "cpu_seconds": minutes * 60},
                {"generation": generation, "step": "ladder", "cpu_seconds": 3600.0},
                {"generation": generation, "step": "promote", "promoted": is_promoted, "champion": version + 1}]
    return out


def test_every_promoted_champion_without_a_spacing():
    chosen = plain_champions(records([6, 6, 6], [True, False, True]), None)
    assert [(g, v) for g, v, _ in chosen] == [(1, 2), (3, 3)]
    assert [round(h, 3) for _, _, h in chosen] == [0.1, 0.3]  # the ladder's hours are not learning


def test_the_first_champion_past_each_mark_and_the_last():
    chosen = plain_champions(records([12] * 11, [True] * 11), 0.5)  # 0.2 CPU hours a generation
    assert [g for g, _, _ in chosen] == [1, 3, 5, 8, 10, 11]  # 0.2, 0.6, 1.0, 1.6, 2.0, then the last (2.2)


def test_the_spacing_must_be_positive(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--data-dir", "x", "--plain-every", "0"])
    assert "--plain-every must be positive" in capsys.readouterr().err


def test_the_curve_is_anchored_at_level_1_whatever_the_recipes_first_anchor(monkeypatch, tmp_path, capsys):
    """Run B's recipe anchors at GNU Go level 10: its curve must still read with level 1 = 0, as the
    report, the plot and the plain loop's points say (its first report put level 10 at 0)."""
    import benchmarks.strong as bench
    from gocore.play.ladder import Rating
    from storage import loops
    from tasks import strong_curve
    from tasks.app.strong import StrongSettings

    elo = {"gnugo-1": 0.0, "gnugo-10": 69.0}  # level 10 69 Elo above level 1
    anchors = []

    def fit(data, size, anchor):
        anchors.append(anchor)
        return [Rating(player, value - elo[anchor], 10.0, 100, 50.0) for player, value in elo.items()]

    monkeypatch.setattr(strong_curve, "fit", fit)
    monkeypatch.setattr(bench, "calibrate", lambda *args: None)
    monkeypatch.setattr(loops, "read_settings", lambda data, name: StrongSettings(anchors=("gnugo-10",)).record())
    plotted = {}
    monkeypatch.setattr("storage.ratings.plot_strength_curve",
                        lambda series, levels, png, anchor, title: plotted.update(levels=levels, anchor=anchor) or png)
    bench.main(["--data-dir", str(tmp_path), "--curve-only", "--png", str(tmp_path / "c.png")])
    assert anchors == ["gnugo-1"] and plotted == {"levels": {"gnugo-1": 0.0, "gnugo-10": 69.0}, "anchor": "gnugo-1"}
    assert "gnugo-10" in capsys.readouterr().out
