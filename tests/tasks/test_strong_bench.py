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


def test_another_recipe_run_is_its_own_series_rated_on_its_own_ladder(monkeypatch, tmp_path, capsys):
    """`--also LABEL=DIR`: a second run (a seed, an A/B arm's copy) is calibrated in its own data dir and
    drawn as its own series; each series' points come from its own dir's fit, both with level 1 = 0."""
    import benchmarks.strong as bench
    from gocore.play.ladder import Rating
    from storage import loops
    from tasks import strong_curve
    from tasks.app.strong import StrongSettings

    run_a, run_b = tmp_path / "a", tmp_path / "b"
    run_a.mkdir(), run_b.mkdir()
    elo = {run_a: {"gnugo-1": 0.0, "gnugo-10": 70.0, "gozero-9x9/6": 130.0},
           run_b: {"gnugo-1": 0.0, "gnugo-10": 60.0, "gozero-9x9/6": 200.0}}
    fitted, calibrated = [], []

    def fit(data, size, anchor):
        fitted.append((data, anchor))
        return [Rating(player, value, 10.0, 100, 50.0) for player, value in elo[data].items()]

    steps = [{"step": "anchors", "generation": 4, "model": "models:/gozero-9x9/6", "cpu_seconds": 3600.0}]
    monkeypatch.setattr(strong_curve, "fit", fit)
    monkeypatch.setattr(bench, "calibrate", lambda data, *args: calibrated.append(data))
    monkeypatch.setattr(loops, "read_settings", lambda data, name: StrongSettings(anchors=("gnugo-10",)).record())
    monkeypatch.setattr(loops, "read_steps", lambda data, name: steps if name.endswith("-recipe") else [])
    plotted = {}
    monkeypatch.setattr("storage.ratings.plot_strength_curve",
                        lambda series, levels, png, anchor, title: plotted.update(series=series, levels=levels) or png)
    bench.main(["--data-dir", str(run_a), "--label", "run A", "--also", f"run B={run_b}", "--curve-only",
                "--png", str(tmp_path / "c.png")])
    assert calibrated == [run_a, run_b] and fitted == [(run_a, "gnugo-1"), (run_b, "gnugo-1")]
    assert {label: [p.elo for p in points] for label, points in plotted["series"].items()} == {
        "run A": [130.0], "run B": [200.0]}
    assert plotted["levels"] == {"gnugo-1": 0.0, "gnugo-10": 70.0}  # the lines: the first run's ladder
    out = capsys.readouterr().out
    assert "run B: gen 4 (gozero-9x9/6)" in out and "gnugo-10 (run B's ladder)" in out and "+60" in out


def test_another_run_needs_a_label_and_a_data_dir_of_its_own(tmp_path, capsys):
    for also in ("no-equals-sign", f"={tmp_path}", f"x={tmp_path / 'missing'}"):
        with pytest.raises(SystemExit):
            parse_args(["--data-dir", str(tmp_path), "--also", also])
    assert "give LABEL=DIR" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--data-dir", str(tmp_path), "--label", "x", "--also", f"x={tmp_path}"])
    assert "every series needs its own label: x, x" in capsys.readouterr().err
